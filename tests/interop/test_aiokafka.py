"""aiokafka (old API versions: ApiVersions v0, Produce v7) against kipper."""

from __future__ import annotations

import time

import pytest

from tests.interop.checks import N_RECORDS, PARTITIONS, check_exactly_once, key_of
from tests.support import requires

requires.module("aiokafka", "interop")
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient, NewTopic  # noqa: E402

pytestmark = pytest.mark.interop


async def _create_topic(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])
    finally:
        await admin.close()


async def _produce(bootstrap: str, topic: str, **extra) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", **extra)
    await producer.start()
    try:
        futures = [await producer.send(topic, key=key_of(i), value=f"value-{i}".encode())
                   for i in range(N_RECORDS)]
        await producer.flush()
        for f in futures:
            await f
    finally:
        await producer.stop()


async def _drain(consumer, want: int, timeout: float = 60.0):
    out = []
    deadline = time.time() + timeout
    start = time.time()
    first_at = None
    while len(out) < want and time.time() < deadline:
        batches = await consumer.getmany(timeout_ms=500)
        for tp, msgs in batches.items():
            if msgs and first_at is None:
                first_at = time.time() - start
            out += [(tp.partition, m.offset, m.key, m.value) for m in msgs]
    return out, first_at


async def test_aiokafka_produces_and_reads_back_by_assign(broker, unique):
    topic = f"ak-assign-{unique}"
    await _create_topic(broker.bootstrap, topic)
    await _produce(broker.bootstrap, topic)
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        records, _ = await _drain(consumer, N_RECORDS)
        ends = await consumer.end_offsets(tps)
        check_exactly_once(records, {tp.partition: off for tp, off in ends.items()})
    finally:
        await consumer.stop()


async def test_aiokafka_consumer_group_reads_everything_and_commits(broker, unique):
    topic = f"ak-group-{unique}"
    await _create_topic(broker.bootstrap, topic)
    await _produce(broker.bootstrap, topic)
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=f"ak-{unique}",
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    try:
        records, first_at = await _drain(consumer, N_RECORDS)
        assert first_at is not None and first_at < 10, f"first record after {first_at}s"
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        watermarks = {tp.partition: off for tp, off in (await consumer.end_offsets(tps)).items()}
        check_exactly_once(records, watermarks)
        await consumer.commit()
        committed = {tp.partition: await consumer.committed(tp) for tp in tps}
        assert committed == watermarks
    finally:
        await consumer.stop()
