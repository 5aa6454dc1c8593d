"""Produce at the edges Kafka 4.4 answers in its own way (issue 36): batch headers that
disagree with their records, base offsets, legacy and truncated message sets, a partition
named twice, acks=0 refusals, and which answers carry an error_message. A whole broker in
the process (tests/support/inproc.py) under a settable clock, through its real dispatcher;
tests/conformance/scenarios/data_edges.py puts the same requests to Kafka."""

from __future__ import annotations

import struct

import pytest

from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.protocol import batch as b
from kipper.protocol import compression, records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.support import malformed as m
from tests.support.inproc import InProcessBroker

PRODUCE, LIST_OFFSETS = 0, 2
TS = 1_700_000_000_000
CODECS = (compression.NONE, compression.GZIP, compression.ZSTD)


@pytest.fixture
def broker():
    inproc = InProcessBroker(now=TS + 60_000)
    inproc.state.topics.create("t", 2)
    return inproc


def produce(broker, data: bytes, *, partition: int = 0, topic: str = "t", version: int = 9):
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": data}]}]}
    return broker.call(PRODUCE, version, body).responses[0].partition_responses[0]


def stored(broker, partition: int = 0) -> list[b.BatchHeader]:
    return [b.read_header(data) for _, data in broker.state.topics.get("t").partitions[partition].batches()]


def list_offsets(broker, timestamp: int, partition: int = 0):
    p = broker.call(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": partition, "current_leader_epoch": -1,
                                      "timestamp": timestamp}]}]}).topics[0].partitions[0]
    return p.error_code, p.offset, p.timestamp


# --- the max timestamp: the records', not the header's (Kafka's LogValidator) ---------------

@pytest.mark.parametrize("codec", CODECS, ids=[compression.NAMES[c] for c in CODECS])
@pytest.mark.parametrize("header_max", [TS + 100, TS, -1])
def test_a_header_max_timestamp_that_disagrees_is_rewritten_from_the_records(broker, codec, header_max):
    data = m.with_header(records.build_batch([(b"k", b"v%d" % i, TS + i) for i in range(3)], compression_type=codec),
                   max_timestamp=header_max)
    assert produce(broker, data).error_code == 0
    [h] = stored(broker)
    _, stored_batch = broker.state.topics.get("t").partitions[0].batches()[0]
    assert h.max_timestamp == TS + 2 and b.crc_valid(stored_batch, 0, len(stored_batch), h)
    assert [r.timestamp for r in records.decode_batch(stored_batch).records] == [TS, TS + 1, TS + 2]
    assert list_offsets(broker, -3) == (0, 2, TS + 2)
    assert list_offsets(broker, TS + 50) == (0, -1, -1)


def test_a_header_that_agrees_is_stored_as_it_came(broker):
    data = records.build_batch([(b"k", b"v", TS), (b"k", b"w", TS + 5)])
    assert produce(broker, data).error_code == 0
    _, kept = broker.state.topics.get("t").partitions[0].batches()[0]
    assert bytes(kept)[b.LOG_OVERHEAD + 4:] == data[b.LOG_OVERHEAD + 4:]  # (the leader epoch aside)


def test_a_record_too_far_ahead_behind_a_low_header_max_is_refused(broker):
    broker.state.topics.create("ahead", 1, configs={"message.timestamp.after.max.ms": "1000"})
    data = m.with_header(records.build_batch([(b"k", b"v", TS), (b"k", b"w", TS + 10_000_000)]), max_timestamp=TS)
    got = produce(broker, data, topic="ahead")
    assert got.error_code == ErrorCode.INVALID_TIMESTAMP
    assert [e.batch_index for e in got.record_errors] == [1]
    assert got.error_message == "One or more records have been rejected due to invalid timestamp"


