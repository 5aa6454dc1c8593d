"""The generator's findings handed on in docs/FUZZ_FINDINGS.md (issue 36), fixed: each test
states Kafka 4.4's answer; each sequence is a named scenario in
tests/conformance/scenarios/generated_found.py (``handed-on-*``)."""

from __future__ import annotations

import uuid

from kipper.broker.acl.model import ALLOW, LITERAL, AclBinding
from kipper.broker.config_values import java_hash_order
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

LIST_OFFSETS, METADATA, ADD_PARTITIONS_TO_TXN, DESCRIBE_CONFIGS = 2, 3, 24, 32
ALTER_CLIENT_QUOTAS, INCREMENTAL_ALTER_CONFIGS, SHARE_ACKNOWLEDGE = 49, 44, 79
TOPIC, GROUP, DESCRIBE = 2, 32, 8


def test_a_groups_assignment_intervals_default_to_the_brokers_and_refuse_minus_one():
    b = InProcessBroker()
    answer = b.call(DESCRIBE_CONFIGS, 4, {"resources": [{"resource_type": GROUP, "resource_name": "g",
                                                         "configuration_keys": None}],
                                          "include_synonyms": True, "include_documentation": False})
    rows = {c.name: c for c in answer.results[0].configs}
    for name in ("consumer.assignment.interval.ms", "share.assignment.interval.ms"):
        assert rows[name].value == "1000"
        assert [(s.name, s.value) for s in rows[name].synonyms] == [(f"group.{name}", "1000")]
        refused = b.call(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": True, "resources": [
            {"resource_type": GROUP, "resource_name": "g", "configs": [
                {"name": name, "value": "-1", "config_operation": 0}]}]})
        assert refused.responses[0].error_code == E.INVALID_CONFIG


def test_share_acknowledge_of_group_empty_finds_no_session():
    b = InProcessBroker(**{"group.share.enable": "true"})
    answer = b.call(SHARE_ACKNOWLEDGE, 2, {"group_id": "", "member_id": "m" * 22, "share_session_epoch": 1,
                                           "is_renew_ack": False, "topics": []})
    assert answer.error_code == E.SHARE_SESSION_NOT_FOUND
    null = b.call(SHARE_ACKNOWLEDGE, 1, {"group_id": None, "member_id": "m" * 22, "share_session_epoch": 0,
                                         "topics": []})
    assert null.error_code == E.INVALID_REQUEST


def test_metadata_v10_naming_a_topic_by_id_is_refused_whole():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    some = uuid.uuid4()
    answer = b.call(METADATA, 10, {"topics": [{"name": "t", "topic_id": some}, {"name": "t", "topic_id": some}],
                                   "allow_auto_topic_creation": False,
                                   "include_cluster_authorized_operations": False,
                                   "include_topic_authorized_operations": False})
    assert (answer.brokers, answer.cluster_id, answer.controller_id) == ([], None, -1)
    assert [(t.name, t.topic_id, t.error_code, t.partitions) for t in answer.topics] == [
        ("t", some, E.INVALID_REQUEST, [])] * 2


def test_list_offsets_answers_a_refused_topic_of_no_partition_after_the_rest():
    b = InProcessBroker(**{"authorizer.class.name": "standard"})
    for name in ("mine", "theirs"):
        b.state.topics.create(name, 1)
    b.state.acls.create([AclBinding(TOPIC, "mine", LITERAL, "User:ANONYMOUS", "*", DESCRIBE, ALLOW)])
    answer = b.call(LIST_OFFSETS, 6, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "theirs", "partitions": []}, {"name": "mine", "partitions": []},
        {"name": "mine", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.topics] == [
        ("mine", [(0, 0)]), ("theirs", [])]


def test_alter_client_quotas_answers_each_entity_once_a_repeated_one_refused():
    b = InProcessBroker()
    entity = [{"entity_type": "client-id", "entity_name": "c"}]
    ops = [{"key": "producer_byte_rate", "value": 1000.0, "remove": False}]
    answer = b.call(ALTER_CLIENT_QUOTAS, 0, {"validate_only": False, "entries": [
        {"entity": entity, "ops": ops}, {"entity": [{"entity_type": "user", "entity_name": "u"}], "ops": ops},
        {"entity": entity, "ops": ops}]})
    assert [(e.entity[0].entity_type, e.error_code) for e in answer.entries] == [
        ("client-id", E.INVALID_REQUEST), ("user", 0)]


def test_add_partitions_to_txn_refusals_list_topics_in_kafkas_hash_map_order():
    b = InProcessBroker()
    b.state.topics.create("known", 1)
    names = ["known", "x" * 250, "missing-a", "missing-b", "zz"]
    assert java_hash_order(names) != names  # (the order shows)
    answer = b.call(ADD_PARTITIONS_TO_TXN, 3, {
        "v3_and_below_transactional_id": "x", "v3_and_below_producer_id": 5, "v3_and_below_producer_epoch": 0,
        "v3_and_below_topics": [{"name": n, "partitions": [0]} for n in names]})
    assert [t.name for t in answer.results_by_topic_v3_and_below] == java_hash_order(names)
    v4 = b.call(ADD_PARTITIONS_TO_TXN, 4, {"transactions": [
        {"transactional_id": "x", "producer_id": 5, "producer_epoch": 0, "verify_only": False,
         "topics": [{"name": n, "partitions": [0]} for n in names]}]})
    assert [t.name for t in v4.results_by_transaction[0].topic_results] == java_hash_order(names)


