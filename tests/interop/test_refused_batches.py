"""Malformed batches refused at the append path, and the partition still readable by all.

Issue 28's finding: batches whose CRC was right but whose records did not parse were
stored, and then confluent-kafka stopped at the first one, kafka-python raised
CorruptRecordError and aiokafka read nothing. Here each malformed batch of
tests/support/malformed.py is sent on a raw connection (so no client library tidies it
up), every codec, between sound ones; each must be refused with Kafka's code and leave
nothing behind, and each client then reads exactly the sound records, with no error.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from kipper.client.blocking import BlockingConnection
from kipper.protocol import compression
from kipper.protocol.errors import ErrorCode
from kipper.protocol.records import build_batch
from tests.support import malformed as m
from tests.support.topics import create_topics

pytestmark = pytest.mark.interop

PRODUCE, LIST_OFFSETS, INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN = 0, 2, 22, 24
FAULTS = sorted(m.MALFORMED)
CODEC_IDS = [compression.NAMES[c] for c in m.CODECS]


def produce(conn: BlockingConnection, topic: str, records: bytes, version: int = 9, transactional_id=None):
    """The one partition's response to a Produce of ``records`` to partition 0."""
    body = conn.request(PRODUCE, {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": records}]}]}, version=version)
    return body.responses[0].partition_responses[0]


def high_watermark(conn: BlockingConnection, topic: str) -> int:
    body = conn.request(LIST_OFFSETS, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
    return body.topics[0].partitions[0].offset


def bad_batch(fault: str, codec: int, **fields) -> bytes:
    case = m.MALFORMED[fault]
    return m.batch(case.payload, case.count, codec, **fields)


@pytest.fixture
def conn(broker):
    with BlockingConnection("127.0.0.1", broker.port, timeout=10) as c:
        yield c


# --- the refusals, on the wire --------------------------------------------------------------------

@pytest.mark.parametrize("codec", m.CODECS, ids=CODEC_IDS)
def test_every_malformed_batch_is_refused_with_kafkas_code_and_stores_nothing(broker, conn, unique, codec):
    topic = f"refused-{unique}"
    create_topics(broker.bootstrap, topic, partitions=1)
    assert produce(conn, topic, build_batch([(None, b"before")])).error_code == 0
    for fault in FAULTS:
        case = m.MALFORMED[fault]
        if case.count <= 0:
            continue  # the batch header's own checks refuse those (tests/unit/test_records.py)
        part = produce(conn, topic, bad_batch(fault, codec))
        assert part.error_code == case.code, (fault, part)
        assert part.base_offset == -1
        assert part.error_message is None, fault  # as Kafka's answer: the broker's log says why
        if case.index >= 0:
            [error] = part.record_errors
            assert error.batch_index == case.index and error.batch_index_error_message, fault
        else:
            assert part.record_errors == [], fault
        assert high_watermark(conn, topic) == 1, fault
    assert produce(conn, topic, build_batch([(None, b"after")])).base_offset == 1


def test_produce_versions_before_8_get_the_code_without_record_errors(broker, conn, unique):
    topic = f"refused-v7-{unique}"
    create_topics(broker.bootstrap, topic, partitions=1)
    part = produce(conn, topic, bad_batch("negative header count", compression.NONE), version=7)
    assert part.error_code == ErrorCode.INVALID_RECORD


def test_a_payload_that_does_not_decompress_is_corrupt_message(broker, conn, unique):
    topic = f"refused-gzip-{unique}"
    create_topics(broker.bootstrap, topic, partitions=1)
    part = produce(conn, topic, m.batch(b"this is not gzip", 1, compression.GZIP, compress=False))
    assert part.error_code == ErrorCode.CORRUPT_MESSAGE
    assert part.error_message is None and part.record_errors == []


# --- the clients read the sound records after refusals ---------------------------------------------

GOOD = [b"good-0", b"good-1", b"good-2", b"good-3"]


def _seed(broker, conn, topic: str) -> None:
    """Two sound batches (the second gzip: kafka-python reads no other codec without extra
    libraries) with every kind of refused batch, every codec, between them."""
    create_topics(broker.bootstrap, topic, partitions=1)
    assert produce(conn, topic, build_batch([(b"k", v) for v in GOOD[:2]])).error_code == 0
    for codec in m.CODECS:
        for fault in FAULTS:
            if m.MALFORMED[fault].count > 0:
                assert produce(conn, topic, bad_batch(fault, codec)).error_code != 0
    assert produce(conn, topic, build_batch([(b"k", v) for v in GOOD[2:]],
                                            compression_type=compression.GZIP)).error_code == 0


def _confluent(bootstrap: str, topic: str) -> list[bytes]:
    from confluent_kafka import Consumer, KafkaError

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "auto.offset.reset": "earliest",
                  "enable.partition.eof": True, "check.crcs": True})
    got: list[bytes] = []
    try:
        c.subscribe([topic])
        deadline = time.time() + 30
        while time.time() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF and len(got) >= len(GOOD):
                    break
                assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
                continue
            got.append(msg.value())
    finally:
        c.close()
    return got


def _kafka_python(bootstrap: str, topic: str) -> list[bytes]:
    from kafka import KafkaConsumer

    c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"g-{topic}", auto_offset_reset="earliest",
                      consumer_timeout_ms=5000, check_crcs=True)
    try:
        return [msg.value for msg in c]
    finally:
        c.close()


