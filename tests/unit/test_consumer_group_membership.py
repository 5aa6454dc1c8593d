"""KIP-848 consumer groups: subscriptions (names, regex, topics appearing later),
static members, offsets validation, describe and list, and the assignors."""

from __future__ import annotations

import uuid

from kipper.broker.groups.consumer.assignors import range_assignor, uniform
from kipper.protocol.errors import ErrorCode
from tests.unit.test_consumer_group_coordinator import SESSION, Client, make, request, settle


# --- subscriptions ------------------------------------------------------------------------

def test_a_topic_created_after_the_subscription_is_assigned_on_the_next_heartbeat():
    c, topics = make()
    a = Client(c, "a", topics=("t", "later"))
    a.beat()
    epoch = a.epoch
    assert a.partitions() == {0, 1, 2, 3}
    topics.create("later", 2)
    a.beat()
    later = topics.get("later").topic_id
    assert a.epoch == epoch + 1, "a metadata change bumps the group epoch"
    assert a.owned[later] == {0, 1}


def test_a_deleted_topic_is_revoked():
    c, topics = make()
    topics.create("gone", 2)
    gone = topics.get("gone").topic_id
    a = Client(c, "a", topics=("t", "gone"))
    a.beat()
    assert gone in a.owned
    topics.delete("gone")
    a.beat()
    assert gone not in a.owned and a.partitions() == {0, 1, 2, 3}


def test_a_regex_subscription_matches_whole_topic_names_including_later_ones():
    c, topics = make()
    topics.create("orders-eu", 1)
    topics.create("orders-eu-dlq", 1)
    a = Client(c, "a", topics=())
    resp = c.heartbeat(request(member="a", topics=[], regex=r"orders-[a-z]+"), version=1,
                       client_id="x", client_host="/h", now=0)
    assert resp["error_code"] == 0
    names = {topics.by_id(tp["topic_id"]).name for tp in resp["assignment"]["topic_partitions"]}
    assert names == {"orders-eu"}, "orders-eu-dlq does not match as a whole"
    a.epoch = resp["member_epoch"]
    topics.create("orders-us", 1)
    a.beat()
    assert topics.get("orders-us").topic_id in a.owned


def test_changing_the_subscription_bumps_the_group_epoch_and_revokes_the_dropped_topic():
    c, topics = make()
    topics.create("u", 2)
    u = topics.get("u").topic_id
    a = Client(c, "a", topics=("t", "u"))
    a.beat()
    epoch = a.epoch
    resp = c.heartbeat(request(member="a", epoch=a.epoch, topics=["u"], owned=a.owned,
                               rebalance_timeout=-1), version=1, client_id="x", client_host="/h", now=0)
    assert c.groups["g"].group_epoch == epoch + 1
    assert resp["member_epoch"] == epoch, "it keeps its epoch until it has revoked t"
    assert [tp["topic_id"] for tp in resp["assignment"]["topic_partitions"]] == [u]
    resp = c.heartbeat(request(member="a", epoch=epoch, topics=None, owned={u: {0, 1}},
                               rebalance_timeout=-1), version=1, client_id="x", client_host="/h", now=0)
    assert resp["member_epoch"] == epoch + 1


# --- static members ---------------------------------------------------------------------

def test_a_static_member_that_leaves_for_a_while_gets_its_partitions_back_without_a_rebalance():
    c, _ = make()
    a = Client(c, "a1", instance="i-a")
    b = Client(c, "b", instance="i-b")
    settle([a, b])
    mine, epoch = a.partitions(), c.groups["g"].group_epoch
    resp = a.leave(epoch=-2)
    assert resp["error_code"] == 0 and resp["member_epoch"] == -2
    b.beat()
    assert len(b.partitions()) == 2, "the partitions wait for the static member"
    back = Client(c, "a2", instance="i-a")  # restarted process, new member id
    resp = back.beat()
    assert resp["error_code"] == 0 and back.partitions() == mine
    assert c.groups["g"].group_epoch == epoch, "no rebalance"
    assert set(c.groups["g"].members) == {"a2", "b"}


def test_a_static_instance_id_still_in_use_cannot_join_again():
    c, _ = make()
    Client(c, "a1", instance="i-a").beat()
    resp = Client(c, "a2", instance="i-a").beat()
    assert resp["error_code"] == ErrorCode.UNRELEASED_INSTANCE_ID


def test_a_heartbeat_for_a_static_instance_from_another_member_id_is_fenced():
    c, _ = make()
    a = Client(c, "a1", instance="i-a")
    a.beat()
    resp = c.heartbeat(request(member="other", epoch=a.epoch, topics=None, rebalance_timeout=-1,
                               instance="i-a"), version=1, client_id="x", client_host="/h", now=0)
    assert resp["error_code"] == ErrorCode.FENCED_INSTANCE_ID


