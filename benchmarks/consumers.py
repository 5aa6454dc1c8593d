"""Consumers with each client's default settings, for benchmarks/side_by_side.py and
benchmarks/consume_defaults.py (issue 41): each function runs in its own spawned process,
reads ``n`` records from the start of a topic and returns what it measured.

- ``rdkafka``: confluent-kafka (librdkafka), partition 0 assigned, or with ``group`` a
  subscription to every partition as a classic (``"classic"``) or KIP-848 (``"consumer"``)
  group member, the time then counting the join;
- ``aiokafka`` and ``kafka_python``: the same with those clients.

Nothing is tuned but what a benchmark must set (bootstrap, a group id, no auto commit,
``auto.offset.reset=earliest`` for a group): the point is what a user who changes nothing
sees. ``settings`` adds client properties (e.g. librdkafka's ``fetch.queue.backoff.ms``) to
show what a setting changes. Each result carries ``stalls``: the times a poll that had
been returning records waited more than ``STALL_S`` for the next ones (librdkafka's
``fetch.queue.backoff.ms`` shows there).
"""

from __future__ import annotations

import os
import time

STALL_S = 0.3
DEADLINE_S = 600
IDLE_S = 30  # no record for this long (a broker without the group protocol asked for): give up


class _Clock:
    """Counts records and the stalls between polls that returned them."""

    def __init__(self):
        self.started = time.perf_counter()
        self.last = None
        self.got = 0
        self.first = None  # seconds to the first record (a group's join, the first fetch)
        self.stalls: list[float] = []

    def add(self, k: int) -> None:
        if not k:
            return
        now = time.perf_counter()
        if self.first is None:
            self.first = now - self.started
        if self.last is not None and now - self.last > STALL_S:
            self.stalls.append(round(now - self.last, 3))
        self.last = now
        self.got += k

    def running(self, n: int) -> bool:
        now = time.perf_counter()
        if now - (self.last or self.started) > IDLE_S:
            raise TimeoutError(f"no record for {IDLE_S} s after {self.got}")
        return self.got < n and now - self.started < DEADLINE_S

    def result(self, **extra) -> dict:
        elapsed = time.perf_counter() - self.started
        return {"records": self.got, "seconds": elapsed, "records_per_sec": self.got / elapsed,
                "stalls": len(self.stalls), "stalled_s": round(sum(self.stalls), 3),
                "first_record_s": round(self.first or 0.0, 3), **extra}


def rdkafka(bootstrap: str, topic: str, n: int, group: str | None = None,
            settings: dict | None = None, work_us: int = 0, start_evt=None, logger=None) -> dict:
    """``work_us``: the application's time on each record (a busy wait), as a real one spends."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    conf = {"bootstrap.servers": bootstrap, "group.id": f"bench-{os.getpid()}", "enable.auto.commit": False,
            **(settings or {})}
    if group is not None:
        conf.update({"group.protocol": group, "auto.offset.reset": "earliest"})
    if start_evt is not None:
        start_evt.wait()
    clock = _Clock()
    c = Consumer(conf) if logger is None else Consumer(conf, logger=logger)  # librdkafka's log (debug=...)
    if group is None:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    else:
        c.subscribe([topic])
    while clock.running(n):
        got = [m for m in c.consume(10000, 1.0) if m.error() is None]
        if work_us:
            _work(len(got), work_us)
        clock.add(len(got))
    result = clock.result()
    c.close()
    return result


def _work(records: int, us: int) -> None:
    until = time.perf_counter_ns() + records * us * 1000
    while time.perf_counter_ns() < until:
        pass


def aiokafka(bootstrap: str, topic: str, n: int, group: str | None = None,
             settings: dict | None = None, start_evt=None) -> dict:
    import asyncio

    return asyncio.run(_aiokafka(bootstrap, topic, n, group, settings or {}, start_evt))


async def _aiokafka(bootstrap, topic, n, group, settings, start_evt) -> dict:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    if start_evt is not None:
        start_evt.wait()
    clock = _Clock()
    if group is None:
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **settings)
        await c.start()
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        await c.seek_to_beginning(tp)
    else:
        c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"bench-{os.getpid()}",
                             enable_auto_commit=False, auto_offset_reset="earliest", **settings)
        await c.start()
    try:
        while clock.running(n):
            batches = await c.getmany(timeout_ms=1000)
            clock.add(sum(map(len, batches.values())))
    finally:
        await c.stop()
    return clock.result()


def kafka_python(bootstrap: str, topic: str, n: int, group: str | None = None,
                 settings: dict | None = None, start_evt=None) -> dict:
    from kafka import KafkaConsumer, TopicPartition

    if start_evt is not None:
        start_evt.wait()
    clock = _Clock()
    if group is None:
        c = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **(settings or {}))
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
    else:
        c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"bench-{os.getpid()}",
                          enable_auto_commit=False, auto_offset_reset="earliest", **(settings or {}))
    while clock.running(n):
        clock.add(sum(map(len, c.poll(timeout_ms=1000).values())))
    result = clock.result()
    c.close()
    return result


CLIENTS = {"rdkafka": rdkafka, "aiokafka": aiokafka, "kafka-python": kafka_python}
