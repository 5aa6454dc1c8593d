"""confluent-kafka consumers with group.protocol=consumer (KIP-848) against the broker:
the broker assigns partitions, members share them, commit, and hand them over
when one leaves or dies. The broker runs with short consumer-group timeouts
(group.consumer.*) so a crashed member is noticed in seconds."""

from __future__ import annotations

import select
import subprocess
import sys
import textwrap
import time

import pytest

from tests.interop.checks import N_RECORDS, check_exactly_once, key_of
from tests.support.broker import ROOT, make_broker
from tests.support.topics import create_topics

pytestmark = pytest.mark.interop
PARTITIONS = 4
SESSION_MS, HEARTBEAT_MS = 4000, 250


@pytest.fixture(scope="module")
def broker():
    proc = make_broker({
        "group.consumer.min.session.timeout.ms": "1000",
        "group.consumer.session.timeout.ms": str(SESSION_MS),
        "group.consumer.min.heartbeat.interval.ms": "100",
        "group.consumer.heartbeat.interval.ms": str(HEARTBEAT_MS),
    }).start()
    yield proc
    proc.stop()


def _consumer(bootstrap: str, group: str, topics, **extra):
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False, **extra})
    c.subscribe(list(topics))
    return c


def _parts(c) -> set[int]:
    return {tp.partition for tp in c.assignment()}


def _poll_until(consumers, predicate, timeout=20.0, on_message=None) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        for c in consumers:
            msg = c.poll(0.05)
            if msg is not None and on_message is not None:
                on_message(c, msg)
        if predicate():
            return True
    return False


