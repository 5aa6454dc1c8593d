"""What the generator's thirteenth run met (issue 36, docs/FUZZ_FINDINGS.md): where Kafka 4.4
fails a whole request inside, it changes nothing, and kipper now neither; each is a scenario in
tests/conformance/scenarios/generated_run13.py."""

from __future__ import annotations

from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

CREATE_ACLS, DESCRIBE_ACLS, INCREMENTAL_ALTER_CONFIGS = 30, 29, 44


def _binding(name: str, operation: int = 2) -> dict:
    return {"resource_type": 2, "resource_name": name, "resource_pattern_type": 3, "principal": "User:u",
            "host": "*", "operation": operation, "permission_type": 3}


def test_a_create_acls_with_an_any_binding_creates_nothing():
    """Kafka reads every creation into an AclBinding first; an ANY operation fails the whole
    request (UNKNOWN_SERVER_ERROR for each) and no binding is created."""
    b = InProcessBroker(**{"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                           "super.users": "User:ANONYMOUS"})
    answer = b.call(CREATE_ACLS, 3, {"creations": [_binding("1"), _binding("2", operation=1)]})
    assert [(r.error_code, r.error_message) for r in answer.results] == [(E.UNKNOWN_SERVER_ERROR, None)] * 2
    listed = b.call(DESCRIBE_ACLS, 3, {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
                                       "principal_filter": "User:u", "host_filter": None, "operation": 1,
                                       "permission_type": 1})
    assert listed.resources == []


def _alter(b: InProcessBroker, *resources, validate_only: bool = False) -> list:
    answer = b.call(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": validate_only, "resources": [
        {"resource_type": 2, "resource_name": name, "configs": [
            {"name": key, "config_operation": op, "value": "1234567"} for key, op in ops]} for name, ops in resources]})
    return [(r.error_code, r.error_message) for r in answer.responses]


def test_an_unknown_operation_type_fails_the_whole_request_and_changes_nothing():
    b = InProcessBroker()
    for name in ("t0", "t1"):
        b.state.topics.create(name, 1)
    assert _alter(b, ("t0", [("retention.ms", 0)]), ("t1", [("retention.ms", 7)])) == [(E.UNKNOWN_SERVER_ERROR, None)] * 2
    assert b.state.topics.get("t0").configs == {}


def test_an_append_to_no_list_met_first_refuses_the_resource_alone():
    """Kafka's controller goes through a resource's keys in a Java HashMap's order: the key ""
    comes first, so its SUBTRACT is refused before the unknown operation is met."""
    b = InProcessBroker()
    b.state.topics.create("t0", 1)
    assert _alter(b, ("t0", [("retention.ms", 7), ("", 3)]), validate_only=True) == [
        (E.INVALID_CONFIG, "Can't SUBTRACT to key  because its type is not LIST.")]


def test_alter_share_group_offsets_of_a_negative_partition_changes_nothing():
    """Kafka's share coordinator refuses a negative partition's state and the whole request
    fails: top-level UNKNOWN_SERVER_ERROR with Kafka's text (the topic id as Kafka prints it)."""
    from kipper.protocol.uuid_text import uuid_text

    b = InProcessBroker()
    b.state.topics.create("t", 2)
    topic = b.state.topics.get("t")

    def alter(*partitions):
        return b.call(91, 0, {"group_id": "g", "topics": [{"topic_name": "t", "partitions": [
            {"partition_index": p, "start_offset": 0} for p in partitions]}]})
    refused = alter(0, -1)
    assert (refused.error_code, refused.error_message, refused.responses) == (
        E.UNKNOWN_SERVER_ERROR, f"Initialize share group parameters has invalid partitionId - g {uuid_text(topic.topic_id)} -1", [])
    described = b.call(90, 1, {"groups": [{"group_id": "g", "topics": None}]}).groups[0]
    assert [p.partition_index for t in described.topics for p in t.partitions] == []


def test_a_new_topic_config_named_twice_is_refused_if_either_is_null():
    """CreateTopics reads configs into a map (the last value of a name given twice stands), but
    looks for nulls in the request's list first (seed 9535)."""
    b = InProcessBroker()

    def create(*configs):
        topic = b.call(19, 5, {"timeout_ms": 1000, "validate_only": True, "topics": [
            {"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [],
             "configs": [{"name": k, "value": v} for k, v in configs]}]}).topics[0]
        return topic.error_code, topic.error_message
    refused = (E.INVALID_CONFIG, "Null value not supported for topic configs: retention.ms")
    assert create(("retention.ms", None), ("retention.ms", "1")) == refused
    assert create(("retention.ms", "1"), ("retention.ms", None)) == refused
    assert create(("retention.ms", "x"), ("retention.ms", "1")) == (E.NONE, None)


def test_a_broker_resource_with_an_unknown_operation_is_the_brokers_to_refuse():
    """The broker checks a BROKER resource itself (its name, then its operation types) before it
    passes the rest to the controller: INVALID_REQUEST, and another resource is still changed
    (the twenty-minute run after the thirteenth, seed 10601)."""
    b = InProcessBroker()
    b.state.topics.create("t0", 1)
    answer = b.call(INCREMENTAL_ALTER_CONFIGS, 0, {"validate_only": False, "resources": [
        {"resource_type": 4, "resource_name": "1", "configs": [
            {"name": "log.retention.ms", "config_operation": 7, "value": "1"}]},
        {"resource_type": 2, "resource_name": "t0", "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "1234567"}]}]})
    assert [(r.error_code, r.error_message) for r in answer.responses] == [
        (E.INVALID_REQUEST, "Unknown operations type 7"), (E.NONE, None)]
    assert b.state.topics.get("t0").configs == {"retention.ms": "1234567"}
