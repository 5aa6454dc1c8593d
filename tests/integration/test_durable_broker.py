"""A broker with log.dirs, stopped cleanly or killed with SIGKILL and started again on
the same port and directory: what real clients stored and committed is still there."""

from __future__ import annotations

import time

import pytest

from kipper.client import admin
from kipper.client.blocking import connect_any
from kipper.client.producer_requests import init_producer_id
from kipper.client.share_consumer import ShareConsumer
from kipper.client.share_acks import AcknowledgeType
from tests.support.broker import SHARE_QUICK, BrokerProcess, free_port
from tests.support.readback import read_topic
from tests.support.topics import create_topics


@pytest.fixture
def durable(tmp_path):
    broker = BrokerProcess({**SHARE_QUICK, "log.dirs": str(tmp_path / "data"), "group.share.record.lock.duration.ms": "1000"},
                           port=free_port()).start()
    yield broker
    broker.stop()


def _produce_confluent(bootstrap: str, topic: str, values, partition: int | None = None) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for v in values:
        p.produce(topic, value=v, **({} if partition is None else {"partition": partition}))
    assert p.flush(30) == 0


def _values(bootstrap: str, topic: str) -> list[bytes]:
    return [r.value for recs in read_topic(bootstrap, topic).values() for r in recs]


