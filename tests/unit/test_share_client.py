"""The share consumer's sans-I/O parts: record decoding and acknowledgement batches."""

from __future__ import annotations

import pytest
from construct import Container

from kipper.client.share_acks import (
    AcknowledgeType, AckTracker, IllegalStateError, TopicPartition, ack_batches, decode_partition,
)
from kipper.protocol import records

TP = TopicPartition("t", 0)


def acquired(*ranges):
    return [Container(first_offset=f, last_offset=last, delivery_count=n) for f, last, n in ranges]


def test_only_acquired_offsets_are_returned_with_their_delivery_count():
    data = records.build_batch([(None, b"a"), (None, b"b"), (None, b"c"), (None, b"d")],
                               base_offset=10)
    recs, gaps = decode_partition("t", 0, data, acquired((11, 11, 3), (13, 13, 1)))
    assert [(r.offset, r.value, r.delivery_count) for r in recs] == [(11, b"b", 3), (13, b"d", 1)]
    assert gaps == []


def test_acquired_offsets_without_a_record_become_gaps():
    data = records.build_batch([(None, b"a")], base_offset=5)
    recs, gaps = decode_partition("t", 0, data, acquired((5, 7, 1)))
    assert [r.offset for r in recs] == [5] and gaps == [6, 7]


def test_control_batches_are_never_records():
    data = records.build_control_batch(records.SHARE_DELTA, b"\x00\x00", base_offset=3)
    recs, gaps = decode_partition("t", 0, data, acquired((3, 3, 1)))
    assert recs == [] and gaps == [3]


def test_ack_batches_join_consecutive_offsets_of_one_type():
    assert ack_batches({1: 1, 2: 1, 3: 2, 5: 2}) == [
        {"first_offset": 1, "last_offset": 2, "acknowledge_types": [1]},
        {"first_offset": 3, "last_offset": 3, "acknowledge_types": [2]},
        {"first_offset": 5, "last_offset": 5, "acknowledge_types": [2]}]


def _delivered(tracker, offsets):
    data = records.build_batch([(None, b"x")] * 10)
    recs, gaps = decode_partition("t", 0, data, acquired((0, 9, 1)))
    recs = [r for r in recs if r.offset in offsets]
    tracker.delivered_records(TP, recs, gaps)
    return recs


def test_implicit_mode_accepts_the_previous_poll_as_ranges():
    t = AckTracker(implicit=True)
    _delivered(t, {0, 1, 2, 5, 6})
    t.close_poll()
    assert t.take() == {TP: [{"first_offset": 0, "last_offset": 2, "acknowledge_types": [1]},
                             {"first_offset": 5, "last_offset": 6, "acknowledge_types": [1]}]}


def test_explicit_mode_sends_what_the_application_chose():
    t = AckTracker(implicit=False)
    recs = _delivered(t, {0, 1, 2})
    t.acknowledge(TP, 0, AcknowledgeType.ACCEPT)
    t.acknowledge(TP, 1, AcknowledgeType.RELEASE)
    with pytest.raises(IllegalStateError):
        t.close_poll()  # record 2 is not acknowledged yet
    t.acknowledge(TP, recs[2].offset, AcknowledgeType.REJECT)
    t.close_poll()
    assert [b["acknowledge_types"] for b in t.take()[TP]] == [[1], [2], [3]]


def test_acknowledging_a_record_that_was_not_delivered_is_an_illegal_state():
    t = AckTracker(implicit=False)
    _delivered(t, {0})
    with pytest.raises(IllegalStateError):
        t.acknowledge(TP, 4, AcknowledgeType.ACCEPT)


def test_take_can_pick_partitions():
    t = AckTracker(implicit=True)
    _delivered(t, {0})
    t.delivered_records(TopicPartition("u", 1), [], [3])
    t.close_poll()
    assert list(t.take({TP})) == [TP]
    assert t.take() == {TopicPartition("u", 1): [
        {"first_offset": 3, "last_offset": 3, "acknowledge_types": [0]}]}
