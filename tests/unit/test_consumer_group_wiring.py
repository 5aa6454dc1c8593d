"""KIP-848 consumer groups inside a whole broker (open_engines), without sockets: one group id is
one kind of group, and OffsetCommit/OffsetFetch/ListGroups/DescribeGroups treat
consumer groups the way Kafka does."""

from __future__ import annotations

from construct import Container

from kipper.broker.config import load
from kipper.broker.handlers.groups import handle_describe_groups, handle_list_groups
from kipper.broker.handlers.offsets import handle_offset_commit, handle_offset_fetch
from kipper.broker.server import open_engines
from kipper.broker.context import RequestContext, Session
from kipper.protocol.errors import ErrorCode
from tests.unit.test_consumer_group_coordinator import request


def broker():
    state = open_engines(load(overrides={"group.consumer.session.timeout.ms": "10000",
                                         "group.consumer.min.session.timeout.ms": "1000"}),
                         clock=lambda: 0)
    state.topics.create("t", 2)
    return state


def ctx(state, api_key: int, version: int) -> RequestContext:
    return RequestContext(state, Session("PLAINTEXT", "127.0.0.1:5555"), api_key, version, 1, "cid")


def join_consumer(state, group="g", member="m1"):
    return state.groups.consumer_heartbeat(request(group=group, member=member), version=1,
                                           client_id="cid", client_host="/127.0.0.1", now=0)


def join_classic(state, group):
    out = []
    req = Container(group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
                    group_instance_id=None, protocol_type="consumer",
                    protocols=[Container(name="range", metadata=b"")])
    state.groups.join(req, version=3, client_id="cid", client_host="/h", now=0, reply=out.append)
    return out[0]


def commit(state, group, member, epoch, version=9, offset=5):
    req = Container(group_id=group, generation_id_or_member_epoch=epoch, member_id=member,
                    group_instance_id=None, retention_time_ms=-1,
                    topics=[Container(name="t", partitions=[Container(
                        partition_index=0, committed_offset=offset, committed_leader_epoch=-1,
                        committed_metadata=None)])])
    out = handle_offset_commit(req, ctx(state, 8, version))
    return out["topics"][0]["partitions"][0]["error_code"]


def fetch(state, group, member, epoch):
    req = Container(groups=[Container(group_id=group, member_id=member, member_epoch=epoch,
                                      topics=[Container(name="t", partition_indexes=[0])])],
                    require_stable=False)
    return handle_offset_fetch(req, ctx(state, 9, 9))["groups"][0]


def test_offset_commit_into_a_consumer_group_checks_the_member_epoch():
    state = broker()
    epoch = join_consumer(state)["member_epoch"]
    assert commit(state, "g", "m1", epoch) == ErrorCode.NONE
    assert state.offsets.get("g", "t", 0).offset == 5
    assert commit(state, "g", "m1", epoch + 1, offset=9) == ErrorCode.STALE_MEMBER_EPOCH
    assert commit(state, "g", "nobody", epoch, offset=9) == ErrorCode.UNKNOWN_MEMBER_ID
    assert commit(state, "g", "m1", epoch, version=8, offset=9) == ErrorCode.UNSUPPORTED_VERSION
    assert state.offsets.get("g", "t", 0).offset == 5
    assert "g" not in state.groups.classic.groups, "no classic (simple) group is made up for it"


def test_offset_fetch_by_a_stale_member_fails_the_group_and_an_admin_fetch_does_not():
    state = broker()
    epoch = join_consumer(state)["member_epoch"]
    commit(state, "g", "m1", epoch)
    ok = fetch(state, "g", "m1", epoch)
    assert ok["error_code"] == 0 and ok["topics"][0]["partitions"][0]["committed_offset"] == 5
    stale = fetch(state, "g", "m1", epoch - 1)
    assert stale["error_code"] == ErrorCode.STALE_MEMBER_EPOCH and stale["topics"] == []
    admin = fetch(state, "g", None, -1)
    assert admin["error_code"] == 0 and admin["topics"][0]["partitions"][0]["committed_offset"] == 5


