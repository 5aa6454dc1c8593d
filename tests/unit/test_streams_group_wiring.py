"""Streams groups inside a whole broker, without sockets: their records in
``__consumer_offsets`` and the replay that rebuilds them, one group id being one kind of
group, and OffsetCommit/ListGroups/DescribeGroups/DeleteGroups/StreamsGroupDescribe
treating streams groups as Kafka does."""

from __future__ import annotations

from construct import Container

from kipper.broker.config import load
from kipper.broker.context import RequestContext, Session
from kipper.broker.groups.journal import OFFSETS_TOPIC
from kipper.broker.groups.streams import StreamsGroupCoordinator, StreamsGroupSettings
from kipper.broker.handlers.groups import handle_delete_groups, handle_describe_groups, handle_list_groups
from kipper.broker.handlers.offsets import handle_offset_commit
from kipper.broker.handlers.streams_group import handle_streams_group_describe, handle_streams_group_heartbeat
from kipper.broker.server import open_engines
from kipper.protocol import records
from kipper.protocol import streams_records as sr
from kipper.protocol.errors import ErrorCode
from tests.support.streams_member import Member, make, settle, wire, word_count
from tests.unit.test_consumer_group_wiring import join_classic, join_consumer


def broker(**overrides):
    state = open_engines(load(overrides={"group.streams.initial.rebalance.delay.ms": "0",
                                         "offsets.topic.num.partitions": "1", **overrides}), clock=lambda: 0)
    state.topics.create("words", 3)
    return state


def ctx(state, api_key: int, version: int) -> RequestContext:
    return RequestContext(state, Session("PLAINTEXT", "127.0.0.1:5555"), api_key, version, 1, "cid")


def heartbeat(state, member="m1", epoch=0, group="app", **kw):
    body = {"group_id": group, "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": -1,
            "rebalance_timeout_ms": 30000 if epoch == 0 else -1, "topology": word_count() if epoch == 0 else None,
            "process_id": "p1", "active_tasks": [], "standby_tasks": [], "warmup_tasks": [], **kw}
    return handle_streams_group_heartbeat(wire(body), ctx(state, 88, 1))


def join(state, member="m1") -> int:
    """Join, then heartbeat once the internal topics exist; the member's epoch."""
    epoch = heartbeat(state, member)["member_epoch"]
    body = heartbeat(state, member, epoch=epoch, topology=None, active_tasks=None, standby_tasks=None,
                     warmup_tasks=None)
    assert body["error_code"] == 0 and body["status"] == []
    return body["member_epoch"]


def snapshot(group) -> tuple:
    return (group.group_epoch, group.assignment_epoch, group.metadata_hash, group.validated_topology_epoch,
            group.last_assignment_configs, group.topology, group.members, group.target, group.static_members,
            group.active_owner, group.standby_owners)


def test_replaying_the_written_records_rebuilds_every_group_as_it_was():
    written = []
    c, topics = make(journal=lambda gid, recs, now: written.extend(r.encoded() for r in recs),
                     num_standby_replicas=1)
    members = [Member(c, "a", instance="i-a"), Member(c, "b"), Member(c, "c")]
    now = settle(members)
    members[1].leave(now)
    members[0].leave(now + 1, epoch=-2)
    settle(members[2:], now + 2)
    again = StreamsGroupCoordinator(StreamsGroupSettings(), topics)
    for key, value in written:
        again.replay(key, value)
    assert set(again.groups) == {"app"}
    assert snapshot(again.groups["app"]) == snapshot(c.groups["app"])
    assert again.groups["app"].state == c.groups["app"].state


def test_a_heartbeat_writes_kafkas_records_to_the_groups_partition_of_consumer_offsets():
    state = broker()
    assert heartbeat(state)["error_code"] == 0
    partition = state.topics.get(OFFSETS_TOPIC).partitions[0]
    types = []
    for _, data in partition.batches_from(0):
        for rec in records.decode_batch(data).records:
            record_type, key = sr.decode_key(rec.key)
            assert key.group_id == "app"
            types.append(record_type)
    # the member, the topology and the epoch; the internal topics to create were created, so the
    # next heartbeat moves on; then the target (the member's, its metadata) and its assignment
    assert types == [sr.MEMBER_METADATA, sr.TOPOLOGY, sr.METADATA, sr.TARGET_MEMBER, sr.TARGET_METADATA,
                     sr.CURRENT_ASSIGNMENT]
    assert state.topics.get("app-counts-changelog").configs == {"cleanup.policy": "compact"}


