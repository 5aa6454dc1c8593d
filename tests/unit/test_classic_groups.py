"""ClassicGroupCoordinator under a manual clock: joins, syncs, rebalances,
session expiry, leaving -- the state machine Kafka's consumers rely on."""

from __future__ import annotations

from construct import Container

from kipper.broker.groups.classic import (
    COMPLETING_REBALANCE, EMPTY, PREPARING_REBALANCE, STABLE, ClassicGroupCoordinator, GroupSettings,
)
from kipper.protocol.errors import ErrorCode

G = "g"


def join_req(member_id="", session=10_000, rebalance=30_000, protocols=(("range", b"m"),), instance=None):
    return Container(group_id=G, session_timeout_ms=session, rebalance_timeout_ms=rebalance,
                     member_id=member_id, group_instance_id=instance, protocol_type="consumer",
                     protocols=[Container(name=n, metadata=m) for n, m in protocols])


class Replies:
    def __init__(self):
        self.got = []

    def __call__(self, body):
        self.got.append(body)

    @property
    def last(self):
        return self.got[-1]


def join(c, now, member_id="", version=5, **kw):
    r = Replies()
    c.join(join_req(member_id, **kw), version=version, client_id="c", client_host="/h", now=now, reply=r)
    return r


def sync(c, member_id, generation, assignments=(), now=0):
    r = Replies()
    c.sync(Container(group_id=G, member_id=member_id, generation_id=generation,
                     assignments=[Container(member_id=m, assignment=a) for m, a in assignments]),
           now=now, reply=r)
    return r


def hb(c, member_id, generation, now):
    return c.heartbeat(Container(group_id=G, member_id=member_id, generation_id=generation), now=now)


