"""What the conformance generator (tests/conformance/fuzz, issue 36) found kipper answering
otherwise than Kafka 4.4, each test stating Kafka's answer; the sequence that showed each is a
named scenario in tests/conformance/scenarios/generated.py."""

from __future__ import annotations

import uuid

from kipper.protocol.errors import ErrorCode as E
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS
from tests.support.inproc import InProcessBroker

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, METADATA = 19, 20, 37, 3
DESCRIBE_TOPIC_PARTITIONS = 75
ZERO = uuid.UUID(int=0)


def create(b, name, partitions=1, timeout_ms=30000, validate_only=False):
    return b.call(CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                                                 "assignments": [], "configs": []}],
                                     "timeout_ms": timeout_ms, "validate_only": validate_only}).topics[0]


def known(b, name) -> bool:
    return b.call(METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False}).topics[0].error_code == 0


def test_a_deadline_already_passed_times_out_create_topics_and_creates_nothing():
    b = InProcessBroker()
    for timeout, validate_only in ((0, False), (-1, False), (0, True)):
        topic = create(b, f"t{timeout}{validate_only}", timeout_ms=timeout, validate_only=validate_only)
        assert (topic.error_code, topic.error_message, topic.num_partitions) == (E.REQUEST_TIMED_OUT, None, -1)
        assert not known(b, f"t{timeout}{validate_only}")


def test_a_deadline_already_passed_times_out_create_partitions_and_delete_topics():
    b = InProcessBroker()
    create(b, "t")
    grown = b.call(CREATE_PARTITIONS, 3, {"topics": [{"name": "t", "count": 3, "assignments": None}], "timeout_ms": 0,
                                          "validate_only": False}).results[0]
    assert (grown.error_code, grown.error_message) == (E.REQUEST_TIMED_OUT, None)
    for name in ("t", "never-made"):
        gone = b.call(DELETE_TOPICS, 6, {"topics": [{"name": name, "topic_id": ZERO}], "timeout_ms": 0}).responses[0]
        assert (gone.error_code, gone.error_message) == (E.REQUEST_TIMED_OUT, None)
    assert known(b, "t")
    partitions = b.call(METADATA, 12, {"topics": [{"name": "t"}], "allow_auto_topic_creation": False}).topics[0].partitions
    assert len(partitions) == 1


def test_describe_topic_partitions_with_a_limit_of_zero_or_less_pages_one_partition():
    b = InProcessBroker()
    create(b, "t", partitions=2)
    for limit in (0, -1):
        answer = b.call(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": "t"}], "response_partition_limit": limit,
                                                       "cursor": None})
        assert [p.partition_index for p in answer.topics[0].partitions] == [0]
        assert (answer.next_cursor.topic_name, answer.next_cursor.partition_index) == ("t", 1)


def test_a_topic_that_names_no_partition_has_no_answer():
    b = InProcessBroker()
    create(b, "t")
    pid = b.call(22, 4, {"transactional_id": "x", "transaction_timeout_ms": 60000, "producer_id": -1,
                         "producer_epoch": -1}).producer_id
    empty = {
        0: (9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000,
                "topic_data": [{"name": "t", "partition_data": []}]}, "responses"),
        1: (12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                 "session_id": 0, "session_epoch": -1, "topics": [{"topic": "t", "partitions": []}],
                 "forgotten_topics_data": [], "rack_id": ""}, "responses"),
        2: (7, {"replica_id": -1, "isolation_level": 0, "topics": [{"name": "t", "partitions": []}]}, "topics"),
        21: (2, {"topics": [{"name": "t", "partitions": []}], "timeout_ms": 1000}, "topics"),
        8: (8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": "t", "partitions": []}]}, "topics"),
        28: (3, {"transactional_id": "x", "group_id": "g", "producer_id": pid, "producer_epoch": 0,
                 "generation_id": -1, "member_id": "", "group_instance_id": None,
                 "topics": [{"name": "t", "partitions": []}]}, "topics"),
        27: (1, {"markers": [{"producer_id": pid, "producer_epoch": 0, "transaction_result": False,
                              "topics": [{"name": "t", "partition_indexes": []}], "coordinator_epoch": 0}]}, "markers"),
    }
    for key, (version, body, listing) in empty.items():
        assert list(b.call(key, version, body)[listing]) == [], key