def test_a_classic_group_with_members_keeps_its_id_from_consumer_groups_and_back():
    state = broker()
    assert join_classic(state, "c")["error_code"] == 0  # v3: no member-id round trip
    resp = join_consumer(state, group="c")
    assert resp["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    assert resp["error_message"] == "Group c is not a consumer group."
    join_consumer(state, group="k")
    assert join_classic(state, "k")["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_a_consumer_group_takes_over_the_id_of_an_empty_simple_group_and_its_offsets():
    state = broker()
    assert commit(state, "g", "", -1, version=7) == ErrorCode.NONE  # a simple group
    assert "g" in state.groups.classic.groups
    assert join_consumer(state)["error_code"] == 0
    assert "g" not in state.groups.classic.groups and state.offsets.get("g", "t", 0).offset == 5


def test_an_empty_consumer_group_gives_its_id_to_a_classic_member():
    state = broker()
    state.groups.consumer_heartbeat(request(), version=1, client_id="c", client_host="/h", now=0)
    state.groups.consumer_heartbeat(request(epoch=-1, topics=None, rebalance_timeout=-1), version=1,
                                    client_id="c", client_host="/h", now=0)
    assert join_classic(state, "g")["error_code"] == 0
    assert not state.groups.consumer.owns("g")


def test_a_share_group_cannot_take_a_consumer_group_id_nor_the_reverse():
    state = broker()
    join_consumer(state, group="k")
    share_req = Container(group_id="k", member_id="s1", member_epoch=0, rack_id=None,
                          subscribed_topic_names=["t"])
    assert state.groups.share_heartbeat(share_req, client_id="c", client_host="/h", now=0)["error_code"] \
        == ErrorCode.GROUP_ID_NOT_FOUND
    share_req.group_id = "s"
    assert state.groups.share_heartbeat(share_req, client_id="c", client_host="/h", now=0)["error_code"] == 0
    assert join_consumer(state, group="s")["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


def test_a_classic_member_cannot_take_a_share_group_id():
    state = broker()
    share_req = Container(group_id="s", member_id="s1", member_epoch=0, rack_id=None,
                          subscribed_topic_names=["t"])
    assert state.groups.share_heartbeat(share_req, client_id="c", client_host="/h", now=0)["error_code"] == 0
    assert join_classic(state, "s")["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert "s" not in state.groups.classic.groups


def test_list_groups_shows_consumer_groups_and_describe_groups_calls_them_dead():
    state = broker()
    join_consumer(state, group="k")
    listed = handle_list_groups(Container(states_filter=[], types_filter=["consumer"]), ctx(state, 16, 5))
    assert listed["groups"] == [{"group_id": "k", "protocol_type": "consumer", "group_state": "Stable",
                                 "group_type": "consumer"}]
    classic_only = handle_list_groups(Container(states_filter=[], types_filter=["classic"]), ctx(state, 16, 5))
    assert classic_only["groups"] == []
    described = handle_describe_groups(Container(groups=["k"], include_authorized_operations=False),
                                       ctx(state, 15, 5))["groups"][0]
    # what Kafka answers below DescribeGroups v6 for a group that is not classic
    assert (described["error_code"], described["group_state"], described["members"]) == (0, "Dead", [])


def test_describe_groups_v6_answers_group_id_not_found_for_unknown_and_non_classic_groups():
    # KIP-1043, as Kafka 4.4's GroupMetadataManager.describeGroups; Kafka's Admin then raises
    # GroupIdNotFoundException, which kafka-consumer-groups --describe prints (issue 30)
    state = broker()
    join_consumer(state, group="k")
    described = handle_describe_groups(Container(groups=["k", "nobody"], include_authorized_operations=True),
                                       ctx(state, 15, 6))["groups"]
    assert [(d["group_id"], d["error_code"], d["group_state"], d["error_message"]) for d in described] == [
        ("k", ErrorCode.GROUP_ID_NOT_FOUND, "Dead", "Group k is not a classic group."),
        ("nobody", ErrorCode.GROUP_ID_NOT_FOUND, "Dead", "Group nobody not found.")]
    # asked for, the operations are left "not provided" on an error, as Kafka's KafkaApis does
    assert {d["authorized_operations"] for d in described} == {-2147483648}


def test_a_consumer_heartbeat_kafka_refuses_converts_no_classic_group():
    from tests.conformance.scenarios.kit import subscription
    state = broker()
    req = Container(group_id="c", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
                    group_instance_id=None, protocol_type="consumer",
                    protocols=[Container(name="range", metadata=subscription(["t"]))])
    state.groups.join(req, version=3, client_id="cid", client_host="/h", now=0, reply=lambda _: None)
    before = state.groups.classic.groups["c"].state
    refused = state.groups.consumer_heartbeat(request(group="c", topics=None), version=1, client_id="cid",
                                              client_host="/h", now=0)
    assert refused["error_message"] == "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
    assert state.groups.kind_of("c") == "classic" and state.groups.classic.groups["c"].state == before
    state.groups.consumer_heartbeat(request(group="c"), version=1, client_id="cid", client_host="/h", now=0)
    assert state.groups.kind_of("c") == "consumer"  # (a join Kafka takes converts it)