def test_a_log_append_time_flag_on_a_create_time_topic_becomes_create_time(broker):
    payload = b"".join(records.encode_record(i, d, b"k", b"v") for i, d in enumerate((0, 5, 2)))
    data = records.assemble(payload, 3, TS, TS + 5, extra_attributes=b.TIMESTAMP_TYPE)
    assert produce(broker, data).error_code == 0
    flagged_beyond = m.with_header(records.build_batch([(b"k", b"v", TS + 3), (b"k", b"w", TS + 4)]),
                             attributes=b.TIMESTAMP_TYPE, max_timestamp=TS + 50)
    assert produce(broker, flagged_beyond).error_code == 0
    first, second = stored(broker)
    assert not first.attributes & b.TIMESTAMP_TYPE and first.max_timestamp == TS + 5
    # every record of a flagged batch reads as its header's max: Kafka keeps that max
    assert not second.attributes & b.TIMESTAMP_TYPE and second.max_timestamp == TS + 50
    _, data2 = broker.state.topics.get("t").partitions[0].batches()[1]
    assert [r.timestamp for r in records.decode_batch(data2).records] == [TS + 3, TS + 4]
    assert list_offsets(broker, -3) == (0, -1, -1)  # no record carries TS + 50: Kafka finds none
    assert list_offsets(broker, TS + 4) == (0, 1, TS + 5)


def test_max_timestamp_over_records_without_timestamps_is_the_first_record(broker):
    assert list_offsets(broker, -3) == (0, -1, -1)
    payload = b"".join(records.encode_record(i, 0, b"k", b"v") for i in range(2))
    assert produce(broker, records.assemble(payload, 2, -1, -1)).error_code == 0
    assert list_offsets(broker, -3) == (0, 0, -1)
    assert produce(broker, records.build_batch([(b"k", b"v", TS)])).error_code == 0
    assert list_offsets(broker, -3) == (0, 2, TS)


# --- framing as Kafka reads a Produce's records ----------------------------------------------

ONE = records.build_batch([(b"k", b"v", TS)])


@pytest.mark.parametrize("data, code, log_start", [
    (m.legacy_message(0), ErrorCode.INVALID_RECORD, -1),
    (m.legacy_message(1), ErrorCode.INVALID_RECORD, -1),
    (m.legacy_message(1) + ONE, ErrorCode.INVALID_RECORD, -1),
    (ONE[:40], ErrorCode.INVALID_RECORD, -1),  # no whole batch: none at all, for Kafka
    (b"", ErrorCode.INVALID_RECORD, -1),
    (ONE + ONE, ErrorCode.INVALID_RECORD, -1),
    (ONE[:8] + struct.pack(">i", 13) + ONE[12:], ErrorCode.CORRUPT_MESSAGE, -1),  # smaller than any message
    (ONE[:16] + b"\x07" + ONE[17:], ErrorCode.CORRUPT_MESSAGE, -1),  # a magic Kafka does not know
    (ONE + ONE[:8] + struct.pack(">i", 5), ErrorCode.CORRUPT_MESSAGE, -1),  # a second one, too small
    (m.with_header(ONE, base_offset=5), ErrorCode.INVALID_RECORD, 0),  # refused by the log: its start offset
    (m.with_header(ONE, base_offset=-1), ErrorCode.INVALID_RECORD, 0),
], ids=["magic 0", "magic 1", "magic 1 then v2", "truncated", "empty", "two batches", "size 13", "magic 7",
        "a small second", "base offset 5", "base offset -1"])
def test_records_kafka_refuses_before_the_records_are_read(broker, data, code, log_start):
    got = produce(broker, data)
    assert (got.error_code, got.error_message, got.base_offset, got.log_start_offset) == (code, None, -1, log_start)
    assert stored(broker) == []


@pytest.mark.parametrize("tail", [b"\x00" * 5, ONE[:40], ONE[:16]], ids=["5 bytes", "40 bytes of a batch", "16"])
def test_bytes_after_the_batch_too_few_to_be_another_are_dropped_as_kafka_trims_them(broker, tail):
    got = produce(broker, ONE + tail)
    assert (got.error_code, got.base_offset) == (0, 0)
    _, kept = broker.state.topics.get("t").partitions[0].batches()[0]
    assert len(kept) == len(ONE)


