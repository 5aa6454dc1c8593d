"""An idle broker's group and share-group ticks sleep (it wakes about twice a second, not
thirty times), and the first request that leaves something to expire wakes them: a
consumer group joined by kafka-python gets its ticks again, and loses them when it is
deleted (kipper's admin). The broker runs in a thread to be looked at; its clients are pure Python."""

from __future__ import annotations

import time

from kafka import KafkaConsumer

from kipper.client import admin
from kipper.client.blocking import connect_any

from kipper.testing import EmbeddedBroker


def _ticks(broker) -> dict:
    return {task.name: task.sleeping for task in broker._runner.server.periodic if task.idle is not None}


def _join(broker, topic: str, group: str) -> KafkaConsumer:
    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap_servers, group_id=group,
                             api_version=(2, 5), consumer_timeout_ms=200)
    deadline = time.monotonic() + 20
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(timeout_ms=100)
    assert consumer.assignment()
    return consumer


def test_group_ticks_sleep_while_idle_and_wake_for_a_group():
    with EmbeddedBroker(mode="thread") as broker:
        topic = broker.create_topic(partitions=1)
        assert _ticks(broker) == {"groups": True, "share-groups": True}
        consumer = _join(broker, topic, "g-idle")
        assert _ticks(broker)["groups"] is False  # a member's session can now expire
        consumer.close()
        with connect_any(broker.bootstrap_servers) as conn:
            assert admin.delete_groups(conn, ["g-idle"]).results[0].error_code == 0
        deadline = time.monotonic() + 5
        while not _ticks(broker)["groups"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _ticks(broker)["groups"] is True


def test_the_ticks_follow_the_engines_a_reset_puts_in_place():
    """Engines.reset (the pytest plugin, between tests) replaces the group coordinator: the
    tick asks the new one whether it is idle."""
    with EmbeddedBroker(mode="thread") as broker:
        consumer = _join(broker, broker.create_topic(partitions=1), "g-before")
        consumer.close()
        broker.reset()
        deadline = time.monotonic() + 5
        while not _ticks(broker)["groups"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _ticks(broker)["groups"] is True  # the new coordinator has no group
        consumer = _join(broker, broker.create_topic(partitions=1), "g-after")
        assert _ticks(broker)["groups"] is False
        consumer.close()
