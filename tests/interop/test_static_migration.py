"""Static members (group.instance.id) across an online migration between the classic and the
KIP-848 protocol, with confluent-kafka consumers, as Kafka does it: an instance that restarts
under the other protocol replaces its old member at once and keeps its partitions (no wait for
the old session to run out, nothing moved), and an instance id claimed twice fences the older
member (FENCED_INSTANCE_ID, fatal in librdkafka)."""

from __future__ import annotations

import time

import pytest

from tests.support import requires
from tests.support.broker import make_broker
from tests.support.topics import create_topics

ck = requires.module("confluent_kafka", "interop")

pytestmark = pytest.mark.interop
PARTITIONS = 4
SESSION_MS = 30000  # long: a replacement that waited for the old session would fail the test


@pytest.fixture(scope="module")
def broker():
    proc = make_broker({
        "group.consumer.session.timeout.ms": str(SESSION_MS),
        "group.consumer.min.session.timeout.ms": "1000",
        "group.consumer.max.session.timeout.ms": str(SESSION_MS),
        "group.consumer.min.heartbeat.interval.ms": "100",
        "group.consumer.heartbeat.interval.ms": "250",
    }).start()
    yield proc
    proc.stop()


def _consumer(bootstrap, group, topic, instance, protocol):
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "group.instance.id": instance,
            "auto.offset.reset": "earliest", "enable.auto.commit": False, "group.protocol": protocol}
    if protocol == "classic":
        conf.update({"session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 250})
    c = ck.Consumer(conf)
    c.subscribe([topic])
    return c


def _owned(c) -> set[int]:
    return {tp.partition for tp in c.assignment()}


def _settle(consumers: dict, want=None, timeout=20.0) -> dict[str, set[int]]:
    """Poll every consumer until the partitions are split among them (as ``want`` says)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for c in consumers.values():
            c.poll(0.05)
        owned = {name: _owned(c) for name, c in consumers.items()}
        flat = [p for parts in owned.values() for p in parts]
        if len(flat) == len(set(flat)) == PARTITIONS and all(owned.values()):
            if want is None or owned == want:
                return owned
    raise AssertionError(f"not settled in {timeout} s: "
                         f"{ {n: _owned(c) for n, c in consumers.items()} } (wanted {want})")


def _type(bootstrap, group) -> str:
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": bootstrap})  # (kept alive until the answer is in)
    listed = admin.list_consumer_groups(request_timeout=10).result()
    found = {g.group_id: g for g in listed.valid}
    return found[group].type.name.lower() if group in found else "none"


def test_a_static_member_keeps_its_partitions_across_the_protocols(broker, unique):
    topic = group = f"static-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    live = {name: _consumer(broker.bootstrap, group, topic, name, "classic") for name in ("a", "b")}
    try:
        before = _settle(live)
        assert _type(broker.bootstrap, group) == "classic"
        # a restarts with group.protocol=consumer: the group is upgraded and the new KIP-848
        # member takes over the classic static member a at once, with its partitions
        live.pop("a").close()
        live["a"] = _consumer(broker.bootstrap, group, topic, "a", "consumer")
        assert _settle(live, want=before, timeout=SESSION_MS / 3000) == before
        assert _type(broker.bootstrap, group) == "consumer"
        # and back: a restarts under the classic protocol, replaces the KIP-848 member, and
        # the group, without KIP-848 members, is a classic group again
        live.pop("a").close()
        live["a"] = _consumer(broker.bootstrap, group, topic, "a", "classic")
        assert _settle(live, want=before, timeout=SESSION_MS / 3000) == before
        deadline = time.time() + 10
        while _type(broker.bootstrap, group) != "classic" and time.time() < deadline:
            for c in live.values():
                c.poll(0.1)
        assert _type(broker.bootstrap, group) == "classic"
    finally:
        for c in live.values():
            c.close()


def test_an_instance_id_claimed_under_the_other_protocol_fences_the_older_member(broker, unique):
    topic = group = f"fenced-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    old = _consumer(broker.bootstrap, group, topic, "a", "classic")
    other = _consumer(broker.bootstrap, group, topic, "b", "classic")
    new = None
    try:
        before = _settle({"a": old, "b": other})
        new = _consumer(broker.bootstrap, group, topic, "a", "consumer")  # old is still running
        fatal = None
        deadline = time.time() + SESSION_MS / 3000
        while time.time() < deadline and fatal is None:
            new.poll(0.05)
            other.poll(0.05)
            try:
                msg = old.poll(0.05)
            except ck.KafkaException as exc:
                fatal = exc.args[0]
                break
            if msg is not None and msg.error() is not None and msg.error().code() in (
                    ck.KafkaError.FENCED_INSTANCE_ID, ck.KafkaError._FATAL):
                fatal = msg.error()
        assert fatal is not None and "fenced" in fatal.str(), fatal
        assert _settle({"a": new, "b": other}, want=before) == before
    finally:
        for c in (old, other, new):
            if c is not None:
                try:
                    c.close()
                except Exception:
                    pass