def test_delete_topics_naming_a_topic_twice_answers_it_once_and_deletes_nothing():
    b = InProcessBroker()
    create(b, "t")
    answer = b.call(DELETE_TOPICS, 4, {"topic_names": ["t", "t"], "timeout_ms": 1000}).responses
    assert [(r.name, r.error_code) for r in answer] == [("t", E.INVALID_REQUEST)]
    assert known(b, "t")
    unknown = uuid.uuid4()
    answer = b.call(DELETE_TOPICS, 6, {"topics": [{"name": None, "topic_id": unknown}] * 2 + [
        {"name": "t", "topic_id": ZERO}], "timeout_ms": 1000}).responses
    assert [(r.topic_id, r.error_code, r.error_message) for r in answer] == [
        (unknown, E.INVALID_REQUEST, "Duplicate topic id."), (answer[1].topic_id, 0, None)]
    assert not known(b, "t")


def test_a_cursor_at_a_negative_partition_is_an_invalid_request():
    b = InProcessBroker()
    create(b, "t")
    for topics in ([{"name": "t"}, {"name": "bad name!"}], []):
        answer = b.call(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": topics, "response_partition_limit": 10,
                                                       "cursor": {"topic_name": "t", "partition_index": -1}})
        assert [(t.name, t.error_code, list(t.partitions)) for t in answer.topics] == [
            (t["name"], E.INVALID_REQUEST, []) for t in topics]
        assert answer.next_cursor is None


