"""A batch refused for its records' timestamps (message.timestamp.after.max.ms and
message.timestamp.before.max.ms) gets Kafka's whole answer through the real dispatcher:
INVALID_TIMESTAMP, a record error (batch index and message) for every record out of range,
Kafka's error message and the partition's log start offset; nothing is appended."""

from __future__ import annotations

import pytest

from kipper.protocol import compression
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

HOUR = 3_600_000
LONG_MAX = 2**63 - 1


def _out_of_range(ts: int, offset: int, low: int, high: int) -> str:
    return (f"Timestamp {ts} of message with offset {offset} is out of range. "
            f"The timestamp should be within [{low}, {high}]")


def _broker(**configs) -> InProcessBroker:
    b = InProcessBroker()
    b.state.topics.create("t", 1, configs=configs or None)
    return b


@pytest.mark.parametrize("codec", [compression.NONE, compression.GZIP, compression.ZSTD])
def test_records_too_far_ahead_are_each_listed(codec):
    b = _broker()
    now = b.now
    assert b.produce("t", 0, [(None, b"a", now)] * 3).error_code == 0
    b.state.topics.partition("t", 0).delete_records_before(2)  # the answer carries log start 2
    rows = [(None, b"ok", now), (None, b"ahead", now + HOUR + 1), (None, b"ok", now + HOUR),
            (None, b"far", now + 5 * HOUR)]
    part = b.produce("t", 0, rows, compression_type=codec)
    assert part.error_code == E.INVALID_TIMESTAMP
    assert part.error_message == "One or more records have been rejected due to invalid timestamp"
    assert part.log_start_offset == 2 and part.base_offset == -1
    low = now - LONG_MAX  # Kafka's bound with message.timestamp.before.max.ms unset
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [
        (1, _out_of_range(now + HOUR + 1, 1, low, now + HOUR)),
        (3, _out_of_range(now + 5 * HOUR, 3, low, now + HOUR))]
    assert b.state.topics.partition("t", 0).log_end_offset == 3  # nothing appended


def test_records_too_far_behind_are_each_listed_when_before_max_ms_is_set():
    b = _broker(**{"message.timestamp.before.max.ms": "1000"})
    now = b.now
    part = b.produce("t", 0, [(None, b"old", now - 1001), (None, b"ok", now - 1000), (None, b"old", 5)])
    assert (part.error_code, part.log_start_offset) == (E.INVALID_TIMESTAMP, 0)
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [
        (0, _out_of_range(now - 1001, 0, now - 1000, now + HOUR)),
        (2, _out_of_range(5, 2, now - 1000, now + HOUR))]


def test_produce_v7_gets_the_code_and_the_log_start_offset():
    b = _broker()
    part = b.produce("t", 0, [(None, b"v", b.now + 2 * HOUR)], version=7)
    assert (part.error_code, part.log_start_offset) == (E.INVALID_TIMESTAMP, 0)


def test_a_log_append_time_topic_takes_any_timestamp():
    b = _broker(**{"message.timestamp.type": "LogAppendTime", "message.timestamp.before.max.ms": "1000"})
    part = b.produce("t", 0, [(None, b"v", b.now + 2 * HOUR), (None, b"v", 0)])
    assert (part.error_code, part.log_append_time_ms) == (0, b.now)
