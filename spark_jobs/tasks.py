"""One load-generator task: it runs on a Spark executor and returns a dict.

A task owns some producers (one per topic assignment), and may own churn
producers, transactional producers (txn_task.py) and share consumers
(share_task.py). Its send loop paces the task's share of ``producerRate`` in
short bursts and round-robins over its producers. Producer-id churn either
replaces one of those producers every ``1/churn`` seconds (a new
InitProducerId), or, with ``churn_records`` set, starts a short-lived churn
producer of its own that sends that many records, so the steady producers
keep the ids they were admitted with (seed 002). Replaced producers are
flushed and closed on side threads. Acknowledgements and errors are counted
per role in ``on_delivery`` on the producers' send threads, with
send-to-ack latency in HDR-style histograms. Nothing here talks to Spark.
"""

from __future__ import annotations

import itertools
import os
import random
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kipper.protocol.histogram import LatencyHistogram
from kipper.spark_jobs.counts import Counts, error_name
from kipper.spark_jobs.ledger import FAILED, IDENTITY, IDENTITY_SIZE, MAGIC, Ledger, uid

pack = IDENTITY.pack

FLUSH_TIMEOUT_S = 30.0
BURST_MAX = 2000           # records sent before the pacing clock is read again
# A churn producer that the quota refuses gives up after this; it then fails its
# records instead of retrying for the whole delivery.timeout.ms of a steady one.
CHURN_DELIVERY_TIMEOUT_MS = 5000
CHURN_REQUEST_TIMEOUT_MS = 4000
CHURN_START_S = 2.0        # dedicated churn starts once the steady producers are admitted
CLOSERS = 16               # replaced producers flushed and closed at once


def _keys(distributor: str):
    pool = [f"key-{i}".encode() for i in range(1024)]
    if distributor == "NO_KEY":
        return lambda i: None
    if distributor == "KEY_ROUND_ROBIN":
        return lambda i: pool[i & 1023]
    rnd = random.Random(time.perf_counter_ns())
    return lambda i: pool[rnd.getrandbits(10)]


class Closer:
    """Flushes and closes replaced producers on a small pool, so churn never stalls
    the send loop; what is still undelivered after the flush counts for ``counts``."""

    def __init__(self, flush_s: float):
        self.flush_s = flush_s
        self.pool = ThreadPoolExecutor(CLOSERS, thread_name_prefix="loadgen-closer")

    def close(self, producer, counts: Counts) -> None:
        def run():
            left = producer.flush(self.flush_s)
            producer.close(5)
            if left:
                with counts.lock:
                    counts.unacknowledged += left
        self.pool.submit(run)

    def join(self) -> None:
        self.pool.shutdown(wait=True)


def _run_churn(spec: dict, config: dict, tail: bytes, counts: Counts, start: float, end: float,
               closer: Closer, books: "Books") -> int:
    """Dedicated churn: a new producer every 1/churn s, ``churn_records`` records each."""
    from kipper.client.producer import Producer

    config = {**config, "client.id": f"loadgen-churn-{spec['task']}",
              "delivery.timeout.ms": str(CHURN_DELIVERY_TIMEOUT_MS),
              "request.timeout.ms": str(CHURN_REQUEST_TIMEOUT_MS)}
    topics = spec["topics"]
    every = 1.0 / spec["churn"]
    created = 0
    next_at = start + min(CHURN_START_S, spec["duration_s"] / 4)
    perf = time.perf_counter
    while True:
        now = time.monotonic()
        if next_at >= end:
            return created
        if now < next_at:
            time.sleep(min(next_at - now, 0.05))
            continue
        p = Producer(config)
        topic = topics[created % len(topics)]
        ledger = books.new("churn", [topic])
        for _ in range(spec["churn_records"]):
            c = ledger.next()
            try:
                p.send(topic, ledger.value(c, tail), on_delivery=counts.callback(perf(), ledger, c))
            except Exception as exc:  # a fatal producer error
                ledger.status[c] = FAILED
                counts.error(error_name(exc), str(exc))
            with counts.lock:
                counts.sent += 1
        created += 1
        closer.close(p, counts)
        next_at += every


class Books:
    """The task's ledgers (spark_jobs/ledger.py), one per producer instance, each with its uid."""

    def __init__(self, task: int):
        self.task = task
        self.numbers = itertools.count()  # next() is atomic: the churn and txn threads share it
        self.ledgers: list[Ledger] = []

    def new(self, role: str, topics) -> Ledger:
        ledger = Ledger(uid(self.task, next(self.numbers)), role, topics)
        self.ledgers.append(ledger)
        return ledger

    def result(self) -> list[dict]:
        return [ledger.result() for ledger in self.ledgers]


