"""What the generator's sixth run found (issue 36, docs/FUZZ_FINDINGS.md), fixed: each test
states Kafka 4.4's answer; each sequence is a named scenario in
tests/conformance/scenarios/generated_run6.py."""

from __future__ import annotations

from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.protocol.errors import ErrorCode as E
from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.support.inproc import InProcessBroker

JOIN_GROUP, DESCRIBE_GROUPS, LIST_GROUPS, CREATE_ACLS, DELETE_ACLS = 11, 15, 16, 30, 31
READ, WRITE, ANY_OPERATION, ALLOW = 3, 2, 1, 3


def _acl(operation: int) -> dict:
    return {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3, "principal": "User:u",
            "host": "*", "operation": operation, "permission_type": ALLOW}


def _filter(operation: int) -> dict:
    return {"resource_type_filter": 2, "resource_name_filter": "t", "pattern_type_filter": 3,
            "principal_filter": "User:u", "host_filter": None, "operation": operation, "permission_type": ALLOW}


def test_every_filter_of_a_delete_acls_sees_the_acls_before_it():
    b = InProcessBroker(**{"authorizer.class.name": "standard", "super.users": "User:ANONYMOUS"})
    assert all(r.error_code == 0 for r in b.call(CREATE_ACLS, 1, {"creations": [_acl(WRITE), _acl(READ)]}).results)
    answer = b.call(DELETE_ACLS, 1, {"filters": [_filter(WRITE), _filter(WRITE), _filter(ANY_OPERATION)]})
    assert [sorted(a.operation for a in r.matching_acls) for r in answer.filter_results] == [
        [WRITE], [WRITE], sorted([READ, WRITE])]
    again = b.call(DELETE_ACLS, 1, {"filters": [_filter(ANY_OPERATION)]})
    assert again.filter_results[0].matching_acls == []


