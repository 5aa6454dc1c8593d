"""What the generator's fourth long run found (issue 36, docs/FUZZ_FINDINGS.md), fixed: each
test states Kafka 4.4's answer; each sequence is a named scenario in
tests/conformance/scenarios/generated_run4.py."""

from __future__ import annotations

from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode as E
from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.support.inproc import InProcessBroker

PRODUCE, LIST_OFFSETS, METADATA, FIND_COORDINATOR, JOIN_GROUP, DELETE_TOPICS = 0, 2, 3, 10, 11, 20
INCREMENTAL_ALTER_CONFIGS = 44
OFFSET_FOR_LEADER_EPOCH, ALTER_USER_SCRAM_CREDENTIALS, CONSUMER_GROUP_HEARTBEAT = 23, 51, 68
LIST_TRANSACTIONS, DESCRIBE_TOPIC_PARTITIONS, SHARE_FETCH = 66, 75, 78
NOT_PROVIDED = -(1 << 31)


def _metadata(b, version: int, names: list[str]):
    return b.call(METADATA, version, {"topics": [{"name": n, "topic_id": None} for n in names],
                                      "allow_auto_topic_creation": False,
                                      "include_cluster_authorized_operations": False,
                                      "include_topic_authorized_operations": True})


def test_metadata_names_the_operations_on_a_topic_it_does_not_have():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = _metadata(b, 9, ["t", "missing", "bad name!"])
    rows = {t.name: t for t in answer.topics}
    assert rows["missing"].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert rows["bad name!"].error_code == E.INVALID_TOPIC_EXCEPTION
    # no authorizer: every operation of a topic, as Kafka answers (3576) for all three
    assert {t.topic_authorized_operations for t in answer.topics} == {rows["t"].topic_authorized_operations}
    assert rows["t"].topic_authorized_operations not in (0, NOT_PROVIDED)


def test_a_share_fetch_of_group_empty_is_a_missing_members():
    b = InProcessBroker(**{"group.share.enable": "true"})
    answer = b.call(SHARE_FETCH, 2, {"group_id": "", "member_id": "m" * 22, "share_session_epoch": 0,
                                     "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10,
                                     "batch_size": 10, "share_acquire_mode": 0, "is_renew_ack": False,
                                     "topics": [], "forgotten_topics_data": []})
    # Kafka opens a session and answers 0; kipper refuses a member its group does not have
    # (declared: share-fetch-by-a-missing-member), not the request (INVALID_REQUEST before)
    assert answer.error_code == E.UNKNOWN_MEMBER_ID


def test_a_new_member_naming_a_protocol_twice_is_handed_its_id_first():
    b = InProcessBroker()
    body = {"group_id": "g", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}, {"name": "range", "metadata": b""}]}
    answer = b.call(JOIN_GROUP, 5, body)
    assert answer.error_code == E.MEMBER_ID_REQUIRED and answer.member_id
    # rejoining with it, Kafka fails inside and closes the connection (handed-on findings)
    [again], _ = b.dispatcher.dispatch(
        [encode_request(APIS[JOIN_GROUP], 5, 2, "test", dict(body, member_id=answer.member_id))[4:]], 0, b.session)
    assert type(again) is Reply and again.body is NO_RESPONSE


def test_delete_topics_by_id_past_the_deadline_looks_no_name_up():
    b = InProcessBroker()
    _, _, topic = b.state.topics.create("t", 1)
    answer = b.call(DELETE_TOPICS, 6, {"topics": [{"name": None, "topic_id": topic.topic_id}], "timeout_ms": -1})
    assert [(r.name, r.topic_id, r.error_code) for r in answer.responses] == [
        (None, topic.topic_id, E.REQUEST_TIMED_OUT)]
    assert b.state.topics.get("t") is topic  # nothing deleted


def test_list_transactions_refuses_a_bad_pattern_before_it_reads_the_states():
    b = InProcessBroker()
    answer = b.call(LIST_TRANSACTIONS, 2, {"state_filters": ["bogus"], "producer_id_filters": [],
                                           "duration_filter": -1, "transactional_id_pattern": "["})
    assert (answer.error_code, answer.unknown_state_filters) == (E.INVALID_REGULAR_EXPRESSION, [])


def test_describe_topic_partitions_wraps_the_page_end_as_a_java_int():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = b.call(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": "t"}], "response_partition_limit": 2000,
                                                   "cursor": {"topic_name": "t", "partition_index": 2147483647}})
    assert answer.topics[0].partitions == []
    assert (answer.next_cursor.topic_name, answer.next_cursor.partition_index) == ("t", 2147483647 + 2000 - (1 << 32))


def test_a_user_changed_twice_is_a_duplicate_before_its_changes_are_checked():
    b = InProcessBroker()
    answer = b.call(ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [{"name": "u2", "mechanism": 9}], "upsertions": [
        {"name": "u0", "mechanism": 1, "iterations": 4096, "salt": b"", "salted_password": b""},
        {"name": "u0", "mechanism": 1, "iterations": 4096, "salt": b"\0", "salted_password": b"\0"},
        {"name": "u2", "mechanism": 1, "iterations": 4096, "salt": b"\0", "salted_password": b"\0"}]})
    # u0's first change alone would be UNACCEPTABLE_CREDENTIAL; u2's unknown mechanism comes first
    assert {r.user: r.error_code for r in answer.results} == {"u0": E.DUPLICATE_RESOURCE,
                                                             "u2": E.UNSUPPORTED_SASL_MECHANISM}


