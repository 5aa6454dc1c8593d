"""What the generator's eighth run found (issue 36, docs/FUZZ_FINDINGS.md), fixed: each test
states Kafka 4.4's answer; each sequence is a named scenario in
tests/conformance/scenarios/generated_run8.py."""

from __future__ import annotations

import pytest

from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

STREAMS_GROUP_HEARTBEAT = 88


def _join(active, standby, warmup) -> dict:
    return {"group_id": "g", "member_id": "m", "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 1000, "topology": {"epoch": 0, "subtopologies": []}, "active_tasks": active,
            "standby_tasks": standby, "warmup_tasks": warmup, "process_id": "x", "user_endpoint": None,
            "client_tags": None, "task_offsets": None, "task_end_offsets": None, "shutdown_application": False}


@pytest.mark.parametrize(("tasks", "refused"), [
    ((None, None, None), "ActiveTasks"), (([], None, None), "StandbyTasks"), (([], [], None), "WarmupTasks"),
    ((None, [], []), "ActiveTasks")])
def test_a_joining_streams_member_sends_its_task_lists_empty_not_null(tasks, refused):
    answer = InProcessBroker().call(STREAMS_GROUP_HEARTBEAT, 0, _join(*tasks))
    assert (answer.error_code, answer.error_message) == (E.INVALID_REQUEST, f"{refused} must be empty when (re-)joining.")
    assert answer.member_id == ""


def test_a_joining_streams_member_with_empty_task_lists_joins():
    answer = InProcessBroker().call(STREAMS_GROUP_HEARTBEAT, 0, _join([], [], []))
    assert (answer.error_code, answer.member_epoch) == (E.NONE, 1)


ALTER_SHARE_GROUP_OFFSETS, SHARE_GROUP_DESCRIBE, OFFSET_COMMIT = 91, 77, 8


def _alter(b, group: str, topics: list) -> dict:
    return b.call(ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": group, "topics": topics})


def _described(b, group: str):
    return b.call(SHARE_GROUP_DESCRIBE, 1, {"group_ids": [group], "include_authorized_operations": False}).groups[0]


def test_alter_share_group_offsets_makes_a_group_only_for_a_topic_it_has():
    b = InProcessBroker()
    b.state.topics.create("t", 2)
    unknown = [{"topic_name": "nope", "partitions": [{"partition_index": 0, "start_offset": 0}]}]
    for group, topics in (("none", []), ("unknown", unknown)):
        assert _alter(b, group, topics).error_code == E.NONE
        assert _described(b, group).error_code == E.GROUP_ID_NOT_FOUND
        # so a commit to the id meets no share group: Kafka's answer for a group it does not have
        commit = b.call(OFFSET_COMMIT, 2, {"group_id": group, "generation_id_or_member_epoch": 0, "member_id": "",
                                           "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
                                               {"partition_index": 0, "committed_offset": 0, "committed_metadata": ""}]}]})
        assert commit.topics[0].partitions[0].error_code == E.ILLEGAL_GENERATION
    # a topic it has, even with no partition or one it lacks, makes it at epoch 1; later alters keep the epoch
    for partitions in ([], [{"partition_index": 7, "start_offset": 0}], [{"partition_index": 0, "start_offset": 0}]):
        assert _alter(b, "made", [{"topic_name": "t", "partitions": partitions}]).error_code == E.NONE
        group = _described(b, "made")
        assert (group.error_code, group.group_epoch, group.assignment_epoch) == (E.NONE, 1, 1)


