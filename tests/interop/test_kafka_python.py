"""kafka-python produces and consumes against kipper."""

from __future__ import annotations

import time

import pytest

from tests.interop.checks import N_RECORDS, PARTITIONS, check_exactly_once, key_of
from tests.support import requires

requires.module("kafka", "interop")
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402

pytestmark = pytest.mark.interop


def _create_topic(bootstrap: str, topic: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    admin.close()


def _produce(bootstrap: str, topic: str, **extra) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", **extra)
    futures = [producer.send(topic, key=key_of(i), value=f"value-{i}".encode()) for i in range(N_RECORDS)]
    producer.flush(30)
    for f in futures:
        f.get(10)
    producer.close()


def _drain(consumer, want: int, timeout: float = 60.0):
    out = []
    deadline = time.time() + timeout
    start = time.time()
    first_at = None
    while len(out) < want and time.time() < deadline:
        for tp, msgs in consumer.poll(500).items():
            if msgs and first_at is None:
                first_at = time.time() - start
            out += [(tp.partition, m.offset, m.key, m.value) for m in msgs]
    return out, first_at


def test_kafka_python_produces_and_reads_back_by_assign(broker, unique):
    topic = f"kp-assign-{unique}"
    _create_topic(broker.bootstrap, topic)
    _produce(broker.bootstrap, topic)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    records, _ = _drain(consumer, N_RECORDS)
    ends = consumer.end_offsets(tps)
    check_exactly_once(records, {tp.partition: off for tp, off in ends.items()})
    consumer.close()


def test_kafka_python_consumer_group_reads_everything_and_commits(broker, unique):
    topic = f"kp-group-{unique}"
    _create_topic(broker.bootstrap, topic)
    _produce(broker.bootstrap, topic)
    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=f"kp-{unique}",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    records, first_at = _drain(consumer, N_RECORDS)
    assert first_at is not None and first_at < 10, f"first record after {first_at}s"
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    watermarks = {tp.partition: off for tp, off in consumer.end_offsets(tps).items()}
    check_exactly_once(records, watermarks)
    consumer.commit()
    assert {tp.partition: consumer.committed(tp) for tp in tps} == watermarks
    consumer.close()
