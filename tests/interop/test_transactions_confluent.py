"""confluent-kafka (librdkafka) transactions against kipper: commit and abort with
read_committed and read_uncommitted consumers, consume-transform-produce with
send_offsets_to_transaction, fencing by a second instance, the broker's timeout."""

from __future__ import annotations

import time
import uuid

import pytest

from tests.support import requires
from tests.support.broker import make_broker
from tests.support.readback import wait_until_stable
from tests.support.topics import create_topics

requires.module("confluent_kafka", "interop")
from confluent_kafka import (  # noqa: E402
    OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition,
)

pytestmark = pytest.mark.interop

N = 30
PARTITIONS = 3
FENCED = {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}


@pytest.fixture(scope="module")
def broker():
    with make_broker({"transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"}) as proc:
        yield proc


def txn_producer(bootstrap: str, tid: str, **extra) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 5, **extra})
    p.init_transactions(15)
    return p


def read(bootstrap: str, topic: str, isolation: str, want: int, settle: float = 0.5) -> list:
    """Every message of ``topic`` from the beginning, waiting for ``want`` and then
    ``settle`` seconds more, so that extra records would show."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                  "isolation.level": isolation, "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    out = []
    deadline = time.time() + 20
    settle_until = None
    try:
        while time.time() < deadline:
            if len(out) >= want:
                settle_until = settle_until or time.time() + settle
                if time.time() >= settle_until:
                    break
            m = c.poll(0.1)
            if m is not None:
                assert m.error() is None, m.error()
                out.append(m)
    finally:
        c.close()
    return out


def values(msgs) -> list[bytes]:
    return sorted(m.value() for m in msgs)


def test_commit_is_seen_by_read_committed_and_abort_only_by_read_uncommitted(broker, unique):
    topic = f"ck-ca-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    p = txn_producer(broker.bootstrap, f"ck-ca-{unique}")
    committed = [f"commit-{i}".encode() for i in range(N)]
    aborted = [f"abort-{i}".encode() for i in range(N)]
    p.begin_transaction()
    for i, v in enumerate(committed):
        p.produce(topic, key=str(i).encode(), value=v)
    p.commit_transaction(15)
    p.begin_transaction()
    for i, v in enumerate(aborted):
        p.produce(topic, key=str(i).encode(), value=v)
    p.flush(15)
    p.abort_transaction(15)

    got = read(broker.bootstrap, topic, "read_committed", N)
    assert values(got) == sorted(committed)
    assert {m.partition() for m in got} == set(range(PARTITIONS))
    # control records never surface as data, in either isolation level
    assert values(read(broker.bootstrap, topic, "read_uncommitted", 2 * N)) == sorted(committed + aborted)


def test_consume_transform_produce_commits_offsets_only_with_the_transaction(broker, unique):
    src, dst, group = f"ck-src-{unique}", f"ck-dst-{unique}", f"ck-ctp-{unique}"
    create_topics(broker.bootstrap, src, dst, partitions=PARTITIONS)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(N):
        plain.produce(src, key=str(i).encode(), value=f"in-{i}".encode())
    assert plain.flush(15) == 0

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                         "isolation.level": "read_committed", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([src])
    msgs = []
    deadline = time.time() + 20
    while len(msgs) < N and time.time() < deadline:
        m = consumer.poll(0.2)
        if m is not None and m.error() is None:
            msgs.append(m)
    assert len(msgs) == N
    assignment = consumer.assignment()
    p = txn_producer(broker.bootstrap, f"ck-ctp-{unique}")

    def transform_and_send_offsets():
        p.begin_transaction()
        for m in msgs:
            p.produce(dst, key=m.key(), value=b"out-" + m.value())
        p.send_offsets_to_transaction(consumer.position(assignment),
                                      consumer.consumer_group_metadata(), 15)

    transform_and_send_offsets()
    p.abort_transaction(15)
    assert all(tp.offset < 0 for tp in consumer.committed(assignment, 10))
    transform_and_send_offsets()
    p.commit_transaction(15)
    assert sum(tp.offset for tp in consumer.committed(assignment, 10)) == N
    consumer.close()
    assert values(read(broker.bootstrap, dst, "read_committed", N)) == sorted(
        b"out-" + m.value() for m in msgs)


def test_second_instance_fences_the_first(broker, unique):
    topic, tid = f"ck-f-{unique}", f"ck-f-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    first = txn_producer(broker.bootstrap, tid)
    first.begin_transaction()
    first.produce(topic, value=b"zombie")
    first.flush(15)
    second = txn_producer(broker.bootstrap, tid)
    with pytest.raises(KafkaException) as failure:
        first.commit_transaction(15)
    assert failure.value.args[0].code() in FENCED and failure.value.args[0].fatal()
    second.begin_transaction()
    second.produce(topic, value=b"alive")
    second.commit_transaction(15)
    assert values(read(broker.bootstrap, topic, "read_committed", 1)) == [b"alive"]


def test_transaction_left_open_past_its_timeout_is_aborted_by_the_broker(broker, unique):
    topic, tid = f"ck-t-{unique}", f"ck-t-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    p = txn_producer(broker.bootstrap, tid, **{"transaction.timeout.ms": 1000})
    p.begin_transaction()
    p.produce(topic, value=b"too-slow")
    p.flush(15)
    wait_until_stable(broker.bootstrap, topic, PARTITIONS)  # aborted by the broker, not the client
    with pytest.raises(KafkaException) as failure:
        p.commit_transaction(15)
    assert failure.value.args[0].code() in FENCED
    again = txn_producer(broker.bootstrap, tid)
    again.begin_transaction()
    again.produce(topic, value=b"in-time")
    again.commit_transaction(15)
    assert values(read(broker.bootstrap, topic, "read_committed", 1)) == [b"in-time"]
    assert values(read(broker.bootstrap, topic, "read_uncommitted", 2)) == [b"in-time", b"too-slow"]
