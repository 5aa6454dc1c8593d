"""Share-group membership and share sessions, with a manual clock."""

from __future__ import annotations

from construct import Container

from kipper.broker.log.topics import TopicManager
from kipper.broker.share.coordinator import ShareGroupCoordinator
from kipper.broker.share.sessions import ShareSessionCache
from kipper.broker.share.settings import ShareSettings
from kipper.protocol.errors import ErrorCode

SESSION = 10_000


def hb(group="g", member="m1", epoch=0, topics=("t",)):
    return Container(group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
                     subscribed_topic_names=None if topics is None else list(topics))


def coordinator(**kw):
    topics = TopicManager(num_partitions=3, auto_create=False)
    topics.create("t", 3)
    settings = ShareSettings(session_timeout_ms=SESSION, heartbeat_interval_ms=1000, **kw)
    return ShareGroupCoordinator(settings, topics), topics


def call(c, req, now=0):
    return c.heartbeat(req, client_id="cid", client_host="/127.0.0.1", now=now)


def assigned(resp):
    return sorted((tp["topic_id"], p) for tp in resp["assignment"]["topic_partitions"]
                  for p in tp["partitions"])


def test_join_gets_every_partition_of_the_subscribed_topics_and_an_epoch():
    c, topics = coordinator()
    resp, events = call(c, hb())
    tid = topics.get("t").topic_id
    assert resp["error_code"] == 0 and resp["member_epoch"] == 1
    assert resp["heartbeat_interval_ms"] == 1000
    assert assigned(resp) == [(tid, 0), (tid, 1), (tid, 2)]
    assert ("assigned", "g", "t", 1) in events


def test_every_member_is_assigned_every_partition():
    c, _ = coordinator()
    a, _ = call(c, hb(member="a"))
    b, _ = call(c, hb(member="b"))
    assert assigned(a) == assigned(b)
    assert b["member_epoch"] == 2


def test_steady_heartbeat_sends_no_assignment_and_keeps_the_epoch():
    c, _ = coordinator()
    first, _ = call(c, hb())
    again, _ = call(c, hb(epoch=first["member_epoch"], topics=None))
    assert again["error_code"] == 0 and again["assignment"] is None
    assert again["member_epoch"] == first["member_epoch"]


def test_new_topic_in_subscription_bumps_the_member_epoch_and_sends_the_assignment():
    c, topics = coordinator()
    first, _ = call(c, hb(topics=("t", "later")))
    topics.create("later", 1)
    resp, events = call(c, hb(epoch=first["member_epoch"], topics=None))
    assert resp["member_epoch"] > first["member_epoch"]
    assert len(assigned(resp)) == 4 and ("assigned", "g", "later", 0) in events


def test_unknown_member_and_stale_epoch_errors():
    c, _ = coordinator()
    assert call(c, hb(member="x", epoch=3))[0]["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    call(c, hb())
    assert call(c, hb(epoch=7, topics=None))[0]["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH


def test_join_without_a_subscription_is_an_invalid_request():
    c, _ = coordinator()
    assert call(c, hb(topics=None))[0]["error_code"] == ErrorCode.INVALID_REQUEST


def test_leave_removes_the_member_and_reports_it():
    c, _ = coordinator()
    call(c, hb())
    resp, events = call(c, hb(epoch=-1, topics=None))
    assert resp["error_code"] == 0 and resp["member_epoch"] == -1
    assert events == [("left", "g", "m1")]
    assert not c.is_member("g", "m1")
    assert c.describe("g")["group_state"] == "Empty"


def test_session_timeout_evicts_a_silent_member():
    c, _ = coordinator()
    call(c, hb(member="a"), now=0)
    call(c, hb(member="b"), now=5_000)
    assert c.tick(SESSION - 1) == []
    assert c.tick(SESSION) == [("timed_out", "g", "a")]
    assert c.is_member("g", "b")


def test_group_max_size_reached():
    c, _ = coordinator(max_size=10)
    for i in range(10):
        assert call(c, hb(member=f"m{i}"))[0]["error_code"] == 0
    resp, _ = call(c, hb(member="one-too-many"))
    assert resp["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert "group.share.max.size=10" in resp["error_message"]


def test_share_group_limit_counts_groups_with_members():
    c, _ = coordinator(max_groups=2)
    call(c, hb(group="g1"))
    call(c, hb(group="g2"))
    assert call(c, hb(group="g3"))[0]["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
    call(c, hb(group="g1", epoch=-1, topics=None))
    assert call(c, hb(group="g3"))[0]["error_code"] == 0


def test_a_classic_group_id_is_not_a_share_group():
    topics = TopicManager(num_partitions=1, auto_create=False)
    c = ShareGroupCoordinator(ShareSettings(), topics)
    body, _ = c.heartbeat(hb(group="classic"), client_id="c", client_host="/h", now=0, held_elsewhere=True)
    assert body["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


def test_describe_lists_members_with_their_assignment():
    c, topics = coordinator()
    call(c, hb())
    d = c.describe("g")
    assert d["group_state"] == "Stable" and d["assignor_name"] == "simple"
    (m,) = d["members"]
    assert m["member_id"] == "m1" and m["subscribed_topic_names"] == ["t"]
    assert m["assignment"]["topic_partitions"][0]["partitions"] == [0, 1, 2]
    assert c.describe("nope")["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    assert c.list_groups() == [{"group_id": "g", "protocol_type": "share", "group_state": "Stable",
                                "group_type": "share"}]


# --- share sessions ------------------------------------------------------------------------

def test_session_epochs_must_follow_one_another():
    cache = ShareSessionCache()
    code, s = cache.open("g", "m", 0, 0)
    assert code == 0 and s.epoch == 1
    assert cache.open("g", "m", 1, 0)[0] == 0
    assert cache.open("g", "m", 1, 0)[0] == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert cache.open("g", "m", 2, 0)[0] == 0


def test_unknown_session_is_not_found_and_epoch_zero_replaces_it():
    cache = ShareSessionCache()
    assert cache.open("g", "m", 5, 0)[0] == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert cache.open("g", "m", -1, 0)[0] == ErrorCode.SHARE_SESSION_NOT_FOUND
    _, s1 = cache.open("g", "m", 0, 0)
    s1.add(("tid", 0))
    _, s2 = cache.open("g", "m", 0, 0)
    assert s2 is not s1 and s2.partitions == {}


def test_share_acknowledge_cannot_open_a_session():
    cache = ShareSessionCache()
    assert cache.open("g", "m", 0, 0, may_create=False)[0] == ErrorCode.INVALID_SHARE_SESSION_EPOCH


def test_final_epoch_hands_back_the_session_to_close():
    cache = ShareSessionCache()
    _, s = cache.open("g", "m", 0, 0)
    assert cache.open("g", "m", -1, 0) == (0, s)
    assert cache.close("g", "m") is s and len(cache) == 0
