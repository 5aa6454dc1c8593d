"""What the generator's twelfth run found (issue 36, docs/FUZZ_FINDINGS.md), fixed: each test
states Kafka 4.4's answer; each sequence is a named scenario in
tests/conformance/scenarios/generated_run12.py."""

from __future__ import annotations

import pytest

from kipper.broker.config_values import java_float, java_long
from kipper.broker.log.topic_configs import validate_topic_configs
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

WRITE_TXN_MARKERS, INCREMENTAL_ALTER_CONFIGS, DESCRIBE_CONFIGS, CREATE_TOPICS = 27, 44, 32, 19
PID = 999_999_999_000  # a producer id no broker issued


def _marker(b: InProcessBroker, pid: int, epoch: int) -> None:
    answer = b.call(WRITE_TXN_MARKERS, 1, {"markers": [{
        "producer_id": pid, "producer_epoch": epoch, "transaction_result": False, "coordinator_epoch": 0,
        "topics": [{"name": "t", "partition_indexes": [0]}]}]})
    assert answer.markers[0].topics[0].partitions[0].error_code == E.NONE


def test_a_marker_begins_an_epoch_whose_first_batch_starts_at_sequence_zero():
    """Kafka's checkSequence: a producer whose epoch a marker began has no sequence yet
    (NO_SEQUENCE), so its first batch of that epoch must start at 0 (seed 11404)."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    _marker(b, PID, 0)

    def send(seq: int):
        return b.produce("t", 0, [(b"k", b"v", b.now)], version=3, producer_id=PID, producer_epoch=0,
                         base_sequence=seq).error_code
    assert send(1) == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert send(0) == E.NONE
    assert send(1) == E.NONE


def test_topic_configs_are_refused_in_kafkas_order():
    """LogConfig.validate: an unknown name before any value (the first in its Properties' hash
    order), then the values in LogConfig's definition order, whatever the request's (seed 11408)."""
    assert validate_topic_configs({"cleanup.policy": "1", "": "1"}) == "Unknown topic config name: "
    assert validate_topic_configs({"cleanup.policy": "1", "retention.ms": "x"}) == \
        "Invalid value x for configuration retention.ms: Not a number of type LONG"
    assert validate_topic_configs({"no.such.b": "1", "no.such.a": "1", "zzz": "1", "aaa": "1"}) == \
        "Unknown topic config name: aaa"


@pytest.mark.parametrize("text, value", [("+5", 5), (" 7 ", 7), ("-0", 0), ("١٢", 12)])
def test_java_longs(text, value):
    assert java_long(text) == value


@pytest.mark.parametrize("text", ["1_000", "1e3", "0x10", "", "5L"])
def test_what_java_reads_as_no_long(text):
    with pytest.raises(ValueError):
        java_long(text)


@pytest.mark.parametrize("text, value", [("0.5d", 0.5), ("1E-1F", 0.1), (".25", 0.25), ("5.", 5.0),
                                         ("0x1p-2", 0.25), ("Infinity", float("inf"))])
def test_java_doubles(text, value):
    assert java_float(text) == value


@pytest.mark.parametrize("text", ["nan", "inf", "1_0", ".", "1e", "d"])
def test_what_java_reads_as_no_double(text):
    with pytest.raises(ValueError):
        java_float(text)


def test_a_topic_takes_numbers_as_java_reads_them_and_describes_them_in_javas_form():
    """'0.5d' is a double to Kafka, stored and described as 0.5; '1_000' is no LONG. A topic
    made or altered with such a value is used, never a crash (the twelfth run's values)."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)

    def alter(key: str, value: str):
        return b.call(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": 2, "resource_name": "t", "configs": [
                {"name": key, "config_operation": 0, "value": value}]}]}).responses[0]

    def described(key: str) -> str:
        return b.call(DESCRIBE_CONFIGS, 4, {"include_synonyms": False, "include_documentation": False, "resources": [
            {"resource_type": 2, "resource_name": "t", "configuration_keys": [key]}]}).results[0].configs[0].value

    assert alter("min.cleanable.dirty.ratio", "0.5d").error_code == E.NONE
    assert described("min.cleanable.dirty.ratio") == "0.5"
    assert alter("retention.ms", "+5000").error_code == E.NONE
    assert described("retention.ms") == "5000"
    refused = alter("retention.ms", "1_000")
    assert (refused.error_code, refused.error_message) == (
        E.INVALID_CONFIG, "Invalid value 1_000 for configuration retention.ms: Not a number of type LONG")
    made = b.call(CREATE_TOPICS, 7, {"timeout_ms": 1000, "validate_only": False, "topics": [
        {"name": "u", "num_partitions": 1, "replication_factor": 1, "assignments": [],
         "configs": [{"name": "min.cleanable.dirty.ratio", "value": "0x1p-2"}]}]})
    assert made.topics[0].error_code == E.NONE
    assert b.produce("u", 0, [(b"k", b"v", b.now)]).error_code == E.NONE