def test_fetch_answers_what_it_could_not_read_after_the_rest():
    """Kafka's order: the partitions read, then unknown topic ids, then unknown partitions;
    a topic entry per run of one topic (t twice here)."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    t = b.state.topics.get("t").topic_id
    nobody = uuid.UUID(int=7)
    at = {"current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1, "log_start_offset": -1,
          "partition_max_bytes": 1048576}
    answer = b.call(1, 14, {"cluster_id": None, "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1,
                            "max_bytes": 1048576, "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                            "rack_id": "", "forgotten_topics_data": [], "topics": [
                                {"topic_id": t, "partitions": [dict(at, partition=7), dict(at, partition=0)]},
                                {"topic_id": nobody, "partitions": [dict(at, partition=0)]}]})
    assert [(r.topic_id, [(p.partition_index, p.error_code) for p in r.partitions]) for r in answer.responses] == [
        (t, [(0, 0)]), (nobody, [(0, E.UNKNOWN_TOPIC_ID)]), (t, [(7, E.UNKNOWN_TOPIC_OR_PARTITION)])]


def test_streams_group_describe_of_group_empty_is_an_invalid_group_id():
    """Kafka's coordinator checks the id first, as for share and consumer groups (the long
    run beside the fifth loaded make test, seed 4004)."""
    b = InProcessBroker()
    answer = b.call(89, 0, {"group_ids": ["", "g"], "include_authorized_operations": False})
    assert [(g.group_id, g.error_code) for g in answer.groups] == [
        ("", E.INVALID_GROUP_ID), ("g", E.GROUP_ID_NOT_FOUND)]


def test_add_partitions_to_txn_verification_answers_from_its_partitions():
    """Kafka's handleVerifyPartitionsInTransaction answers resultForTransaction: a topic of no
    partition is not answered (the long run's finding 7); an addition answers it as asked."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = b.call(ADD_PARTITIONS_TO_TXN, 4, {"transactions": [
        {"transactional_id": "", "producer_id": 5, "producer_epoch": 0, "verify_only": True,
         "topics": [{"name": "t", "partitions": []}]},
        {"transactional_id": "x", "producer_id": 5, "producer_epoch": 0, "verify_only": True,
         "topics": [{"name": "t", "partitions": []}, {"name": "t", "partitions": [0]}]},
        {"transactional_id": "y", "producer_id": 5, "producer_epoch": 0, "verify_only": False,
         "topics": [{"name": "t", "partitions": []}]}]})
    assert [(r.transactional_id, [(t.name, [p.partition_index for p in t.results_by_partition])
                                  for t in r.topic_results]) for r in answer.results_by_transaction] == [
        ("", []), ("x", [("t", [0])]), ("y", [("t", [])])]


def test_metadata_v12_naming_any_topic_id_is_answered_by_the_ids_alone():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    t = b.state.topics.get("t").topic_id
    answer = b.call(METADATA, 12, {"topics": [{"name": "other", "topic_id": t},
                                              {"name": "nope", "topic_id": uuid.UUID(int=0)}],
                                   "allow_auto_topic_creation": True, "include_topic_authorized_operations": False})
    assert [(x.name, x.topic_id, x.error_code) for x in answer.topics] == [("t", t, 0)]
    assert b.state.topics.get("nope") is None  # nor auto-created


def test_join_group_naming_a_protocol_twice_closes_the_connection():
    from kipper.broker.handlers.replies import NO_RESPONSE, Reply
    from kipper.protocol.header import encode_request
    from kipper.protocol.messages import APIS

    b = InProcessBroker()
    body = {"group_id": "g", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
            "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""},
                                                       {"name": "range", "metadata": b""}]}
    [answer], _ = b.dispatcher.dispatch([encode_request(APIS[11], 3, 1, "test", body)[4:]], 0, b.session)
    assert type(answer) is Reply and answer.body is NO_RESPONSE and "more than once" in answer.abort


def test_elect_leaders_naming_no_partition_is_answered_at_once():
    b = InProcessBroker()
    answer = b.call(43, 1, {"election_type": 0, "topic_partitions": [], "timeout_ms": 0})
    assert (answer.error_code, answer.replica_election_results) == (0, [])


def test_share_group_offsets_of_an_unknown_topic_list_its_partitions_as_asked():
    b = InProcessBroker(**{"group.share.enable": "true"})
    answer = b.call(90, 0, {"groups": [{"group_id": "g", "topics": [{"topic_name": "nope", "partitions": [0, 0]}]}]})
    assert [p.partition_index for p in answer.groups[0].topics[0].partitions] == [0, 0]


def test_write_txn_markers_of_one_producer_id_are_answered_as_one():
    b = InProcessBroker()
    answer = b.call(27, 1, {"markers": [
        {"producer_id": 5, "producer_epoch": 0, "transaction_result": False, "coordinator_epoch": 0,
         "topics": [{"name": "a", "partition_indexes": [0]}]},
        {"producer_id": 5, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
         "topics": [{"name": "b", "partition_indexes": [1]}]}]})
    assert [(m.producer_id, [t.name for t in m.topics]) for m in answer.markers] == [(5, ["a", "b"])]
