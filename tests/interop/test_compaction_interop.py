"""Compacted topics read by confluent-kafka, kafka-python and aiokafka, with the broker's
own cleaner doing the work: the latest value per key, gaps in the offsets, a consumer
starting at a removed offset, a group resuming from its committed offset after a
cleaning, and keyless records refused with INVALID_RECORD."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.broker import BrokerProcess
from tests.support.readback import read_topic

pytestmark = pytest.mark.interop

KEYS = 10
VERSIONS = 10


@pytest.fixture(scope="module")
def cleaning_broker():
    broker = BrokerProcess({"log.cleaner.backoff.ms": "100"}).start()
    yield broker
    broker.stop()


def _compacted_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = {"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
               "delete.retention.ms": "100"}
    admin.create_topics([NewTopic(topic, 1, 1, config=configs)])[topic].result(15)


def _produce(bootstrap: str, topic: str, items) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for key, value in items:
        p.produce(topic, key=key, value=value)
        p.flush(10)  # one batch each: the cleaner has records to drop
    assert p.flush(10) == 0


def _fill_and_compact(broker: BrokerProcess, topic: str) -> None:
    _compacted_topic(broker.bootstrap, topic)
    _produce(broker.bootstrap, topic, [(b"k%d" % (i % KEYS), b"v%d" % i) for i in range(KEYS * VERSIONS)])
    time.sleep(0.3)  # past segment.ms: the next append rolls the segment
    _produce(broker.bootstrap, topic, [(b"roll", b"r")])
    deadline = time.time() + 20
    while time.time() < deadline:
        if sum(len(r) for r in read_topic(broker.bootstrap, topic).values()) <= KEYS + 1:
            return
        time.sleep(0.2)
    raise AssertionError("the cleaner did not compact the topic")


def _expected() -> dict[bytes, bytes]:
    out = {b"k%d" % (i % KEYS): b"v%d" % i for i in range(KEYS * VERSIONS)}
    out[b"roll"] = b"r"
    return out


def test_all_three_clients_read_the_latest_value_per_key(cleaning_broker, unique):
    topic = f"compact-{unique}"
    _fill_and_compact(cleaning_broker, topic)
    bootstrap = cleaning_broker.bootstrap

    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"c-{unique}", "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got = {}
    offsets = []
    deadline = time.time() + 20
    while len(got) < KEYS + 1 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got[m.key()] = m.value()
            offsets.append(m.offset())
    c.close()
    assert got == _expected()
    assert offsets[0] == KEYS * VERSIONS - KEYS and offsets == sorted(offsets)

    from kafka import KafkaConsumer
    kc = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                       consumer_timeout_ms=4000)
    assert {m.key: m.value for m in kc} == _expected()
    kc.close()

    async def aio():
        from aiokafka import AIOKafkaConsumer
        ac = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        await ac.start()
        try:
            out = {}
            deadline = time.time() + 20
            while len(out) < KEYS + 1 and time.time() < deadline:
                for msgs in (await ac.getmany(timeout_ms=500)).values():
                    out.update({m.key: m.value for m in msgs})
            return out
        finally:
            await ac.stop()

    assert asyncio.run(aio()) == _expected()


def test_a_consumer_starting_at_a_removed_offset_gets_the_next_record(cleaning_broker, unique):
    from confluent_kafka import Consumer, TopicPartition

    topic = f"compact-at-{unique}"
    _fill_and_compact(cleaning_broker, topic)
    c = Consumer({"bootstrap.servers": cleaning_broker.bootstrap, "group.id": f"a-{unique}"})
    c.assign([TopicPartition(topic, 0, 5)])  # offset 5 was cleaned away
    first = None
    deadline = time.time() + 15
    while first is None and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            first = m.offset()
    c.close()
    assert first == KEYS * VERSIONS - KEYS


def test_a_group_resumes_from_its_committed_offset_after_a_cleaning(cleaning_broker, unique):
    from confluent_kafka import Consumer, TopicPartition

    topic, group = f"compact-grp-{unique}", f"g-{unique}"
    _compacted_topic(cleaning_broker.bootstrap, topic)
    _produce(cleaning_broker.bootstrap, topic, [(b"k%d" % (i % KEYS), b"v%d" % i) for i in range(KEYS * VERSIONS)])
    c = Consumer({"bootstrap.servers": cleaning_broker.bootstrap, "group.id": group,
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    c.commit(offsets=[TopicPartition(topic, 0, 95)], asynchronous=False)
    c.close()
    time.sleep(0.3)
    _produce(cleaning_broker.bootstrap, topic, [(b"roll", b"r")])
    deadline = time.time() + 20
    while sum(len(r) for r in read_topic(cleaning_broker.bootstrap, topic).values()) > KEYS + 1:
        assert time.time() < deadline, "the cleaner did not compact the topic"
        time.sleep(0.2)
    c = Consumer({"bootstrap.servers": cleaning_broker.bootstrap, "group.id": group,
                  "enable.auto.commit": False})
    c.subscribe([topic])
    seen = []
    deadline = time.time() + 15
    while len(seen) < 6 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            seen.append(m.offset())
    c.close()
    assert seen == [95, 96, 97, 98, 99, 100]


def test_a_keyless_record_is_refused_with_invalid_record(cleaning_broker, unique):
    from confluent_kafka import KafkaError, Producer

    topic = f"compact-nokey-{unique}"
    _compacted_topic(cleaning_broker.bootstrap, topic)
    errors = []
    p = Producer({"bootstrap.servers": cleaning_broker.bootstrap, "linger.ms": 0})
    p.produce(topic, value=b"no key", on_delivery=lambda err, msg: errors.append(err))
    p.flush(10)
    assert errors and errors[0].code() == KafkaError.INVALID_RECORD
    assert read_topic(cleaning_broker.bootstrap, topic) == {0: []}