def test_a_new_member_naming_a_protocol_twice_stays_in_a_group_that_cannot_complete_its_join():
    b = InProcessBroker()
    body = {"group_id": "g", "session_timeout_ms": 45000, "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "roundrobin", "metadata": b""}, {"name": "roundrobin", "metadata": b""}]}
    [answer], _ = b.dispatcher.dispatch([encode_request(APIS[JOIN_GROUP], 0, 1, "test", body)[4:]], 0, b.session)
    assert type(answer) is Reply and answer.body is NO_RESPONSE  # Kafka closes the connection
    listed = b.call(LIST_GROUPS, 1, {}).groups
    assert [(g.group_id, g.protocol_type) for g in listed] == [("g", "consumer")]
    b.state.groups.tick(b.now + 1000)
    [group] = b.call(DESCRIBE_GROUPS, 0, {"groups": ["g"]}).groups
    assert (group.group_state, len(group.members)) == ("PreparingRebalance", 1)
    b.now += 46_000  # its session ends: the member goes, and the group is empty again
    b.state.groups.tick(b.now)
    [group] = b.call(DESCRIBE_GROUPS, 0, {"groups": ["g"]}).groups
    assert (group.group_state, len(group.members)) == ("Empty", 0)


def test_a_member_of_rebalance_timeout_0_is_answered_then_leaves_at_once():
    b = InProcessBroker()
    answer = b.call(JOIN_GROUP, 1, {"group_id": "g", "session_timeout_ms": 45000, "rebalance_timeout_ms": 0,
                                    "member_id": "", "protocol_type": "consumer",
                                    "protocols": [{"name": "range", "metadata": b""}]})
    assert answer.error_code == 0 and answer.generation_id == 1
    [group] = b.call(DESCRIBE_GROUPS, 0, {"groups": ["g"]}).groups
    assert (group.group_state, list(group.members)) == ("Empty", [])


def test_list_config_resources_names_topics_in_the_metadata_images_order():
    b = InProcessBroker()
    for name in ("b", "a", "zz", "__consumer_offsets"):
        b.state.topics.create(name, 1)
    answer = b.call(74, 1, {"resource_types": [2]})
    # ascending String.hashCode: "__consumer_offsets" is negative, "a" 97, "b" 98, "zz" 3904
    assert [r.resource_name for r in answer.config_resources] == ["__consumer_offsets", "a", "b", "zz"]


def test_a_share_member_id_is_36_characters_at_most():
    b = InProcessBroker(**{"group.share.enable": "true"})
    b.state.topics.create("t", 1)

    def heartbeat(member_id: str):
        return b.call(76, 1, {"group_id": "s", "member_id": member_id, "member_epoch": 0, "rack_id": None,
                              "subscribed_topic_names": ["t"]})
    assert heartbeat("m" * 36).error_code == 0
    refused = heartbeat("conformance-fd6a37ba-246a-4f59-b0c7-5ecb813532a2")  # a classic member's id
    assert (refused.error_code, refused.error_message) == (E.INVALID_REQUEST, None)


def test_zstd_before_produce_v7_beside_a_later_entry_of_its_partition_is_the_answer():
    # Kafka reads the request into a map by partition: the later entry's batch is appended,
    # and the zstd refusal of the earlier one answers (seed 7009)
    from kipper.protocol import compression, records

    b = InProcessBroker()
    b.state.topics.create("t", 1)
    zstd = records.build_batch([(b"k", b"v", 1)], compression_type=compression.ZSTD)
    plain = records.build_batch([(b"k", b"w", 1)])
    answer = b.call(0, 3, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": zstd}, {"index": 0, "records": plain}]}]})
    row = answer.responses[0].partition_responses[0]
    assert (row.error_code, row.base_offset) == (E.UNSUPPORTED_COMPRESSION_TYPE, -1)
    assert b.state.topics.get("t").partitions[0].log_end_offset == 1


def test_a_batch_marked_log_append_time_is_refused_without_timestamps_or_on_a_log_append_time_topic():
    from kipper.protocol import batch as b, records

    broker = InProcessBroker()
    broker.state.topics.create("c", 1)
    broker.state.topics.create("l", 1, configs={"message.timestamp.type": "LogAppendTime"})

    def produce(topic: str, timestamp: int):
        data = bytearray(records.build_batch([(b"k0", b"v0", timestamp), (b"k1", b"v1", timestamp)]))
        data[21:23] = (int.from_bytes(data[21:23], "big") | b.TIMESTAMP_TYPE).to_bytes(2, "big")
        b.write_crc(data)
        return broker.call(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": topic, "partition_data": [{"index": 0, "records": bytes(data)}]}]}).responses[0].partition_responses[0]
    refused = produce("c", -1)
    assert refused.error_code == E.INVALID_TIMESTAMP and [e.batch_index for e in refused.record_errors] == [0, 1]
    assert refused.record_errors[0].batch_index_error_message == (
        "Invalid timestamp type in message DefaultRecord(offset=0, timestamp=-1, key=2 bytes, value=2 bytes). "
        "Producer should not set timestamp type to LogAppendTime.")
    assert produce("c", broker.now).error_code == 0  # rewritten as CreateTime
    assert produce("l", broker.now).error_code == E.INVALID_TIMESTAMP


def test_describe_share_group_offsets_answers_a_topic_named_twice_once():
    b = InProcessBroker(**{"group.share.enable": "true"})
    b.state.topics.create("t", 1)
    answer = b.call(90, 0, {"groups": [{"group_id": "g", "topics": [
        {"topic_name": "missing", "partitions": [0]}, {"topic_name": "t", "partitions": [0]},
        {"topic_name": "t", "partitions": [0]}, {"topic_name": "missing", "partitions": [0]}]}]})
    names = [t.topic_name for t in answer.groups[0].topics]
    assert sorted(names) == ["missing", "missing", "t"]  # (seed 8003: the one there is, once)


def test_a_fetch_of_max_bytes_0_gets_the_first_batch_alone():
    from kipper.protocol import records

    b = InProcessBroker()
    b.state.topics.create("t", 1)
    for i in range(2):
        b.produce("t", 0, [(b"k", b"v%d" % i, 1_700_000_000_000)], version=3)

    def batches(max_bytes: int) -> int:
        answer = b.call(1, 4, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes,
                               "isolation_level": 0, "topics": [{"topic": "t", "partitions": [
                                   {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})
        return len(records.decode_all(bytes(answer.responses[0].partitions[0].records or b"")))
    assert (batches(0), batches(1 << 20)) == (1, 2)  # (seed 8004)


def test_a_user_upserted_again_is_a_duplicate_before_its_mechanism_is_read():
    b = InProcessBroker()
    answer = b.call(51, 0, {"deletions": [], "upsertions": [
        {"name": "u0", "mechanism": 1, "iterations": 8192, "salt": b"\x00", "salted_password": b"\x00\x01\x02\x03\x04"},
        {"name": "u0", "mechanism": 3, "iterations": 4096, "salt": b"\x01", "salted_password": b"\x01"},
        {"name": "u1", "mechanism": 3, "iterations": 4096, "salt": b"\x01", "salted_password": b"\x01"},
        {"name": "u1", "mechanism": 1, "iterations": 4096, "salt": b"\x01", "salted_password": b"\x01"}]})
    codes = {r.user: r.error_code for r in answer.results}
    assert codes == {"u0": E.DUPLICATE_RESOURCE, "u1": E.UNSUPPORTED_SASL_MECHANISM}  # (seed 8012)


def test_an_empty_classic_group_holds_its_id_against_a_share_group():
    b = InProcessBroker(**{"group.share.enable": "true"})
    b.state.topics.create("t", 1)
    refused = b.call(JOIN_GROUP, 1, {"group_id": "g", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000,
                                     "member_id": "", "protocol_type": "", "protocols": []})
    assert refused.error_code == E.INCONSISTENT_GROUP_PROTOCOL  # (the group is made first, as on Kafka)
    answer = b.call(76, 1, {"group_id": "g", "member_id": "m" * 22, "member_epoch": 0, "rack_id": None,
                            "subscribed_topic_names": ["t"]})
    assert (answer.error_code, answer.error_message) == (E.GROUP_ID_NOT_FOUND, "Group g is not a share group.")


def test_a_broker_describes_no_config_named_retention_ms():
    # kipper's retention.ms / retention.bytes keys are log.retention.* under topic config names:
    # Kafka's broker has none by those names (seed 8027)
    b = InProcessBroker()
    asked = b.call(32, 1, {"resources": [{"resource_type": 4, "resource_name": "1",
                                          "configuration_keys": ["retention.ms", "log.retention.ms"]}],
                           "include_synonyms": False})
    assert [c.name for c in asked.results[0].configs] == ["log.retention.ms"]
