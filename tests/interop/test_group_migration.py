"""Online migration between the classic and the KIP-848 protocol (group.consumer.migration.policy)
with confluent-kafka consumers: a classic group is upgraded one member at a time to
group.protocol=consumer, then downgraded again. At every step the partitions are all
assigned, to one member each; no record is lost; and the admin client reads the
group's type as it changes."""

from __future__ import annotations

import time

import pytest

from tests.support import requires
from tests.support.broker import make_broker
from tests.support.topics import create_topics

ck = requires.module("confluent_kafka", "interop")

pytestmark = pytest.mark.interop
PARTITIONS = 4


@pytest.fixture(scope="module")
def broker():
    proc = make_broker({
        "group.consumer.min.session.timeout.ms": "1000",
        "group.consumer.session.timeout.ms": "6000",
        "group.consumer.min.heartbeat.interval.ms": "100",
        "group.consumer.heartbeat.interval.ms": "250",
    }).start()
    yield proc
    proc.stop()


class Fleet:
    """The group's live members, polled in turn from this thread; every record seen."""

    def __init__(self, bootstrap, group, topic):
        self.bootstrap, self.group, self.topic = bootstrap, group, topic
        self.members: dict[str, object] = {}
        self.seen: set[tuple[int, int]] = set()

    def start(self, name: str, protocol: str) -> None:
        conf = {"bootstrap.servers": self.bootstrap, "group.id": self.group,
                "auto.offset.reset": "earliest", "enable.auto.commit": False,
                "group.protocol": protocol}
        if protocol == "classic":
            conf.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 250})
        c = ck.Consumer(conf)
        c.subscribe([self.topic])
        self.members[name] = c

    def stop(self, name: str) -> None:
        c = self.members.pop(name)
        try:
            c.commit(asynchronous=False)
        except ck.KafkaException:
            pass  # nothing new to commit
        c.close()

    def poll(self, seconds: float) -> None:
        deadline = time.time() + seconds
        while time.time() < deadline:
            for c in list(self.members.values()):
                msg = c.poll(0.02)
                if msg is not None and msg.error() is None:
                    self.seen.add((msg.partition(), msg.offset()))
                    c.commit(msg, asynchronous=True)

    def complete(self) -> bool:
        owned = [{tp.partition for tp in c.assignment()} for c in self.members.values()]
        flat = [p for parts in owned for p in parts]
        return len(flat) == len(set(flat)) == PARTITIONS and all(owned)

    def settle(self, timeout: float = 45.0) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.poll(0.3)
            if self.complete():
                return
        raise AssertionError(f"assignment incomplete: {[c.assignment() for c in self.members.values()]}")

    def close(self) -> None:
        for name in list(self.members):
            self.stop(name)


def _type(admin, group) -> str:
    listed = admin.list_consumer_groups(request_timeout=10).result()
    found = {g.group_id: g for g in listed.valid}
    return found[group].type.name.lower() if group in found else "none"


def _produce(bootstrap, topic, start, n):
    p = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(start, start + n):
        p.produce(topic, key=b"k%d" % i, value=b"v%d" % i, partition=i % PARTITIONS)
    assert p.flush(30) == 0


def test_classic_group_upgraded_then_downgraded_member_by_member(broker, unique):
    topic = group = f"migrate-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fleet = Fleet(broker.bootstrap, group, topic)
    produced = 0
    try:
        for name in ("a", "b", "c"):
            fleet.start(name, "classic")
        fleet.settle()
        assert _type(admin, group) == "classic"
        steps = [(name, "consumer") for name in ("a", "b", "c")] + \
                [(name, "classic") for name in ("a", "b", "c")]
        for name, protocol in steps:
            _produce(broker.bootstrap, topic, produced, 40)
            produced += 40
            fleet.stop(name)
            fleet.start(name, protocol)
            fleet.settle()
            if (name, protocol) == ("a", "consumer"):
                assert _type(admin, group) == "consumer"  # upgraded by its first KIP-848 member
            if (name, protocol) == ("c", "consumer"):
                assert _type(admin, group) == "consumer"
        assert _type(admin, group) == "classic"  # the last KIP-848 member left
        _produce(broker.bootstrap, topic, produced, 40)
        produced += 40
        deadline = time.time() + 30
        while len(fleet.seen) < produced and time.time() < deadline:
            fleet.poll(0.5)
        per_partition = produced // PARTITIONS
        assert fleet.seen == {(p, o) for p in range(PARTITIONS) for o in range(per_partition)}
    finally:
        fleet.close()
