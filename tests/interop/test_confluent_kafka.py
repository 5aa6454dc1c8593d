"""confluent-kafka (librdkafka) produces and consumes against kipper."""

from __future__ import annotations

import time

import pytest

from tests.interop.checks import N_RECORDS, PARTITIONS, check_exactly_once, key_of
from tests.support import requires

ck = requires.module("confluent_kafka", "interop")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

pytestmark = pytest.mark.interop


def _create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    futures[topic].result(15)


def _produce(bootstrap: str, topic: str, **extra) -> list:
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", **extra})
    for i in range(N_RECORDS):
        producer.produce(topic, key=key_of(i), value=f"value-{i}".encode(),
                         on_delivery=lambda err, msg: err and errors.append(err))
        producer.poll(0)
    assert producer.flush(30) == 0
    assert errors == []
    return errors


def _watermarks(consumer, topic: str) -> dict[int, int]:
    return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(PARTITIONS)}


def _drain(consumer, want: int, timeout: float = 60.0):
    out = []
    deadline = time.time() + timeout
    first_at = None
    start = time.time()
    while len(out) < want and time.time() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        assert msg.error() is None, msg.error()
        if first_at is None:
            first_at = time.time() - start
        out.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
    return out, first_at


def test_confluent_kafka_produces_and_reads_back_by_assign(broker, unique):
    topic = f"ck-assign-{unique}"
    _create_topic(broker.bootstrap, topic)
    _produce(broker.bootstrap, topic)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"unused-{unique}",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    records, _ = _drain(consumer, N_RECORDS)
    check_exactly_once(records, _watermarks(consumer, topic))
    consumer.close()


def test_confluent_kafka_consumer_group_reads_everything_and_commits(broker, unique):
    topic = f"ck-group-{unique}"
    _create_topic(broker.bootstrap, topic)
    _produce(broker.bootstrap, topic)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"ck-{unique}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    records, first_at = _drain(consumer, N_RECORDS)
    assert first_at is not None and first_at < 10, f"first record after {first_at}s"
    watermarks = _watermarks(consumer, topic)
    check_exactly_once(records, watermarks)
    consumer.commit(asynchronous=False)
    committed = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
    assert {tp.partition: tp.offset for tp in committed} == watermarks
    consumer.close()
