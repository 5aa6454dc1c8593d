"""Streams groups (KIP-1071, StreamsGroupHeartbeat) under a manual clock: joins, the
topology against the topics, internal topics, the initial delay and the assignment
interval, rebalances with revocation before assignment, leaving, timeouts and epochs."""

from __future__ import annotations

from kipper.broker.groups.streams.topology import (
    ASSIGNMENT_DELAYED, INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS, MISSING_SOURCE_TOPICS,
    SHUTDOWN_APPLICATION, STALE_TOPOLOGY,
)
from kipper.protocol.errors import ErrorCode
from tests.support.streams_member import INTERVAL, REBALANCE, SESSION, Member, make, settle, word_count

ALL_TASKS = {(sid, p) for sid in ("0", "1") for p in range(3)}


def test_a_member_joins_and_runs_every_task_of_the_word_count():
    c, _ = make()
    m = Member(c, "m1")
    resp = m.beat()
    assert resp["error_code"] == 0 and resp["status"] == []
    assert resp["member_epoch"] == 2  # a new group starts at 1; the join bumps it
    assert m.active == ALL_TASKS and m.standby == set() and m.warmup == set()
    assert c.groups["app"].state == "Stable"
    assert resp["heartbeat_interval_ms"] == INTERVAL and resp["endpoint_information_epoch"] == 0


def test_missing_internal_topics_are_returned_for_creation_and_the_group_waits_for_them():
    c, topics = make(create_internal=False)
    m = Member(c, "m1")
    m.beat(0)
    assert m.statuses() == [MISSING_INTERNAL_TOPICS]
    # in the order of Kafka's java.util.HashMap of them
    assert m.last["status"][0]["status_detail"] == ("Internal topics are missing: app-by-word-repartition, "
                                                    "app-counts-changelog")
    assert sorted(m.result.to_create) == ["app-by-word-repartition", "app-counts-changelog"]
    assert {n: (t.partitions, t.configs) for n, t in m.result.to_create.items()} == {
        "app-by-word-repartition": (3, {"cleanup.policy": "delete"}),
        "app-counts-changelog": (3, {"cleanup.policy": "compact"})}
    assert m.active == set() and c.groups["app"].state == "NotReady"
    assert c.create_internal_topics(m.result.to_create, 0, ttl_ms=2 * INTERVAL) == {}
    assert topics.get("app-counts-changelog").configs == {"cleanup.policy": "compact"}
    epoch = c.groups["app"].group_epoch
    m.beat(100)
    assert m.statuses() == [] and m.active == ALL_TASKS
    assert c.groups["app"].group_epoch == epoch + 1  # the topics appeared: a new epoch


def test_a_failed_internal_topic_creation_shows_on_the_next_heartbeat_and_is_not_retried_at_once():
    c, topics = make(create_internal=False)
    topics.create("app-counts-changelog", 5)  # another partition count: incorrectly partitioned
    m = Member(c, "m1")
    m.beat()
    assert m.statuses() == [INCORRECTLY_PARTITIONED_TOPICS]
    assert m.last["status"][0]["status_detail"] == ("Existing topic app-counts-changelog has different number "
                                                    "of partitions: expected 3, found 5")
    assert m.result.to_create == {}


def test_a_missing_source_topic_leaves_the_group_not_ready():
    c, _ = make()
    m = Member(c, "m1", topology=word_count(source="nowhere"))
    m.beat()
    assert m.statuses() == [MISSING_SOURCE_TOPICS]
    assert m.last["status"][0]["status_detail"] == "Source topics nowhere are missing."
    assert c.groups["app"].state == "NotReady" and m.active == set()


def test_the_initial_rebalance_delay_holds_the_first_assignment_back_until_it_passes():
    c, _ = make(initial_rebalance_delay_ms=3000)
    a, b = Member(c, "a"), Member(c, "b")
    a.beat(0)
    assert a.statuses() == [ASSIGNMENT_DELAYED] and a.active == set() and a.epoch == 1
    b.beat(1000)
    assert b.statuses() == [ASSIGNMENT_DELAYED]
    c.tick(2999)
    assert c.groups["app"].assignment_epoch == 1
    c.tick(3000)  # the first target is computed for both members at once
    assert c.groups["app"].assignment_epoch == c.groups["app"].group_epoch
    a.beat(3100)
    b.beat(3200)
    assert a.statuses() == [] and len(a.active) == 3 and len(b.active) == 3


def test_the_assignment_interval_delays_a_second_target():
    c, _ = make(assignment_interval_ms=1000)
    a, b = Member(c, "a"), Member(c, "b")
    a.beat(10_000)
    b.beat(10_500)
    assert b.statuses() == [ASSIGNMENT_DELAYED]
    assert b.last["status"][0]["status_detail"] == "Assignment delayed due to the configured assignment interval."
    b.beat(11_000)
    assert b.statuses() == []