def stable_single(c, now=0):
    first = join(c, now)
    assert first.last["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
    mid = first.last["member_id"]
    joined = join(c, now, mid)
    gen = joined.last["generation_id"]
    sync(c, mid, gen, [(mid, b"a1")], now)
    return mid, gen


def test_join_v4_plus_hands_out_a_member_id_first():
    c = ClassicGroupCoordinator()
    r = join(c, 0)
    assert r.last["error_code"] == ErrorCode.MEMBER_ID_REQUIRED and r.last["member_id"]


def test_single_member_becomes_leader_and_stable_after_sync():
    c = ClassicGroupCoordinator()
    mid, gen = stable_single(c)
    assert gen == 1 and c.group(G).state == STABLE and c.group(G).leader_id == mid
    assert hb(c, mid, gen, 100)["error_code"] == 0


def test_join_v0_to_v3_admits_the_member_at_once():
    c = ClassicGroupCoordinator()
    r = join(c, 0, version=3)
    assert r.last["error_code"] == 0 and r.last["leader"] == r.last["member_id"]


def test_a_second_member_triggers_a_rebalance_the_first_learns_of_by_heartbeat():
    c = ClassicGroupCoordinator()
    m1, gen = stable_single(c)
    m2 = join(c, 10).last["member_id"]
    pending = join(c, 10, m2)
    assert pending.got == [] and c.group(G).state == PREPARING_REBALANCE
    assert hb(c, m1, gen, 20)["error_code"] == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = join(c, 30, m1)
    assert c.group(G).state == COMPLETING_REBALANCE
    leader_view = rejoin.last if rejoin.last["leader"] == m1 else pending.last
    assert len(leader_view["members"]) == 2
    assert rejoin.last["generation_id"] == pending.last["generation_id"] == gen + 1


def test_followers_wait_for_the_leaders_sync_and_get_their_assignment():
    c = ClassicGroupCoordinator()
    m1, _ = stable_single(c)
    m2 = join(c, 0).last["member_id"]
    join(c, 0, m2)
    j1 = join(c, 0, m1)
    gen = j1.last["generation_id"]
    follower = sync(c, m2, gen, now=1)
    assert follower.got == []
    sync(c, m1, gen, [(m1, b"p0"), (m2, b"p1")], now=2)
    assert follower.last["assignment"] == b"p1" and c.group(G).state == STABLE


def test_member_that_misses_the_rebalance_timeout_is_dropped():
    c = ClassicGroupCoordinator()
    m1, _ = stable_single(c)
    m2 = join(c, 0).last["member_id"]
    waiting = join(c, 0, m2, rebalance=5_000)
    c.tick(4_000)
    assert waiting.got == []
    c.tick(30_001)  # the group's rebalance timeout is the largest member's (30 s)
    assert waiting.last["error_code"] == 0
    assert set(c.group(G).members) == {m2}


def test_session_timeout_evicts_a_silent_member_and_rebalances():
    c = ClassicGroupCoordinator()
    m1, gen = stable_single(c)
    c.tick(9_999)
    assert m1 in c.group(G).members
    c.tick(10_001)
    assert m1 not in c.group(G).members and c.group(G).state == EMPTY


def test_heartbeats_keep_a_member_alive():
    c = ClassicGroupCoordinator()
    m1, gen = stable_single(c)
    for t in range(5_000, 60_000, 5_000):
        assert hb(c, m1, gen, t)["error_code"] == 0
        c.tick(t)
    assert m1 in c.group(G).members


def test_leave_group_rebalances_the_remaining_members():
    c = ClassicGroupCoordinator()
    m1, _ = stable_single(c)
    m2 = join(c, 0).last["member_id"]
    join(c, 0, m2)
    join(c, 0, m1)
    gen = c.group(G).generation_id
    sync(c, m1, gen, [(m1, b"a"), (m2, b"b")])
    code, results = c.leave(G, [(m2, None)], now=5)
    assert results[0]["error_code"] == 0 and c.group(G).state == PREPARING_REBALANCE
    again = join(c, 6, m1)
    assert again.last["generation_id"] == gen + 1 and again.last["members"][0]["member_id"] == m1


def test_stale_generation_and_unknown_member_are_rejected():
    c = ClassicGroupCoordinator()
    m1, gen = stable_single(c)
    assert hb(c, m1, gen + 5, 1)["error_code"] == ErrorCode.ILLEGAL_GENERATION
    assert hb(c, "nobody", gen, 1)["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert sync(c, m1, gen + 1).last["error_code"] == ErrorCode.ILLEGAL_GENERATION


def test_session_timeout_outside_the_broker_range_is_invalid():
    c = ClassicGroupCoordinator(GroupSettings(min_session_timeout_ms=6_000, max_session_timeout_ms=30_000))
    assert join(c, 0, session=1_000).last["error_code"] == ErrorCode.INVALID_SESSION_TIMEOUT
    assert join(c, 0, session=60_000).last["error_code"] == ErrorCode.INVALID_SESSION_TIMEOUT


def test_members_without_a_common_protocol_are_inconsistent():
    c = ClassicGroupCoordinator()
    stable_single(c)
    mid = join(c, 0, protocols=(("roundrobin", b""),)).last["member_id"]
    r = join(c, 0, mid, protocols=(("roundrobin", b""),))
    assert r.last["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_commits_need_the_current_generation_but_simple_commits_need_an_empty_group():
    c = ClassicGroupCoordinator()
    assert c.validate_commit("other", "", -1) == ErrorCode.NONE
    m1, gen = stable_single(c)
    assert c.validate_commit(G, m1, gen) == ErrorCode.NONE
    assert c.validate_commit(G, m1, gen - 1) == ErrorCode.ILLEGAL_GENERATION
    assert c.validate_commit(G, "", -1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_commit_with_a_generation_to_a_group_that_does_not_exist_answers_by_version():
    # Kafka 4.4's OffsetMetadataManager: OffsetCommit v9+ GROUP_ID_NOT_FOUND, older versions
    # and TxnOffsetCommit ILLEGAL_GENERATION; generation -1 makes a simple group
    c = ClassicGroupCoordinator()
    assert c.validate_commit("none", "m", 0, api_version=9) == ErrorCode.GROUP_ID_NOT_FOUND
    assert c.validate_commit("none", "m", 0, api_version=8) == ErrorCode.ILLEGAL_GENERATION
    assert c.validate_commit("none", "m", 0, transactional=True) == ErrorCode.ILLEGAL_GENERATION
    assert c.validate_commit("none", "m", -1, api_version=9) == ErrorCode.NONE


def test_a_transactional_commit_checks_the_member_and_generation_it_sends():
    # Kafka's ClassicGroup.validateOffsetCommit with isTransactional: no member and
    # generation -1 (TxnOffsetCommit v0-2) is taken by any group, even in a rebalance
    c = ClassicGroupCoordinator()
    m1, gen = stable_single(c)
    assert c.validate_commit(G, "", -1, transactional=True) == ErrorCode.NONE
    assert c.validate_commit(G, m1, gen, transactional=True) == ErrorCode.NONE
    assert c.validate_commit(G, m1, -1, transactional=True) == ErrorCode.ILLEGAL_GENERATION
    assert c.validate_commit(G, "", gen, transactional=True) == ErrorCode.UNKNOWN_MEMBER_ID
    assert c.validate_commit(G, "nobody", gen, transactional=True) == ErrorCode.UNKNOWN_MEMBER_ID


def test_initial_rebalance_delay_holds_the_first_join():
    c = ClassicGroupCoordinator(GroupSettings(initial_rebalance_delay_ms=3_000))
    mid = join(c, 0).last["member_id"]
    r = join(c, 0, mid)
    c.tick(2_999)
    assert r.got == []
    c.tick(3_000)
    assert r.last["error_code"] == 0


def test_a_group_id_owned_by_a_share_group_is_refused():
    c = ClassicGroupCoordinator()
    r = Replies()  # the GroupCoordinator tells the engine another kind of group holds the id
    c.join(join_req(), version=5, client_id="c", client_host="/h", now=0, reply=r, held_elsewhere=True)
    assert r.last["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


# --- static members (KIP-345, KIP-814) ---------------------------------------------------

def _stable_static_pair(c):
    """Two static members, the leader "a" first; both synced. Returns (leader, follower, generation)."""
    a = join(c, 0, instance="a", version=9).last  # alone: generation 1 at once
    a_id = a["member_id"]
    b = join(c, 0, instance="b", version=9)  # a rebalance: waits for a to join again
    a2 = join(c, 0, a_id, instance="a", version=9).last
    gen, b_id = a2["generation_id"], b.last["member_id"]
    assert a_id.startswith("a-") and b_id.startswith("b-")  # Kafka's ids: the instance id first
    assert a2["leader"] == a_id and b.last["generation_id"] == gen
    sync(c, a_id, gen, [(a_id, b"a"), (b_id, b"b")])
    sync(c, b_id, gen)
    assert c.group(G).state == STABLE
    return a_id, b_id, gen


def _heartbeat_as(c, member_id, generation, instance):
    return c.heartbeat(Container(group_id=G, member_id=member_id, generation_id=generation,
                                 group_instance_id=instance), now=2)["error_code"]


def test_a_static_leader_that_restarts_learns_it_leads_without_a_rebalance_on_v9():
    # KIP-814 (Kafka 4.4's updateStaticMemberThenRebalanceOrCompleteJoin): the members and
    # skip_assignment, the new id as leader, the same generation; the old id is fenced
    c = ClassicGroupCoordinator()
    old_leader, follower, gen = _stable_static_pair(c)
    again = join(c, 1, instance="a", version=9).last
    new_id = again["member_id"]
    assert new_id != old_leader and again["error_code"] == 0
    assert (again["leader"], again["skip_assignment"], again["generation_id"]) == (new_id, True, gen)
    assert sorted(m["member_id"] for m in again["members"]) == sorted([new_id, follower])
    assert c.group(G).state == STABLE and c.group(G).leader_id == new_id
    assert _heartbeat_as(c, old_leader, gen, "a") == ErrorCode.FENCED_INSTANCE_ID
    assert _heartbeat_as(c, new_id, gen, "a") == ErrorCode.NONE


def test_a_static_leader_that_restarts_on_an_old_join_version_gets_no_members():
    # below v9 Kafka answers with no members and the leader id as it was before the rejoin
    c = ClassicGroupCoordinator()
    old_leader, _, gen = _stable_static_pair(c)
    again = join(c, 1, instance="a", version=5).last
    assert (again["members"], again["skip_assignment"], again["leader"]) == ([], False, old_leader)
    assert c.group(G).leader_id == again["member_id"] and c.group(G).state == STABLE


def test_a_static_follower_that_restarts_gets_its_generation_back():
    c = ClassicGroupCoordinator()
    leader, old_follower, gen = _stable_static_pair(c)
    again = join(c, 1, instance="b", version=9).last
    assert (again["members"], again["skip_assignment"], again["leader"]) == ([], False, leader)
    assert again["generation_id"] == gen and again["member_id"] != old_follower


def test_a_static_member_whose_rejoin_changes_the_groups_protocol_triggers_a_rebalance():
    c = ClassicGroupCoordinator()
    a = join(c, 0, instance="a", version=9).last["member_id"]
    sync(c, a, 1, [(a, b"a")])
    again = join(c, 1, instance="a", version=9, protocols=(("roundrobin", b""), ("range", b"m")))
    assert again.got and again.last["protocol_name"] == "roundrobin" and again.last["generation_id"] == 2


# --- what admin requests see (issue 36) ---------------------------------------------------

def test_removing_a_static_member_by_its_instance_id_echoes_the_empty_member_id():
    # Kafka's LeaveGroup answer repeats the request's member id: "" when an admin removes
    # a static member by its instance id (kafka-consumer-groups --delete-offsets, Admin)
    c = ClassicGroupCoordinator()
    a_id, _, _ = _stable_static_pair(c)
    code, members = c.leave(G, [("", "a"), ("", "nobody")], now=3)
    assert code == ErrorCode.NONE
    assert members == [{"member_id": "", "group_instance_id": "a", "error_code": 0},
                       {"member_id": "", "group_instance_id": "nobody", "error_code": ErrorCode.UNKNOWN_MEMBER_ID}]
    assert a_id not in c.group(G).members


def test_describe_during_a_rebalance_names_no_protocol_and_no_member_metadata():
    # Kafka shows the protocol and the members' subscriptions only once the group is stable;
    # the assignments of the generation before stay until the leader's SyncGroup
    c = ClassicGroupCoordinator()
    m1, _ = stable_single(c)
    m2 = join(c, 10).last["member_id"]
    join(c, 10, m2)
    described = c.describe(G)
    assert (described["group_state"], described["protocol_data"]) == (PREPARING_REBALANCE, "")
    assert {m["member_id"]: (m["member_metadata"], m["member_assignment"]) for m in described["members"]} == {
        m1: (b"", b"a1"), m2: (b"", b"")}
    gen = join(c, 20, m1).last["generation_id"]
    described = c.describe(G)
    assert described["group_state"] == COMPLETING_REBALANCE and described["protocol_data"] == ""
    assert [m["member_assignment"] for m in described["members"] if m["member_id"] == m1] == [b"a1"]
    sync(c, m1, gen, [(m1, b"p0"), (m2, b"p1")], now=30)
    described = c.describe(G)
    assert (described["group_state"], described["protocol_data"]) == (STABLE, "range")
    assert {m["member_id"]: (m["member_metadata"], m["member_assignment"]) for m in described["members"]} == {
        m1: (b"m", b"p0"), m2: (b"m", b"p1")}
