"""Data-path edges as Kafka 4.4 answers them (issue 36), over real sockets: a refused
acks=0 Produce closes the connection, and real consumers read every record once when each
Fetch answer ends with a cut batch (kipper sends the first bytes of the batch its limit cuts
into, as Kafka does). tests/unit/test_produce_edges.py and test_fetch_edges.py hold the
answers field by field; tests/conformance/scenarios/data_edges.py compares them with Kafka."""

from __future__ import annotations

import asyncio

import pytest

from kipper.client.blocking import BlockingConnection
from kipper.client.consumer_requests import fetch
from kipper.client.producer_requests import produce
from kipper.protocol import records
from tests.support import requires
from tests.support.topics import create_topics

BATCHES, PER_BATCH = 40, 10
VALUE = b"x" * 100
# about two and a half batches a fetch: nearly every answer ends with a cut batch
PARTITION_BYTES = 2_800


def test_a_refused_produce_with_acks_0_closes_the_connection_and_a_good_one_does_not(broker, unique):
    create_topics(broker.bootstrap, f"acks0-{unique}", partitions=1)
    with BlockingConnection("127.0.0.1", broker.port) as conn:
        conn.negotiate()
        assert produce(conn, {(f"acks0-{unique}", 0): records.build_batch([(None, b"v")])}, acks=0) is None
        conn.negotiate()  # still open
        produce(conn, {(f"missing-{unique}", 0): records.build_batch([(None, b"v")])}, acks=0)
        with pytest.raises((ConnectionError, OSError)):
            conn.negotiate()


@pytest.fixture(scope="module")
def batched_topic(broker):
    topic = "cut-batches"
    create_topics(broker.bootstrap, topic, partitions=1)
    with BlockingConnection("127.0.0.1", broker.port) as conn:
        conn.negotiate()
        for i in range(BATCHES):
            data = records.build_batch([(b"%d" % (i * PER_BATCH + j), VALUE) for j in range(PER_BATCH)])
            assert produce(conn, {(topic, 0): data}).responses[0].partition_responses[0].error_code == 0
        answer = fetch(conn, {(topic, 0): 0}, max_bytes=PARTITION_BYTES).responses[0].partitions[0]
        whole = sum(bt.header.size for bt in records.decode_all(answer.records))
        assert 0 < whole < len(answer.records) == PARTITION_BYTES, "the answer ends with no cut batch"
    return topic


EXPECTED = [b"%d" % i for i in range(BATCHES * PER_BATCH)]


def test_confluent_kafka_reads_every_record_once_past_cut_batches(broker, batched_topic, unique):
    confluent_kafka = requires.module("confluent_kafka", "interop")
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": broker.bootstrap, "group.id": f"cut-{unique}", "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "max.partition.fetch.bytes": PARTITION_BYTES, "fetch.max.bytes": PARTITION_BYTES,
        "message.max.bytes": 1000})
    try:
        consumer.subscribe([batched_topic])
        keys = []
        while len(keys) < len(EXPECTED):
            msg = consumer.poll(10)
            assert msg is not None, f"stopped after {len(keys)} records"
            assert msg.error() is None, msg.error()
            keys.append(msg.key())
    finally:
        consumer.close()
    assert keys == EXPECTED


def test_kafka_python_reads_every_record_once_past_cut_batches(broker, batched_topic):
    kafka = requires.module("kafka", "interop")
    consumer = kafka.KafkaConsumer(batched_topic, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                   enable_auto_commit=False, max_partition_fetch_bytes=PARTITION_BYTES,
                                   fetch_max_bytes=PARTITION_BYTES, consumer_timeout_ms=10_000)
    keys = []
    try:
        for message in consumer:
            keys.append(message.key)
            if len(keys) == len(EXPECTED):
                break
    finally:
        consumer.close()
    assert keys == EXPECTED


def test_aiokafka_reads_every_record_once_past_cut_batches(broker, batched_topic):
    aiokafka = requires.module("aiokafka", "interop")

    async def consume():
        consumer = aiokafka.AIOKafkaConsumer(batched_topic, bootstrap_servers=broker.bootstrap,
                                             auto_offset_reset="earliest", enable_auto_commit=False,
                                             max_partition_fetch_bytes=PARTITION_BYTES,
                                             fetch_max_bytes=PARTITION_BYTES)
        await consumer.start()
        keys = []
        try:
            while len(keys) < len(EXPECTED):
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 10)
                keys += [m.key for msgs in batch.values() for m in msgs]
        finally:
            await consumer.stop()
        return keys

    assert asyncio.run(consume()) == EXPECTED