def test_unknown_partitions_are_answered_before_the_group_or_the_transaction_is_asked():
    b = InProcessBroker()
    create(b, "t")
    commit = b.call(8, 8, {"group_id": "g", "generation_id_or_member_epoch": 5, "member_id": "nobody",
                           "group_instance_id": None, "topics": [
                               {"name": "nope", "partitions": [{"partition_index": 0, "committed_offset": 1}]},
                               {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1},
                                                            {"partition_index": 4, "committed_offset": 1}]}]})
    assert {(t.name, p.partition_index): p.error_code for t in commit.topics for p in t.partitions} == {
        ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION, ("t", 0): E.ILLEGAL_GENERATION, ("t", 4): E.UNKNOWN_TOPIC_OR_PARTITION}
    pid = b.call(22, 4, {"transactional_id": "x", "transaction_timeout_ms": 60000, "producer_id": -1,
                         "producer_epoch": -1}).producer_id
    txn = b.call(28, 3, {"transactional_id": "x", "group_id": "g", "producer_id": pid, "producer_epoch": 0,
                         "generation_id": -1, "member_id": "", "group_instance_id": None, "topics": [
                             {"name": "bad name!", "partitions": [{"partition_index": 0, "committed_offset": 1}]},
                             {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]})
    assert {t.name: t.partitions[0].error_code for t in txn.topics} == {
        "bad name!": E.UNKNOWN_TOPIC_OR_PARTITION, "t": E.INVALID_TXN_STATE}


def test_join_group_checks_the_session_timeout_before_the_member():
    b = InProcessBroker()
    for session in (0, 1800001):
        answer = b.call(11, 8, {"group_id": "g", "session_timeout_ms": session, "rebalance_timeout_ms": 1000,
                                "member_id": "made-up", "group_instance_id": None, "protocol_type": "consumer",
                                "protocols": [], "reason": None})
        assert answer.error_code == E.INVALID_SESSION_TIMEOUT


def test_an_empty_transactional_id_is_an_invalid_request_and_an_empty_group_id_an_invalid_group():
    b = InProcessBroker()
    create(b, "t")
    assert b.call(26, 3, {"transactional_id": "", "producer_id": 5, "producer_epoch": 0,
                          "committed": False}).error_code == E.INVALID_REQUEST
    assert b.call(25, 3, {"transactional_id": "", "producer_id": 5, "producer_epoch": 0,
                          "group_id": "g"}).error_code == E.INVALID_REQUEST
    added = b.call(24, 3, {"v3_and_below_transactional_id": "", "v3_and_below_producer_id": 5,
                           "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [{"name": "t", "partitions": [0]}]})
    assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.INVALID_REQUEST
    described = b.call(65, 0, {"transactional_ids": [""]}).transaction_states[0]
    assert described.error_code == E.INVALID_REQUEST
    committed = b.call(28, 3, {"transactional_id": "x", "group_id": "", "producer_id": 5, "producer_epoch": 0,
                               "generation_id": -1, "member_id": "", "group_instance_id": None, "topics": [
                                   {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]})
    assert committed.topics[0].partitions[0].error_code == E.INVALID_GROUP_ID
    committed = b.call(28, 3, {"transactional_id": "", "group_id": "g", "producer_id": 5, "producer_epoch": 0,
                               "generation_id": -1, "member_id": "", "group_instance_id": None, "topics": [
                                   {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]})
    assert committed.topics[0].partitions[0].error_code == E.INVALID_REQUEST
    assert b.call(12, 4, {"group_id": "", "generation_id": -1, "member_id": "m",
                          "group_instance_id": None}).error_code == E.INVALID_GROUP_ID
    assert b.call(13, 4, {"group_id": "", "members": [{"member_id": "m", "group_instance_id": None}]}).error_code \
        == E.INVALID_GROUP_ID
    assert b.call(14, 3, {"group_id": "", "generation_id": -1, "member_id": "m", "group_instance_id": None,
                          "assignments": []}).error_code == E.INVALID_GROUP_ID
    assert b.call(47, 0, {"group_id": "", "topics": []}).error_code == E.INVALID_GROUP_ID


def test_share_groups_refuse_an_empty_group_id_as_kafka_does():
    b = InProcessBroker(**{"group.share.enable": "true"})
    beat = b.call(76, 1, {"group_id": "", "member_id": "m", "member_epoch": 0, "rack_id": None,
                          "subscribed_topic_names": ["t"]})
    assert beat.error_code == E.INVALID_REQUEST
    described = b.call(77, 1, {"group_ids": [""], "include_authorized_operations": False}).groups[0]
    assert described.error_code == E.INVALID_GROUP_ID


def test_describe_producers_of_a_name_no_topic_could_have_is_an_invalid_topic():
    b = InProcessBroker()
    answer = b.call(61, 0, {"topics": [{"name": "bad name!", "partition_indexes": [0]},
                                       {"name": "fine-but-unknown", "partition_indexes": [0]}]})
    assert [t.partitions[0].error_code for t in answer.topics] == [E.INVALID_TOPIC_EXCEPTION,
                                                                   E.UNKNOWN_TOPIC_OR_PARTITION]
    assert all(t.partitions[0].error_message for t in answer.topics)  # Kafka's texts, not null


def test_add_partitions_to_txn_answers_as_asked_and_a_refusal_from_a_map():
    b = InProcessBroker()
    create(b, "t", partitions=2)
    pid = b.call(22, 4, {"transactional_id": "x", "transaction_timeout_ms": 60000, "producer_id": -1,
                         "producer_epoch": -1}).producer_id
    def add(*topics):
        answer = b.call(24, 3, {"v3_and_below_transactional_id": "x", "v3_and_below_producer_id": pid,
                                "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [
                                    {"name": name, "partitions": parts} for name, parts in topics]})
        return [(t.name, [(p.partition_index, p.partition_error_code) for p in t.results_by_partition])
                for t in answer.results_by_topic_v3_and_below]
    # the coordinator's answer, topic by topic as asked; a refusal, from a map
    assert add(("t", [0, 0]), ("t", []), ("t", [1])) == [("t", [(0, 0), (0, 0)]), ("t", []), ("t", [(1, 0)])]
    assert add(("t", [7]), ("t", []), ("t", [0, 7])) == [
        ("t", [(7, E.UNKNOWN_TOPIC_OR_PARTITION), (0, E.OPERATION_NOT_ATTEMPTED)])]


def test_offset_commits_answer_a_topic_named_twice_as_kafka_builds_the_answer():
    b = InProcessBroker()
    create(b, "t")
    topics = [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1},
                                           {"partition_index": 2, "committed_offset": 1}]},
              {"name": "u", "partitions": [{"partition_index": 0, "committed_offset": 1}]},
              {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 2}]}]
    commit = b.call(8, 8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                           "group_instance_id": None, "topics": topics})
    assert [(t.name, sorted((p.partition_index, p.error_code) for p in t.partitions)) for t in commit.topics] == [
        ("t", [(0, 0), (0, 0), (2, E.UNKNOWN_TOPIC_OR_PARTITION)]), ("u", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)])]
    txn = b.call(28, 3, {"transactional_id": "x", "group_id": "g", "producer_id": 5, "producer_epoch": 0,
                         "generation_id": -1, "member_id": "", "group_instance_id": None, "topics": topics})
    assert [t.name for t in txn.topics] == ["t", "u"]
    # no partition the broker answers itself: the coordinator's answer, topic by topic as asked
    commit = b.call(8, 2, {"group_id": "g", "generation_id_or_member_epoch": 5, "member_id": "m", "retention_time_ms": -1,
                           "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1}]}] * 2})
    assert [(t.name, [p.error_code for p in t.partitions]) for t in commit.topics] == [
        ("t", [E.UNKNOWN_MEMBER_ID]), ("t", [E.UNKNOWN_MEMBER_ID])]


def test_delete_records_answers_a_partition_named_twice_once_with_the_last_offset():
    b = InProcessBroker()
    create(b, "t")
    b.produce("t", 0, [(b"k", b"v", 1), (b"k", b"v", 2), (b"k", b"v", 3), (b"k", b"v", 4)])
    answer = b.call(21, 2, {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "offset": 1}]},
                                       {"name": "t", "partitions": [{"partition_index": 0, "offset": 3},
                                                                    {"partition_index": -1, "offset": 0},
                                                                    {"partition_index": -1, "offset": 1}]}],
                            "timeout_ms": 1000})
    assert [(t.name, [(p.partition_index, p.low_watermark, p.error_code) for p in t.partitions])
            for t in answer.topics] == [("t", [(0, 3, 0), (-1, -1, E.UNKNOWN_TOPIC_OR_PARTITION)])]