def test_committed_offsets_survive_a_crash(durable, unique):
    from confluent_kafka import Consumer, TopicPartition

    topic, group = f"off-{unique}", f"g-{unique}"
    create_topics(durable.bootstrap, topic, partitions=1)
    _produce_confluent(durable.bootstrap, topic, [b"%d" % i for i in range(100)])
    c = Consumer({"bootstrap.servers": durable.bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    seen = 0
    deadline = time.time() + 20
    while seen < 40 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            seen += 1
            last = m
    c.commit(message=last, asynchronous=False)
    c.close()
    durable.kill()
    durable.start()
    c = Consumer({"bootstrap.servers": durable.bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    [tp] = c.committed([TopicPartition(topic, 0)], 15)
    assert tp.offset == last.offset() + 1
    c.subscribe([topic])
    first = None
    deadline = time.time() + 20
    while first is None and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            first = m.offset()
    c.close()
    assert first == last.offset() + 1, "the group resumed from its committed offset"


def test_topic_ids_configs_and_deleted_records_survive_a_crash(durable, unique):
    topic = f"cfg-{unique}"
    with connect_any(durable.bootstrap) as conn:
        admin.create_topics(conn, [admin.NewTopic(topic, 2, 1, {"retention.ms": "123456"})])
        topic_id = admin.metadata(conn, [topic]).topics[0].topic_id
    # (to partition 0: keyless records stick to one partition, which may be the other)
    _produce_confluent(durable.bootstrap, topic, [b"%d" % i for i in range(50)], partition=0)
    with connect_any(durable.bootstrap) as conn:
        result = admin.delete_records(conn, {(topic, 0): 3})
        assert result.topics[0].partitions[0].error_code == 0
    durable.kill()
    durable.start()
    with connect_any(durable.bootstrap) as conn:
        t = admin.metadata(conn, [topic]).topics[0]
        assert t.topic_id == topic_id and len(t.partitions) == 2
        configs = admin.describe_configs(conn, [admin.ConfigResource(admin.ConfigResourceType.TOPIC, topic)])
        values = {c.name: c.value for c in configs.results[0].configs}
        assert values["retention.ms"] == "123456"
    from kipper.client.consumer_requests import EARLIEST_TIMESTAMP, list_offsets
    with connect_any(durable.bootstrap) as conn:
        earliest = list_offsets(conn, {(topic, 0): EARLIEST_TIMESTAMP})
        assert earliest.topics[0].partitions[0].offset == 3


def test_segments_below_the_log_start_survive_a_crash_until_retention(durable, unique):
    """DeleteRecords leaves the segments below the log start to the next retention check, as
    Kafka's: after a SIGKILL they are still there (the partition's size), every record from
    the log start on is read back, and a time only a deleted record has finds nothing."""
    from confluent_kafka import Producer

    from kipper.client.admin_cluster import describe_log_dirs
    from kipper.client.consumer_requests import EARLIEST_TIMESTAMP, list_offsets

    topic, ts, week_and_a_day = f"kept-{unique}", 1_700_000_000_000, 8 * 86_400_000
    create_topics(durable.bootstrap, topic, partitions=1)
    p = Producer({"bootstrap.servers": durable.bootstrap, "enable.idempotence": True, "linger.ms": 0})
    for i, stamp in enumerate([ts, ts + 1, ts + week_and_a_day] + [ts + week_and_a_day + i for i in range(100)]):
        p.produce(topic, value=b"%d" % i, timestamp=stamp, partition=0)
        p.flush(30)  # (a batch each: the third rolls the log, more than segment.ms past the first)
    assert p.flush(30) == 0

    def size() -> int:
        with connect_any(durable.bootstrap) as conn:
            dirs = describe_log_dirs(conn, {topic: [0]})
        return dirs.results[0].topics[0].partitions[0].partition_size

    before = size()
    with connect_any(durable.bootstrap) as conn:
        assert admin.delete_records(conn, {(topic, 0): 2}).topics[0].partitions[0].error_code == 0
    durable.kill()
    durable.start()
    assert size() == before, "the segment below the log start is kept until the retention check"
    with connect_any(durable.bootstrap) as conn:
        found = list_offsets(conn, {(topic, 0): EARLIEST_TIMESTAMP}).topics[0].partitions[0]
        by_time = list_offsets(conn, {(topic, 0): ts + 1}).topics[0].partitions[0]
    assert found.offset == 2
    assert by_time.offset == -1, "the first segment reaching the time holds nothing from the log start on"
    kept = read_topic(durable.bootstrap, topic, start=2)[0]
    assert [r.value for r in kept] == [b"%d" % i for i in range(2, 103)]


def test_transactions_across_a_crash(durable, unique):
    from confluent_kafka import Consumer, Producer

    topic = f"txn-{unique}"
    create_topics(durable.bootstrap, topic, partitions=1)
    tid = f"tx-{unique}"
    p = Producer({"bootstrap.servers": durable.bootstrap, "transactional.id": tid})
    p.init_transactions(15)
    p.begin_transaction()
    p.produce(topic, value=b"committed")
    p.commit_transaction(15)
    p.begin_transaction()
    p.produce(topic, value=b"aborted")
    p.abort_transaction(15)
    p.begin_transaction()
    p.produce(topic, value=b"open at the crash")
    p.flush(10)
    durable.kill()
    durable.start()
    again = Producer({"bootstrap.servers": durable.bootstrap, "transactional.id": tid})
    again.init_transactions(30)  # the open transaction is aborted, the id initialised again
    again.begin_transaction()
    again.produce(topic, value=b"after")
    again.commit_transaction(15)
    c = Consumer({"bootstrap.servers": durable.bootstrap, "group.id": f"r-{unique}",
                  "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    c.subscribe([topic])
    got = []
    deadline = time.time() + 20
    while b"after" not in got and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got.append(m.value())
    c.close()
    assert got == [b"committed", b"after"]


def test_producer_ids_are_never_reused_after_a_crash(durable):
    with connect_any(durable.bootstrap) as conn:
        before = {init_producer_id(conn).producer_id for _ in range(20)}
    durable.kill()
    durable.start()
    with connect_any(durable.bootstrap) as conn:
        after = {init_producer_id(conn).producer_id for _ in range(20)}
    assert not before & after and min(after) > max(before)


def test_a_share_group_never_redelivers_acknowledged_records_after_a_crash(durable, unique):
    topic, group = f"share-{unique}", f"sg-{unique}"
    create_topics(durable.bootstrap, topic, partitions=1)
    _produce_confluent(durable.bootstrap, topic, [b"%d" % i for i in range(30)])
    config = {"bootstrap.servers": durable.bootstrap, "group.id": group,
              "share.acknowledgement.mode": "explicit"}
    first = ShareConsumer(config)
    first.subscribe([topic])
    acked, released = [], []
    deadline = time.time() + 20
    while len(acked) + len(released) < 30 and time.time() < deadline:
        for r in first.poll(0.5):
            accept = int(r.value) < 20
            first.acknowledge(r, AcknowledgeType.ACCEPT if accept else AcknowledgeType.RELEASE)
            (acked if accept else released).append(int(r.value))
        first.commit_sync()
    first.close()
    assert sorted(acked) == list(range(20)) and sorted(released) == list(range(20, 30))
    holder = ShareConsumer(config)  # acquires 20-29 again and is holding them at the crash
    holder.subscribe([topic])
    held = []
    deadline = time.time() + 20
    while len(held) < 10 and time.time() < deadline:
        held += [(int(r.value), r.delivery_count) for r in holder.poll(0.5)]
    assert sorted(held) == [(v, 2) for v in range(20, 30)]
    durable.kill()  # the acquisitions die with the broker
    durable.start()
    second = ShareConsumer({**config, "share.acknowledgement.mode": "implicit"})
    second.subscribe([topic])
    again = []
    deadline = time.time() + 25
    while len(again) < 10 and time.time() < deadline:
        again += [int(r.value) for r in second.poll(0.5)]
    second.close()
    try:
        holder.close()
    except Exception:  # explicit mode with records it never acknowledged
        pass
    assert sorted(again) == list(range(20, 30)), "acquired records come back; accepted ones never"


def test_a_clean_stop_keeps_what_all_three_clients_wrote(durable, unique):
    import asyncio

    from aiokafka import AIOKafkaProducer
    from kafka import KafkaProducer

    topic = f"clean-{unique}"
    create_topics(durable.bootstrap, topic, partitions=2)
    _produce_confluent(durable.bootstrap, topic, [b"ck-%d" % i for i in range(50)])
    kp = KafkaProducer(bootstrap_servers=durable.bootstrap, enable_idempotence=True, acks="all")
    for i in range(50):
        kp.send(topic, value=b"kp-%d" % i)
    kp.flush(30)
    kp.close()

    async def aio():
        p = AIOKafkaProducer(bootstrap_servers=durable.bootstrap, enable_idempotence=True)
        await p.start()
        try:
            for i in range(50):
                await p.send_and_wait(topic, b"ak-%d" % i)
        finally:
            await p.stop()

    asyncio.run(aio())
    before = sorted(_values(durable.bootstrap, topic))
    assert len(before) == 150
    durable.stop()
    assert "storage_closed" in durable.log_text()
    durable.start()
    assert "clean=True" in durable.log_text().rsplit("storage_opened", 1)[1]
    assert sorted(_values(durable.bootstrap, topic)) == before
    # and each client reads it back after the restart
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": durable.bootstrap, "group.id": f"c-{unique}",
                  "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got = 0
    deadline = time.time() + 20
    while got < 150 and time.time() < deadline:
        m = c.poll(0.5)
        got += m is not None and not m.error()
    c.close()
    assert got == 150
    from kafka import KafkaConsumer
    kc = KafkaConsumer(topic, bootstrap_servers=durable.bootstrap, auto_offset_reset="earliest",
                       consumer_timeout_ms=5000)
    assert len(list(kc)) == 150
    kc.close()

    async def aio_read():
        from aiokafka import AIOKafkaConsumer
        ac = AIOKafkaConsumer(topic, bootstrap_servers=durable.bootstrap, auto_offset_reset="earliest")
        await ac.start()
        try:
            n = 0
            deadline = time.time() + 20
            while n < 150 and time.time() < deadline:
                batch = await ac.getmany(timeout_ms=500)
                n += sum(len(v) for v in batch.values())
            return n
        finally:
            await ac.stop()

    assert asyncio.run(aio_read()) == 150


def test_an_open_transaction_whose_producer_never_returns_is_aborted_after_a_crash(tmp_path, unique):
    """Kafka Streams' pattern (issue 30) with the producer gone for good: records and offsets
    (TxnOffsetCommit) committed, then a transaction open with records on two partitions and
    offsets, SIGKILL. After the restart the coordinator, recovered from __transaction_state, times
    the open transaction out and aborts it: the last stable offset moves past it (read_committed
    readers see what comes after it) and the group keeps the committed transaction's offsets."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    durable = BrokerProcess({"log.dirs": str(tmp_path / "data"),
                             "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"},
                            port=free_port()).start()
    try:
        topic, source, group = f"out-{unique}", f"in-{unique}", f"app-{unique}"
        create_topics(durable.bootstrap, topic, partitions=2)
        create_topics(durable.bootstrap, source, partitions=1)
        p = Producer({"bootstrap.servers": durable.bootstrap, "transactional.id": f"tx-{unique}",
                      "transaction.timeout.ms": 3000})
        meta = Consumer({"bootstrap.servers": durable.bootstrap, "group.id": group}).consumer_group_metadata()
        p.init_transactions(15)
        p.begin_transaction()
        for i in range(100):
            p.produce(topic, value=b"c%d" % i, partition=i % 2)
        p.send_offsets_to_transaction([TopicPartition(source, 0, 100)], meta, 15)
        p.commit_transaction(15)
        p.begin_transaction()
        for i in range(50):
            p.produce(topic, value=b"open%d" % i, partition=i % 2)
        p.send_offsets_to_transaction([TopicPartition(source, 0, 150)], meta, 15)
        assert p.flush(10) == 0
        durable.kill()
        durable.start()
        _produce_confluent(durable.bootstrap, topic, [b"after"])  # lands behind the open transaction
        c = Consumer({"bootstrap.servers": durable.bootstrap, "group.id": f"r-{unique}",
                      "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
        c.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
        got = []
        deadline = time.time() + 40
        while len(got) < 101 and time.time() < deadline:  # both partitions, to 'after'
            m = c.poll(0.5)
            if m is not None and not m.error():
                got.append(m.value())
        c.close()
        assert sorted(got) == sorted([b"c%d" % i for i in range(100)] + [b"after"]), len(got)
        reader = Consumer({"bootstrap.servers": durable.bootstrap, "group.id": group, "isolation.level": "read_committed"})
        committed = reader.committed([TopicPartition(source, 0)], 15)
        reader.close()
        assert committed[0].offset == 100
    finally:
        durable.stop()
