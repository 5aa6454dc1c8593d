"""The share consumers of one load-generator task (seed 004).

Each consumer joins the group ``<topic>-share`` and reads until the load has
ended and the group is drained. With ``shareReleasePercent`` or
``shareRejectPercent`` set it acknowledges explicitly: that share of its
records is released (delivered again, delivery count + 1) or rejected
(archived), the rest accepted. A *stalling* consumer holds every batch it gets
past the broker's lock duration before accepting it, so its locks expire and
the records go to the others; its late acknowledgements are refused
(INVALID_RECORD_STATE), which is what it is for, so they are counted, not
reported as errors. ``start`` returns once every consumer has its assignment.
"""

from __future__ import annotations

import random
import threading
import time

DRAIN_IDLE_S = 2.0     # a consumer stops after this long without records, once the load ended
DRAIN_MAX_S = 15.0
STALL_EXTRA_S = 0.3    # held this long past the lock duration
STALL_MAX_RECORDS = 20
READY_S = 20.0


class ShareRun:
    def __init__(self):
        self.lock = threading.Lock()
        self.consumed = 0
        self.delivery_counts: dict[str, int] = {}
        # records acknowledged per type; lock_expired: held past the lock by a stalling consumer;
        # refused: acknowledgements (per partition and request) the broker answered with an error
        self.acks = {"accepted": 0, "released": 0, "rejected": 0, "lock_expired": 0, "refused": 0}
        self.errors: list[str] = []
        self.threads: list[threading.Thread] = []

    def add(self, records, acks: dict) -> None:
        with self.lock:
            self.consumed += len(records)
            for r in records:
                k = str(r.delivery_count)
                self.delivery_counts[k] = self.delivery_counts.get(k, 0) + 1
            for k, v in acks.items():
                self.acks[k] += v

    def join(self) -> dict:
        for t in self.threads:
            t.join(DRAIN_MAX_S + 15)
        with self.lock:
            return {"share_consumers": len(self.threads), "share_consumed": self.consumed,
                    "share_delivery_counts": dict(self.delivery_counts), "share_acks": dict(self.acks),
                    "share_errors": list(self.errors)}


def _consume(spec: dict, topic: str, stalling: bool, stop: threading.Event, ready: threading.Event,
             run: ShareRun) -> None:
    from kipper.client.share_consumer import AcknowledgeType, ShareConsumer

    explicit = stalling or spec["share_release_percent"] > 0 or spec["share_reject_percent"] > 0
    config = {"bootstrap.servers": spec["bootstrap"], "group.id": f"{topic}-share",
              "client.id": f"loadgen-share-{'stall-' if stalling else ''}{spec['task']}",
              "share.acknowledgement.mode": "explicit" if explicit else "implicit"}
    if stalling:
        config["max.poll.records"] = STALL_MAX_RECORDS
    release, reject = spec["share_release_percent"], spec["share_reject_percent"]
    rnd = random.Random(f"{spec['run_id']}-{spec['task']}-{topic}")
    refused: list[int] = [0]

    def on_completion(results):
        for error in results.values():
            if error is not None:
                refused[0] += 1

    try:
        with ShareConsumer(config, on_completion=on_completion) as consumer:
            consumer.subscribe([topic])
            joined_by = time.monotonic() + 15
            idle_since = stop_at = None
            while True:
                records = consumer.poll(0.1 if not ready.is_set() else 0.5)
                now = time.monotonic()
                # let the task's producers start once this member has its assignment
                if not ready.is_set() and (getattr(consumer, "_assignment", True) or now > joined_by):
                    ready.set()
                acks = {"accepted": 0, "released": 0, "rejected": 0, "lock_expired": 0}
                if stalling and records:
                    # hold the records until their locks have expired (checking for the end)
                    until = now + spec["lock_ms"] / 1000 + STALL_EXTRA_S
                    while time.monotonic() < until and not stop.is_set():
                        time.sleep(0.05)
                    if time.monotonic() < until:
                        for r in records:  # the load ended first: give them back now
                            consumer.acknowledge(r, AcknowledgeType.RELEASE)
                    else:
                        for r in records:
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT)  # refused: the lock is gone
                        acks["lock_expired"] = len(records)
                elif explicit:
                    for r in records:
                        x = rnd.random() * 100
                        if x < release:
                            consumer.acknowledge(r, AcknowledgeType.RELEASE)
                            acks["released"] += 1
                        elif x < release + reject:
                            consumer.acknowledge(r, AcknowledgeType.REJECT)
                            acks["rejected"] += 1
                        else:
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT)
                            acks["accepted"] += 1
                else:
                    acks["accepted"] = len(records)  # implicit: accepted on the next poll
                run.add(records, acks)
                if stop.is_set():
                    if stalling:
                        break  # what it holds is released when it closes
                    stop_at = stop_at or now
                    idle_since = None if records else (idle_since or now)
                    if (idle_since and now - idle_since >= DRAIN_IDLE_S) or now - stop_at >= DRAIN_MAX_S:
                        break
            consumer.commit_sync(10)
    except Exception as exc:  # reported with the task's results
        with run.lock:
            run.errors.append(f"{topic}: {type(exc).__name__}: {exc}")
    finally:
        ready.set()
        with run.lock:
            run.acks["refused"] += refused[0]


def start(spec: dict, stop: threading.Event) -> ShareRun:
    """Start the task's share consumers; returns once each has joined (or READY_S passed)."""
    run = ShareRun()
    readies = []
    members = [(t, False) for t in spec["share_topics"]] + [(t, True) for t in spec["stalling_topics"]]
    for topic, stalling in members:
        ready = threading.Event()
        t = threading.Thread(target=_consume, args=(spec, topic, stalling, stop, ready, run),
                             name=f"loadgen-share-{topic}", daemon=True)
        t.start()
        run.threads.append(t)
        readies.append(ready)
    for ready in readies:
        ready.wait(READY_S)
    return run
