"""DeleteGroups, OffsetDelete and ListGroups for all three kinds of group, and the
classic-group cases real clients hit: a replaced static member is fenced
(FENCED_INSTANCE_ID), an EMPTY group takes commits with generation -1 whatever
the member id, a failed commit makes no group."""

from __future__ import annotations

import struct

from construct import Container

from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker
from tests.unit.test_consumer_group_coordinator import request

DELETE_GROUPS, OFFSET_DELETE, LIST_GROUPS, OFFSET_COMMIT = 42, 47, 16, 8


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocolSubscription v0: version, [topic], user data."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def join_classic(b, group, member_id="", instance=None, topics=("t",), protocol_type="consumer"):
    got = []
    req = Container(group_id=group, session_timeout_ms=10000, rebalance_timeout_ms=10000,
                    member_id=member_id, group_instance_id=instance, protocol_type=protocol_type,
                    protocols=[Container(name="range", metadata=subscription(*topics))])
    b.state.groups.join(req, version=5, client_id="c", client_host="/h", now=b.now, reply=got.append)
    return got[-1] if got else None


def stable_classic(b, group, instance=None, topics=("t",), protocol_type="consumer"):
    first = join_classic(b, group, instance=instance, topics=topics, protocol_type=protocol_type)
    mid = first["member_id"]
    if first["error_code"] == E.MEMBER_ID_REQUIRED:
        first = join_classic(b, group, mid, instance, topics, protocol_type)
    got = []
    b.state.groups.classic.sync(Container(group_id=group, member_id=mid, generation_id=first["generation_id"],
                                          group_instance_id=instance,
                                          assignments=[Container(member_id=mid, assignment=b"")]),
                                now=b.now, reply=got.append)
    return mid, first["generation_id"]


def commit(b, group, offset=5, member="", generation=-1, instance=None, topic="t"):
    body = {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "group_instance_id": instance, "topics": [{"name": topic, "partitions": [
                {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
                 "committed_metadata": None}]}]}
    return b.call(OFFSET_COMMIT, 9, body).topics[0].partitions[0].error_code


def delete_groups(b, *groups):
    return {r.group_id: r.error_code for r in b.call(DELETE_GROUPS, 2, {"groups_names": list(groups)}).results}


def offset_delete(b, group, topic="t", partitions=(0,)):
    body = {"group_id": group, "topics": [{"name": topic, "partitions": [
        {"partition_index": p} for p in partitions]}]}
    return b.call(OFFSET_DELETE, 0, body)


def broker():
    b = InProcessBroker(**{"group.consumer.session.timeout.ms": "10000",
                           "group.consumer.min.session.timeout.ms": "1000"})
    b.state.topics.create("t", 2)
    b.state.topics.create("u", 1)
    return b


# --- DeleteGroups --------------------------------------------------------------------------

def test_an_empty_group_is_deleted_with_its_offsets_and_one_with_members_is_not():
    b = broker()
    assert commit(b, "simple") == 0
    mid, gen = stable_classic(b, "busy")
    assert commit(b, "busy", member=mid, generation=gen) == 0
    assert delete_groups(b, "simple", "busy", "ghost", "") == {
        "simple": 0, "busy": E.NON_EMPTY_GROUP, "ghost": E.GROUP_ID_NOT_FOUND, "": E.GROUP_ID_NOT_FOUND}
    assert b.state.offsets.group_offsets("simple") == {}
    assert "simple" not in b.state.groups.classic.groups
    assert b.state.offsets.group_offsets("busy")


def test_the_empty_group_id_is_a_group_like_another():
    # Kafka: offsets committed for "" make a group "" that DeleteGroups deletes (answer 0)
    b = broker()
    assert commit(b, "") == 0
    assert delete_groups(b, "") == {"": 0}
    assert b.state.offsets.group_offsets("") == {}
    assert delete_groups(b, "") == {"": E.GROUP_ID_NOT_FOUND}


def test_delete_groups_answers_without_a_message_as_kafka():
    b = broker()
    mid, gen = stable_classic(b, "busy")
    rows = b.call(DELETE_GROUPS, 3, {"groups_names": ["busy", "ghost"]}).results
    assert [(r.error_code, r.error_message) for r in rows] == [(E.NON_EMPTY_GROUP, None), (E.GROUP_ID_NOT_FOUND, None)]


