"""A batch the record parser refuses, through the real dispatcher of a whole broker
(open_engines, no sockets, a settable clock): Kafka's answer, and nothing moves —
no append, no high watermark, no producer state, no transaction in the partition, no
produced bytes in the metrics — and the log says so once a second per producer."""

from __future__ import annotations

import time

import structlog

from kipper.broker import config as cfg
from kipper.broker.dispatcher import Dispatcher
from kipper.broker.server import open_engines
from kipper.broker.context import Session
from kipper.broker.log.refusals import RefusedBatches
from kipper.protocol import compression
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS
from tests.support import malformed as m

PRODUCE = APIS[0]
SESSION = Session("PLAINTEXT", "10.0.0.1:4242")


class Broker:
    def __init__(self, **overrides):
        self.now = int(time.time() * 1000)
        self.state = open_engines(cfg.load(overrides=overrides), clock=lambda: self.now)
        self.dispatcher = Dispatcher.of(self.state)
        self.state.topics.create("t", 1)
        self.cid = 0

    def produce(self, batch: bytes, version: int = 9, client_id: str = "test"):
        self.cid += 1
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}
        frame = encode_request(PRODUCE, version, self.cid, client_id, body)[4:]
        [result], _ = self.dispatcher.dispatch([frame], 0, SESSION)
        return decode_response(PRODUCE, version, result[4:])[1].responses[0].partition_responses[0]

    @property
    def partition(self):
        return self.state.topics.get("t").partitions[0]


def bad(fault: str, codec: int = compression.NONE, **fields) -> bytes:
    case = m.MALFORMED[fault]
    return m.batch(case.payload, case.count, codec, **fields)


def test_a_record_that_does_not_parse_is_invalid_record_with_its_record_error():
    broker = Broker()
    part = broker.produce(bad("records_count 3 with two records"))
    assert part.error_code == ErrorCode.INVALID_RECORD
    assert part.error_message is None  # as Kafka's answer: the text is in the log
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [
        (2, "record 2: the batch ends after 2 of its 3 records")]
    assert part.base_offset == -1


def test_bytes_after_the_last_record_have_no_record_error_and_the_log_says_why(capsys):
    part = Broker().produce(bad("bytes left over after the last record"))
    assert (part.error_code, part.record_errors, part.error_message) == (ErrorCode.INVALID_RECORD, [], None)
    assert "3 bytes follow the last of the 2 records" in capsys.readouterr().out


def test_a_refused_batch_moves_nothing():
    broker = Broker()
    assert broker.produce(records.build_batch([(None, b"a")])).error_code == 0
    before = broker.state.metrics.cumulative()
    for codec in m.CODECS:
        for fault in sorted(m.MALFORMED):
            if m.MALFORMED[fault].count > 0:
                assert broker.produce(bad(fault, codec)).error_code != 0
    p = broker.partition
    assert (p.log.log_end_offset, p.high_watermark) == (1, 1)
    after = broker.state.metrics.cumulative()
    assert after["partitions"] == before["partitions"]  # nothing counted as produced
    refused = broker.state.refusals.snapshot()
    assert refused["by_error"] == {"INVALID_RECORD": refused["total"]} and refused["total"] > 100


def test_a_refused_idempotent_batch_leaves_its_sequence_open():
    broker = Broker()
    pid = broker.state.producer_ids.next_id
    ids = {"producer_id": pid, "producer_epoch": 0}
    assert broker.produce(records.build_batch([(b"k", b"0"), (b"k", b"1")], base_sequence=0, **ids)).error_code == 0
    state_before = broker.state.producer_states.snapshot()
    assert broker.produce(bad("negative header count", base_sequence=2, **ids)).error_code == ErrorCode.INVALID_RECORD
    assert broker.state.producer_states.snapshot() == state_before
    again = broker.produce(records.build_batch([(b"k", b"2")], base_sequence=2, **ids))
    assert (again.error_code, again.base_offset) == (0, 2)


def test_a_payload_that_does_not_decompress_is_corrupt_message():
    part = Broker().produce(m.batch(b"not zstd", 1, compression.ZSTD, compress=False))
    assert part.error_code == ErrorCode.CORRUPT_MESSAGE and part.record_errors == []