def _aiokafka(bootstrap: str, topic: str) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer

    async def run() -> list[bytes]:
        c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"g-{topic}",
                             auto_offset_reset="earliest", check_crcs=True)
        await c.start()
        got: list[bytes] = []
        try:
            deadline = time.time() + 30
            while len(got) < len(GOOD) and time.time() < deadline:
                for recs in (await c.getmany(timeout_ms=500)).values():
                    got += [r.value for r in recs]
        finally:
            await c.stop()
        return got

    return asyncio.run(run())


@pytest.mark.parametrize("read", [_confluent, _kafka_python, _aiokafka], ids=["confluent-kafka", "kafka-python",
                                                                              "aiokafka"])
def test_each_client_reads_exactly_the_sound_records_after_refusals(broker, conn, unique, read):
    topic = f"readable-{read.__name__.strip('_')}-{unique}"
    _seed(broker, conn, topic)
    assert read(broker.bootstrap, topic) == GOOD
    assert high_watermark(conn, topic) == len(GOOD)


# --- producer state and transactions ---------------------------------------------------------------

def _producer_id(conn: BlockingConnection) -> tuple[int, int]:
    body = conn.request(INIT_PRODUCER_ID, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                           "producer_id": -1, "producer_epoch": -1})
    assert body.error_code == 0
    return body.producer_id, body.producer_epoch


@pytest.mark.parametrize("codec", m.CODECS, ids=CODEC_IDS)
def test_a_refused_idempotent_batch_leaves_its_sequence_open(broker, conn, unique, codec):
    topic = f"idem-{unique}"
    create_topics(broker.bootstrap, topic, partitions=1)
    pid, epoch = _producer_id(conn)
    ids = {"producer_id": pid, "producer_epoch": epoch}
    first = build_batch([(b"k", b"0"), (b"k", b"1")], base_sequence=0, **ids)
    assert produce(conn, topic, first).error_code == 0
    for fault in ("negative header count", "records_count 3 with two records", "bytes left over after the last record"):
        refused = produce(conn, topic, bad_batch(fault, codec, base_sequence=2, **ids))
        assert refused.error_code == ErrorCode.INVALID_RECORD, fault
    again = produce(conn, topic, build_batch([(b"k", b"2"), (b"k", b"3")], base_sequence=2,
                                             compression_type=codec, **ids))
    assert (again.error_code, again.base_offset) == (0, 2)  # not DUPLICATE_SEQUENCE_NUMBER
    assert produce(conn, topic, build_batch([(b"k", b"4")], base_sequence=4, **ids)).base_offset == 4


def _begin_transaction(conn: BlockingConnection, transactional_id: str, topic: str) -> tuple[int, int]:
    """InitProducerId and AddPartitionsToTxn (v3) of partition 0, retried while the
    coordinator loads."""
    deadline = time.time() + 20
    while True:
        body = conn.request(INIT_PRODUCER_ID, {"transactional_id": transactional_id, "transaction_timeout_ms": 60000,
                                               "producer_id": -1, "producer_epoch": -1})
        if body.error_code == 0 or time.time() > deadline:
            break
        time.sleep(0.1)
    assert body.error_code == 0, body
    pid, epoch = body.producer_id, body.producer_epoch
    added = conn.request(ADD_PARTITIONS_TO_TXN, {
        "v3_and_below_transactional_id": transactional_id, "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [{"name": topic, "partitions": [0]}]},
        version=3)
    assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0, added
    return pid, epoch


def test_a_refused_transactional_batch_opens_no_transaction_in_the_partition(broker, conn, unique):
    topic = f"txn-{unique}"
    create_topics(broker.bootstrap, topic, partitions=1)
    pid, epoch = _begin_transaction(conn, f"t-{unique}", topic)
    # with its transactional id: a transactional batch without one is TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    refused = produce(conn, topic, bad_batch("negative header count", compression.NONE, producer_id=pid,
                                             producer_epoch=epoch, base_sequence=0, attributes=0x10),
                      transactional_id=f"t-{unique}")
    assert refused.error_code == ErrorCode.INVALID_RECORD
    body = conn.request(LIST_OFFSETS, {"replica_id": -1, "isolation_level": 1, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
    assert body.topics[0].partitions[0].offset == 0  # the last stable offset is not held
    assert produce(conn, topic, build_batch([(None, b"plain")])).base_offset == 0