def test_a_consumer_group_is_deleted_once_its_members_are_gone():
    b = broker()
    joined = b.state.groups.consumer_heartbeat(request(group="kip848", member="m"), version=1,
                                               client_id="c", client_host="/h", now=b.now)
    assert delete_groups(b, "kip848") == {"kip848": E.NON_EMPTY_GROUP}
    b.state.groups.consumer_heartbeat(request(group="kip848", member="m", epoch=-1, topics=None,
                                              owned=None), version=1, client_id="c", client_host="/h",
                                      now=b.now)
    assert joined["error_code"] == 0
    assert delete_groups(b, "kip848") == {"kip848": 0}
    assert not b.state.groups.consumer.owns("kip848")


def test_deleting_a_share_group_takes_its_share_partition_state_along():
    b = broker()
    hb = Container(group_id="sg", member_id="m1", member_epoch=0, rack_id=None, subscribed_topic_names=["t"])
    b.state.groups.share_heartbeat(hb, client_id="c", client_host="/h", now=b.now)
    assert b.state.share.store.index
    assert delete_groups(b, "sg") == {"sg": E.NON_EMPTY_GROUP}
    b.state.groups.share_heartbeat(Container(group_id="sg", member_id="m1", member_epoch=-1, rack_id=None,
                                             subscribed_topic_names=None),
                                   client_id="c", client_host="/h", now=b.now)
    assert delete_groups(b, "sg") == {"sg": 0}
    assert all("sg" not in entries for entries in b.state.share.store.index.values())
    assert not [k for k in b.state.share.store.loaded if k[0] == "sg"]
    assert b.state.topics.partition("t", 0).start_hold is None
    assert b.state.groups.kind_of("sg") is None


# --- OffsetDelete --------------------------------------------------------------------------

def test_offsets_of_topics_the_group_no_longer_reads_are_deleted():
    b = broker()
    mid, gen = stable_classic(b, "g", topics=("t",))
    assert commit(b, "g", member=mid, generation=gen, topic="t") == 0
    assert commit(b, "g", member=mid, generation=gen, topic="u") == 0
    r = offset_delete(b, "g", "t")
    assert r.error_code == 0 and r.topics[0].partitions[0].error_code == E.GROUP_SUBSCRIBED_TO_TOPIC
    r = offset_delete(b, "g", "u")
    assert r.error_code == 0 and r.topics[0].partitions[0].error_code == 0
    assert set(b.state.offsets.group_offsets("g")) == {("t", 0)}


def test_offset_delete_refuses_unknown_and_non_consumer_groups():
    b = broker()
    assert offset_delete(b, "ghost").error_code == E.GROUP_ID_NOT_FOUND
    stable_classic(b, "connect", protocol_type="connect")
    assert offset_delete(b, "connect").error_code == E.NON_EMPTY_GROUP


def test_offset_delete_of_an_unknown_topic_or_partition_is_unknown_topic_or_partition():
    # Kafka: checked per partition before the group; the group's other offsets go as asked
    b = broker()
    assert commit(b, "g") == 0
    r = offset_delete(b, "g", "missing")
    assert (r.error_code, [p.error_code for p in r.topics[0].partitions]) == (0, [E.UNKNOWN_TOPIC_OR_PARTITION])
    r = offset_delete(b, "g", "t", partitions=(7, 0))
    assert [p.error_code for p in r.topics[0].partitions] == [E.UNKNOWN_TOPIC_OR_PARTITION, 0]
    assert b.state.offsets.group_offsets("g") == {}
    assert offset_delete(b, "ghost", "missing").error_code == E.GROUP_ID_NOT_FOUND


def test_offset_delete_naming_a_partition_twice_answers_both():
    b = broker()
    assert commit(b, "g") == 0
    r = offset_delete(b, "g", "t", partitions=(0, 0))
    assert (r.error_code, [p.error_code for p in r.topics[0].partitions]) == (0, [0, 0])
    assert b.state.offsets.group_offsets("g") == {}