def run_task(spec: dict) -> dict:
    """Produce ``spec``'s share of the load; returns counts, errors and latency histograms per role."""
    from kipper.client.producer import Producer
    from kipper.spark_jobs import producer_report, share_task, txn_task

    started_wall = time.time()
    config = {"bootstrap.servers": spec["bootstrap"], "client.id": f"loadgen-{spec['task']}",
              "enable.idempotence": "true" if spec["idempotence"] else "false",
              **({} if spec["idempotence"] else {"acks": spec["producer_config"].get("acks", "1")}),
              **spec["producer_config"]}
    steady, churn = Counts(), Counts()
    stop = threading.Event()
    share = share_task.start(spec, stop)

    cpu_started = time.process_time()
    topics = spec["topics"]
    books = Books(spec["task"])
    producers = [Producer(config) for _ in topics]
    ledgers = [books.new("steady", [t]) for t in topics]
    created = len(producers)
    closer = Closer(FLUSH_TIMEOUT_S)
    payload = os.urandom(spec["message_size"])
    tail = payload[IDENTITY_SIZE:]  # each value: the record's identity, then the payload's tail
    key_for = _keys(spec["key_distributor"])
    rate = spec["rate"]
    dedicated = spec["churn"] > 0 and spec["churn_records"] > 0
    churn_every = 1.0 / spec["churn"] if spec["churn"] > 0 and not dedicated else 0.0
    n = len(producers)
    sent = 0
    perf = time.perf_counter
    start = time.monotonic()
    end = start + spec["duration_s"]
    txn = txn_task.start(spec, tail, start, end, books)
    report = producer_report.start(spec, producers)
    churner = None
    churn_created = [0]
    if dedicated:
        churner = threading.Thread(target=lambda: churn_created.__setitem__(0, _run_churn(
            spec, config, tail, churn, start, end, closer, books)), name="loadgen-churn", daemon=True)
        churner.start()
    next_churn = start + churn_every if churn_every else float("inf")
    churn_slot = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now >= next_churn:
            old = producers[churn_slot]
            producers[churn_slot] = Producer(config)
            ledgers[churn_slot] = books.new("steady", [topics[churn_slot]])
            created += 1
            closer.close(old, steady)
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
            j = i % n
            ledger = ledgers[j]
            c = ledger.next()
            try:
                producers[j].send(topics[j], pack(MAGIC, ledger.uid, c) + tail, key=key_for(i),
                                  on_delivery=steady.callback(perf(), ledger, c))
            except Exception as exc:  # BufferExhausted, a fatal producer error
                ledger.status[c] = FAILED
                steady.error(error_name(exc), str(exc))
            sent += 1
    load_end = time.monotonic()
    steady.sent = sent
    unacked = sum(p.flush(FLUSH_TIMEOUT_S) for p in producers)
    report_lines = report.stop() if report is not None else 0
    for p in producers:
        p.close(5)
    with steady.lock:
        steady.unacknowledged += unacked
    if churner is not None:
        churner.join(FLUSH_TIMEOUT_S)
    closer.join()
    txn_result = txn.join()
    stop.set()
    share_result = share.join()
    finished = time.monotonic()
    cpu_s = time.process_time() - cpu_started  # this Python worker: the task's thread and the send threads
    roles = {"steady": steady.result(), "churn": churn.result(), "transactional": txn_result["counts"]}
    merged = LatencyHistogram()
    for r in roles.values():
        merged.add(LatencyHistogram.from_dict(r["latency"]))
    errors: dict[str, int] = {}
    for r in roles.values():
        for k, v in r["errors"].items():
            errors[k] = errors.get(k, 0) + v
    return {
        "task": spec["task"], "host": socket.gethostname(), "pid": os.getpid(),
        # where the task ran: the executor's working directory and the Python running it
        "workdir": os.getcwd(), "python": sys.executable,
        "kipper": os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "topics": sorted(set(topics)), "producers": n,
        "producers_created": created + churn_created[0] + txn_result["instances"],
        **{k: sum(r[k] for r in roles.values()) for k in ("sent", "acked", "failed", "unacknowledged")},
        "errors": errors,
        "first_error": next((r["first_error"] for r in roles.values() if r["first_error"]), None),
        "started_at": started_wall, "load_seconds": load_end - start,
        "seconds": finished - start, "latency": merged.to_dict(),
        "roles": roles, "transactions": txn_result["transactions"], "cpu_seconds": cpu_s,
        "ledgers": books.result(), "producer_report_lines": report_lines,
        "transaction_errors": txn_result["errors"],
        **share_result,
    }
