"""One load-generator task: it runs on a Spark executor and returns a dict.

A task owns some producers (one per topic assignment) and some share
consumers. Its send loop paces the task's share of ``producerRate`` in short
bursts, round-robins over its producers, and every ``1/churn`` seconds replaces
one producer by a fresh one (a new InitProducerId: the producer-id quota's
input); the old one is flushed and closed on a side thread. Acknowledgements
and errors are counted in ``on_delivery`` on the producers' send threads, with
send-to-ack latency in an HDR-style histogram. Nothing here talks to Spark.
"""

from __future__ import annotations

import os
import queue
import random
import socket
import threading
import time

from kipper.protocol.histogram import LatencyHistogram

FLUSH_TIMEOUT_S = 30.0
BURST_MAX = 2000           # records sent before the pacing clock is read again
SHARE_DRAIN_IDLE_S = 2.0   # a share consumer stops after this long without records, once load ended
SHARE_DRAIN_MAX_S = 15.0


class Counts:
    """Delivery results; updated on producer send threads (one lock, short sections)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked = 0
        self.failed = 0
        self.errors: dict[str, int] = {}
        self.first_error: str | None = None
        self.hist = LatencyHistogram()
        self.record = self.hist.record

    def callback(self, sent_at: float):
        def done(error, metadata, sent_at=sent_at):
            us = int((time.perf_counter() - sent_at) * 1e6)
            with self.lock:
                if error is None:
                    self.acked += 1
                    self.record(us)
                else:
                    self.failed += 1
                    name = type(error).__name__
                    code = getattr(error, "code", None)
                    if code is not None:
                        name = getattr(code, "name", str(code))
                    self.errors[name] = self.errors.get(name, 0) + 1
                    if self.first_error is None:
                        self.first_error = f"{name}: {error}"
        return done


def _keys(distributor: str):
    pool = [f"key-{i}".encode() for i in range(1024)]
    if distributor == "NO_KEY":
        return lambda i: None
    if distributor == "KEY_ROUND_ROBIN":
        return lambda i: pool[i & 1023]
    rnd = random.Random(time.perf_counter_ns())
    return lambda i: pool[rnd.getrandbits(10)]


class _Closer(threading.Thread):
    """Flushes and closes replaced producers, so churn never stalls the send loop."""

    def __init__(self):
        super().__init__(name="loadgen-closer", daemon=True)
        self.queue: queue.Queue = queue.Queue()
        self.unacked = 0

    def run(self) -> None:
        while True:
            p = self.queue.get()
            if p is None:
                return
            self.unacked += p.flush(FLUSH_TIMEOUT_S)
            p.close(5)


def _share_consumer(spec: dict, topic: str, stop: threading.Event, ready: threading.Event, out: dict):
    from kipper.client.share_consumer import ShareConsumer

    counts: dict[str, int] = {}
    consumed = 0
    try:
        with ShareConsumer({"bootstrap.servers": spec["bootstrap"], "client.id": f"loadgen-share-{spec['task']}",
                            "group.id": f"{topic}-share"}) as consumer:
            consumer.subscribe([topic])
            joined_by = time.monotonic() + 15
            idle_since = stop_at = None
            while True:
                records = consumer.poll(0.1 if not ready.is_set() else 0.5)
                for r in records:
                    counts[str(r.delivery_count)] = counts.get(str(r.delivery_count), 0) + 1
                consumed += len(records)
                now = time.monotonic()
                # let the task's producers start once this member has its assignment
                if not ready.is_set() and (getattr(consumer, "_assignment", True) or now > joined_by):
                    ready.set()
                if stop.is_set():
                    stop_at = stop_at or now
                    idle_since = None if records else (idle_since or now)
                    if (idle_since and now - idle_since >= SHARE_DRAIN_IDLE_S) or now - stop_at >= SHARE_DRAIN_MAX_S:
                        break
            consumer.commit_sync(10)
    except Exception as exc:  # reported with the task's results
        out.setdefault("share_errors", []).append(f"{topic}: {type(exc).__name__}: {exc}")
    finally:
        ready.set()
        with out["lock"]:
            out["share_consumed"] += consumed
            for k, v in counts.items():
                out["share_delivery_counts"][k] = out["share_delivery_counts"].get(k, 0) + v


def run_task(spec: dict) -> dict:
    """Produce ``spec``'s share of the load; returns counts, errors and the latency histogram."""
    from kipper.client.producer import Producer

    started_wall = time.time()
    config = {"bootstrap.servers": spec["bootstrap"], "client.id": f"loadgen-{spec['task']}",
              "enable.idempotence": "true" if spec["idempotence"] else "false",
              **({} if spec["idempotence"] else {"acks": spec["producer_config"].get("acks", "1")}),
              **spec["producer_config"]}
    counts = Counts()
    share = {"lock": threading.Lock(), "share_consumed": 0, "share_delivery_counts": {}}
    stop = threading.Event()
    consumers = []
    for topic in spec["share_topics"]:
        ready = threading.Event()
        t = threading.Thread(target=_share_consumer, args=(spec, topic, stop, ready, share),
                             name=f"loadgen-share-{topic}", daemon=True)
        t.start()
        consumers.append((t, ready))
    for _, ready in consumers:
        ready.wait(20)

    topics = spec["topics"]
    producers = [Producer(config) for _ in topics]
    created = len(producers)
    closer = _Closer()
    closer.start()
    payload = os.urandom(spec["message_size"])
    key_for = _keys(spec["key_distributor"])
    rate = spec["rate"]
    churn_every = 1.0 / spec["churn"] if spec["churn"] > 0 else 0.0
    n = len(producers)
    sent = send_errors = 0
    perf = time.perf_counter
    start = time.monotonic()
    end = start + spec["duration_s"]
    next_churn = start + churn_every if churn_every else float("inf")
    churn_slot = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now >= next_churn:
            old = producers[churn_slot]
            producers[churn_slot] = Producer(config)
            created += 1
            closer.queue.put(old)
            churn_slot = (churn_slot + 1) % n
            next_churn += churn_every
        if rate > 0:
            burst = min(int((now - start) * rate) - sent, BURST_MAX)
            if burst <= 0:
                time.sleep(min(0.002, max(0.0, end - now), max(0.0, next_churn - now)))
                continue
        else:
            burst = BURST_MAX // 4
        for _ in range(burst):
            i = sent
            try:
                producers[i % n].send(topics[i % n], payload, key=key_for(i),
                                      on_delivery=counts.callback(perf()))
            except Exception as exc:  # BufferExhausted, a fatal producer error
                send_errors += 1
                with counts.lock:
                    name = type(exc).__name__
                    counts.errors[name] = counts.errors.get(name, 0) + 1
                    counts.first_error = counts.first_error or f"{name}: {exc}"
            sent += 1
    load_end = time.monotonic()
    unacked = sum(p.flush(FLUSH_TIMEOUT_S) for p in producers)
    for p in producers:
        p.close(5)
    closer.queue.put(None)
    closer.join(FLUSH_TIMEOUT_S + 10)
    unacked += closer.unacked
    stop.set()
    for t, _ in consumers:
        t.join(SHARE_DRAIN_MAX_S + 15)
    finished = time.monotonic()
    with counts.lock:
        return {
            "task": spec["task"], "host": socket.gethostname(), "pid": os.getpid(),
            "topics": sorted(set(topics)), "producers": n, "producers_created": created,
            "sent": sent, "acked": counts.acked, "failed": counts.failed + send_errors,
            "unacknowledged": unacked, "errors": dict(counts.errors), "first_error": counts.first_error,
            "started_at": started_wall, "load_seconds": load_end - start,
            "seconds": finished - start, "latency": counts.hist.to_dict(),
            "share_consumers": len(consumers), "share_consumed": share["share_consumed"],
            "share_delivery_counts": share["share_delivery_counts"],
            "share_errors": share.get("share_errors", []),
        }
