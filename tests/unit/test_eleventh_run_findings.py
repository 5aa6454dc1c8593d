"""What the generator's eleventh run found (issue 36, docs/FUZZ_FINDINGS.md), fixed: each test
states Kafka 4.4's answer; each sequence is a named scenario in
tests/conformance/scenarios/generated_run11.py."""

from __future__ import annotations

from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

DELETE_SHARE_GROUP_OFFSETS, ALTER_SHARE_GROUP_OFFSETS = 92, 91
PID = 999_999_999_000  # a producer id no broker issued


def test_a_producer_without_an_epoch_may_start_its_first_epoch_at_any_sequence():
    """Kafka's checkSequence: a new epoch starts at sequence 0, unless the producer's epoch was
    none (-1), as a batch of epoch -1 leaves it (seed 11308)."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    first = b.produce("t", 0, [(b"k", b"a", b.now), (b"k", b"b", b.now)], version=3, producer_id=PID, producer_epoch=-1,
                      base_sequence=0)
    assert (first.error_code, first.base_offset) == (E.NONE, 0)
    second = b.produce("t", 0, [(b"k", b"c", b.now)], version=3, producer_id=PID, producer_epoch=0, base_sequence=2)
    assert (second.error_code, second.base_offset) == (E.NONE, 2)
    # once the producer has an epoch, a newer one starts at sequence 0 again
    third = b.produce("t", 0, [(b"k", b"d", b.now)], version=3, producer_id=PID, producer_epoch=1, base_sequence=3)
    assert third.error_code == E.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_delete_share_group_offsets_answers_a_topic_named_twice_once():
    """Kafka reads the topics of a DeleteShareGroupOffsets as a set (seed 9307)."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    altered = b.call(ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": "g", "topics": [
        {"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 0}]}]})
    assert altered.error_code == E.NONE
    answer = b.call(DELETE_SHARE_GROUP_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "t"}, {"topic_name": "t"}]})
    assert [(r.topic_name, r.error_code) for r in answer.responses] == [("t", E.NONE)]


def test_offset_fetch_answers_a_group_named_twice_as_each_entry_asks():
    """OffsetFetch v8+ answers every entry in its place: one naming a partition, one asking for
    all that the group committed (none), for the same group (seed 9310)."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = b.call(9, 9, {"require_stable": False, "groups": [
        {"group_id": "g", "member_id": None, "member_epoch": -1, "topics": [{"name": "t", "partition_indexes": [0]}]},
        {"group_id": "g", "member_id": None, "member_epoch": -1, "topics": None}]})
    first, second = answer.groups
    assert [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions]) for t in first.topics] == [("t", [(0, -1)])]
    assert second.topics == []
