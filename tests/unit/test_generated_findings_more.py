"""More of what the conformance generator (tests/conformance/fuzz, issue 36) found kipper
answering otherwise than Kafka 4.4, each test stating Kafka's answer; each sequence is a
named scenario in tests/conformance/scenarios/generated_found.py."""

from __future__ import annotations

import uuid

from kipper.protocol import records
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

PRODUCE, DELETE_ACLS, INIT_PRODUCER_ID, CREATE_TOPICS, DESCRIBE_LOG_DIRS = 0, 31, 22, 19, 35
ELECT_LEADERS, INCREMENTAL_ALTER_CONFIGS, SHARE_GROUP_HEARTBEAT = 43, 44, 76
ZERO = uuid.UUID(int=0)
ROW = [(b"k", b"v", 1_700_000_000_000)]  # (the broker's clock)


def create(b, name, partitions=1):
    b.call(CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                                          "assignments": [], "configs": []}], "timeout_ms": 30000,
                              "validate_only": False})


def test_append_or_subtract_on_a_broker_config_that_is_no_list_is_invalid_config():
    b = InProcessBroker()
    for op in (2, 3):
        answer = b.call(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": True, "resources": [
            {"resource_type": 4, "resource_name": "1", "configs": [
                {"name": "min.insync.replicas", "value": "1", "config_operation": op}]}]})
        assert answer.responses[0].error_code == E.INVALID_CONFIG