# --- a partition named twice -------------------------------------------------------------------

def test_a_partition_named_twice_is_written_once_with_the_last_records(broker):
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [
            {"index": 0, "records": records.build_batch([(b"k", b"first", TS)] * 2)},
            {"index": 1, "records": ONE},
            {"index": 0, "records": records.build_batch([(b"k", b"last", TS)] * 3)}]},
        {"name": "t", "partition_data": [{"index": 1, "records": records.build_batch([(b"k", b"again", TS)])}]}]}
    answer = broker.call(PRODUCE, 9, body)
    assert [(t.name, sorted((p.index, p.error_code, p.base_offset) for p in t.partition_responses))
            for t in answer.responses] == [("t", [(0, 0, 0), (1, 0, 0)])]
    [h0] = stored(broker, 0)
    [h1] = stored(broker, 1)
    assert h0.records_count == 3 and h1.records_count == 1
    _, data = broker.state.topics.get("t").partitions[1].batches()[0]
    assert [r.value for r in records.decode_batch(data).records] == [b"again"]


# --- acks=0 --------------------------------------------------------------------------------

def dispatch_acks0(broker, topic: str, data: bytes, partition: int = 0):
    body = {"transactional_id": None, "acks": 0, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": data}]}]}
    broker.cid += 1
    frame = encode_request(APIS[PRODUCE], 9, broker.cid, "test", body)[4:]
    [result], _ = broker.dispatcher.dispatch([frame], 0, broker.session)
    return result


@pytest.mark.parametrize("topic, partition, data", [
    ("missing", 0, ONE), ("t", 7, ONE), ("t", 0, ONE[:-1] + bytes([ONE[-1] ^ 0xFF])), ("t", 0, m.legacy_message(0))],
    ids=["unknown topic", "unknown partition", "bad CRC", "magic 0"])
def test_a_refused_produce_with_acks_0_closes_the_connection(broker, topic, partition, data):
    result = dispatch_acks0(broker, topic, data, partition)
    assert type(result) is Reply and result.body is NO_RESPONSE and result.abort
    assert stored(broker) == []


def test_an_accepted_produce_with_acks_0_gets_no_answer_and_keeps_the_connection(broker):
    assert dispatch_acks0(broker, "t", ONE) is NO_RESPONSE
    assert len(stored(broker)) == 1


# --- error_message: text where Kafka sends text, null where it sends null --------------------

def test_refusals_answer_error_message_null_as_kafka_and_say_why_in_the_log(broker, capsys):
    broker.state.topics.create("small", 1, configs={"max.message.bytes": "100"})
    answers = [produce(broker, records.build_batch([(b"k", b"x" * 400, TS)]), topic="small"),
               produce(broker, m.with_header(ONE, records_count=2)),
               produce(broker, records.build_batch([(b"k", b"v", TS)], control=True))]
    pid = broker.call(22, 4, {"transactional_id": None, "transaction_timeout_ms": 1000, "producer_id": -1,
                             "producer_epoch": -1}).producer_id
    produce(broker, records.build_batch([(b"k", b"v", TS)], producer_id=pid, producer_epoch=0, base_sequence=0))
    answers.append(produce(broker, records.build_batch([(b"k", b"v", TS)], producer_id=pid, producer_epoch=0,
                                                       base_sequence=5)))
    assert [(a.error_code, a.error_message) for a in answers] == [
        (ErrorCode.MESSAGE_TOO_LARGE, None), (ErrorCode.INVALID_RECORD, None), (ErrorCode.INVALID_RECORD, None),
        (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, None)]
    log = capsys.readouterr().out
    assert "exceeds the limit of 100" in log and "expected sequence 1, got 5" in log