def test_the_groups_of_consumer_offsets_come_back_after_a_replay():
    state = broker()
    heartbeat(state)
    body = heartbeat(state, epoch=2, active_tasks=None, standby_tasks=None, warmup_tasks=None)
    assert body["error_code"] == 0
    fresh = StreamsGroupCoordinator(StreamsGroupSettings(), state.topics)
    counts = state.groups.journal.replay(state.offsets, state.groups.classic, 0, streams=fresh.replay)
    assert counts["records"] >= 6
    assert snapshot(fresh.groups["app"]) == snapshot(state.groups.streams.groups["app"])


def test_a_group_id_is_one_kind_of_group():
    state = broker()
    join_classic(state, "classic")
    assert heartbeat(state, group="classic")["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    join_consumer(state, group="consumer")
    body = heartbeat(state, group="consumer")
    assert (body["error_code"], body["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                           "Group consumer is not a streams group.")
    heartbeat(state, group="app")
    assert join_consumer(state, group="app")["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    assert join_classic(state, "app")["error_code"] != 0


def test_a_streams_group_takes_the_id_of_an_empty_simple_group_and_keeps_its_offsets():
    state = broker()
    state.offsets.commit_all("app", [("words", 0, 7, -1, None)], 0)
    state.groups.ensure_simple_group("app")
    assert heartbeat(state)["error_code"] == 0
    assert state.groups.kind_of("app") == "streams" and "app" not in state.groups.classic.groups
    assert state.offsets.group_offsets("app")[("words", 0)].offset == 7


def test_list_describe_and_delete_see_a_streams_group():
    state = broker()
    join(state)
    rows = handle_list_groups(Container(states_filter=[], types_filter=["streams"]), ctx(state, 16, 5))["groups"]
    assert rows == [{"group_id": "app", "protocol_type": "streams", "group_state": "Stable", "group_type": "streams"}]
    described = handle_describe_groups(Container(groups=["app"], include_authorized_operations=False),
                                       ctx(state, 15, 5))["groups"][0]
    assert described["group_state"] == "Dead" and described["members"] == []
    out = handle_streams_group_describe(Container(group_ids=["app", "none"], include_authorized_operations=False,
                                                  include_topology_description=False), ctx(state, 89, 1))
    app, none = out["groups"]
    assert (app["group_state"], app["group_epoch"], app["assignment_epoch"], app["assignor_name"]) == (
        "Stable", 3, 3, "sticky")
    assert [s["subtopology_id"] for s in app["topology"]["subtopologies"]] == ["0", "1"]
    assert (none["error_code"], none["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group none not found.")
    deleted = handle_delete_groups(Container(groups_names=["app"]), ctx(state, 42, 2))["results"][0]
    assert deleted["error_code"] == ErrorCode.NON_EMPTY_GROUP
    heartbeat(state, epoch=-1, topology=None, active_tasks=None, standby_tasks=None, warmup_tasks=None)
    deleted = handle_delete_groups(Container(groups_names=["app"]), ctx(state, 42, 2))["results"][0]
    assert deleted["error_code"] == 0 and state.groups.kind_of("app") is None


def commit(state, member, epoch, partition=0, topic="words", version=9):
    req = Container(group_id="app", generation_id_or_member_epoch=epoch, member_id=member, group_instance_id=None,
                    retention_time_ms=-1, topics=[Container(name=topic, partitions=[Container(
                        partition_index=partition, committed_offset=1, committed_leader_epoch=-1,
                        committed_metadata=None)])])
    return handle_offset_commit(req, ctx(state, 8, version))["topics"][0]["partitions"][0]["error_code"]


def test_offset_commits_are_checked_against_the_member_and_the_epoch_its_tasks_were_given_in():
    state = broker()
    epoch = join(state)
    assert commit(state, "m1", epoch) == 0
    assert commit(state, "m1", epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
    assert commit(state, "nobody", epoch) == ErrorCode.UNKNOWN_MEMBER_ID
    assert commit(state, "m1", epoch, version=8) == ErrorCode.UNSUPPORTED_VERSION
    group = state.groups.streams.groups["app"]
    assert group.members["m1"].assigned.active["0"] == {0: epoch, 1: epoch, 2: epoch}
    # a second member joins: m1 moves to a newer epoch and may still commit with the one it
    # had for the tasks it kept, not with an older one
    heartbeat(state, "m2")
    body = heartbeat(state, "m1", epoch=epoch, topology=None, active_tasks=[
        {"subtopology_id": "0", "partitions": [0, 1, 2]}, {"subtopology_id": "1", "partitions": [0, 1, 2]}],
        standby_tasks=[], warmup_tasks=[])
    kept = {(t["subtopology_id"], p) for t in body["active_tasks"] for p in t["partitions"]}
    body = heartbeat(state, "m1", epoch=epoch, topology=None, active_tasks=[
        {"subtopology_id": sid, "partitions": [p for s, p in sorted(kept) if s == sid]} for sid in ("0", "1")],
        standby_tasks=[], warmup_tasks=[])
    assert body["member_epoch"] > epoch
    partition = min(p for s, p in kept if s == "0")
    assert commit(state, "m1", epoch, partition) == 0
    assert commit(state, "m1", epoch - 1, partition) == ErrorCode.STALE_MEMBER_EPOCH


def test_without_the_streams_version_feature_both_apis_answer_unsupported_version():
    engines = state = broker(**{"initial.feature.levels": "streams.version=0"})
    body = handle_streams_group_heartbeat(wire({"group_id": "app", "member_id": "m1", "member_epoch": 0,
                                                "endpoint_information_epoch": -1, "rebalance_timeout_ms": 1,
                                                "topology": word_count()}), ctx(engines, 88, 1))
    assert (body["error_code"], body["error_message"]) == (ErrorCode.UNSUPPORTED_VERSION, None)
    out = handle_streams_group_describe(Container(group_ids=["app"], include_authorized_operations=False,
                                                  include_topology_description=False), ctx(engines, 89, 1))
    assert [g["error_code"] for g in out["groups"]] == [ErrorCode.UNSUPPORTED_VERSION]
    assert not state.groups.streams.groups


def test_broker_and_group_configs_are_checked_as_kafka_checks_them():
    import pytest

    from kipper.broker.config_values import ConfigError
    from kipper.broker.groups.configs import GroupConfigs

    with pytest.raises(ConfigError, match="group.streams.heartbeat.interval.ms: 20000 is outside"):
        load(overrides={"group.streams.heartbeat.interval.ms": "20000"})
    with pytest.raises(ConfigError, match="num.standby.replicas must be less than or equal"):
        load(overrides={"group.streams.num.standby.replicas": "3"})
    configs = GroupConfigs(broker=load(overrides={}))
    assert configs.check_all({"streams.num.standby.replicas": "3"}) == (
        "streams.num.standby.replicas must be less than or equal to 2")  # Kafka 4.4's words: the bound's value
    assert configs.check_all({"streams.session.timeout.ms": "1000"}) == (
        "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive.")
    assert configs.check_all({"streams.num.standby.replicas": "1"}) is None


def test_transactional_commits_of_a_member_are_checked_too_and_a_stale_epoch_is_an_illegal_generation():
    state = broker()
    epoch = join(state)
    groups = state.groups
    assert groups.validate_txn_commit("app", "m1", epoch, api_version=4, partitions=[("words", 0)]) == 0
    assert groups.validate_txn_commit("app", "", -1, api_version=4) == 0  # an older client says nothing
    assert groups.validate_txn_commit("app", "m1", epoch + 1, api_version=4,
                                      partitions=[("words", 0)]) == ErrorCode.ILLEGAL_GENERATION
    assert groups.validate_txn_commit("app", "m1", epoch + 1, api_version=6,
                                      partitions=[("words", 0)]) == ErrorCode.STALE_MEMBER_EPOCH
    assert groups.validate_txn_commit("app", "nobody", epoch, api_version=4) == ErrorCode.UNKNOWN_MEMBER_ID