def test_a_scram_credential_with_an_empty_salt_is_taken_as_kafka_takes_it():
    b = InProcessBroker()
    upsert = {"name": "u", "mechanism": 1, "iterations": 4096, "salt": b"", "salted_password": b"\x00" * 32}
    answer = b.call(51, 0, {"deletions": [], "upsertions": [upsert]}).results[0]
    assert answer.error_code == 0
    described = b.call(50, 0, {"users": [{"name": "u"}]}).results[0]
    assert [(c.mechanism, c.iterations) for c in described.credential_infos] == [(1, 4096)]


def fetch_answer(b, body, version=4):
    """A Fetch answer is a list of buffers (records are not copied): joined, then decoded."""
    api = APIS[1]
    b.cid += 1
    [result], _ = b.dispatcher.dispatch([encode_request(api, version, b.cid, "test", body)[4:]], 0, b.session)
    frame = b"".join(bytes(x) for x in result) if isinstance(result, list) else bytes(result)
    return decode_response(api, version, frame[4:])[1]


def test_fetch_reads_a_partition_asked_twice_once_and_a_topic_asked_twice_in_a_row_as_one():
    b = InProcessBroker()
    create(b, "t", partitions=2)
    create(b, "u")
    b.produce("t", 0, [(b"k", b"v", 1)])

    def fetch(topics):
        body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                "topics": [{"topic": name, "partitions": [{"partition": p, "fetch_offset": offset, "log_start_offset": -1,
                                                           "partition_max_bytes": 1 << 20} for p, offset in parts]}
                           for name, parts in topics]}
        return [(r.topic, [(p.partition_index, p.error_code, p.high_watermark) for p in r.partitions])
                for r in fetch_answer(b, body).responses]
    assert fetch([("t", [(0, 0), (0, 5)]), ("t", [(1, 0)]), ("u", [(0, 0)]), ("t", [(0, 0)])]) == [
        ("t", [(0, 0, 1), (1, 0, 0)]), ("u", [(0, 0, 0)])]
    assert fetch([("t", [(0, 0)]), ("u", [(0, 0)]), ("t", [(1, 0)])]) == [
        ("t", [(0, 0, 1)]), ("u", [(0, 0, 0)]), ("t", [(1, 0, 0)])]


