"""The group cases confluent-kafka (librdkafka) exposed, with both group protocols:
a replaced static member is fenced (FENCED_INSTANCE_ID) instead of fighting for its
group.instance.id; a consumer that commits with generation -1 and its own member id
(librdkafka's KIP-848 consumer with assign()) is accepted by an EMPTY group; a
commit that fails creates no group; new partitions reach subscribed consumers."""

from __future__ import annotations

import time

import pytest

from tests.support import requires

requires.module("confluent_kafka", "interop")
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic  # noqa: E402

pytestmark = pytest.mark.interop
PROTOCOLS = ("classic", "consumer")


def consumer(bootstrap, group, protocol="classic", **extra):
    config = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": False, "group.protocol": protocol, **extra}
    if protocol == "classic":
        config.setdefault("session.timeout.ms", 6000)
        config.setdefault("heartbeat.interval.ms", 300)
    return Consumer(config)


def create(bootstrap, topic, partitions=1):
    admin = AdminClient({"bootstrap.servers": bootstrap})  # alive until the result is in
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(15)


def produce(bootstrap, topic, n, partition=0):
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(n):
        p.produce(topic, value=b"v%d" % i, partition=partition)
    assert p.flush(15) == 0


def wait_assignment(c, want: int, timeout: float = 30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        msg = c.poll(0.2)
        if msg is not None and msg.error() and msg.error().fatal():
            raise KafkaException(msg.error())
        if len(c.assignment()) == want:
            return
    raise AssertionError(f"assignment is {c.assignment()}, wanted {want} partitions")


def test_a_replaced_static_member_is_fenced(broker, unique):
    topic, group = f"static-{unique}", f"static-{unique}"
    create(broker.bootstrap, topic)
    first = consumer(broker.bootstrap, group, **{"group.instance.id": "instance-1"})
    first.subscribe([topic])
    wait_assignment(first, 1)
    second = consumer(broker.bootstrap, group, **{"group.instance.id": "instance-1"})
    second.subscribe([topic])
    fatal = None
    deadline = time.time() + 30
    while fatal is None and time.time() < deadline:
        second.poll(0.1)
        msg = first.poll(0.1)
        if msg is not None and msg.error() and msg.error().code() == KafkaError._FATAL:
            fatal = msg.error()
    assert fatal is not None, "the replaced instance was never fenced"
    # librdkafka's text for FENCED_INSTANCE_ID (82); UNKNOWN_MEMBER_ID would make it rejoin instead
    assert "Static consumer fenced by other consumer with same group.instance.id" in fatal.str()
    wait_assignment(second, 1)  # the newer instance keeps the identity
    second.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_commits_of_an_assign_consumer_go_into_an_empty_group(broker, unique, protocol):
    topic, group = f"assign-{protocol}-{unique}", f"assign-{protocol}-{unique}"
    create(broker.bootstrap, topic)
    produce(broker.bootstrap, topic, 5)
    c = consumer(broker.bootstrap, group, protocol)
    c.assign([TopicPartition(topic, 0, 0)])
    for offset in (2, 4):  # the second commit meets the group the first one made
        c.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    assert c.committed([TopicPartition(topic, 0)], timeout=10)[0].offset == 4
    c.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_failed_commit_creates_no_group(broker, unique, protocol):
    group = f"nogroup-{protocol}-{unique}"
    c = consumer(broker.bootstrap, group, protocol)
    with pytest.raises(KafkaException):
        c.commit(offsets=[TopicPartition(f"missing-{unique}", 0, 1)], asynchronous=False)
    c.close()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = admin.list_consumer_groups().result(15)
    assert group not in {g.group_id for g in listed.valid}


@pytest.mark.parametrize("by", ["name", "pattern"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_new_partitions_reach_a_subscribed_consumer(broker, unique, protocol, by):
    topic, group = f"grow-{protocol}-{by}-{unique}", f"grow-{protocol}-{by}-{unique}"
    create(broker.bootstrap, topic, 1)
    c = consumer(broker.bootstrap, group, protocol, **{"topic.metadata.refresh.interval.ms": 500})
    c.subscribe([topic if by == "name" else f"^grow-{protocol}-{by}-{unique}.*"])
    wait_assignment(c, 1)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(15)
    wait_assignment(c, 3)
    produce(broker.bootstrap, topic, 1, partition=2)
    deadline = time.time() + 20
    got = None
    while got is None and time.time() < deadline:
        msg = c.poll(0.2)
        if msg is not None and not msg.error():
            got = (msg.partition(), msg.value())
    assert got == (2, b"v0")
    c.close()
