"""The streams-group sticky task assignor and the topology set against the topics
(partition counts of repartition topics and changelogs, co-partitioning), without a
coordinator."""

from __future__ import annotations

import pytest

from kipper.broker.groups.streams.assignor import MemberSpec, assign
from kipper.broker.groups.streams.topology import (
    INCORRECTLY_PARTITIONED_TOPICS, InvalidTopology, configure, from_wire,
)
from tests.support.streams_member import info, word_count

WORD_COUNT = [("0", 6, False), ("1", 6, True)]


def active(result, member):
    return {(sid, p) for sid, ps in result[member][0].items() for p in ps}


def standby(result, member):
    return {(sid, p) for sid, ps in result[member][1].items() for p in ps}


def test_a_first_assignment_spreads_the_tasks_evenly_over_processes():
    result = assign({"a": MemberSpec("p1"), "b": MemberSpec("p2")}, WORD_COUNT, 0)
    assert len(active(result, "a")) == len(active(result, "b")) == 6
    assert active(result, "a") | active(result, "b") == {(s, p) for s in "01" for p in range(6)}


def test_tasks_stay_with_the_member_that_runs_them():
    first = assign({"a": MemberSpec("p1"), "b": MemberSpec("p2")}, WORD_COUNT, 0)
    specs = {m: MemberSpec(f"p{i}", frozenset(active(first, m))) for i, m in enumerate("ab", 1)}
    specs["c"] = MemberSpec("p3")
    second = assign(specs, WORD_COUNT, 0)
    assert active(second, "a") <= active(first, "a") and active(second, "b") <= active(first, "b")
    assert sorted(len(active(second, m)) for m in "abc") == [4, 4, 4]


def test_a_standby_never_lands_on_the_process_that_runs_the_task_and_only_stateful_tasks_get_one():
    result = assign({"a": MemberSpec("p1"), "b": MemberSpec("p2")}, WORD_COUNT, 1)
    for m in "ab":
        assert not active(result, m) & standby(result, m)
        assert {sid for sid, _ in standby(result, m)} == {"1"}
    assert standby(result, "a") | standby(result, "b") == {("1", p) for p in range(6)}


def test_standbys_need_another_process():
    result = assign({"a": MemberSpec("p1"), "b": MemberSpec("p1")}, WORD_COUNT, 1)
    assert standby(result, "a") == standby(result, "b") == set()
    assert len(active(result, "a")) == len(active(result, "b")) == 6  # the members of a process share its load


def test_a_previous_standby_becomes_the_active_owner_when_the_owner_is_gone():
    specs = {"b": MemberSpec("p2", frozenset(), frozenset({("1", 0)})), "c": MemberSpec("p3")}
    result = assign(specs, [("1", 1, True)], 0)
    assert active(result, "b") == {("1", 0)}


def topology(*subtopologies) -> dict:
    return {"epoch": 0, "subtopologies": [
        {"subtopology_id": sid, "source_topics": list(src), "source_topic_regex": [],
         "state_changelog_topics": [info(c) for c in changelogs], "repartition_sink_topics": list(sinks),
         "repartition_source_topics": [r if isinstance(r, dict) else info(r) for r in reps],
         "copartition_groups": groups}
        for sid, src, sinks, reps, changelogs, groups in subtopologies]}


def counts(**known):
    return lambda name: known.get(name.replace("-", "_"))


def test_repartition_topics_take_the_partitions_of_what_feeds_them_through_a_chain():
    t = from_wire(topology(("0", ["in"], ["r1"], [], [], []), ("1", [], ["r2"], ["r1"], [], []),
                           ("2", [], [], ["r2"], ["store"], [])))
    configured = configure(t, counts(**{"in": 4}))
    assert {n: x.partitions for n, x in configured.to_create.items()} == {"r1": 4, "r2": 4, "store": 4}
    assert configured.subtopologies["2"].tasks == 4


def test_a_loop_of_repartition_topics_is_an_invalid_topology():
    t = from_wire(topology(("0", [], ["r1"], ["r2"], [], []), ("1", [], ["r2"], ["r1"], [], [])))
    with pytest.raises(InvalidTopology, match="There may be loops"):
        configure(t, counts())


def test_copartitioned_source_topics_must_agree():
    groups = [{"source_topics": [0, 1], "source_topic_regex": [], "repartition_source_topics": []}]
    t = from_wire(topology(("0", ["left", "right"], [], [], [], groups)))
    configured = configure(t, counts(left=2, right=3))
    assert configured.status == (INCORRECTLY_PARTITIONED_TOPICS,
                                 "Following topics do not have the same number of partitions: [{left=2, right=3}]")
    assert configured.subtopologies is None and configured.to_create == {}


def test_a_repartition_topic_copartitioned_with_a_source_follows_it():
    groups = [{"source_topics": [0], "source_topic_regex": [], "repartition_source_topics": [0]}]
    t = from_wire(topology(("0", ["small"], ["r"], [], [], []), ("1", ["big"], [], ["r"], [], groups)))
    configured = configure(t, counts(small=2, big=5))
    assert configured.to_create["r"].partitions == 5


def test_a_fixed_repartition_count_that_does_not_match_is_incorrectly_partitioned():
    groups = [{"source_topics": [0], "source_topic_regex": [], "repartition_source_topics": [0]}]
    t = from_wire(topology(("0", ["a"], ["r"], [], [], []), ("1", ["b"], [], [info("r", 7)], [], groups)))
    configured = configure(t, counts(a=2, b=3))
    assert configured.status[0] == INCORRECTLY_PARTITIONED_TOPICS
    assert configured.status[1] == ("Number of partitions [7] of repartition topic [r] doesn't match number of "
                                    "partitions [3] of the source topic.")


def test_the_word_count_is_ready_once_its_internal_topics_exist():
    t = from_wire(word_count())
    assert configure(t, counts(words=3, app_by_word_repartition=3, app_counts_changelog=3)).ready
