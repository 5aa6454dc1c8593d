"""kafka-python transactions against kipper: commit and abort with read_committed
and read_uncommitted consumers, consume-transform-produce with
send_offsets_to_transaction, fencing by a second instance, the broker's timeout."""

from __future__ import annotations

import time

import pytest

from tests.support import requires
from tests.support.broker import make_broker
from tests.support.readback import wait_until_stable
from tests.support.topics import create_topics

requires.module("kafka", "interop")
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka import errors as Errors  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

pytestmark = pytest.mark.interop

N = 30
PARTITIONS = 3
FENCED = (Errors.ProducerFencedError, Errors.InvalidProducerEpochError)


@pytest.fixture(scope="module")
def broker():
    with make_broker({"transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"}) as proc:
        yield proc


def txn_producer(bootstrap: str, tid: str, **extra) -> KafkaProducer:
    p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid, linger_ms=5, **extra)
    p.init_transactions()
    return p


def read(bootstrap: str, topic: str, isolation: str, want: int, settle: float = 0.5) -> list:
    """Every record of ``topic`` from the beginning: ``want`` of them, then
    ``settle`` seconds more, so that extra records would show."""
    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation,
                      enable_auto_commit=False, auto_offset_reset="earliest")
    c.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
    out = []
    deadline = time.time() + 20
    settle_until = None
    try:
        while time.time() < deadline:
            if len(out) >= want:
                settle_until = settle_until or time.time() + settle
                if time.time() >= settle_until:
                    break
            for msgs in c.poll(100).values():
                out.extend(msgs)
    finally:
        c.close()
    return out


def values(msgs) -> list[bytes]:
    return sorted(m.value for m in msgs)


def test_commit_is_seen_by_read_committed_and_abort_only_by_read_uncommitted(broker, unique):
    topic = f"kp-ca-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    p = txn_producer(broker.bootstrap, f"kp-ca-{unique}")
    committed = [f"commit-{i}".encode() for i in range(N)]
    aborted = [f"abort-{i}".encode() for i in range(N)]
    p.begin_transaction()
    for i, v in enumerate(committed):
        p.send(topic, key=str(i).encode(), value=v)
    p.commit_transaction()
    p.begin_transaction()
    for i, v in enumerate(aborted):
        p.send(topic, key=str(i).encode(), value=v)
    p.flush()
    p.abort_transaction()
    p.close()

    got = read(broker.bootstrap, topic, "read_committed", N)
    assert values(got) == sorted(committed)
    assert {m.partition for m in got} == set(range(PARTITIONS))
    # control records never surface as data, in either isolation level
    assert values(read(broker.bootstrap, topic, "read_uncommitted", 2 * N)) == sorted(committed + aborted)


def test_consume_transform_produce_commits_offsets_only_with_the_transaction(broker, unique):
    src, dst, group = f"kp-src-{unique}", f"kp-dst-{unique}", f"kp-ctp-{unique}"
    create_topics(broker.bootstrap, src, dst, partitions=PARTITIONS)
    plain = KafkaProducer(bootstrap_servers=broker.bootstrap)
    for i in range(N):
        plain.send(src, key=str(i).encode(), value=f"in-{i}".encode())
    plain.flush()
    plain.close()

    consumer = KafkaConsumer(src, bootstrap_servers=broker.bootstrap, group_id=group,
                             isolation_level="read_committed", enable_auto_commit=False,
                             auto_offset_reset="earliest")
    msgs = []
    deadline = time.time() + 20
    while len(msgs) < N and time.time() < deadline:
        for batch in consumer.poll(200).values():
            msgs.extend(batch)
    assert len(msgs) == N
    assignment = sorted(consumer.assignment())
    p = txn_producer(broker.bootstrap, f"kp-ctp-{unique}")

    def transform_and_send_offsets():
        p.begin_transaction()
        for m in msgs:
            p.send(dst, key=m.key, value=b"out-" + m.value)
        offsets = {tp: OffsetAndMetadata(consumer.position(tp), "", -1) for tp in assignment}
        p.send_offsets_to_transaction(offsets, consumer.group_metadata())

    transform_and_send_offsets()
    p.abort_transaction()
    assert [consumer.committed(tp) for tp in assignment] == [None] * PARTITIONS
    transform_and_send_offsets()
    p.commit_transaction()
    assert sum(consumer.committed(tp) for tp in assignment) == N
    consumer.close()
    p.close()
    assert values(read(broker.bootstrap, dst, "read_committed", N)) == sorted(
        b"out-" + m.value for m in msgs)


def test_second_instance_fences_the_first(broker, unique):
    topic, tid = f"kp-f-{unique}", f"kp-f-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    first = txn_producer(broker.bootstrap, tid)
    first.begin_transaction()
    first.send(topic, value=b"zombie").get(15)
    second = txn_producer(broker.bootstrap, tid)
    with pytest.raises(FENCED):
        first.commit_transaction()
    first.close(timeout=1)
    second.begin_transaction()
    second.send(topic, value=b"alive")
    second.commit_transaction()
    second.close()
    assert values(read(broker.bootstrap, topic, "read_committed", 1)) == [b"alive"]


def test_transaction_left_open_past_its_timeout_is_aborted_by_the_broker(broker, unique):
    topic, tid = f"kp-t-{unique}", f"kp-t-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    p = txn_producer(broker.bootstrap, tid, transaction_timeout_ms=1000)
    p.begin_transaction()
    p.send(topic, value=b"too-slow").get(15)
    wait_until_stable(broker.bootstrap, topic, PARTITIONS)  # aborted by the broker, not the client
    with pytest.raises(FENCED):
        p.commit_transaction()
    p.close(timeout=1)
    again = txn_producer(broker.bootstrap, tid)
    again.begin_transaction()
    again.send(topic, value=b"in-time")
    again.commit_transaction()
    again.close()
    assert values(read(broker.bootstrap, topic, "read_committed", 1)) == [b"in-time"]
    assert values(read(broker.bootstrap, topic, "read_uncommitted", 2)) == [b"in-time", b"too-slow"]