def _produce(b, version: int, acks: int, partitions: list):
    return b.call(PRODUCE, version, {"transactional_id": None, "acks": acks, "timeout_ms": 30000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": r} for r in partitions]}]})


def test_produce_reads_records_of_no_bytes_before_its_acks():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    [row] = _produce(b, 7, -2, [b""]).responses[0].partition_responses
    assert row.error_code == E.INVALID_RECORD


def test_a_partition_named_twice_appends_the_batch_and_answers_the_refusal():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    batch = records.build_batch([(b"k", b"v", 1_700_000_000_000)])
    [row] = _produce(b, 3, -1, [b"", batch]).responses[0].partition_responses
    assert (row.error_code, row.base_offset) == (E.INVALID_RECORD, -1)
    # Kafka appended the batch all the same: the log end moved
    offsets = b.call(LIST_OFFSETS, 1, {"replica_id": -1, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
    assert offsets.topics[0].partitions[0].offset == 1


def test_list_offsets_of_an_unknown_isolation_level_answers_every_topic_as_asked():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = b.call(LIST_OFFSETS, 2, {"replica_id": -1, "isolation_level": 3, "topics": [
        {"name": "t", "partitions": []}, {"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
    assert [(t.name, [p.error_code for p in t.partitions]) for t in answer.topics] == [
        ("t", []), ("t", [E.INVALID_REQUEST])]


def test_find_coordinator_v4_of_an_unknown_key_type_says_why():
    answer = InProcessBroker().call(FIND_COORDINATOR, 4, {"key_type": 5, "coordinator_keys": ["g"]})
    [c] = answer.coordinators
    assert c.error_code == E.INVALID_REQUEST and c.error_message.startswith("This most likely occurs")


def test_a_share_renewal_that_would_fetch_is_an_invalid_request():
    b = InProcessBroker(**{"group.share.enable": "true"})
    answer = b.call(SHARE_FETCH, 2, {"group_id": "g", "member_id": "m" * 22, "share_session_epoch": 1,
                                     "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 0, "max_records": 0,
                                     "batch_size": 0, "share_acquire_mode": 0, "is_renew_ack": True,
                                     "topics": [], "forgotten_topics_data": []})
    assert answer.error_code == E.INVALID_REQUEST


def test_a_static_leave_without_a_member_id_looks_the_group_up():
    answer = InProcessBroker().call(CONSUMER_GROUP_HEARTBEAT, 0, {
        "group_id": "g", "member_id": "", "member_epoch": -2, "instance_id": "i", "rack_id": None,
        "rebalance_timeout_ms": -1, "subscribed_topic_names": None, "server_assignor": None, "topic_partitions": None})
    assert (answer.error_code, answer.error_message) == (E.GROUP_ID_NOT_FOUND, "Group g not found.")


def test_a_join_without_a_protocol_type_naming_a_protocol_twice_is_inconsistent_first():
    answer = InProcessBroker().call(JOIN_GROUP, 0, {
        "group_id": "g", "session_timeout_ms": 45000, "member_id": "", "protocol_type": "",
        "protocols": [{"name": "range", "metadata": b""}, {"name": "range", "metadata": b""}]})
    assert answer.error_code == E.INCONSISTENT_GROUP_PROTOCOL


def test_offset_for_an_epoch_below_every_epoch_is_where_the_first_began():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = b.call(OFFSET_FOR_LEADER_EPOCH, 3, {"replica_id": -2, "topics": [{"topic": "t", "partitions": [
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": e} for e in (-(1 << 31), -1)]}]})
    assert [(p.leader_epoch, p.end_offset) for p in answer.topics[0].partitions] == [(-(1 << 31), 0), (-1, -1)]


def test_a_topic_configs_name_is_no_broker_config_and_passes_as_unknown():
    answer = InProcessBroker().call(INCREMENTAL_ALTER_CONFIGS, 0, {"validate_only": True, "resources": [
        {"resource_type": 4, "resource_name": "", "configs": [{"config_operation": 0, "name": "retention.ms", "value": "1"}]}]})
    assert answer.responses[0].error_code == 0


def test_deleting_a_credential_that_is_not_there_comes_before_the_user_named_again():
    answer = InProcessBroker().call(ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [{"name": "u", "mechanism": 1}],
                                                                      "upsertions": [{"name": "u", "mechanism": 1,
                                                                                      "iterations": 4096, "salt": b"",
                                                                                      "salted_password": b""}]})
    assert [r.error_code for r in answer.results] == [E.RESOURCE_NOT_FOUND]


def test_a_join_with_instance_id_empty_is_a_static_members():
    answer = InProcessBroker(**{"group.initial.rebalance.delay.ms": "0"}).call(JOIN_GROUP, 8, {
        "group_id": "g", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
        "group_instance_id": "", "protocol_type": "consumer", "reason": None,
        "protocols": [{"name": "range", "metadata": b""}]})
    assert answer.error_code != E.MEMBER_ID_REQUIRED  # (Kafka: joined at once, generation 1)