def test_config_requests_for_a_topic_no_topic_could_have():
    b = InProcessBroker()
    for name, alter_code in (("", E.INVALID_REQUEST), ("bad name!", E.INVALID_TOPIC_EXCEPTION)):
        described = b.call(32, 4, {"resources": [{"resource_type": 2, "resource_name": name, "configuration_keys": None}],
                                   "include_synonyms": False, "include_documentation": False}).results[0]
        assert described.error_code == E.INVALID_TOPIC_EXCEPTION
        altered = b.call(33, 2, {"resources": [{"resource_type": 2, "resource_name": name, "configs": [
            {"name": "retention.ms", "value": "1000"}]}], "validate_only": True}).responses[0]
        assert altered.error_code == alter_code
        incremental = b.call(44, 1, {"resources": [{"resource_type": 2, "resource_name": name, "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "1000"}]}], "validate_only": True}).responses[0]
        assert incremental.error_code == alter_code


def test_alter_client_quotas_takes_the_last_name_of_an_entity_type_named_twice():
    b = InProcessBroker()
    answer = b.call(49, 1, {"entries": [{"entity": [{"entity_type": "client-id", "entity_name": None},
                                                    {"entity_type": "client-id", "entity_name": "c"}],
                                         "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}],
                            "validate_only": True}).entries[0]
    assert answer.error_code == 0
    assert [(e.entity_type, e.entity_name) for e in answer.entity] == [("client-id", "c")]


def test_metadata_answers_a_topic_asked_twice_once():
    b = InProcessBroker()
    create(b, "t")
    answer = b.call(METADATA, 5, {"topics": [{"name": "t"}, {"name": "t"}, {"name": "nope"}, {"name": "nope"}],
                                  "allow_auto_topic_creation": False})
    assert [t.name for t in answer.topics] == ["t", "nope"]


def test_a_share_heartbeat_is_refused_for_what_kafka_refuses_before_the_group():
    b = InProcessBroker(**{"group.share.enable": "true"})
    create(b, "t")

    def beat(epoch, topics, rack=None, member="m"):
        return b.call(76, 1, {"group_id": "g", "member_id": member, "member_epoch": epoch, "rack_id": rack,
                              "subscribed_topic_names": topics})
    refused = [(0, ["t"], "", "RackId can't be empty."), (0, [], None, "SubscribedTopicNames must be set in first request."),
               (0, None, None, "SubscribedTopicNames must be set in first request."), (-2, None, None, "MemberEpoch is invalid.")]
    for epoch, topics, rack, message in refused:
        answer = beat(epoch, topics, rack)
        assert (answer.error_code, answer.error_message) == (E.INVALID_REQUEST, message)
    assert beat(0, ["t"]).error_code == 0
    assert beat(0, None).error_code == E.INVALID_REQUEST  # a member joining again names its topics too


def test_produce_answers_unknown_partitions_before_invalid_acks():
    b = InProcessBroker()
    create(b, "t")
    from kipper.protocol import records
    batch = records.build_batch([(b"k", b"v", 1)])
    answer = b.call(0, 8, {"transactional_id": None, "acks": 2, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": batch}, {"index": 5, "records": batch}]},
        {"name": "", "partition_data": [{"index": 0, "records": batch}]}]})
    assert [(t.name, [(p.index, p.error_code) for p in t.partition_responses]) for t in answer.responses] == [
        ("t", [(0, E.INVALID_REQUIRED_ACKS), (5, E.UNKNOWN_TOPIC_OR_PARTITION)]), ("", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)])]


def test_describe_share_group_offsets_of_a_partition_the_topic_lacks_is_a_partition_of_no_state():
    b = InProcessBroker(**{"group.share.enable": "true"})
    create(b, "t")
    answer = b.call(90, 1, {"groups": [{"group_id": "g", "topics": [{"topic_name": "t", "partitions": [2]}]}]})
    row = answer.groups[0].topics[0].partitions[0]
    assert (row.partition_index, row.error_code, row.start_offset, row.lag) == (2, 0, -1, -1)