def _group_seen(broker, group: str, victim) -> str:
    """What the coordinator holds when a member never saw its assignment (a failure's message)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # (held: a dropped client ends its requests)
    described = admin.describe_consumer_groups([group])[group].result(10)
    members = [(m.member_id, m.client_id, sorted(tp.partition for tp in m.assignment.topic_partitions))
               for m in described.members]
    return f"victim alive: {victim.poll() is None}; group {described.state}: {members}"


def _split(a, b) -> bool:
    return bool(_parts(a)) and bool(_parts(b)) and not _parts(a) & _parts(b) \
        and len(_parts(a) | _parts(b)) == PARTITIONS


def test_two_members_split_the_partitions_and_consume_every_record_once_with_commits(broker, unique):
    from confluent_kafka import Producer, TopicPartition

    topic, group = f"kip848-{unique}", f"kip848-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    a = _consumer(broker.bootstrap, group, [topic])
    b = _consumer(broker.bootstrap, group, [topic])
    assert _poll_until([a, b], lambda: _split(a, b)), "the broker never split the partitions"
    assert len(_parts(a)) == len(_parts(b)) == 2, "uniform: two partitions each"

    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for i in range(N_RECORDS):
        producer.produce(topic, key=key_of(i), value=f"value-{i}".encode())
    producer.flush(30)

    records, by_member = [], {a: set(), b: set()}

    def take(c, msg):
        assert msg.error() is None, msg.error()
        records.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
        by_member[c].add(msg.partition())
        if len(records) % 500 == 0:
            c.commit(asynchronous=False)

    assert _poll_until([a, b], lambda: len(records) >= N_RECORDS, timeout=60, on_message=take)
    _poll_until([a, b], lambda: False, timeout=0.5, on_message=take)  # nothing more may come
    assert by_member[a] == _parts(a) and by_member[b] == _parts(b), "each read only what it was given"
    for c in (a, b):  # explicit offsets: the last periodic commit may have covered everything
        c.commit(offsets=c.position(c.assignment()), asynchronous=False)
    watermarks = {p: a.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                  for p in range(PARTITIONS)}
    check_exactly_once(records, watermarks)
    committed = a.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
    assert {tp.partition: tp.offset for tp in committed} == watermarks
    a.close()
    b.close()


def test_when_a_member_leaves_the_other_takes_every_partition(broker, unique):
    topic, group = f"leave-{unique}", f"leave-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    a = _consumer(broker.bootstrap, group, [topic])
    b = _consumer(broker.bootstrap, group, [topic])
    assert _poll_until([a, b], lambda: _split(a, b))
    b.close()  # a heartbeat with member epoch -1
    started = time.time()
    assert _poll_until([a], lambda: _parts(a) == set(range(PARTITIONS)))
    assert time.time() - started < SESSION_MS / 1000, "a leave is acted on at once, not at the session timeout"
    a.close()


def test_a_killed_member_is_evicted_after_the_session_timeout_and_its_partitions_reassigned(broker, unique):
    topic, group = f"kill-{unique}", f"kill-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    survivor = _consumer(broker.bootstrap, group, [topic])
    assert _poll_until([survivor], lambda: _parts(survivor) == set(range(PARTITIONS)))
    script = textwrap.dedent(f"""
        from confluent_kafka import Consumer
        c = Consumer({{"bootstrap.servers": "{broker.bootstrap}", "group.id": "{group}",
                      "group.protocol": "consumer"}})
        c.subscribe(["{topic}"])
        while True:
            c.poll(0.1)
            if c.assignment():
                print("assigned", flush=True)
    """)
    victim = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE)
    try:
        # the survivor must keep polling: it gives partitions up from inside poll()
        assert _poll_until([survivor], lambda: len(_parts(survivor)) == PARTITIONS // 2)
        ready, _, _ = select.select([victim.stdout], [], [], 60)  # a loaded machine starts it slowly
        assert ready and victim.stdout.readline().strip() == b"assigned", _group_seen(broker, group, victim)
    finally:
        victim.kill()  # SIGKILL: no leave heartbeat
        victim.wait()
    killed = time.time()
    assert _poll_until([survivor], lambda: _parts(survivor) == set(range(PARTITIONS)), timeout=30)
    waited = time.time() - killed
    assert waited >= SESSION_MS / 1000 - 1.5, f"taken over after {waited:.1f} s, before the session timeout"
    survivor.close()


def test_a_static_member_restarting_within_its_session_gets_its_partitions_back(broker, unique):
    topic, group = f"static-{unique}", f"static-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    a = _consumer(broker.bootstrap, group, [topic], **{"group.instance.id": f"i-{unique}"})
    b = _consumer(broker.bootstrap, group, [topic])
    assert _poll_until([a, b], lambda: _split(a, b))
    before_a, before_b = _parts(a), _parts(b)
    a.close()  # member epoch -2: away for a while, partitions kept for it
    _poll_until([b], lambda: False, timeout=1.0)
    assert _parts(b) == before_b, "nobody takes the static member's partitions while it is away"
    again = _consumer(broker.bootstrap, group, [topic], **{"group.instance.id": f"i-{unique}"})
    assert _poll_until([again, b], lambda: _parts(again) == before_a)
    assert _parts(b) == before_b
    again.close()
    b.close()


def test_a_regex_subscription_picks_up_a_topic_created_later(broker, unique):
    first, later, group = f"rx-{unique}-a", f"rx-{unique}-b", f"rx-{unique}"
    create_topics(broker.bootstrap, first, partitions=2)
    c = _consumer(broker.bootstrap, group, [f"^rx-{unique}-.*"], **{"topic.metadata.refresh.interval.ms": 1000})
    names = lambda: {(tp.topic, tp.partition) for tp in c.assignment()}  # noqa: E731
    assert _poll_until([c], lambda: names() == {(first, 0), (first, 1)})
    create_topics(broker.bootstrap, later, partitions=1)
    assert _poll_until([c], lambda: (later, 0) in names())
    c.close()


def test_admin_client_lists_and_describes_consumer_and_classic_groups(broker, unique):
    from confluent_kafka import ConsumerGroupType, Consumer
    from confluent_kafka.admin import AdminClient

    topic = f"adm-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    modern = _consumer(broker.bootstrap, f"adm-new-{unique}", [topic])
    classic = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"adm-old-{unique}",
                        "session.timeout.ms": 6000})
    classic.subscribe([topic])
    assert _poll_until([modern, classic], lambda: _parts(modern) and _parts(classic))
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = {g.group_id: g for g in admin.list_consumer_groups().result(10).valid}
    assert listed[f"adm-new-{unique}"].type == ConsumerGroupType.CONSUMER
    assert listed[f"adm-old-{unique}"].type == ConsumerGroupType.CLASSIC
    described = {k: f.result(10) for k, f in admin.describe_consumer_groups(
        [f"adm-new-{unique}", f"adm-old-{unique}"]).items()}
    new = described[f"adm-new-{unique}"]
    assert new.type == ConsumerGroupType.CONSUMER and len(new.members) == 1
    assert {tp.partition for tp in new.members[0].assignment.topic_partitions} == set(range(PARTITIONS))
    old = described[f"adm-old-{unique}"]  # ConsumerGroupDescribe says "not a consumer group": the
    assert old.type == ConsumerGroupType.CLASSIC and len(old.members) == 1  # client falls back
    modern.close()
    classic.close()


def test_kafka_python_has_no_group_protocol_option_so_it_stays_on_classic_groups():
    """kafka-python 3.0.12 does not implement KIP-848 (no ConsumerGroupHeartbeat);
    docs/CONSUMER_GROUPS.md says so. This fails once it does, as a reminder."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaConfigurationError

    with pytest.raises(KafkaConfigurationError, match="group_protocol"):
        KafkaConsumer(group_protocol="consumer", bootstrap_servers="127.0.0.1:1")