def test_a_second_member_gets_tasks_only_after_the_first_revoked_them():
    c, _ = make()
    a, b = Member(c, "a"), Member(c, "b")
    a.beat(0)
    b.beat(1)
    assert b.active == set()  # a still runs them
    a.beat(2)  # told to give half up; keeps its epoch until it reports them gone
    assert len(a.active) == 3 and c.groups["app"].members["a"].state == 2  # UNREVOKED_TASKS
    b.beat(3)
    assert b.active == set()
    a.beat(4)  # reports it owns only its half
    b.beat(5)
    assert len(b.active) == 3 and a.active | b.active == ALL_TASKS and not a.active & b.active
    settle([a, b], 10)
    assert c.groups["app"].state == "Stable"


def test_the_sticky_assignor_keeps_tasks_where_they_are_when_a_member_leaves_and_comes_back():
    c, _ = make()
    members = [Member(c, m) for m in "abc"]
    settle(members)
    before = {m.member_id: set(m.active) for m in members}
    assert all(len(t) == 2 for t in before.values())
    assert members[2].leave(100)["error_code"] == 0
    settle(members[:2], 200)
    for m in members[:2]:
        assert before[m.member_id] <= m.active  # they kept theirs and took the leaver's
    assert members[0].active | members[1].active == ALL_TASKS


