"""aiokafka transactions against kipper: commit and abort with read_committed and
read_uncommitted consumers, consume-transform-produce with
send_offsets_to_transaction, fencing by a second instance, the broker's timeout."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support import requires
from tests.support.broker import make_broker
from tests.support.readback import wait_until_stable
from tests.support.topics import create_topics

requires.module("aiokafka", "interop")
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # noqa: E402
from aiokafka.errors import InvalidProducerEpoch, ProducerFenced  # noqa: E402
from aiokafka.structs import OffsetAndMetadata  # noqa: E402

pytestmark = pytest.mark.interop

N = 30
PARTITIONS = 3
FENCED = (ProducerFenced, InvalidProducerEpoch)


@pytest.fixture(scope="module")
def broker():
    with make_broker({"transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"}) as proc:
        yield proc


async def txn_producer(bootstrap: str, tid: str, **extra) -> AIOKafkaProducer:
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid, linger_ms=5, **extra)
    await p.start()  # InitProducerId
    return p


async def read(bootstrap: str, topic: str, isolation: str, want: int, settle: float = 0.5) -> list:
    """Every record of ``topic`` from the beginning: ``want`` of them, then
    ``settle`` seconds more, so that extra records would show."""
    c = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation,
                         enable_auto_commit=False, auto_offset_reset="earliest")
    await c.start()
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
            for msgs in (await c.getmany(timeout_ms=100)).values():
                out.extend(msgs)
    finally:
        await c.stop()
    return out


def values(msgs) -> list[bytes]:
    return sorted(m.value for m in msgs)


async def test_commit_is_seen_by_read_committed_and_abort_only_by_read_uncommitted(broker, unique):
    topic = f"aio-ca-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    p = await txn_producer(broker.bootstrap, f"aio-ca-{unique}")
    committed = [f"commit-{i}".encode() for i in range(N)]
    aborted = [f"abort-{i}".encode() for i in range(N)]
    try:
        async with p.transaction():
            for i, v in enumerate(committed):
                await p.send(topic, key=str(i).encode(), value=v)
        await p.begin_transaction()
        sent = [await p.send(topic, key=str(i).encode(), value=v) for i, v in enumerate(aborted)]
        await asyncio.gather(*sent)
        await p.abort_transaction()
    finally:
        await p.stop()

    got = await read(broker.bootstrap, topic, "read_committed", N)
    assert values(got) == sorted(committed)
    assert {m.partition for m in got} == set(range(PARTITIONS))
    # control records never surface as data, in either isolation level
    assert values(await read(broker.bootstrap, topic, "read_uncommitted", 2 * N)) == sorted(
        committed + aborted)


async def test_consume_transform_produce_commits_offsets_only_with_the_transaction(broker, unique):
    src, dst, group = f"aio-src-{unique}", f"aio-dst-{unique}", f"aio-ctp-{unique}"
    create_topics(broker.bootstrap, src, dst, partitions=PARTITIONS)
    plain = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await plain.start()
    for i in range(N):
        await plain.send(src, key=str(i).encode(), value=f"in-{i}".encode())
    await plain.stop()

    consumer = AIOKafkaConsumer(src, bootstrap_servers=broker.bootstrap, group_id=group,
                                isolation_level="read_committed", enable_auto_commit=False,
                                auto_offset_reset="earliest")
    await consumer.start()
    p = await txn_producer(broker.bootstrap, f"aio-ctp-{unique}")
    try:
        msgs = []
        deadline = time.time() + 20
        while len(msgs) < N and time.time() < deadline:
            for batch in (await consumer.getmany(timeout_ms=200)).values():
                msgs.extend(batch)
        assert len(msgs) == N
        assignment = sorted(consumer.assignment())

        async def transform_and_send_offsets():
            await p.begin_transaction()
            for m in msgs:
                await p.send(dst, key=m.key, value=b"out-" + m.value)
            offsets = {tp: OffsetAndMetadata(await consumer.position(tp), "") for tp in assignment}
            await p.send_offsets_to_transaction(offsets, group)

        await transform_and_send_offsets()
        await p.abort_transaction()
        assert [await consumer.committed(tp) for tp in assignment] == [None] * PARTITIONS
        await transform_and_send_offsets()
        await p.commit_transaction()
        assert sum([await consumer.committed(tp) for tp in assignment]) == N
    finally:
        await p.stop()
        await consumer.stop()
    assert values(await read(broker.bootstrap, dst, "read_committed", N)) == sorted(
        b"out-" + m.value for m in msgs)


async def test_second_instance_fences_the_first(broker, unique):
    topic, tid = f"aio-f-{unique}", f"aio-f-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    first = await txn_producer(broker.bootstrap, tid)
    second = None
    try:
        await first.begin_transaction()
        await (await first.send(topic, value=b"zombie"))
        second = await txn_producer(broker.bootstrap, tid)
        with pytest.raises(FENCED):
            await first.commit_transaction()
        async with second.transaction():
            await second.send(topic, value=b"alive")
    finally:
        await first.stop()
        if second is not None:
            await second.stop()
    assert values(await read(broker.bootstrap, topic, "read_committed", 1)) == [b"alive"]


async def test_transaction_left_open_past_its_timeout_is_aborted_by_the_broker(broker, unique):
    topic, tid = f"aio-t-{unique}", f"aio-t-{unique}"
    create_topics(broker.bootstrap, topic, partitions=PARTITIONS)
    p = await txn_producer(broker.bootstrap, tid, transaction_timeout_ms=1000)
    try:
        await p.begin_transaction()
        await (await p.send(topic, value=b"too-slow"))
        # aborted by the broker, not the client
        await asyncio.to_thread(wait_until_stable, broker.bootstrap, topic, PARTITIONS)
        with pytest.raises(FENCED):
            await p.commit_transaction()
    finally:
        await p.stop()
    again = await txn_producer(broker.bootstrap, tid)
    try:
        async with again.transaction():
            await again.send(topic, value=b"in-time")
    finally:
        await again.stop()
    assert values(await read(broker.bootstrap, topic, "read_committed", 1)) == [b"in-time"]
    assert values(await read(broker.bootstrap, topic, "read_uncommitted", 2)) == [
        b"in-time", b"too-slow"]