def test_a_static_member_gone_past_its_session_loses_its_partitions():
    c, _ = make()
    a, b = Client(c, "a", instance="i-a"), Client(c, "b")
    settle([a, b])
    a.leave(epoch=-2)
    b.beat(now=SESSION - 1)
    c.tick(SESSION)
    assert "a" not in c.groups["g"].members
    settle([b], now=SESSION)
    assert b.partitions() == {0, 1, 2, 3}


# --- offsets ------------------------------------------------------------------------------

def test_offset_commit_needs_the_current_member_epoch():
    c, _ = make()
    a, b = Client(c, "a"), Client(c, "b")
    settle([a, b])
    v = c.validate_commit
    assert v("g", "a", a.epoch, api_version=9) == ErrorCode.NONE
    assert v("g", "a", a.epoch - 1, api_version=9) == ErrorCode.STALE_MEMBER_EPOCH
    assert v("g", "zz", a.epoch, api_version=9) == ErrorCode.UNKNOWN_MEMBER_ID
    assert v("g", "a", a.epoch, api_version=8) == ErrorCode.UNSUPPORTED_VERSION
    assert v("g", "", -1, api_version=9) == ErrorCode.UNKNOWN_MEMBER_ID, "not while members are in it"
    a.leave()
    b.leave()
    assert v("g", "", -1, api_version=7) == ErrorCode.NONE, "an admin commit into the empty group"


def test_offset_fetch_by_a_member_is_checked_and_by_an_admin_is_not():
    c, _ = make()
    a = Client(c, "a")
    a.beat()
    assert c.validate_fetch("g", "a", a.epoch) == ErrorCode.NONE
    assert c.validate_fetch("g", "a", a.epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
    assert c.validate_fetch("g", "zz", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert c.validate_fetch("g", None, -1) == ErrorCode.NONE


# --- describe and list ----------------------------------------------------------------------

def test_describe_shows_epochs_members_and_their_current_and_target_assignments():
    c, topics = make()
    a, b = Client(c, "a"), Client(c, "b")
    a.beat()
    b.beat()
    d = c.describe("g")
    assert (d["error_code"], d["group_state"], d["group_epoch"], d["assignment_epoch"]) == (0, "Reconciling", 2, 2)
    assert d["assignor_name"] == "uniform"
    members = {m["member_id"]: m for m in d["members"]}
    assert members["a"]["member_epoch"] == 1 and members["a"]["subscribed_topic_names"] == ["t"]
    current = members["a"]["assignment"]["topic_partitions"][0]
    assert current["topic_name"] == "t" and current["partitions"] == [0, 1, 2, 3]
    assert len(members["a"]["target_assignment"]["topic_partitions"][0]["partitions"]) == 2
    missing = c.describe("nope")
    # Kafka's answer for a group it does not have (tests/conformance, issue 29): no state, epochs 0
    assert missing["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND and missing["group_state"] == ""
    assert (missing["group_epoch"], missing["assignment_epoch"]) == (0, 0)


def test_list_groups_reports_consumer_type_and_state():
    c, _ = make()
    a = Client(c, "a")
    a.beat()
    assert c.list_groups() == [{"group_id": "g", "protocol_type": "consumer", "group_state": "Stable",
                                "group_type": "consumer"}]
    a.leave()
    assert c.list_groups()[0]["group_state"] == "Empty"


# --- assignors ------------------------------------------------------------------------------

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


def count(assignment: dict) -> int:
    return sum(len(parts) for parts in assignment.values())


def test_uniform_spreads_seven_partitions_over_three_members_three_two_two():
    members = {m: frozenset({T1}) for m in ("a", "b", "c")}
    out = uniform(members, {T1: 7}, {})
    assert sorted(count(a) for a in out.values()) == [2, 2, 3]
    assert set().union(*(a[T1] for a in out.values())) == set(range(7))


def test_uniform_keeps_partitions_where_they_were_when_a_member_joins():
    before = uniform({"a": frozenset({T1}), "b": frozenset({T1})}, {T1: 6}, {})
    after = uniform({m: frozenset({T1}) for m in ("a", "b", "c")}, {T1: 6}, before)
    for m in ("a", "b"):
        assert after[m][T1] <= before[m][T1], "an existing member only gives partitions up"
    assert count(after["c"]) == 2


def test_uniform_with_different_subscriptions_balances_within_what_each_may_take():
    members = {"a": frozenset({T1, T2}), "b": frozenset({T1}), "c": frozenset({T2})}
    out = uniform(members, {T1: 4, T2: 2}, {})
    assert T2 not in out["b"] and T1 not in out["c"]
    assert sorted(count(a) for a in out.values()) == [2, 2, 2]


def test_range_gives_each_subscriber_a_contiguous_range_per_topic():
    members = {"a": frozenset({T1, T2}), "b": frozenset({T1, T2})}
    out = range_assignor(members, {T1: 5, T2: 2}, {})
    assert out["a"] == {T1: frozenset({0, 1, 2}), T2: frozenset({0})}
    assert out["b"] == {T1: frozenset({3, 4}), T2: frozenset({1})}
