"""Ordinary consumers skip SHARE_CHECKPOINT/SHARE_DELTA control batches, as they skip
any control batch: confluent-kafka, aiokafka and kafka-python read exactly the data
records of a topic whose log also holds a share group's durable state."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from kipper.client.admin import NewTopic, create_topics
from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import fetch
from kipper.client.producer_requests import produce
from kipper.client.share_acks import AcknowledgeType
from kipper.client.share_consumer import ShareConsumer
from kipper.protocol import records
from tests.support import requires
from tests.support.readback import read_topic

pytestmark = pytest.mark.interop

N = 60


def _produce(bootstrap, topic, start, n):
    with connect_any(bootstrap) as conn:
        for i in range(start, start + n, 10):
            data = records.build_batch([(None, f"v{j}".encode()) for j in range(i, i + 10)])
            resp = produce(conn, {(topic, 0): data}, acks=1, timeout_ms=10000)
            assert resp.responses[0].partition_responses[0].error_code == 0


@pytest.fixture(scope="module")
def shared_topic(broker):
    """A topic whose log interleaves data with a share group's control records."""
    topic = f"share-ctl-{uuid.uuid4().hex[:8]}"
    with connect_any(broker.bootstrap) as conn:
        create_topics(conn, [NewTopic(topic, 1, 1, {"share.auto.offset.reset": "earliest"})], timeout_ms=10000)
    _produce(broker.bootstrap, topic, 0, N // 2)
    with ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": f"sg-{topic}",
                        "share.acknowledgement.mode": "explicit", "max.poll.records": 7}) as c:
        c.subscribe([topic])
        accepted = 0
        deadline = time.time() + 20
        while accepted < N and time.time() < deadline:
            if accepted == N // 2:
                _produce(broker.bootstrap, topic, N // 2, N // 2)
            for r in c.poll(0.5):
                kind = AcknowledgeType.RELEASE if r.delivery_count == 1 and r.offset % 3 == 0 \
                    else AcknowledgeType.ACCEPT
                c.acknowledge(r, kind)
                accepted += kind == AcknowledgeType.ACCEPT
            c.commit_sync()
    kinds = _control_types(broker.bootstrap, topic)
    assert kinds.count(records.SHARE_CHECKPOINT) >= 1 and kinds.count(records.SHARE_DELTA) >= 5
    return topic


def _control_types(bootstrap, topic):
    with connect_any(bootstrap) as conn:
        resp = fetch(conn, {(topic, 0): 0}, max_bytes=1 << 24)
    batches = records.decode_all(resp.responses[0].partitions[0].records)
    return [records.control_type(b.records[0].key) for b in batches if b.header.is_control]


def _expected():
    return [f"v{i}".encode() for i in range(N)]


def test_our_readback_sees_only_the_data(broker, shared_topic):
    assert [r.value for r in read_topic(broker.bootstrap, shared_topic)[0]] == _expected()


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_confluent_kafka_consumer_skips_share_control_batches(broker, shared_topic, isolation):
    ck = requires.module("confluent_kafka", "interop")
    c = ck.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"plain-{uuid.uuid4().hex[:6]}",
                     "enable.auto.commit": False, "isolation.level": isolation})
    c.assign([ck.TopicPartition(shared_topic, 0, 0)])
    got = []
    deadline = time.time() + 20
    while len(got) < N and time.time() < deadline:
        msg = c.poll(0.5)
        if msg is None:
            continue
        assert msg.error() is None, msg.error()
        got.append(msg.value())
    extra = c.poll(1.0)
    c.close()
    assert got == _expected() and extra is None


def test_kafka_python_consumer_skips_share_control_batches(broker, shared_topic):
    kafka = requires.module("kafka", "interop")
    c = kafka.KafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
    tp = kafka.TopicPartition(shared_topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = []
    deadline = time.time() + 20
    while len(got) < N and time.time() < deadline:
        for msgs in c.poll(timeout_ms=500).values():
            got += [m.value for m in msgs]
    extra = [m for msgs in c.poll(timeout_ms=1000).values() for m in msgs]
    c.close()
    assert got == _expected() and extra == []


def test_aiokafka_consumer_skips_share_control_batches(broker, shared_topic):
    aiokafka = requires.module("aiokafka", "interop")

    async def read():
        c = aiokafka.AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False)
        await c.start()
        try:
            tp = aiokafka.TopicPartition(shared_topic, 0)
            c.assign([tp])
            await c.seek_to_beginning(tp)
            got = []
            deadline = time.time() + 20
            while len(got) < N and time.time() < deadline:
                for msgs in (await c.getmany(timeout_ms=500)).values():
                    got += [m.value for m in msgs]
            extra = [m for msgs in (await c.getmany(timeout_ms=1000)).values() for m in msgs]
            return got, extra
        finally:
            await c.stop()

    got, extra = asyncio.run(read())
    assert got == _expected() and extra == []
