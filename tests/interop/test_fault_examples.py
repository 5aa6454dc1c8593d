"""Fault injection with each client: a producer that retries NOT_LEADER_OR_FOLLOWER, a
consumer that survives COORDINATOR_NOT_AVAILABLE, and an idempotent producer whose Produce
answer is lost (the connection closes after the broker stored the batch): it retries, and
nothing is stored twice. Three of them are docs/TESTING.md's worked examples, word for word
(tests/unit/test_docs_examples.py). All use the plugin's fixtures, whose broker is the
default process broker, which confluent-kafka cannot freeze."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support import requires

ck = requires.module("confluent_kafka", "interop")
aiokafka = requires.module("aiokafka", "interop")
kafka = requires.module("kafka", "interop")

pytestmark = pytest.mark.interop


def _read_all(bootstrap: str, topic: str, n: int) -> list[bytes]:
    """Every value of partition 0 from the start, read by a fresh confluent-kafka consumer."""
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False})
    c.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])
    values, deadline = [], time.monotonic() + 30
    while len(values) < n and time.monotonic() < deadline:
        msg = c.poll(0.2)
        if msg is not None and msg.error() is None:
            values.append(msg.value())
    extra = c.poll(0.5)  # nothing more: no duplicate behind them
    c.close()
    assert extra is None or extra.error() is not None
    return values


# --- confluent-kafka -----------------------------------------------------------------------

def test_confluent_producer_retries_not_leader_or_follower(kafka_topic, kafka_faults, kafka_bootstrap_servers):
    topic = kafka_topic()
    kafka_faults.error("Produce", "NOT_LEADER_OR_FOLLOWER", count=2, topic=topic)

    producer = ck.Producer({"bootstrap.servers": kafka_bootstrap_servers, "enable.idempotence": True})
    producer.produce(topic, b"hello")
    assert producer.flush(30) == 0                      # delivered, after two refusals

    assert kafka_faults.requests("Produce") == 3
    consumer = ck.Consumer({"bootstrap.servers": kafka_bootstrap_servers, "group.id": topic,
                            "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    msg = consumer.poll(30)
    consumer.close()
    assert msg.value() == b"hello"


def test_confluent_consumer_survives_coordinator_not_available(kafka_broker, kafka_faults):
    topic = kafka_broker.create_topic()
    producer = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
    for i in range(5):
        producer.produce(topic, b"%d" % i)
    assert producer.flush(30) == 0
    kafka_faults.error("FindCoordinator", "COORDINATOR_NOT_AVAILABLE", count=3)
    consumer = ck.Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": topic,
                            "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values, deadline = [], time.monotonic() + 60
    while len(values) < 5 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            values.append(msg.value())
    consumer.close()
    assert values == [b"0", b"1", b"2", b"3", b"4"]
    assert kafka_faults.requests("FindCoordinator") >= 4


def test_confluent_idempotent_producer_after_a_lost_answer_stores_nothing_twice(kafka_broker, kafka_faults):
    topic = kafka_broker.create_topic()
    kafka_faults.drop("Produce")
    producer = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "enable.idempotence": True,
                            "linger.ms": 50})
    for i in range(10):
        producer.produce(topic, b"%d" % i)
    assert producer.flush(30) == 0
    assert kafka_faults.requests("Produce") >= 2  # the lost one, then its retry
    assert _read_all(kafka_broker.bootstrap_servers, topic, 10) == [b"%d" % i for i in range(10)]


# --- aiokafka ------------------------------------------------------------------------------

def test_aiokafka_producer_retries_not_leader_or_follower(kafka_broker, kafka_faults):
    topic = kafka_broker.create_topic()
    kafka_faults.error("Produce", "NOT_LEADER_OR_FOLLOWER", count=2, topic=topic)

    async def main():
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers, enable_idempotence=True)
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"hello")
        finally:
            await producer.stop()
    asyncio.run(main())
    assert kafka_faults.requests("Produce") == 3
    assert _read_all(kafka_broker.bootstrap_servers, topic, 1) == [b"hello"]


async def test_aiokafka_consumer_survives_coordinator_not_available(kafka_topic, kafka_faults,
                                                                    kafka_bootstrap_servers):
    topic = kafka_topic()
    producer = aiokafka.AIOKafkaProducer(bootstrap_servers=kafka_bootstrap_servers)
    await producer.start()
    for i in range(5):
        await producer.send_and_wait(topic, b"%d" % i)
    await producer.stop()

    kafka_faults.error("FindCoordinator", "COORDINATOR_NOT_AVAILABLE", count=3)
    consumer = aiokafka.AIOKafkaConsumer(topic, bootstrap_servers=kafka_bootstrap_servers, group_id=topic,
                                         auto_offset_reset="earliest")
    await consumer.start()
    try:
        values = [(await asyncio.wait_for(consumer.getone(), 30)).value for _ in range(5)]
    finally:
        await consumer.stop()
    assert values == [b"0", b"1", b"2", b"3", b"4"]
    assert kafka_faults.requests("FindCoordinator") >= 4  # three refused, then found


def test_aiokafka_idempotent_producer_after_a_lost_answer_stores_nothing_twice(kafka_broker, kafka_faults):
    topic = kafka_broker.create_topic()
    kafka_faults.drop("Produce")

    async def main():
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers, enable_idempotence=True,
                                             linger_ms=50)
        await producer.start()
        try:
            sent = [await producer.send(topic, b"%d" % i) for i in range(10)]
            await asyncio.gather(*sent)
        finally:
            await producer.stop()
    asyncio.run(main())
    assert kafka_faults.requests("Produce") >= 2
    assert _read_all(kafka_broker.bootstrap_servers, topic, 10) == [b"%d" % i for i in range(10)]


# --- kafka-python --------------------------------------------------------------------------

def test_kafka_python_producer_retries_not_leader_or_follower(kafka_broker, kafka_faults):
    topic = kafka_broker.create_topic()
    kafka_faults.error("Produce", "NOT_LEADER_OR_FOLLOWER", count=2, topic=topic)
    producer = kafka.KafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers, enable_idempotence=True)
    producer.send(topic, b"hello").get(30)
    producer.close()
    assert kafka_faults.requests("Produce") == 3
    assert _read_all(kafka_broker.bootstrap_servers, topic, 1) == [b"hello"]


def test_kafka_python_consumer_survives_coordinator_not_available(kafka_broker, kafka_faults):
    topic = kafka_broker.create_topic()
    producer = kafka.KafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers)
    for i in range(5):
        producer.send(topic, b"%d" % i)
    producer.flush(30)
    producer.close()
    kafka_faults.error("FindCoordinator", "COORDINATOR_NOT_AVAILABLE", count=3)
    consumer = kafka.KafkaConsumer(topic, bootstrap_servers=kafka_broker.bootstrap_servers, group_id=topic,
                                   auto_offset_reset="earliest", consumer_timeout_ms=30000)
    values = [msg.value for _, msg in zip(range(5), consumer)]
    consumer.close()
    assert values == [b"0", b"1", b"2", b"3", b"4"]
    assert kafka_faults.requests("FindCoordinator") >= 4


def test_kafka_python_idempotent_producer_after_a_lost_answer_stores_nothing_twice(kafka_topic, kafka_faults,
                                                                                    kafka_bootstrap_servers):
    topic = kafka_topic()
    kafka_faults.drop("Produce")  # stored by the broker, the answer lost with the connection

    producer = kafka.KafkaProducer(bootstrap_servers=kafka_bootstrap_servers, enable_idempotence=True,
                                   linger_ms=50)
    for f in [producer.send(topic, b"%d" % i) for i in range(10)]:
        f.get(30)                                       # each one acknowledged, after the retry
    producer.close()

    assert kafka_faults.requests("Produce") >= 2
    consumer = kafka.KafkaConsumer(topic, bootstrap_servers=kafka_bootstrap_servers,
                                   auto_offset_reset="earliest", consumer_timeout_ms=3000)
    values = [msg.value for msg in consumer]            # all of them, until 3 s pass without one
    consumer.close()
    assert values == [b"%d" % i for i in range(10)]     # in order, none twice