def test_a_produce_with_null_records_closes_the_connection_and_appends_nothing():
    """Kafka fails inside on a partition whose (last) records are null and never answers; kipper
    closes the connection at once, and appends none of the request (it used to append the other
    partitions, then fail). Null records followed by a batch for the same partition are the
    batch's (Kafka's map keeps the last)."""
    from kipper.broker.handlers.replies import NO_RESPONSE, Reply
    from kipper.protocol import records
    from kipper.protocol.header import encode_request
    from kipper.protocol.messages import APIS

    b = InProcessBroker()
    b.state.topics.create("t", 2)
    batch = records.build_batch([(b"k", b"v", b.now)])
    for acks in (-1, 1, 0):
        body = {"transactional_id": None, "acks": acks, "timeout_ms": 1000, "topic_data": [{"name": "t", "partition_data": [
            {"index": 0, "records": batch}, {"index": 1, "records": None}]}]}
        frame = encode_request(APIS[0], 9, 1, "test", body)[4:]
        [answer], _ = b.dispatcher.dispatch([frame], 0, b.session)
        assert type(answer) is Reply and answer.body is NO_RESPONSE and "null" in answer.abort
    assert b.state.topics.get("t").partitions[0].log_end_offset == 0
    answer = b.call(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": None}, {"index": 0, "records": batch}]}]})
    assert answer.responses[0].partition_responses[0].error_code == E.NONE


def test_a_transactional_batch_is_verified_before_its_bytes_are_validated():
    """Kafka asks the coordinator before its LogValidator reads the batch: a producer that is
    not in the transaction is told so (INVALID_PRODUCER_ID_MAPPING here: the transactional id
    has no producer), whatever is wrong with the batch itself."""
    from kipper.protocol import records

    b = InProcessBroker()
    b.state.topics.create("t", 1)
    good = records.build_batch([(b"k", b"v", b.now)], producer_id=999_999_999_999, producer_epoch=0,
                               base_sequence=0, transactional=True)
    bad_crc = good[:-1] + bytes([good[-1] ^ 0xFF])
    for batch in (good, bad_crc):
        answer = b.call(0, 12, {"transactional_id": "x1", "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]})
        assert answer.responses[0].partition_responses[0].error_code == E.INVALID_PRODUCER_ID_MAPPING


CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE = 68, 69


def _consumer_heartbeat(b, member: str, epoch: int, regex: str | None, names=None):
    return b.call(CONSUMER_GROUP_HEARTBEAT, 1, {
        "group_id": "g", "member_id": member, "member_epoch": epoch, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 1000, "subscribed_topic_names": names, "subscribed_topic_regex": regex,
        "server_assignor": None, "topic_partitions": [] if epoch == 0 else None})


def test_a_consumer_heartbeats_regex_is_looked_at_once_the_group_and_member_are_found():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    assert _consumer_heartbeat(b, "m0", 0, "[").error_code == E.INVALID_REGULAR_EXPRESSION
    described = b.call(CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": ["g"], "include_authorized_operations": False})
    assert described.groups[0].error_code == E.GROUP_ID_NOT_FOUND  # the refused join made no group
    joined = _consumer_heartbeat(b, "m0", 0, None, ["t"])
    assert joined.error_code == E.NONE
    assert _consumer_heartbeat(b, "m1", 3, "[").error_code == E.UNKNOWN_MEMBER_ID  # the member first
    assert _consumer_heartbeat(b, "m0", joined.member_epoch, "(").error_code == E.INVALID_REGULAR_EXPRESSION
    assert _consumer_heartbeat(b, "m0", -1, "[").error_code == E.NONE  # a leave does not read it


def test_a_transactional_batch_of_no_records_makes_the_request_transactional():
    from kipper.protocol import records

    b = InProcessBroker()
    b.state.topics.create("t", 1)
    empty = records.assemble(b"", 0, b.now, b.now, last_offset_delta=-1, producer_id=999_999_999_999,
                             producer_epoch=0, base_sequence=0, transactional=True)
    answer = b.call(0, 5, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": empty}]}]})
    assert answer.responses[0].partition_responses[0].error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


ALTER_USER_SCRAM_CREDENTIALS, INIT_PRODUCER_ID, ADD_OFFSETS_TO_TXN, DESCRIBE_TRANSACTIONS = 51, 22, 25, 65


def _upsert(name: str, iterations: int, secret: bytes = b"\0") -> dict:
    return {"name": name, "mechanism": 1, "iterations": iterations, "salt": secret, "salted_password": secret}


def test_scram_iterations_are_looked_at_change_by_change_before_a_user_named_again():
    answer = InProcessBroker().call(ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [{"name": "gone", "mechanism": 1}], "upsertions": [
        _upsert("a", 16385, b""), _upsert("a", 4096, b""), _upsert("b", 1), _upsert("b", 4096),
        _upsert("c", 4096), _upsert("c", 16385), _upsert("d", 4096, b""), _upsert("d", 4096)]})
    assert {r.user: (r.error_code, r.error_message) for r in answer.results} == {
        "gone": (E.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "a": (E.UNACCEPTABLE_CREDENTIAL, "Too many iterations"), "b": (E.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "c": (E.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request"),
        "d": (E.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")}


def test_describe_transactions_lists_the_offsets_partition_of_a_group_added():
    from kipper.broker.groups.journal import partition_for

    b = InProcessBroker()
    init = b.call(INIT_PRODUCER_ID, 1, {"transactional_id": "x", "transaction_timeout_ms": 60000})
    for group in ("", "g"):
        assert b.call(ADD_OFFSETS_TO_TXN, 2, {"transactional_id": "x", "producer_id": init.producer_id,
                                              "producer_epoch": init.producer_epoch, "group_id": group}).error_code == 0
    [state] = b.call(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["x"]}).transaction_states
    count = b.state.config["offsets.topic.num.partitions"]  # (no such topic yet: Kafka's partitionFor all the same)
    assert [(t.topic, list(t.partitions)) for t in state.topics] == [
        ("__consumer_offsets", sorted({partition_for("", count), partition_for("g", count)}))]


SHARE_ACKNOWLEDGE, WRITE_TXN_MARKERS = 79, 27


def test_share_acknowledge_refuses_a_member_id_longer_than_a_uuid():
    b = InProcessBroker()
    for n, epoch, code in ((36, 0, E.INVALID_SHARE_SESSION_EPOCH), (37, 0, E.INVALID_REQUEST), (37, 1, E.INVALID_REQUEST)):
        answer = b.call(SHARE_ACKNOWLEDGE, 1, {"group_id": "g", "member_id": "x" * n, "share_session_epoch": epoch,
                                               "topics": []})
        assert answer.error_code == code


def test_a_marker_of_an_older_coordinator_epoch_is_fenced():
    b = InProcessBroker()
    b.state.topics.create("t", 1)

    def markers(*epochs):
        answer = b.call(WRITE_TXN_MARKERS, 1, {"markers": [
            {"producer_id": 7, "producer_epoch": 0, "transaction_result": False,
             "topics": [{"name": "t", "partition_indexes": [0]}], "coordinator_epoch": e} for e in epochs]})
        return answer.markers[0].topics[0].partitions[0].error_code
    assert markers(5, 0) == E.TRANSACTION_COORDINATOR_FENCED  # (the later marker's answer stands)
    assert markers(5) == E.NONE and markers(4) == E.TRANSACTION_COORDINATOR_FENCED
    assert b.state.topics.get("t").partitions[0].log_end_offset == 2  # the two markers of epoch 5


JOIN_GROUP, SHARE_GROUP_HEARTBEAT = 11, 76


def test_a_join_group_for_another_kind_of_group_echoes_no_member_id():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    assert b.call(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "s", "member_id": "m0", "member_epoch": 0, "rack_id": None,
                                             "subscribed_topic_names": ["t"]}).error_code == E.NONE
    consumer = b.call(CONSUMER_GROUP_HEARTBEAT, 0, {
        "group_id": "c", "member_id": "", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["t"], "server_assignor": None, "topic_partitions": []})
    assert consumer.error_code == E.NONE
    for group, protocol_type in (("s", "consumer"), ("c", "consumer"), ("c", "other")):
        answer = b.call(JOIN_GROUP, 1, {"group_id": group, "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000,
                                        "protocol_type": protocol_type, "member_id": "someone",
                                        "protocols": [{"name": "range", "metadata": b"\0"}]})
        assert (answer.error_code, answer.member_id) == (E.INCONSISTENT_GROUP_PROTOCOL, "")


def test_before_acks_kafka_reads_the_records_as_validate_records_does():
    from kipper.protocol import compression, records

    b = InProcessBroker()
    b.state.topics.create("t", 1)
    zstd = records.build_batch([(b"k", b"v", b.now)], compression_type=compression.ZSTD)
    empty = records.assemble(b"", 0, b.now, b.now, last_offset_delta=-1)

    def code(version, acks, batch):
        answer = b.call(0, version, {"transactional_id": None, "acks": acks, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]})
        return answer.responses[0].partition_responses[0].error_code
    assert code(3, 2, zstd) == E.UNSUPPORTED_COMPRESSION_TYPE  # zstd before v7, before the acks
    assert code(6, -2, empty) == E.INVALID_REQUIRED_ACKS  # a batch of no records reads as one
    assert code(6, -1, empty) == E.INVALID_RECORD  # (which the log then refuses)
    plain = records.build_batch([(b"k", b"v", b.now)])
    twice = b.call(0, 8, {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": empty}, {"index": 0, "records": plain}]}]})
    assert twice.responses[0].partition_responses[0].error_code == E.NONE  # read as two batches: the last kept


def test_a_join_groups_session_timeout_comes_before_the_kind_of_group():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    b.call(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "s", "member_id": "m0", "member_epoch": 0, "rack_id": None,
                                      "subscribed_topic_names": ["t"]})
    b.call(CONSUMER_GROUP_HEARTBEAT, 0, {"group_id": "c", "member_id": "", "member_epoch": 0, "instance_id": None,
                                         "rack_id": None, "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["t"],
                                         "server_assignor": None, "topic_partitions": []})
    for group in ("s", "c"):
        answer = b.call(JOIN_GROUP, 1, {"group_id": group, "session_timeout_ms": 1_800_001, "rebalance_timeout_ms": 1000,
                                        "protocol_type": "consumer", "member_id": "",
                                        "protocols": [{"name": "range", "metadata": b"\0"}]})
        assert answer.error_code == E.INVALID_SESSION_TIMEOUT


DELETE_TOPICS = 20


def test_delete_topics_of_timeout_0_with_something_to_look_up_is_timed_out_whole():
    import uuid

    b = InProcessBroker()
    b.state.topics.create("t", 1)
    topic_id, unknown = b.state.topics.get("t").topic_id, uuid.uuid4()

    def codes(topics):
        answer = b.call(DELETE_TOPICS, 6, {"timeout_ms": 0, "topics": topics})
        return sorted(((r.name or ""), r.error_code) for r in answer.responses)
    assert codes([{"name": "t", "topic_id": topic_id}, {"name": "x", "topic_id": uuid.UUID(int=0)}]) == [
        ("t", E.REQUEST_TIMED_OUT), ("x", E.REQUEST_TIMED_OUT)]  # (both given: refused only when alone)
    assert codes([{"name": "t", "topic_id": topic_id}, {"name": None, "topic_id": unknown},
                  {"name": None, "topic_id": unknown}]) == [("", E.INVALID_REQUEST), ("t", E.INVALID_REQUEST)]
    assert b.state.topics.get("t") is not None


INCREMENTAL_ALTER_CONFIGS = 44


def test_incremental_alter_configs_applies_the_ops_before_it_looks_at_the_resource():
    b = InProcessBroker()

    def answer(name, key, op, value):
        r = b.call(INCREMENTAL_ALTER_CONFIGS, 0, {"validate_only": True, "resources": [
            {"resource_type": 2, "resource_name": name, "configs": [{"name": key, "config_operation": op, "value": value}]}]})
        return r.responses[0].error_code, r.responses[0].error_message
    assert answer("", "retention.ms", 3, "1") == (E.INVALID_CONFIG, "Can't SUBTRACT to key retention.ms because its type is not LIST.")
    assert answer("nope", "retention.ms", 2, "1") == (E.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")
    assert answer("", "cleanup.policy", 3, "compact") == (E.INVALID_REQUEST, "Default topic resources are not allowed.")


def test_a_replicas_fetch_on_one_node_names_this_broker_as_the_leader():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = b.call(1, 17, {
        "max_bytes": 1048576, "isolation_level": 0, "max_wait_ms": 0, "min_bytes": 1,
        "replica_state": {"replica_id": 1, "replica_epoch": 0}, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic_id": b.state.topics.get("t").topic_id, "partitions": [{
            "partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
            "log_start_offset": -1, "partition_max_bytes": 1048576}]}], "forgotten_topics_data": [], "rack_id": "r1"})
    p = answer.responses[0].partitions[0]
    assert p.error_code == E.NOT_LEADER_OR_FOLLOWER
    assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (b.state.node_id, 0)


def test_a_replicas_fetch_before_v16_names_no_leader():
    """KIP-951's current leader is in Fetch answers from v16 only (Kafka fills it for those)."""
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = b.call(1, 13, {
        "replica_id": 7, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 100, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
        "topics": [{"topic_id": b.state.topics.get("t").topic_id, "partitions": [{
            "partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
            "log_start_offset": -1, "partition_max_bytes": 1048576}]}]})
    p = answer.responses[0].partitions[0]
    assert p.error_code == E.NOT_LEADER_OR_FOLLOWER
    assert dict(p.current_leader or {}).get("leader_id", -1) == -1