def _produce(b, transactional_id, acks, data):
    return b.call(PRODUCE, 9, {"transactional_id": transactional_id, "acks": acks, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": data}]}]}).responses[0].partition_responses[0]


def _transactional_batch():
    """A broker with topic t and a batch of transactional id x's producer, in no transaction."""
    b = InProcessBroker()
    create(b, "t")
    pid = b.call(INIT_PRODUCER_ID, 4, {"transactional_id": "x", "transaction_timeout_ms": 60000,
                                       "producer_id": -1, "producer_epoch": -1}).producer_id
    return b, records.build_batch(ROW, producer_id=pid, producer_epoch=0, base_sequence=0, transactional=True)


def test_produce_verifies_a_transactional_batch_before_it_looks_at_acks():
    b, batch = _transactional_batch()
    # an empty transactional id: the coordinator's INVALID_REQUEST, not a producer-id mapping error
    assert _produce(b, "", -1, batch).error_code == E.INVALID_REQUEST
    # invalid acks: the transaction's check first (the partition is in no transaction of x)
    assert _produce(b, "x", 2, batch).error_code == E.INVALID_TXN_STATE
    # and the request's records read before acks: a magic 1 message set is INVALID_RECORD
    legacy = bytearray(records.build_batch(ROW))
    legacy[16] = 1
    assert _produce(b, None, 2, bytes(legacy)).error_code == E.INVALID_RECORD
    plain = records.build_batch(ROW)
    assert _produce(b, None, 2, plain).error_code == E.INVALID_REQUIRED_ACKS


def test_delete_acls_refuses_a_filter_of_an_unknown_type():
    b = InProcessBroker(**{"authorizer.class.name": "standard", "allow.everyone.if.no.acl.found": "true"})
    filters = [{"resource_type_filter": 2, "resource_name_filter": "t", "pattern_type_filter": 9,
                "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1},
               {"resource_type_filter": 99, "resource_name_filter": "t", "pattern_type_filter": 3,
                "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1},
               {"resource_type_filter": 2, "resource_name_filter": "t", "pattern_type_filter": 3,
                "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}]
    answer = b.call(DELETE_ACLS, 3, {"filters": filters})
    assert [(r.error_code, r.error_message) for r in answer.filter_results] == [
        (E.INVALID_REQUEST, "Unknown patternFilter."), (E.INVALID_REQUEST, "Unknown patternFilter."), (0, None)]


def test_describe_log_dirs_answers_a_topic_named_twice_once():
    b = InProcessBroker()
    create(b, "t", partitions=2)
    answer = b.call(DESCRIBE_LOG_DIRS, 4, {"topics": [{"topic": "t", "partitions": [0]},
                                                      {"topic": "t", "partitions": [0, 1]}]})
    [topic] = answer.results[0].topics
    assert [p.partition_index for p in topic.partitions] == [0, 1]


def test_elect_leaders_with_a_deadline_already_passed_times_out():
    b = InProcessBroker()
    create(b, "t")
    for version, timeout in ((0, -1), (2, 0)):
        body = {"topic_partitions": [{"topic": "t", "partitions": [0]}], "timeout_ms": timeout}
        if version >= 1:
            body["election_type"] = 0
        answer = b.call(ELECT_LEADERS, version, body)
        [row] = answer.replica_election_results[0].partition_result
        assert (row.error_code, row.error_message) == (E.REQUEST_TIMED_OUT, None)


def test_a_share_member_that_leaves_a_group_it_is_not_in_is_told_why():
    b = InProcessBroker()
    answer = b.call(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "g", "member_id": "m", "member_epoch": -1,
                                               "rack_id": None, "subscribed_topic_names": None})
    assert answer.error_code == E.UNKNOWN_MEMBER_ID and answer.error_message


DESCRIBE_CONFIGS, ALTER_CONFIGS, OFFSET_COMMIT, FETCH, DELETE_TOPICS = 32, 33, 8, 1, 20
DESCRIBE_SHARE_OFFSETS, ALTER_SHARE_OFFSETS, SHARE_GROUP_DESCRIBE, CONSUMER_GROUP_DESCRIBE = 90, 91, 77, 69


def test_the_share_group_offset_apis_answer_a_name_given_twice_as_kafka_s_maps():
    b = InProcessBroker()
    create(b, "t")
    altered = b.call(ALTER_SHARE_OFFSETS, 0, {"group_id": "g", "topics": [
        {"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 0}]},
        {"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 0}]}]})
    [topic] = altered.responses  # one topic, each partition as asked
    assert [p.partition_index for p in topic.partitions] == [0, 0]
    described = b.call(DESCRIBE_SHARE_OFFSETS, 1, {"groups": [
        {"group_id": "g", "topics": [{"topic_name": "t", "partitions": [0, 0]}]}]})
    assert [p.partition_index for p in described.groups[0].topics[0].partitions] == [0]


def test_offset_commit_to_a_share_group_finds_no_group():
    b = InProcessBroker()
    create(b, "t")
    b.call(ALTER_SHARE_OFFSETS, 0, {"group_id": "g", "topics": [
        {"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 0}]}]})
    answer = b.call(OFFSET_COMMIT, 8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                       "group_instance_id": None, "topics": [
                                           {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]})
    assert answer.topics[0].partitions[0].error_code == E.GROUP_ID_NOT_FOUND


def test_a_fetch_from_a_replica_is_refused_this_broker_has_no_followers():
    b = InProcessBroker()
    create(b, "t")
    for replica in (1, 0):
        answer = b.call(FETCH, 4, {"replica_id": replica, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                   "isolation_level": 0, "topics": [{"topic": "t", "partitions": [
                                       {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})
        p = answer.responses[0].partitions[0]
        assert (p.error_code, p.high_watermark, p.last_stable_offset) == (E.NOT_LEADER_OR_FOLLOWER, -1, -1)


def test_describe_configs_with_a_resource_of_an_unknown_type_refuses_every_resource():
    b = InProcessBroker()
    create(b, "t")
    for resources in ([(99, "t"), (2, "t")], [(2, "t"), (0, "1")]):
        answer = b.call(DESCRIBE_CONFIGS, 1, {"resources": [
            {"resource_type": kind, "resource_name": name, "configuration_keys": None} for kind, name in resources],
            "include_synonyms": False})
        assert [(r.error_code, bool(r.error_message), len(r.configs)) for r in answer.results] == [
            (E.INVALID_REQUEST, True, 0)] * 2


def test_an_invalid_value_for_a_topic_that_does_not_exist_is_invalid_config():
    b = InProcessBroker()
    bad = b.call(ALTER_CONFIGS, 2, {"resources": [{"resource_type": 2, "resource_name": "nope", "configs": [
        {"name": "retention.ms", "value": "bogus"}]}], "validate_only": True})
    fine = b.call(ALTER_CONFIGS, 2, {"resources": [{"resource_type": 2, "resource_name": "nope", "configs": [
        {"name": "retention.ms", "value": "1000"}]}], "validate_only": True})
    assert (bad.responses[0].error_code, fine.responses[0].error_code) == (E.INVALID_CONFIG,
                                                                         E.UNKNOWN_TOPIC_OR_PARTITION)


def test_describing_the_empty_group_id_has_no_message():
    b = InProcessBroker()
    for api in (SHARE_GROUP_DESCRIBE, CONSUMER_GROUP_DESCRIBE):
        [group] = b.call(api, 1 if api == SHARE_GROUP_DESCRIBE else 0, {
            "group_ids": [""], "include_authorized_operations": False}).groups
        assert (group.error_code, group.error_message) == (E.INVALID_GROUP_ID, None)


def test_delete_topics_past_its_deadline_answers_a_name_with_no_topic_id():
    b = InProcessBroker()
    create(b, "t")
    [gone] = b.call(DELETE_TOPICS, 6, {"topics": [{"name": "t", "topic_id": ZERO}], "timeout_ms": 0}).responses
    assert (gone.error_code, gone.topic_id) == (E.REQUEST_TIMED_OUT, ZERO)


def test_a_transactional_batch_of_no_transaction_is_told_so_in_kafka_s_words():
    b, batch = _transactional_batch()
    for acks in (-1, 2):
        answer = _produce(b, "x", acks, batch)
        assert (answer.error_code, answer.error_message) == (E.INVALID_TXN_STATE,
                                                             "Partition was not added to the transaction")
    assert _produce(b, "", -1, batch).error_message is None


JOIN_GROUP, DESCRIBE_GROUPS = 11, 15


def test_a_member_that_does_not_sync_within_the_rebalance_timeout_is_removed():
    b = InProcessBroker(**{"group.initial.rebalance.delay.ms": "0"})
    joined = b.call(JOIN_GROUP, 1, {"group_id": "g", "session_timeout_ms": 30000, "rebalance_timeout_ms": 1000,
                                    "member_id": "", "protocol_type": "consumer",
                                    "protocols": [{"name": "range", "metadata": b""}]})
    assert joined.error_code == 0
    b.now += 1001
    b.state.groups.tick(b.now)
    [group] = b.call(DESCRIBE_GROUPS, 0, {"groups": ["g"]}).groups
    assert (group.group_state, len(group.members)) == ("Empty", 0)


SHARE_FETCH = 78


def test_a_share_fetch_renewal_without_a_session_is_an_invalid_request():
    b = InProcessBroker()
    create(b, "t")
    for epoch in (0, -1):
        answer = b.call(SHARE_FETCH, 2, {
            "group_id": "g", "member_id": "m", "share_session_epoch": epoch, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10, "share_acquire_mode": 0, "is_renew_ack": True,
            "topics": [], "forgotten_topics_data": []})
        assert (answer.error_code, answer.error_message) == (E.INVALID_REQUEST, None)


def test_offset_commit_answers_an_unknown_topic_that_names_no_partition():
    b = InProcessBroker()
    create(b, "t")
    answer = b.call(OFFSET_COMMIT, 2, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                       "retention_time_ms": -1, "topics": [{"name": "nope", "partitions": []},
                                                                           {"name": "t", "partitions": []}]})
    assert [(t.name, len(t.partitions)) for t in answer.topics] == [("nope", 0)]


def test_share_requests_refused_up_front_carry_no_text():
    b = InProcessBroker()
    create(b, "t")
    body = {"group_id": "g", "member_id": "", "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10, "topics": [], "forgotten_topics_data": []}
    topic_id = b.call(3, 12, {"topics": [{"name": "t"}], "allow_auto_topic_creation": False}).topics[0].topic_id
    acks = [{"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
        {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]
    for answer in (b.call(SHARE_FETCH, 1, body), b.call(SHARE_FETCH, 1, dict(body, member_id="m", topics=acks)),
                   b.call(79, 1, {"group_id": "g", "member_id": "", "share_session_epoch": 0, "topics": []})):
        assert (answer.error_code, answer.error_message) == (E.INVALID_REQUEST, None)


ADD_PARTITIONS_TO_TXN, LIST_OFFSETS = 24, 2


def test_add_partitions_to_txn_v4_answers_as_kafka_sends_its_results():
    b = InProcessBroker()
    create(b, "t")
    mapped = b.call(ADD_PARTITIONS_TO_TXN, 4, {"transactions": [
        {"transactional_id": "x", "producer_id": 99, "producer_epoch": 0, "verify_only": False,
         "topics": [{"name": "t", "partitions": [0]}, {"name": "t", "partitions": [0]}]}]})
    assert [t.name for t in mapped.results_by_transaction[0].topic_results] == ["t", "t"]  # as asked
    both = b.call(ADD_PARTITIONS_TO_TXN, 4, {"transactions": [
        {"transactional_id": "x", "producer_id": 99, "producer_epoch": 0, "verify_only": True,
         "topics": [{"name": "t", "partitions": [0]}]},
        {"transactional_id": "y", "producer_id": 99, "producer_epoch": 0, "verify_only": False,
         "topics": [{"name": "nope", "partitions": [0]}]}]})
    refused = {r.transactional_id: r.topic_results[0].results_by_partition[0].partition_error_code
               for r in both.results_by_transaction}
    assert refused["y"] == E.UNKNOWN_TOPIC_OR_PARTITION


def test_list_offsets_refuses_a_spec_its_version_lacks_before_looking_for_the_topic():
    b = InProcessBroker()
    create(b, "t")
    answer = b.call(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "nope", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -4}]},
        {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": 1, "timestamp": -4}]}]})
    assert [t.partitions[0].error_code for t in answer.topics] == [E.UNSUPPORTED_VERSION] * 2


def test_a_transactional_batch_of_no_producer_is_appended_and_opens_no_transaction():
    b = InProcessBroker()
    create(b, "t")
    batch = records.build_batch(ROW, transactional=True)  # producer id -1
    answer = _produce(b, "x", -1, batch)
    assert (answer.error_code, answer.base_offset) == (0, 0)
    [p] = b.call(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 1, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}
                 ).topics[0].partitions
    assert p.offset == 1  # read_committed: the last stable offset is past it


TXN_OFFSET_COMMIT = 28


def test_an_unknown_topic_id_named_twice_with_no_partition_is_one_answer():
    b = InProcessBroker()
    pid = b.call(INIT_PRODUCER_ID, 4, {"transactional_id": "x", "transaction_timeout_ms": 60000,
                                       "producer_id": -1, "producer_epoch": -1}).producer_id
    unknown = uuid.UUID(int=7)
    answer = b.call(TXN_OFFSET_COMMIT, 6, {
        "transactional_id": "x", "group_id": "g", "producer_id": pid, "producer_epoch": 0,
        "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"topic_id": unknown, "partitions": []}, {"topic_id": unknown, "partitions": []}]})
    assert [(t.topic_id, len(t.partitions)) for t in answer.topics] == [(unknown, 0)]


def test_a_share_heartbeat_without_a_member_id_is_an_invalid_request_at_every_epoch():
    b = InProcessBroker()
    for epoch in (0, -1, 3):
        answer = b.call(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "g", "member_id": "", "member_epoch": epoch,
                                                   "rack_id": None, "subscribed_topic_names": ["t"]})
        assert (answer.error_code, answer.error_message) == (E.INVALID_REQUEST, None)


DELETE_GROUPS = 42


def test_a_share_heartbeat_without_a_member_id_is_refused_before_its_epoch_is_checked():
    b = InProcessBroker()
    answer = b.call(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "g", "member_id": "", "member_epoch": -2,
                                               "rack_id": None, "subscribed_topic_names": None})
    assert (answer.error_code, answer.error_message) == (E.INVALID_REQUEST, None)


def test_delete_groups_answers_a_group_named_twice_once():
    b = InProcessBroker()
    answer = b.call(DELETE_GROUPS, 0, {"groups_names": ["g", "g"]})
    assert [r.group_id for r in answer.results] == ["g"]


def test_a_transactional_batch_without_a_transactional_id_refuses_the_whole_request():
    b = InProcessBroker()
    create(b, "t")
    answer = b.call(PRODUCE, 5, {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": None}]},
        {"name": "nope", "partition_data": [{"index": 0, "records": records.build_batch(ROW, transactional=True)}]}]})
    assert [(t.name, t.partition_responses[0].error_code) for t in answer.responses] == [
        ("t", E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED), ("nope", E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)]


SYNC_GROUP = 14


def test_sync_group_v5_without_protocol_type_or_name_is_an_inconsistent_protocol():
    b = InProcessBroker()
    answer = b.call(SYNC_GROUP, 5, {"group_id": "g", "generation_id": 0, "member_id": "", "group_instance_id": None,
                                    "protocol_type": None, "protocol_name": "range", "assignments": []})
    assert answer.error_code == E.INCONSISTENT_GROUP_PROTOCOL


def test_add_partitions_to_txn_v3_answers_a_refusal_by_the_coordinator_as_asked():
    """An empty transactional id is the coordinator's INVALID_REQUEST, which Kafka answers topic by
    topic as asked, a topic of no partition too (the bounded generator's finding)."""
    b = InProcessBroker()
    create(b, "t")
    answer = b.call(ADD_PARTITIONS_TO_TXN, 3, {"v3_and_below_transactional_id": "", "v3_and_below_producer_id": 5,
                                               "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [
                                                   {"name": "t", "partitions": [0]}, {"name": "nope", "partitions": []}]})
    assert [t.name for t in answer.results_by_topic_v3_and_below] == ["t", "nope"]


def test_produce_before_v7_refuses_a_zstd_batch():
    from kipper.protocol import compression
    b = InProcessBroker()
    create(b, "t")
    batch = records.build_batch(ROW, compression_type=compression.ZSTD)
    answer = b.call(PRODUCE, 3, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}).responses[0].partition_responses[0]
    assert answer.error_code == E.UNSUPPORTED_COMPRESSION_TYPE


WRITE_TXN_MARKERS = 27


def test_the_last_findings_of_the_second_run():
    b = InProcessBroker()
    create(b, "t")
    markers = b.call(WRITE_TXN_MARKERS, 1, {"markers": [{"producer_id": 5, "producer_epoch": 0, "transaction_result": True,
                                                         "coordinator_epoch": 0, "topics": [
                                                             {"name": "nope", "partition_indexes": [0, 0]}]}]})
    assert len(markers.markers[0].topics[0].partitions) == 1  # a partition named twice: one answer
    added = b.call(ADD_PARTITIONS_TO_TXN, 5, {"transactions": [
        {"transactional_id": "x", "producer_id": 5, "producer_epoch": 0, "verify_only": False,
         "topics": [{"name": "t", "partitions": []}]}]})
    # a topic of no partition is answered as asked, with no partition (Kafka 4.4's answer in the
    # scenario generated/second-run-findings)
    assert [(t.name, list(t.results_by_partition)) for t in added.results_by_transaction[0].topic_results] == \
        [("t", [])]
    elected = b.call(ELECT_LEADERS, 2, {"election_type": 9, "topic_partitions": None, "timeout_ms": 0})
    assert elected.error_code == E.REQUEST_TIMED_OUT  # the deadline before the election type


def test_a_share_heartbeat_without_group_or_member_id_is_refused_for_the_member_first():
    b = InProcessBroker()
    answer = b.call(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "", "member_id": "", "member_epoch": 0,
                                               "rack_id": None, "subscribed_topic_names": None})
    assert (answer.error_code, answer.error_message) == (E.INVALID_REQUEST, None)


def test_a_replica_fetch_from_a_broker_the_partition_does_not_have_checks_the_epoch_first():
    """Kafka's Partition.fetchRecords: the leader epoch first (75 ahead of it, 74 behind), then
    the replica (75 when the fetch names an epoch, 6 when it does not)."""
    b = InProcessBroker()
    create(b, "t")
    topic_id = b.call(3, 12, {"topics": [{"name": "t", "topic_id": ZERO}], "allow_auto_topic_creation": False,
                              "include_topic_authorized_operations": False}).topics[0].topic_id
    codes = []
    for epoch in (0, -1, 5):
        answer = b.call(1, 13, {"cluster_id": None, "replica_id": 7, "max_wait_ms": 0, "min_bytes": 1,
                                "max_bytes": 100, "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                                "rack_id": "", "forgotten_topics_data": [], "topics": [
                                    {"topic_id": topic_id, "partitions": [
                                        {"partition": 0, "current_leader_epoch": epoch, "fetch_offset": 0,
                                         "last_fetched_epoch": -1, "log_start_offset": -1,
                                         "partition_max_bytes": 1048576}]}]})
        codes.append(answer.responses[0].partitions[0].error_code)
    assert codes == [E.UNKNOWN_LEADER_EPOCH, E.NOT_LEADER_OR_FOLLOWER, E.UNKNOWN_LEADER_EPOCH]