def test_a_broker_describes_a_dynamic_value_as_it_holds_it():
    """The broker's resource: the value parsed and printed again, the text as given among the
    synonyms; the cluster default's resource: the text as given (Kafka 4.4, probed)."""
    b = InProcessBroker()
    answer = b.call(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
        {"resource_type": 4, "resource_name": "", "configs": [
            {"name": "log.cleaner.min.cleanable.ratio", "config_operation": 0, "value": "0.5d"},
            {"name": "log.retention.ms", "config_operation": 0, "value": "+600000000"}]}]})
    assert answer.responses[0].error_code == E.NONE

    def described(name: str) -> dict:
        result = b.call(DESCRIBE_CONFIGS, 4, {"include_synonyms": True, "include_documentation": False, "resources": [
            {"resource_type": 4, "resource_name": name,
             "configuration_keys": ["log.cleaner.min.cleanable.ratio", "log.retention.ms"]}]}).results[0]
        return {c.name: (c.value, [s.value for s in c.synonyms]) for c in result.configs}
    assert described("1") == {"log.cleaner.min.cleanable.ratio": ("0.5", ["0.5d", "0.5"]),
                              "log.retention.ms": ("600000000", ["+600000000", "168"])}
    assert {name: value for name, (value, _) in described("").items()} == {
        "log.cleaner.min.cleanable.ratio": "0.5d", "log.retention.ms": "+600000000"}


def test_a_commit_the_coordinator_refuses_still_makes_the_simple_group():
    """Kafka's coordinator makes a missing group (generation -1) before it checks the offsets;
    a later commit of an unknown member is then UNKNOWN_MEMBER_ID, not ILLEGAL_GENERATION, and
    DeleteGroups deletes it. No record was written, so DescribeGroups does not see it (on Kafka
    until another write to its __consumer_offsets partition commits it). A commit the broker
    refused first (an unknown topic) makes none (seed 11414)."""
    b = InProcessBroker()
    b.state.topics.create("t", 3)

    def commit(version: int, group: str, topic: str, generation: int, member: str, metadata: str) -> int:
        return b.call(8, version, {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
                                   "retention_time_ms": -1, "topics": [{"name": topic, "partitions": [
                                       {"partition_index": 1, "committed_offset": 0, "committed_metadata": metadata}]}]}
                      ).topics[0].partitions[0].error_code
    assert commit(5, "g0", "t", -1, "m1", "x" * 5000) == E.OFFSET_METADATA_TOO_LARGE
    assert commit(2, "g0", "t", 0, "m0", "") == E.UNKNOWN_MEMBER_ID
    assert commit(5, "g1", "t9", -1, "", "") == E.UNKNOWN_TOPIC_OR_PARTITION
    assert commit(2, "g1", "t", 0, "m0", "") == E.ILLEGAL_GENERATION
    # nothing was written: Kafka's reads do not see the group, its writes delete it
    described = b.call(15, 0, {"groups": ["g0", "g1"]}).groups
    assert [(g.group_id, g.group_state) for g in described] == [("g0", "Dead"), ("g1", "Dead")]
    deleted = b.call(42, 2, {"groups_names": ["g0", "g1"]}).results
    assert [(r.group_id, r.error_code) for r in deleted] == [("g0", E.NONE), ("g1", E.GROUP_ID_NOT_FOUND)]
    assert commit(2, "g0", "t", 0, "m0", "") == E.ILLEGAL_GENERATION


def test_a_lone_member_cannot_switch_to_a_wholly_new_protocol():
    """Kafka's ClassicGroup.supportsProtocols counts the joining member's current protocols
    too: a rejoin must name one every member has now (seed 11429)."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)

    def join(member: str, *names: str):
        return b.call(11, 2, {"group_id": "g", "member_id": member, "session_timeout_ms": 45000,
                              "rebalance_timeout_ms": 1000, "protocol_type": "consumer",
                              "protocols": [{"name": n, "metadata": b""} for n in names]})
    first = join("", "range")
    assert first.error_code == E.NONE
    assert join(first.member_id, "roundrobin").error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert join(first.member_id, "roundrobin", "range").error_code == E.NONE


def test_the_default_group_resource_refuses_a_list_op_on_no_list_first():
    """IncrementalAlterConfigs of the group "": APPEND/SUBTRACT of a key that is no LIST is
    INVALID_CONFIG before "Default group resources are not allowed." (seed 9405)."""
    b = InProcessBroker()

    def alter(key: str, op: int):
        r = b.call(INCREMENTAL_ALTER_CONFIGS, 0, {"validate_only": True, "resources": [
            {"resource_type": 32, "resource_name": "", "configs": [{"name": key, "config_operation": op, "value": "1"}]}]})
        return r.responses[0].error_code, r.responses[0].error_message
    assert alter("retention.ms", 3) == (E.INVALID_CONFIG, "Can't SUBTRACT to key retention.ms because its type is not LIST.")
    assert alter("consumer.session.timeout.ms", 0) == (E.INVALID_REQUEST, "Default group resources are not allowed.")
