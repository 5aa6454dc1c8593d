"""The README's "Using kipper in your test suite" examples, as they are written there: each
client against the plugin's embedded broker (kafka_topic, kafka_bootstrap_servers)."""

from __future__ import annotations

import pytest

from tests.support import requires

requires.module("confluent_kafka", "interop")
requires.module("aiokafka", "interop")
requires.module("kafka", "interop")
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # noqa: E402
from confluent_kafka import Consumer, Producer  # noqa: E402
from kafka import KafkaConsumer, KafkaProducer  # noqa: E402

pytestmark = pytest.mark.interop


# --- README: confluent-kafka ---------------------------------------------------------------
def test_confluent_kafka_round_trip(kafka_topic, kafka_bootstrap_servers):
    topic = kafka_topic(partitions=3)
    producer = Producer({"bootstrap.servers": kafka_bootstrap_servers, "enable.idempotence": True})
    for i in range(10):
        producer.produce(topic, key=b"k%d" % i, value=b"v%d" % i)
    assert producer.flush(10) == 0

    consumer = Consumer({"bootstrap.servers": kafka_bootstrap_servers, "group.id": topic,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values = []
    while len(values) < 10:
        msg = consumer.poll(10)
        assert msg is not None and msg.error() is None
        values.append(msg.value())
    consumer.close()
    assert sorted(values) == sorted(b"v%d" % i for i in range(10))


# --- README: aiokafka (pytest-asyncio) -------------------------------------------------------
async def test_aiokafka_round_trip(kafka_topic, kafka_bootstrap_servers):
    topic = kafka_topic()
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap_servers, enable_idempotence=True)
    await producer.start()
    try:
        for i in range(10):
            await producer.send_and_wait(topic, b"v%d" % i, key=b"k%d" % i)
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(topic, bootstrap_servers=kafka_bootstrap_servers, group_id=topic,
                                auto_offset_reset="earliest")
    await consumer.start()
    try:
        values = [(await consumer.getone()).value for _ in range(10)]
    finally:
        await consumer.stop()
    assert values == [b"v%d" % i for i in range(10)]


# --- README: kafka-python --------------------------------------------------------------------
def test_kafka_python_round_trip(kafka_topic, kafka_bootstrap_servers):
    topic = kafka_topic()
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap_servers)
    for i in range(10):
        producer.send(topic, key=b"k%d" % i, value=b"v%d" % i)
    producer.flush(10)
    producer.close()

    consumer = KafkaConsumer(topic, bootstrap_servers=kafka_bootstrap_servers, group_id=topic,
                             auto_offset_reset="earliest", consumer_timeout_ms=10000)
    values = [msg.value for _, msg in zip(range(10), consumer)]
    consumer.close()
    assert values == [b"v%d" % i for i in range(10)]