def test_a_leave_answers_with_the_leaving_epoch_and_an_empty_status():
    c, _ = make()
    m = Member(c, "m1")
    m.beat()
    resp = m.leave(10)
    assert (resp["error_code"], resp["member_id"], resp["member_epoch"], resp["status"]) == (0, "m1", -1, [])
    assert c.groups["app"].state == "Empty" and c.groups["app"].members == {}
    assert m.leave(20)["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_without_heartbeats_is_fenced_after_its_session_timeout():
    c, _ = make()
    a, b = Member(c, "a"), Member(c, "b")
    now = settle([a, b])
    b.beat(now + SESSION)  # b keeps beating, a does not
    c.tick(now + SESSION)
    assert "a" not in c.groups["app"].members
    a.beat(now + SESSION + 1)
    assert a.last["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_that_does_not_revoke_in_its_rebalance_timeout_is_fenced():
    c, _ = make(session_timeout_ms=10 * REBALANCE)
    a, b = Member(c, "a"), Member(c, "b")
    a.beat(0)
    b.beat(1)
    a.beat(2)  # must revoke from now on
    a.report = False
    a.beat(1000)  # says nothing of what it owns: still revoking
    c.tick(2 + REBALANCE - 1)
    assert "a" in c.groups["app"].members
    b.beat(2 + REBALANCE - 1)
    c.tick(2 + REBALANCE)
    assert "a" not in c.groups["app"].members


def test_epochs_ahead_or_behind_are_fenced_and_the_previous_one_is_accepted_with_owned_tasks():
    c, _ = make()
    a, b = Member(c, "a"), Member(c, "b")
    settle([a, b])
    epoch = a.epoch
    assert a.beat(member_epoch=epoch + 1)["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    assert "greater member epoch" in a.last["error_message"]
    b.leave(10)  # a is given b's tasks at a newer epoch
    a.beat(20)
    assert a.epoch > epoch
    old = Member(c, "a")
    old.epoch, old.active = a.epoch - 1, set(a.active) - {next(iter(a.active))}
    assert old.beat(30)["error_code"] == 0  # the answer that moved it on may have been lost
    old.epoch = a.epoch - 2
    assert old.beat(40)["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH


def test_static_members_keep_their_tasks_across_a_restart_and_fence_a_second_instance():
    c, _ = make()
    a = Member(c, "a1", instance="i-a", process="pa")
    b = Member(c, "b1", instance="i-b", process="pb")
    settle([a, b])
    held, group_epoch = set(a.active), c.groups["app"].group_epoch
    resp = a.leave(100, epoch=-2)
    assert (resp["member_id"], resp["member_epoch"]) == ("a1", -2)
    assert c.groups["app"].members["a1"].member_epoch == -2
    again = Member(c, "a2", instance="i-a", process="pa")
    again.beat(200)
    assert again.active == held and c.groups["app"].group_epoch == group_epoch  # no rebalance
    assert "a1" not in c.groups["app"].members
    a.epoch = 5
    assert a.beat(300)["error_code"] == ErrorCode.FENCED_INSTANCE_ID
    twin = Member(c, "a3", instance="i-a", process="pa")
    assert twin.beat(400)["error_code"] == ErrorCode.UNRELEASED_INSTANCE_ID
    assert twin.last["error_message"] == ("Static member a3 with instance id i-a cannot join the group because "
                                          "the instance id is owned by a2 member.")


def test_a_new_topology_epoch_is_refused_and_an_older_one_is_told_it_is_stale():
    c, _ = make()
    Member(c, "a").beat()
    newer = Member(c, "b", topology=word_count(epoch=1))
    assert newer.beat()["error_code"] == ErrorCode.INVALID_REQUEST
    assert newer.last["error_message"] == "Topology updates are not supported yet."
    c2, _ = make()
    Member(c2, "a", topology=word_count(epoch=1)).beat()
    older = Member(c2, "b", topology=word_count(epoch=0))
    older.beat()
    assert older.statuses() == [STALE_TOPOLOGY]
    assert older.last["status"][0]["status_detail"] == ("The member's topology epoch 0 is behind the group's "
                                                        "topology epoch 1.")


def test_requests_are_checked_as_kafka_checks_them():
    c, _ = make()
    m = Member(c, "m1")

    def err(**kw):
        return m.beat(**kw)["error_code"], m.last["error_message"]
    assert err(member_id="") == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
    assert err(instance_id="") == (ErrorCode.INVALID_REQUEST, "InstanceId can't be empty.")
    assert err(rebalance_timeout_ms=-1) == (ErrorCode.INVALID_REQUEST,
                                            "RebalanceTimeoutMs must be provided in first request.")
    assert err(topology=None) == (ErrorCode.INVALID_REQUEST, "Topology must be non-null when (re-)joining.")
    assert err(member_epoch=-3, topology=None) == (ErrorCode.INVALID_REQUEST,
                                                  "MemberEpoch is -3, but must be greater than or equal to -2.")
    assert err(member_epoch=3, standby_tasks=None, topology=None) == (
        ErrorCode.INVALID_REQUEST, "If one task-type is non-null, all must be non-null.")
    bad = word_count()
    bad["subtopologies"][1]["state_changelog_topics"][0]["partitions"] = 2
    assert err(topology=bad) == (ErrorCode.STREAMS_INVALID_TOPOLOGY, "Changelog topic app-counts-changelog must "
                                 "have an undefined partition count, but it is set to 2.")
    regex = word_count()
    regex["subtopologies"][0]["source_topic_regex"] = ["w.*"]
    assert err(topology=regex) == (ErrorCode.INVALID_REQUEST,
                                   "Regular expressions for source topics are not supported yet.")
    assert err(member_epoch=4, topology=None) == (ErrorCode.GROUP_ID_NOT_FOUND, "Streams group app not found.")
    assert "app" not in c.groups  # failed joins leave no group behind


def test_a_full_group_refuses_a_new_member():
    c, _ = make(max_size=1)
    Member(c, "a").beat()
    b = Member(c, "b")
    assert b.beat()["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert b.last["error_message"] == "The streams group has reached its maximum capacity of 1 members."


def test_a_shutdown_request_is_passed_to_every_member():
    c, _ = make()
    a, b = Member(c, "a"), Member(c, "b")
    settle([a, b])
    a.beat(100, shutdown_application=True)
    b.beat(200)
    assert SHUTDOWN_APPLICATION in b.statuses()
    assert b.last["status"][-1]["status_detail"] == ("Streams group member a encountered a fatal error and "
                                                     "requested a shutdown for the entire application.")


def test_task_offsets_are_kept_for_describe():
    c, _ = make()
    m = Member(c, "m1")
    m.beat(0, task_offsets=[{"subtopology_id": "1", "partition": 0, "offset": 42}])
    group = c.groups["app"]
    assert group.task_offsets["m1"] == ({("1", 0): 42}, {})


def test_a_refused_heartbeat_changes_nothing_and_writes_nothing():
    written = []
    c, _ = make(journal=lambda gid, recs, now: written.extend(recs))
    a = Member(c, "a")
    a.beat()
    before, count = c.groups["app"].members["a"], len(written)
    bad = Member(c, "a")
    bad.epoch = a.epoch
    resp = bad.beat(active_tasks=[{"subtopology_id": "0", "partitions": [7]}], standby_tasks=[], warmup_tasks=[],
                    rebalance_timeout_ms=5)
    assert (resp["error_code"], resp["error_message"]) == (
        ErrorCode.INVALID_REQUEST, "Task 7 for subtopology 0 is invalid. Number of tasks for this subtopology: 3")
    assert c.groups["app"].members["a"] == before and len(written) == count


def test_a_member_in_a_state_of_a_newer_broker_is_fenced_unless_it_owns_nothing():
    from dataclasses import replace

    c, _ = make()
    m = Member(c, "m1")
    m.beat()
    group = c.groups["app"]
    group.put_member(replace(group.members["m1"], state=127))
    assert m.beat(10)["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    m.active = set()
    m.report = True
    assert m.beat(20)["error_code"] == 0 and c.groups["app"].members["m1"].state == 1  # STABLE again
