"""Answers the conformance suite (tests/conformance, issue 29) found to differ from Apache
Kafka 4.4's, fixed in kipper; these hold without Kafka. Each states what Kafka answers."""

from __future__ import annotations

import pytest

from kipper.client.admin import NewTopic, create_topics, metadata
from kipper.client.blocking import BlockingConnection
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages import APIS

NO_ID = None


def _topic(conn, name, n_records=2):
    assert create_topics(conn, [NewTopic(name, 1, 1)], timeout_ms=5000).topics[0].error_code == 0
    if n_records:
        batch = records.build_batch([(b"k", b"v", 1_700_000_000_000 + i) for i in range(n_records)])
        conn.request(0, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": name, "partition_data": [{"index": 0, "records": batch}]}]}, version=9)
    return metadata(conn, [name]).topics[0].topic_id


def _fetch(conn, version, topic, topic_id, *, offset=0, partition=0, leader_epoch=-1):
    body = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "topics": [{"topic": topic, "topic_id": topic_id, "partitions": [
                {"partition": partition, "current_leader_epoch": leader_epoch, "fetch_offset": offset,
                 "last_fetched_epoch": -1, "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""}
    return conn.send_raw(APIS[1], version, body).responses[0].partitions[0]


def _list_offsets(conn, version, topic, timestamp, leader_epoch=-1):
    return conn.send_raw(APIS[2], version, {"replica_id": -1, "isolation_level": 0, "timeout_ms": 5000, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": leader_epoch,
                                        "timestamp": timestamp}]}]}).topics[0].partitions[0]


def test_fetch_out_of_range_reports_unknown_offsets_and_an_empty_aborted_list(conn, unique):
    topic_id = _topic(conn, f"oor-{unique}")
    p = _fetch(conn, 12, f"oor-{unique}", topic_id, offset=100)
    assert p.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert (p.high_watermark, p.last_stable_offset, p.log_start_offset) == (-1, -1, -1)
    assert p.aborted_transactions is None  # null for a failed read, [] for an unknown partition
    assert list(_fetch(conn, 12, f"oor-{unique}", topic_id, partition=4).aborted_transactions) == []


@pytest.mark.parametrize("version", [4, 7, 8])
def test_fetch_versions_without_a_leader_epoch_field_still_read(conn, unique, version):
    # the KIP-320 check must skip versions that carry no current_leader_epoch (before v9)
    topic_id = _topic(conn, f"old-{unique}")
    p = _fetch(conn, version, f"old-{unique}", topic_id)
    assert p.error_code == ErrorCode.NONE and p.high_watermark == 2
    assert _list_offsets(conn, 1, f"old-{unique}", -1).offset == 2


def test_fetch_of_an_unknown_partition_of_a_topic_named_by_id_is_unknown_topic_or_partition(conn, unique):
    topic_id = _topic(conn, f"part-{unique}", 0)
    p = _fetch(conn, 17, None, topic_id, partition=3)
    assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # the topic id is known: not UNKNOWN_TOPIC_ID


def test_a_leader_epoch_ahead_of_the_leaders_is_unknown_leader_epoch(conn, unique):
    topic_id = _topic(conn, f"epoch-{unique}")
    assert _fetch(conn, 12, f"epoch-{unique}", topic_id, leader_epoch=5).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert _fetch(conn, 12, f"epoch-{unique}", topic_id, leader_epoch=0).error_code == ErrorCode.NONE
    assert _list_offsets(conn, 7, f"epoch-{unique}", -1, 5).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH


def test_list_offsets_max_timestamp_needs_v7(conn, unique):
    _topic(conn, f"maxts-{unique}")
    old = _list_offsets(conn, 6, f"maxts-{unique}", -3)
    assert (old.error_code, old.offset) == (ErrorCode.UNSUPPORTED_VERSION, -1)
    new = _list_offsets(conn, 7, f"maxts-{unique}", -3)
    assert (new.error_code, new.offset) == (ErrorCode.NONE, 1)


def test_list_offsets_that_finds_nothing_has_no_leader_epoch(conn, unique):
    _topic(conn, f"none-{unique}")
    p = _list_offsets(conn, 7, f"none-{unique}", 1_800_000_000_000)
    assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (0, -1, -1, -1)


def test_a_join_that_needs_a_member_id_has_a_null_protocol_name(conn, unique):
    resp = conn.send_raw(APIS[11], 7, {"group_id": f"g-{unique}", "session_timeout_ms": 30000,
                                       "rebalance_timeout_ms": 30000, "member_id": "", "group_instance_id": None,
                                       "protocol_type": "consumer",
                                       "protocols": [{"name": "range", "metadata": b"\0\0\0\0\0\0\xff\xff\xff\xff"}]})
    assert resp.error_code == ErrorCode.MEMBER_ID_REQUIRED
    assert resp.protocol_name is None


@pytest.mark.parametrize("durable", [False, True])
def test_stored_batches_carry_the_leader_epoch_as_kafka_stamps_it(tmp_path, unique, durable):
    # Kafka's leader writes its partition leader epoch (0 here) into every batch it appends;
    # producers send -1. The CRC does not cover the field, so the batch stays valid.
    from kipper.protocol.records import decode_all
    from tests.support.broker import make_broker

    overrides = {"log.dirs": str(tmp_path / "logs")} if durable else {}
    with make_broker(overrides) as b, BlockingConnection("127.0.0.1", b.port) as c:
        c.negotiate()
        topic_id = _topic(c, f"epoch-{unique}", 3)
        stored = decode_all(bytes(_fetch(c, 12, f"epoch-{unique}", topic_id).records), verify_crc=True)
        assert [x.header.partition_leader_epoch for x in stored] == [0]


@pytest.mark.parametrize("api_key,version", [(69, 0), (77, 1)])
def test_describing_a_group_that_does_not_exist_answers_as_kafka(conn, unique, api_key, version):
    # ConsumerGroupDescribe / ShareGroupDescribe: no state, epochs 0, and no authorized
    # operations (INT_MIN) even when asked for them
    group = conn.send_raw(APIS[api_key], version, {"group_ids": [f"none-{unique}"],
                                                   "include_authorized_operations": True}).groups[0]
    assert group.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert (group.group_state, group.group_epoch, group.assignment_epoch) == ("", 0, 0)
    assert group.authorized_operations == -2**31


def test_describing_an_unknown_transactional_id_has_zero_ids(conn, unique):
    state = conn.send_raw(APIS[65], 0, {"transactional_ids": [f"none-{unique}"]}).transaction_states[0]
    assert state.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    assert (state.producer_id, state.producer_epoch, state.transaction_start_time_ms) == (0, 0, 0)


def test_a_topic_named_twice_in_one_create_gets_one_answer(conn, unique):
    topic = {"name": f"dup-{unique}", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
    answers = conn.send_raw(APIS[19], 7, {"topics": [topic, topic], "timeout_ms": 5000, "validate_only": False}).topics
    assert [(t.name, t.error_code) for t in answers] == [(f"dup-{unique}", ErrorCode.INVALID_REQUEST)]


def test_a_consumer_group_member_without_a_regex_is_described_with_an_empty_one(conn, unique):
    _topic(conn, f"cg-{unique}", 0)
    conn.send_raw(APIS[68], 0, {"group_id": f"g-{unique}", "member_id": f"m-{unique}", "member_epoch": 0,
                                "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000,
                                "subscribed_topic_names": [f"cg-{unique}"], "server_assignor": None,
                                "topic_partitions": []})
    group = conn.send_raw(APIS[69], 0, {"group_ids": [f"g-{unique}"], "include_authorized_operations": False}).groups[0]
    assert group.members[0].subscribed_topic_regex == ""  # Kafka's: not null


def test_a_join_with_a_member_id_to_a_group_that_does_not_exist_creates_no_group(conn, unique):
    group = f"ghost-{unique}"
    resp = conn.send_raw(APIS[11], 5, {"group_id": group, "session_timeout_ms": 30000,
                                       "rebalance_timeout_ms": 30000, "member_id": "made-up",
                                       "group_instance_id": None, "protocol_type": "consumer",
                                       "protocols": [{"name": "range", "metadata": b"\0\0\0\0\0\0\xff\xff\xff\xff"}]})
    assert resp.error_code == ErrorCode.UNKNOWN_MEMBER_ID
    listed = conn.send_raw(APIS[16], 4, {"states_filter": []}).groups
    assert group not in [g.group_id for g in listed]
