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
    again = b.call(DELETE_SHARE_GROUP_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "t"}, {"topic_name": "t"}]})
    assert [(r.topic_name, r.error_code) for r in again.responses] == [("t", E.UNKNOWN_TOPIC_OR_PARTITION)] * 2


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


def test_a_consumer_heartbeat_leaving_a_classic_group_is_told_it_is_no_consumer_group():
    """Only a join converts a classic group; a leave (or a heartbeat) to one gets
    GROUP_ID_NOT_FOUND (seed 10339)."""
    import struct

    b = InProcessBroker()
    b.state.topics.create("t", 1)
    metadata = struct.pack(">hi", 0, 1) + struct.pack(">h", 1) + b"t" + struct.pack(">i", 0)
    joined = b.call(11, 0, {"group_id": "g", "session_timeout_ms": 45000, "member_id": "", "protocol_type": "consumer",
                            "protocols": [{"name": "range", "metadata": metadata}]})
    for epoch in (-1, 3):
        answer = b.call(68, 0, {"group_id": "g", "member_id": joined.member_id, "member_epoch": epoch, "instance_id": None,
                                "rack_id": None, "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["t"],
                                "server_assignor": None, "topic_partitions": []})
        assert (answer.error_code, answer.error_message) == (E.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")
    described = b.call(15, 0, {"groups": ["g"]}).groups[0]
    assert (described.protocol_type, len(described.members)) == ("consumer", 1)  # still the classic group


def _incremental(b, resource_type: int, name: str, ops) -> tuple:
    answer = b.call(44, 0, {"validate_only": True, "resources": [{"resource_type": resource_type, "resource_name": name,
                                                                   "configs": [{"name": k, "config_operation": op, "value": v}
                                                                               for k, op, v in ops]}]})
    r = answer.responses[0]
    return r.error_code, r.error_message


def test_append_or_subtract_of_an_unknown_key_is_refused_as_kafkas_controller_does():
    """Kafka's controller asks whether a key is a LIST before anything else; an unknown key is
    none (a broker's: "Unknown config name"), seed 9319."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    assert _incremental(b, 2, "t", [("", 3, "1"), ("retention.ms", 7, "1")]) == (
        E.INVALID_CONFIG, "Can't SUBTRACT to key  because its type is not LIST.")
    assert _incremental(b, 2, "t", [("no.such.config", 2, "1")]) == (
        E.INVALID_CONFIG, "Can't APPEND to key no.such.config because its type is not LIST.")
    assert _incremental(b, 32, "g", [("no.such.config", 2, "1")]) == (
        E.INVALID_CONFIG, "Can't APPEND to key no.such.config because its type is not LIST.")
    for broker in ("", "1"):
        assert _incremental(b, 4, broker, [("no.such.config", 3, "1")]) == (E.INVALID_CONFIG, "Unknown config name: no.such.config")


def test_the_cluster_level_min_insync_replicas_cannot_be_removed():
    """Kafka 4.4 keeps a cluster-level min.insync.replicas while ELR is enabled: AlterConfigs of
    the default broker without it, or a DELETE of it, is refused (seeds 11319, 9311)."""
    text = "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
    b = InProcessBroker()
    legacy = b.call(33, 2, {"validate_only": True, "resources": [{"resource_type": 4, "resource_name": "", "configs": [
        {"name": "retention.ms", "value": "1"}]}]}).responses[0]
    assert (legacy.error_code, legacy.error_message) == (E.INVALID_CONFIG, text)
    assert _incremental(b, 4, "", [("min.insync.replicas", 1, None)]) == (E.INVALID_CONFIG, text)
    node = b.call(33, 2, {"validate_only": True, "resources": [{"resource_type": 4, "resource_name": "1", "configs": [
        {"name": "retention.ms", "value": "1"}]}]}).responses[0]
    assert node.error_code == E.NONE  # a node's own set has no such rule


def test_a_join_group_whose_protocol_is_named_empty_answers_a_null_protocol_name():
    """JoinGroup v7+: Kafka answers the protocol "" as null (seed 9316)."""
    import struct

    b = InProcessBroker()
    metadata = struct.pack(">hi", 0, 0) + struct.pack(">i", -1)
    answer = b.call(11, 8, {"group_id": "g", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
                            "group_instance_id": "i1", "protocol_type": "consumer", "reason": None,
                            "protocols": [{"name": "", "metadata": metadata}]})
    assert (answer.error_code, answer.protocol_name) == (E.NONE, None)