def test_produce_v7_gets_the_code_alone():
    part = Broker().produce(bad("negative header count"), version=7)
    assert part.error_code == ErrorCode.INVALID_RECORD


def test_one_log_line_per_producer_per_second():
    broker = Broker()
    with structlog.testing.capture_logs() as logs:
        for _ in range(5):
            broker.produce(bad("negative header count"))
        broker.produce(bad("negative header count"), client_id="other")  # another producer
        broker.now += 1000
        broker.produce(bad("key length -2"))
    lines = [e for e in logs if e["event"] == "produce_refused"]
    assert [(e["client_id"], e["left_out"]) for e in lines] == [("test", 0), ("other", 0), ("test", 4)]
    assert lines[0]["message"] == "record 0: header count -1 is negative"
    assert lines[0]["error"] == "INVALID_RECORD" and lines[0]["topic"] == "t" and lines[0]["partition"] == 0
    assert lines[0]["log_level"] == "warning" and "exc_info" not in lines[0]


def test_refusals_are_keyed_by_producer_id_when_the_batch_has_one():
    refusals = RefusedBatches()
    logged = [refusals.refused(0, 7, error="INVALID_RECORD", message="x"),
              refusals.refused(10, 7, error="INVALID_RECORD", message="x"),
              refusals.refused(20, 8, error="CORRUPT_MESSAGE", message="y"),
              refusals.refused(1000, 7, error="INVALID_RECORD", message="x")]
    assert logged == [True, False, True, True]
    assert refusals.snapshot() == {"total": 4, "by_error": {"INVALID_RECORD": 3, "CORRUPT_MESSAGE": 1}}


def test_the_producers_remembered_stay_bounded():
    from kipper.broker.log import refusals as module

    refusals = RefusedBatches()
    with structlog.testing.capture_logs():
        for i in range(module.MAX_TRACKED + 10):  # all within one second: none is quiet yet
            refusals.refused(0, i, error="INVALID_RECORD", message="x")
        assert len(refusals._last) <= module.MAX_TRACKED
        for i in range(module.MAX_TRACKED):  # a second later, the quiet ones are forgotten first
            refusals.refused(2000 + i, -i, error="INVALID_RECORD", message="x")
        assert len(refusals._last) <= module.MAX_TRACKED


def test_refusals_reach_the_metrics_dump_and_prometheus():
    from tests.unit.test_prometheus_families import samples as exported

    broker = Broker()
    broker.produce(bad("negative header count"))
    broker.produce(m.batch(b"not zstd", 1, compression.ZSTD, compress=False))
    snap = broker.state.metrics.cumulative()
    assert snap["refused_batches"] == {"total": 2, "by_error": {"INVALID_RECORD": 1, "CORRUPT_MESSAGE": 1}}
    samples = exported(broker.state.metrics)
    assert samples[("kafka_server_brokertopicmetrics_refused_batches_total", (("error", "CORRUPT_MESSAGE"),))] == 1


def test_the_answer_carries_the_log_start_offset_where_kafkas_does():
    broker = Broker()
    assert broker.produce(records.build_batch([(None, b"a"), (None, b"b")])).error_code == 0
    broker.partition.delete_records_before(1)
    # refused by the log (Kafka's LogValidator): the partition's log start offset
    for batch in (bad("bytes left over after the last record"), bad("records_count 3 with two records"),
                  records.build_batch([(b"\x00\x00\x00\x00", b"\x00" * 6)], control=True)):
        part = broker.produce(batch)
        assert (part.error_code, part.log_start_offset) == (ErrorCode.INVALID_RECORD, 1)
    # refused before the log (not one batch), or corrupt: -1
    two = records.build_batch([(None, b"a")]) + records.build_batch([(None, b"b")])
    crc = bytearray(records.build_batch([(None, b"a")]))
    crc[-1] ^= 0xFF
    for batch, code in ((two, ErrorCode.INVALID_RECORD), (bytes(crc), ErrorCode.CORRUPT_MESSAGE)):
        part = broker.produce(batch)
        assert (part.error_code, part.log_start_offset) == (code, -1)
