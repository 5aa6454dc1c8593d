"""The text Kafka 4.4 gives a refused share acknowledgement (broker/share/ack_check.py), on a
SharePartition with a manual clock: worded by batch while the in-flight batch is tracked
whole, by offset once part of it changed alone (measured: share/acknowledgement-refusal-texts)."""

from __future__ import annotations

from kipper.broker.share import ack_check as texts
from kipper.broker.share.partition import SharePartition
from kipper.broker.share.states import ACCEPT, RELEASE
from kipper.protocol.errors import ErrorCode
from tests.unit.test_share_partition import FakeLog

INVALID_RECORD_STATE, INVALID_REQUEST = ErrorCode.INVALID_RECORD_STATE, ErrorCode.INVALID_REQUEST


def acked(sp, member, *batches):
    """(error, text) of each batch."""
    messages: list = []
    errors, _ = sp.acknowledge(member, list(batches), 0, messages=messages)
    return list(zip(errors, messages))


def two_acquisitions():
    """m0 acquires 0-5 (two log batches, one in-flight batch), then 6-8 (another)."""
    sp = SharePartition("g", "t", 0, start_offset=0, delivery_count_limit=5, lock_duration_ms=1000,
                        max_in_flight_records=200)
    log = FakeLog([(0, 2, False), (3, 5, False), (6, 8, False)])
    assert sp.acquire("m0", 0, log, max_records=6, batch_optimized=True) == [(0, 5, 1)]
    assert sp.acquire("m0", 0, log, max_records=3, batch_optimized=True) == [(6, 8, 1)]
    return sp, log


def test_offsets_past_the_acquired_records():
    sp, _ = two_acquisitions()
    assert acked(sp, "m0", (10, 12, [ACCEPT]), (8, 9, [ACCEPT])) == [
        (INVALID_REQUEST, texts.FIRST_PAST), (INVALID_REQUEST, texts.LAST_PAST)]


def test_a_batch_changed_whole_is_named_by_batch_even_for_part_of_it():
    sp, _ = two_acquisitions()
    assert acked(sp, "m0", (6, 8, [RELEASE])) == [(ErrorCode.NONE, None)]
    assert acked(sp, "m0", (6, 8, [ACCEPT]), (7, 7, [ACCEPT]), (6, 8, [ACCEPT] * 3)) == [
        (INVALID_RECORD_STATE, texts.NOT_ACQUIRED)] * 3


def test_a_batch_changed_in_part_is_named_by_offset_from_then_on():
    sp, _ = two_acquisitions()
    assert acked(sp, "m0", (0, 2, [RELEASE])) == [(ErrorCode.NONE, None)]
    assert acked(sp, "m0", (0, 2, [ACCEPT]), (1, 1, [ACCEPT])) == [
        (INVALID_RECORD_STATE, texts.NOT_ACQUIRED_OFFSET)] * 2


def test_another_members_records_by_batch_and_by_offset():
    sp, log = two_acquisitions()
    acked(sp, "m0", (0, 2, [RELEASE]), (6, 8, [RELEASE]))
    assert sp.acquire("m1", 0, log, max_records=10, batch_optimized=True) == [(0, 2, 2), (6, 8, 2)]
    assert acked(sp, "m0", (6, 8, [ACCEPT]), (7, 7, [ACCEPT]), (0, 2, [ACCEPT])) == [
        (INVALID_RECORD_STATE, texts.NOT_OWNER), (INVALID_RECORD_STATE, texts.NOT_OWNER),
        (INVALID_RECORD_STATE, texts.NOT_OWNER_OFFSET)]