def test_a_consumer_group_member_subscribing_by_regex_protects_its_topics():
    b = broker()
    b.state.groups.consumer_heartbeat(request(group="re", member="m", topics=(), regex="t.*"), version=1,
                                      client_id="c", client_host="/h", now=b.now)
    b.state.offsets.commit_all("re", [("t", 0, 1, -1, None), ("u", 0, 1, -1, None)], b.now)
    assert offset_delete(b, "re", "t").topics[0].partitions[0].error_code == E.GROUP_SUBSCRIBED_TO_TOPIC
    assert offset_delete(b, "re", "u").topics[0].partitions[0].error_code == 0


# --- ListGroups --------------------------------------------------------------------------------

def test_list_groups_filters_all_three_kinds_by_state_and_type_ignoring_case():
    b = broker()
    mid, _ = stable_classic(b, "classic")
    b.state.groups.consumer_heartbeat(request(group="consumer", member="m"), version=1, client_id="c",
                                      client_host="/h", now=b.now)
    b.state.groups.share_heartbeat(Container(group_id="share", member_id="m1", member_epoch=0,
                                             rack_id=None, subscribed_topic_names=["t"]),
                                   client_id="c", client_host="/h", now=b.now)

    def listed(states=(), types=()):
        body = {"states_filter": list(states), "types_filter": list(types)}
        return sorted((g.group_id, g.group_type) for g in b.call(LIST_GROUPS, 5, body).groups)

    assert listed() == [("classic", "classic"), ("consumer", "consumer"), ("share", "share")]
    assert listed(types=["Share", "CLASSIC"]) == [("classic", "classic"), ("share", "share")]
    assert listed(states=["stable"]) == [("classic", "classic"), ("consumer", "consumer"), ("share", "share")]
    assert listed(states=["ASSIGNING", "reconciling", " Stable "], types=["consumer"]) == [
        ("consumer", "consumer")]
    assert listed(states=["Assigning"]) == []
    b.state.groups.classic.leave("classic", [(mid, None)], now=b.now)
    assert listed(states=["EMPTY"]) == [("classic", "classic")]
    assert listed(types=["streams"]) == []


# --- classic-group cases ---------------------------------------------------------------------------

def test_a_replaced_static_member_is_fenced_on_heartbeat_sync_commit_and_leave():
    b = broker()
    old, gen = stable_classic(b, "s", instance="inst")
    new = join_classic(b, "s", instance="inst")  # a second process with the same group.instance.id
    assert new["member_id"] != old
    classic = b.state.groups.classic
    hb = classic.heartbeat(Container(group_id="s", member_id=old, generation_id=gen,
                                     group_instance_id="inst"), now=b.now)
    assert hb["error_code"] == E.FENCED_INSTANCE_ID
    got = []
    classic.sync(Container(group_id="s", member_id=old, generation_id=gen, group_instance_id="inst",
                           assignments=[]), now=b.now, reply=got.append)
    assert got[-1]["error_code"] == E.FENCED_INSTANCE_ID
    assert commit(b, "s", member=old, generation=gen, instance="inst") == E.FENCED_INSTANCE_ID
    _, left = classic.leave("s", [(old, "inst")], now=b.now)
    assert left[0]["error_code"] == E.FENCED_INSTANCE_ID
    assert new["member_id"] in classic.groups["s"].members  # the newer instance stays
    hb = classic.heartbeat(Container(group_id="s", member_id="nobody", generation_id=gen,
                                     group_instance_id=None), now=b.now)
    assert hb["error_code"] == E.UNKNOWN_MEMBER_ID


def test_an_empty_group_takes_commits_with_generation_minus_one_whatever_the_member_id():
    b = broker()
    mid, gen = stable_classic(b, "e")
    b.state.groups.classic.leave("e", [(mid, None)], now=b.now)
    assert b.state.groups.classic.groups["e"].state == "Empty"
    assert commit(b, "e", member="a-kip848-member-id", generation=-1) == 0
    assert commit(b, "e", member="a-kip848-member-id", generation=3) == E.UNKNOWN_MEMBER_ID


def test_a_commit_that_fails_makes_no_group():
    b = broker()
    assert commit(b, "nothing", topic="no-such-topic") == E.UNKNOWN_TOPIC_OR_PARTITION
    assert b.state.groups.kind_of("nothing") is None
    assert not b.state.offsets.has_group("nothing")
