"""Streams groups (KIP-1071): StreamsGroupHeartbeat and StreamsGroupDescribe at their
versions, the topology against the topics (missing source and internal topics), the
assignment and its revocation, static members, errors, offset commits by members, and
how ListGroups, DescribeGroups and the other kinds of group see a streams group.

Kafka creates internal topics after it answered and computes nothing while its
initial rebalance delay runs (0 in the shared settings), so a scenario polls, unrecorded,
until a member's assignment has arrived."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario
from tests.conformance.scenarios.admin import grant
from tests.conformance.scenarios.groups import cg_heartbeat

STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE = k.APIS[88], k.APIS[89]


def info(name: str, configs: dict | None = None, partitions: int = 0) -> dict:
    return {"name": name, "partitions": partitions, "replication_factor": 0,
            "topic_configs": [{"key": key, "value": v} for key, v in (configs or {}).items()]}


def word_count(run, source: str, epoch: int = 0) -> dict:
    """The topology Kafka Streams sends for tests/java WordCount."""
    rep = info(run.name("app-by-word-repartition"), {"cleanup.policy": "delete", "segment.bytes": "52428800",
                                                      "retention.ms": "-1"})
    chg = info(run.name("app-counts-changelog"), {"cleanup.policy": "compact"})
    return {"epoch": epoch, "subtopologies": [
        {"subtopology_id": "0", "source_topics": [source], "source_topic_regex": [], "state_changelog_topics": [],
         "repartition_sink_topics": [rep["name"]], "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [], "state_changelog_topics": [chg],
         "repartition_sink_topics": [], "repartition_source_topics": [rep], "copartition_groups": []}]}


def sg_heartbeat(run, g, member, epoch, topology=None, *, label="streams heartbeat", instance=None, tasks=None,
                 version=None, record=True, process="p0", user=None, **extra):
    """``tasks``: (active, standby, warm-up) lists the member reports it owns; a join lists none."""
    if tasks is None and epoch == 0:
        tasks = ([], [], [])
    body = {"group_id": g, "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": -1,
            "instance_id": instance, "rack_id": None, "rebalance_timeout_ms": 30000 if epoch == 0 else -1,
            "topology": topology, "active_tasks": None if tasks is None else tasks[0],
            "standby_tasks": None if tasks is None else tasks[1], "warmup_tasks": None if tasks is None else tasks[2],
            "process_id": process if epoch == 0 else None, "user_endpoint": None,
            "client_tags": [] if epoch == 0 else None, "task_offsets": None, "task_end_offsets": None,
            "shutdown_application": False, **extra}
    v = k.top(STREAMS_GROUP_HEARTBEAT) if version is None else version
    if user is not None:  # under SASL, as that user
        return run.call(STREAMS_GROUP_HEARTBEAT, v, body, label=label, record=record, conn=f"sasl-{user}", user=user)
    return run.call(STREAMS_GROUP_HEARTBEAT, v, body, label=label, record=record)


def sg_join(run, g, topology, member="m0", **kw) -> dict:
    """Join (recorded), then heartbeat unrecorded, reporting what it was given, until the
    member runs its tasks with no status left (internal topics made, target reached)."""
    first = sg_heartbeat(run, g, run.name(member), 0, topology, **kw)
    state = {"epoch": first.get("member_epoch", 0), "tasks": ([], [], []), "resp": first}

    def step():
        r = sg_heartbeat(run, g, run.name(member), state["epoch"], record=False, tasks=state["tasks"],
                         instance=kw.get("instance"))
        state["epoch"] = r.get("member_epoch", state["epoch"])
        if r.get("active_tasks") is not None:
            state["tasks"] = (r["active_tasks"], r["standby_tasks"], r["warmup_tasks"])
        state["resp"] = r
        return state
    run.poll(step, lambda s: not s["resp"].get("status") and bool(s["tasks"][0]), timeout=20, interval=0.3)
    return state


def describe(run, *groups, version=None, label="streams describe", operations=False, user=None):
    v = k.top(STREAMS_GROUP_DESCRIBE) if version is None else version
    body = {"group_ids": list(groups), "include_authorized_operations": operations,
            "include_topology_description": True}
    if user is not None:
        return run.call(STREAMS_GROUP_DESCRIBE, v, body, label=label, conn=f"sasl-{user}", user=user)
    return run.call(STREAMS_GROUP_DESCRIBE, v, body, label=label)


@scenario("streams/join-assign-leave")
def _(run):
    t = k.create_topic(run, partitions=2)
    g = run.name("app")
    state = sg_join(run, g, word_count(run, t))
    sg_heartbeat(run, g, run.name("m0"), state["epoch"], label="steady heartbeat")
    describe(run, g, operations=True)
    describe(run, g, version=0, label="describe v0")
    run.call(k.LIST_GROUPS, k.top(k.LIST_GROUPS), {"states_filter": [], "types_filter": ["streams"]},
             label="list streams groups")
    run.call(k.DESCRIBE_GROUPS, k.top(k.DESCRIBE_GROUPS), {"groups": [g], "include_authorized_operations": False},
             label="describe groups of a streams group")
    sg_heartbeat(run, g, run.name("m0"), -1, label="leave")
    describe(run, g, label="describe the empty group")
    run.call(k.LIST_GROUPS, k.top(k.LIST_GROUPS), {"states_filter": ["empty"], "types_filter": []},
             label="list empty groups")


@scenario("streams/heartbeat-v0")
def _(run):
    t = k.create_topic(run)
    g = run.name("app")
    state = sg_join(run, g, word_count(run, t), version=0)
    sg_heartbeat(run, g, run.name("m0"), state["epoch"], version=0, label="steady heartbeat v0")


@scenario("streams/two-members-rebalance")
def _(run):
    t = k.create_topic(run, partitions=2)
    g = run.name("app")
    a = sg_join(run, g, word_count(run, t))
    b = sg_heartbeat(run, g, run.name("m1"), 0, word_count(run, t), process="p1", label="second member joins")
    # the first member is told to give half its tasks up, keeping its epoch until it does
    r = sg_heartbeat(run, g, run.name("m0"), a["epoch"], tasks=a["tasks"], label="first member: revoke")
    sg_heartbeat(run, g, run.name("m1"), b["member_epoch"], tasks=([], [], []),
                 label="second member waits for the tasks")
    kept = (r["active_tasks"], r["standby_tasks"], r["warmup_tasks"])
    r = sg_heartbeat(run, g, run.name("m0"), a["epoch"], tasks=kept, label="first member: revoked")
    sg_heartbeat(run, g, run.name("m1"), b["member_epoch"], tasks=([], [], []), label="second member: assigned")
    describe(run, g)


@scenario("streams/missing-source-topic")
def _(run):
    g = run.name("app")
    sg_heartbeat(run, g, run.name("m0"), 0, word_count(run, run.name("nowhere")), label="join")
    describe(run, g)
    run.call(k.LIST_GROUPS, k.top(k.LIST_GROUPS), {"states_filter": ["not_ready"], "types_filter": ["streams"]},
             label="list not-ready groups")


@scenario("streams/errors")
def _(run):
    t = k.create_topic(run)
    g = run.name("app")
    topo = word_count(run, t)
    state = sg_join(run, g, topo)
    m = run.name("m0")
    sg_heartbeat(run, g, run.name("nobody"), 3, label="unknown member")
    sg_heartbeat(run, g, m, state["epoch"] + 7, label="epoch from the future")
    sg_heartbeat(run, g, m, state["epoch"], topo, label="a topology outside a join")
    sg_heartbeat(run, g, m, state["epoch"], tasks=(None, [], []), label="some task lists but not all")
    sg_heartbeat(run, g, m, -3, label="an epoch below -2")
    sg_heartbeat(run, g, run.name("m1"), 0, None, label="join without a topology")
    sg_heartbeat(run, g, run.name("m1"), 0, topo, rebalance_timeout_ms=-1, label="join without a rebalance timeout")
    sg_heartbeat(run, g, run.name("m1"), 0, word_count(run, t, epoch=1), label="another topology epoch")
    sg_heartbeat(run, g, "", 0, topo, label="empty member id")
    sg_heartbeat(run, "", run.name("m2"), 0, topo, label="empty group id")
    sg_heartbeat(run, g, run.name("m2"), 0, topo, instance="", label="empty instance id")
    regex = word_count(run, t)
    regex["subtopologies"][0]["source_topic_regex"] = [run.name("w.*")]
    sg_heartbeat(run, run.name("other"), run.name("m3"), 0, regex, label="a source topic regex")
    changelog = word_count(run, t)
    changelog["subtopologies"][1]["state_changelog_topics"][0]["partitions"] = 4
    sg_heartbeat(run, run.name("other"), run.name("m3"), 0, changelog, label="a changelog with partitions")
    internal = word_count(run, "__consumer_offsets")
    sg_heartbeat(run, run.name("other"), run.name("m3"), 0, internal, label="an internal topic in the topology")
    invalid = word_count(run, "not a topic!")
    sg_heartbeat(run, run.name("other"), run.name("m3"), 0, invalid, label="an invalid topic name")


@scenario("streams/a-missing-group")
def _(run):
    g = run.name("app")
    sg_heartbeat(run, g, run.name("m0"), 3, label="heartbeat to a group that does not exist")
    sg_heartbeat(run, g, run.name("m0"), -1, label="leave a group that does not exist")
    describe(run, g, run.name("other"), label="describe groups that do not exist")


@scenario("streams/static-member")
def _(run):
    t = k.create_topic(run)
    g = run.name("app")
    state = sg_join(run, g, word_count(run, t), instance="static-1")
    sg_heartbeat(run, g, run.name("m0"), -2, instance="static-1", label="temporary leave (-2)")
    describe(run, g, label="describe while it is away")
    again = sg_heartbeat(run, g, run.name("m9"), 0, word_count(run, t), instance="static-1",
                         label="rejoin as another member id")
    sg_heartbeat(run, g, run.name("m8"), 0, word_count(run, t), instance="static-1",
                 label="a second joiner with the same instance")
    sg_heartbeat(run, g, run.name("m0"), state["epoch"], instance="static-1", label="the replaced member")
    sg_heartbeat(run, g, run.name("m9"), again.get("member_epoch", 0), instance="static-2",
                 label="an unknown instance id")


@scenario("streams/commit-with-member-epoch")
def _(run):
    t = k.create_topic(run)
    g = run.name("app")
    state = sg_join(run, g, word_count(run, t))
    m = run.name("m0")
    k.commit(run, g, t, 3, generation=state["epoch"], member_id=m, label="current epoch")
    k.commit(run, g, t, 3, generation=state["epoch"] - 1, member_id=m, label="an older epoch for a task held since")
    k.commit(run, g, t, 3, generation=state["epoch"] + 1, member_id=m, label="future epoch")
    k.commit(run, g, t, 3, generation=state["epoch"], member_id=run.name("nobody"), label="unknown member")
    k.commit(run, g, t, 3, version=7, generation=state["epoch"], member_id=m, label="an old OffsetCommit version")
    k.commit(run, g, t, 3, label="an admin commit into a group with members")
    k.offset_fetch(run, g, t, label="offset fetch")
    run.call(k.DELETE_GROUPS, k.top(k.DELETE_GROUPS), {"groups_names": [g]}, label="delete a group with members")
    run.call(k.OFFSET_DELETE, k.top(k.OFFSET_DELETE), {"group_id": g, "topics": [
        {"name": t, "partitions": [{"partition_index": 0}]}]}, label="delete the offsets of a source topic")
    sg_heartbeat(run, g, m, -1, label="leave")
    run.call(k.DELETE_GROUPS, k.top(k.DELETE_GROUPS), {"groups_names": [g]}, label="delete the empty group")
    describe(run, g, label="describe the deleted group")


@scenario("streams/other-kinds-of-group")
def _(run):
    t = k.create_topic(run)
    classic, consumer, streams = run.name("classic"), run.name("consumer"), run.name("streams")
    k.join_and_sync(run, classic, t)
    sg_heartbeat(run, classic, run.name("m0"), 0, word_count(run, t), label="streams heartbeat to a classic group")
    cg_heartbeat(run, consumer, run.name("c0"), 0, [t], label="a consumer group")
    sg_heartbeat(run, consumer, run.name("m0"), 0, word_count(run, t), label="streams heartbeat to a consumer group")
    sg_join(run, streams, word_count(run, t))
    cg_heartbeat(run, streams, run.name("c1"), 0, [t], label="consumer heartbeat to a streams group")
    k.join(run, streams, [t], label="classic join to a streams group")
    describe(run, classic, consumer, label="describe other kinds of group")
    k.commit(run, run.name("simple"), t, 1, label="a simple group")
    sg_heartbeat(run, run.name("simple"), run.name("m1"), 0, word_count(run, t), label="take a simple group's id")
    k.offset_fetch(run, run.name("simple"), t, label="its offsets stay")


READ, CREATE, DESCRIBE, LITERAL, PREFIXED = 3, 5, 8, 3, 4  # ACL operations and pattern types


@scenario("streams/acls")
def _(run):
    t = k.create_topic(run)
    g = run.name("app")
    topo = word_count(run, t)
    sg_heartbeat(run, g, run.name("m0"), 0, topo, user="alice", label="join without READ on the group")
    grant(run, k.GROUP, g, READ)
    sg_heartbeat(run, g, run.name("m0"), 0, topo, user="alice", label="join without DESCRIBE on its topics")
    grant(run, k.TOPIC, run.name(""), DESCRIBE, pattern=PREFIXED)
    sg_heartbeat(run, g, run.name("m0"), 0, topo, user="alice", label="join without CREATE for the internal topics")
    describe(run, g, run.name("other"), user="alice", operations=True,
             label="describe with READ (so DESCRIBE) on one group and no ACL on the other")
    describe(run, g, label="describe as a super user")


@scenario("streams/acls-hidden-topics")
def _(run):
    t = k.create_topic(run)
    g = run.name("app")
    sg_join(run, g, word_count(run, t))
    grant(run, k.GROUP, g, DESCRIBE)
    describe(run, g, user="alice", label="describe a group whose topics the user may not describe")


# --- version probes (scenarios/versions.py) ------------------------------------------------------

def probe_heartbeat(run, v):
    t = k.create_topic(run)
    g = run.name("app")
    state = sg_join(run, g, word_count(run, t), version=v)
    sg_heartbeat(run, g, run.name("m0"), state["epoch"], version=v, label="steady heartbeat")


def probe_describe(run, v):
    t = k.create_topic(run)
    g = run.name("app")
    sg_join(run, g, word_count(run, t))
    describe(run, g, run.name("nogroup"), version=v, operations=True)
