"""Warming a broker before a benchmark measures it (issue 41).

A user runs a long-lived broker: Kafka's JIT has compiled its produce and fetch paths, a
Python broker has its caches and allocator arenas in use, the page cache holds the logs.
A broker started for a benchmark pass is none of that, and Kafka pays most: started cold it
ingested at a quarter of its warm rate. ``warm`` produces ``records`` with the producer
settings the ingest passes use (confluent-kafka, idempotent, acks=all) into a topic of its
own, reads them back, and deletes the topic, so what the pass then stores and measures is
its own. Start-up time and idle memory are measured on brokers that were never warmed.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time

WARM_RECORDS = 1_000_000
TOPIC = "warmup"


def in_process(fn, *args, timeout: float = 900):
    """``fn(*args)`` in a spawned process (a client beside the broker, not in the runner);
    its exception is raised here as a RuntimeError."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_call, args=(fn, args, q))
    proc.start()
    try:
        ok, value = q.get(timeout=timeout)
    finally:
        proc.join(30)
    if not ok:
        raise RuntimeError(value)
    return value


def _call(fn, args, q) -> None:
    try:
        q.put((True, fn(*args)))
    except Exception as exc:
        q.put((False, f"{fn.__name__}: {exc!r}"))


def produce(bootstrap: str, topic: str, n: int, size: int) -> int:
    """``n`` records from an idempotent acks=all producer; returns how many failed."""
    from confluent_kafka import Producer

    from benchmarks.workloads import send_all

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    return send_all(p, topic, os.urandom(size), n)


def read_back(bootstrap: str, topic: str, n: int) -> int:
    from benchmarks.consumers import rdkafka

    return rdkafka(bootstrap, topic, n, None, {"fetch.queue.backoff.ms": 10})["records"]


def warm(broker, records: int = WARM_RECORDS, size: int = 100) -> dict:
    """Produce ``records`` and read them back on ``broker`` (any object with ``bootstrap``),
    then delete the topic. Returns what it did, for the report."""
    from benchmarks.broker_ingest import create_topic, delete_topic

    if records <= 0:
        return {"warm_records": 0}
    started = time.perf_counter()
    create_topic(broker.bootstrap, 1, TOPIC)
    failed = in_process(produce, broker.bootstrap, TOPIC, records, size)
    got = in_process(read_back, broker.bootstrap, TOPIC, records - failed)
    try:
        delete_topic(broker.bootstrap, TOPIC)
    except Exception as exc:  # a broker without DeleteTopics keeps it: noted, not fatal
        return {"warm_records": got, "warm_s": round(time.perf_counter() - started, 1),
                "warm_topic_kept": repr(exc)[:80]}
    return {"warm_records": got, "warm_s": round(time.perf_counter() - started, 1)}
