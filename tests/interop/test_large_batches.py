"""Batches of a megabyte, as librdkafka sends them at speed, stored by the in-memory log
where the kernel received them (``framing.FrameMemory``, ``batch.stored_batch``), then read
back by all three clients, cut by DeleteRecords and compacted by the broker's cleaner."""

from __future__ import annotations

import asyncio
import time

import pytest

from kipper.testing import EmbeddedBroker
from tests.support import requires
from tests.support.readback import read_topic

requires.module("confluent_kafka", "interop")
pytestmark = pytest.mark.interop

N = 30_000


def _value(i: int) -> bytes:
    return b"%08d" % i + b"." * 92  # 100 bytes


@pytest.fixture(scope="module")
def memory_broker():
    with EmbeddedBroker({"log.cleaner.backoff.ms": "100"}) as broker:
        yield broker


def _create(bootstrap: str, topic: str, **configs) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(15)


def _produce(bootstrap: str, topic: str, items) -> None:
    from confluent_kafka import Producer

    errors = []
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 200,
                  "batch.size": 1_000_000, "compression.type": "none"})
    for key, value in items:
        p.produce(topic, key=key, value=value, on_delivery=lambda err, msg: err and errors.append(err))
        p.poll(0)
    assert p.flush(30) == 0 and errors == []


def _kinds(engines, topic: str) -> list[str]:
    """(In the broker process: what holds each stored batch.)"""
    return [type(data.obj).__name__ if isinstance(data, memoryview) else type(data).__name__
            for _, data in engines.topics.partition(topic, 0).batches()]


def _stored_kinds(broker: EmbeddedBroker, topic: str) -> list[str]:
    return broker.call(_kinds, topic)


def _confluent_read(bootstrap: str, topic: str, n: int) -> list[tuple[int, bytes]]:
    """(offset, value) of the first ``n`` records from the log start."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "large-batches", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = []
    deadline = time.time() + 30
    while len(got) < n and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None:
            assert m.error() is None, m.error()
            got.append((m.offset(), m.value()))
    c.close()
    return got


def test_megabyte_batches_are_kept_in_place_and_every_client_reads_them(memory_broker, unique):
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    topic = f"big-{unique}"
    bootstrap = memory_broker.bootstrap_servers
    _create(bootstrap, topic)
    _produce(bootstrap, topic, ((None, _value(i)) for i in range(N)))
    assert "FrameMemory" in _stored_kinds(memory_broker, topic)  # the path under test was taken
    want = [(i, _value(i)) for i in range(N)]

    assert _confluent_read(bootstrap, topic, N) == want

    from kafka import KafkaConsumer
    kc = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                       consumer_timeout_ms=5000, fetch_max_bytes=1 << 24)
    assert [(m.offset, m.value) for m in kc] == want
    kc.close()

    async def aio():
        from aiokafka import AIOKafkaConsumer
        ac = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        await ac.start()
        try:
            out = []
            deadline = time.time() + 30
            while len(out) < N and time.time() < deadline:
                for msgs in (await ac.getmany(timeout_ms=500)).values():
                    out.extend((m.offset, m.value) for m in msgs)
            return out
        finally:
            await ac.stop()

    assert asyncio.run(aio()) == want

    # DeleteRecords drops whole batches below the new log start; the rest reads as before
    admin = AdminClient({"bootstrap.servers": bootstrap})
    cut = N // 2
    for future in admin.delete_records([TopicPartition(topic, 0, cut)]).values():
        assert future.result(15).low_watermark == cut
    left = _confluent_read(bootstrap, topic, N - cut)
    assert left[0][0] <= cut and left == want[left[0][0]:]


def test_the_cleaner_compacts_megabyte_batches(memory_broker, unique):
    topic = f"big-compact-{unique}"
    bootstrap = memory_broker.bootstrap_servers
    _create(bootstrap, topic, **{"cleanup.policy": "compact", "segment.ms": "100",
                                 "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "100"})
    keys = 100
    _produce(bootstrap, topic, ((b"k%d" % (i % keys), _value(i)) for i in range(N)))
    assert "FrameMemory" in _stored_kinds(memory_broker, topic)
    time.sleep(0.3)  # past segment.ms: the next append rolls the segment
    _produce(bootstrap, topic, [(b"roll", b"r")])
    latest = {b"k%d" % (i % keys): _value(i) for i in range(N)}
    latest[b"roll"] = b"r"
    deadline = time.time() + 30
    while time.time() < deadline:
        got = read_topic(bootstrap, topic)[0]
        if len(got) <= keys + 1:
            break
        time.sleep(0.2)
    assert {r.key: r.value for r in got} == latest and len(got) == keys + 1
