"""Classic and KIP-848 consumer groups: join, sync, heartbeat, leave, static members,
rebalances, commits with stale generations, and the administrative group APIs."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario


@scenario("classic/heartbeat-errors")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    member, gen = k.join_and_sync(run, g, t)
    k.heartbeat(run, g, gen, member, label="ok")
    k.heartbeat(run, g, gen, "someone-else", label="unknown member")
    k.heartbeat(run, g, gen + 5, member, label="stale generation")
    k.heartbeat(run, run.name("nogroup"), 1, member, label="unknown group")


@scenario("classic/sync-errors")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    resp = k.join_member(run, g, [t])
    member, gen = resp.get("member_id", ""), resp.get("generation_id", -1)
    k.sync(run, g, gen + 1, member, label="wrong generation")
    k.sync(run, g, gen, "someone-else", label="unknown member")
    k.sync(run, g, gen, member, {member: k.assignment({t: [0]})}, label="the leader's sync")


@scenario("classic/join-errors")
def _(run):
    t = k.create_topic(run)
    k.join(run, run.name("g"), [t], session_ms=10, label="session timeout below the minimum")
    k.join(run, run.name("g"), [t], session_ms=10_000_000, label="session timeout above the maximum")
    k.join(run, "", [t], label="empty group id")
    k.join(run, run.name("g2"), [t], member_id="made-up", label="unknown member id")


@scenario("classic/inconsistent-protocols")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    k.join_and_sync(run, g, t)
    run.call(k.JOIN_GROUP, k.top(k.JOIN_GROUP), {
        "group_id": g, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": "",
        "group_instance_id": None, "protocol_type": "connect",
        "protocols": [{"name": "other", "metadata": b"x"}], "reason": None}, conn="other",
        label="another protocol type")


@scenario("classic/two-members-rebalance")
def _(run):
    t = k.create_topic(run, partitions=2)
    g = run.name("g")
    m1, gen1 = k.join_and_sync(run, g, t, rebalance_ms=10000)
    joined = k.join(run, g, [t], conn="second", rebalance_ms=10000, label="second member joins")
    m2 = joined.get("member_id", "")
    pending = run.send(k.JOIN_GROUP, k.top(k.JOIN_GROUP), {
        "group_id": g, "session_timeout_ms": 30000, "rebalance_timeout_ms": 10000, "member_id": m2,
        "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": k.subscription([t])}], "reason": None},
        conn="second", label="second member joins with its id")
    # the first member learns of the rebalance from a heartbeat (when is the broker's timing)
    run.poll(lambda: k.heartbeat(run, g, gen1, m1, record=False), lambda r: r.get("error_code") == 27)
    first = k.join(run, g, [t], member_id=m1, rebalance_ms=10000, label="first member rejoins")
    second = run.receive(pending)
    gen2 = first.get("generation_id", -1)
    leader = first.get("leader", "")
    members = sorted(m["member_id"] for m in first.get("members", []) or [])
    if leader == m1 and len(members) == 2:
        pending = run.send(k.SYNC_GROUP, k.top(k.SYNC_GROUP), {
            "group_id": g, "generation_id": second.get("generation_id", -1), "member_id": m2, "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": "range", "assignments": []}, conn="second",
            label="follower sync")
        k.sync(run, g, gen2, m1, {m1: k.assignment({t: [0]}), m2: k.assignment({t: [1]})}, label="leader sync")
        run.receive(pending)
    k.commit(run, g, t, 1, generation=gen1, member_id=m1, label="commit with the old generation")
    k.commit(run, g, t, 1, generation=gen2, member_id=m1, label="commit with the new generation")
    k.heartbeat(run, g, gen2, m2, conn="second", label="follower heartbeat")


@scenario("classic/static-member")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    first = k.join_member(run, g, [t], instance_id="static-1")
    m1, gen = first.get("member_id", ""), first.get("generation_id", -1)
    k.sync(run, g, gen, m1, {m1: k.assignment({t: [0]})}, instance_id="static-1")
    again = k.join(run, g, [t], instance_id="static-1", conn="restarted", label="the same instance restarts")
    k.heartbeat(run, g, gen, m1, instance_id="static-1", label="the old member id is fenced")
    run.call(k.LEAVE_GROUP, k.top(k.LEAVE_GROUP), {"group_id": g, "members": [
        {"member_id": again.get("member_id", ""), "group_instance_id": "static-1", "reason": None},
        {"member_id": "", "group_instance_id": "static-unknown", "reason": None}]}, label="leave by instance id")
    run.call(k.DESCRIBE_GROUPS, k.top(k.DESCRIBE_GROUPS), {"groups": [g], "include_authorized_operations": False})


@scenario("classic/commit-errors")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    member, gen = k.join_and_sync(run, g, t)
    k.commit(run, g, t, 1, generation=gen, member_id=member, label="member commit")
    k.commit(run, g, t, 1, generation=gen + 1, member_id=member, label="future generation")
    k.commit(run, g, t, 1, generation=gen, member_id="nobody", label="unknown member")
    k.commit(run, g, t, 1, label="simple commit into a live group")
    k.commit(run, g, run.name("missing"), 1, generation=gen, member_id=member, label="unknown topic")
    k.commit(run, g, t, 1, generation=gen, member_id=member, metadata_text="m" * 5000, label="metadata too large")
    k.commit(run, g, t, 1, partition=9, generation=gen, member_id=member, label="unknown partition")


@scenario("classic/offset-fetch-cases")
def _(run):
    t = k.create_topic(run, partitions=2)
    g = run.name("g")
    k.commit(run, g, t, 4, metadata_text="meta")
    k.offset_fetch(run, g, None, label="all committed offsets")
    k.offset_fetch(run, run.name("nogroup"), t, label="unknown group")
    k.offset_fetch(run, g, run.name("missing"), label="unknown topic")
    k.offset_fetch(run, g, t, version=1, label="v1")


@scenario("classic/leave-and-delete")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    member, gen = k.join_and_sync(run, g, t)
    k.commit(run, g, t, 2, generation=gen, member_id=member)
    run.call(k.DELETE_GROUPS, k.top(k.DELETE_GROUPS), {"groups_names": [g]}, label="delete a live group")
    run.call(k.OFFSET_DELETE, k.top(k.OFFSET_DELETE), {"group_id": g, "topics": [
        {"name": t, "partitions": [{"partition_index": 0}]}]}, label="delete offsets of a subscribed topic")
    run.call(k.LEAVE_GROUP, k.top(k.LEAVE_GROUP), {"group_id": g, "members": [
        {"member_id": member, "group_instance_id": None, "reason": None},
        {"member_id": "nobody", "group_instance_id": None, "reason": None}]}, label="leave, one unknown")
    run.call(k.LIST_GROUPS, k.top(k.LIST_GROUPS), {"states_filter": ["Empty"], "types_filter": []})
    run.call(k.DELETE_GROUPS, k.top(k.DELETE_GROUPS), {"groups_names": [g]}, label="delete the empty group")
    k.offset_fetch(run, g, t, label="offsets are gone")


@scenario("classic/list-groups-filters")
def _(run):
    t = k.create_topic(run)
    k.join_and_sync(run, run.name("g"), t)
    k.commit(run, run.name("simple"), t, 1)
    for label, body in (("Stable", {"states_filter": ["Stable"], "types_filter": []}),
                        ("classic", {"states_filter": [], "types_filter": ["classic"]}),
                        ("consumer", {"states_filter": [], "types_filter": ["consumer"]}),
                        ("unknown state", {"states_filter": ["Sleepy"], "types_filter": []})):
        run.call(k.LIST_GROUPS, k.top(k.LIST_GROUPS), body, label=label)


@scenario("classic/describe-groups-versions")
def _(run):
    t = k.create_topic(run)
    member, gen = k.join_and_sync(run, run.name("g"), t)
    for v in (0, 3, 5):
        run.call(k.DESCRIBE_GROUPS, v, {"groups": [run.name("g")], "include_authorized_operations": True},
                 label=f"describe v{v}")


# --- KIP-848 ------------------------------------------------------------------------------

def cg_heartbeat(run, g, member, epoch, topics=None, *, label="consumer heartbeat", owned=None, instance=None,
                 assignor=None, regex=None, record=True, conn="main"):
    if owned is None and epoch == 0:
        owned = []  # a (re)join lists no partitions (null is INVALID_REQUEST on both brokers)
    return run.call(k.CONSUMER_GROUP_HEARTBEAT, k.top(k.CONSUMER_GROUP_HEARTBEAT), {
        "group_id": g, "member_id": member, "member_epoch": epoch, "instance_id": instance, "rack_id": None,
        "rebalance_timeout_ms": 30000 if epoch == 0 else -1, "subscribed_topic_names": topics,
        "subscribed_topic_regex": regex, "server_assignor": assignor, "topic_partitions": owned},
        label=label, record=record, conn=conn)


def cg_join(run, g, topics, member="m0", **kw) -> dict:
    """Join and wait (unrecorded heartbeats) until the assignment has arrived: Kafka computes
    it off the heartbeat path, kipper within it."""
    first = cg_heartbeat(run, g, run.name(member), 0, topics, **kw)
    epoch = first.get("member_epoch", -1)
    state = {"epoch": epoch, "assignment": (first.get("assignment") or {}).get("topic_partitions") or []}

    def step():
        r = cg_heartbeat(run, g, run.name(member), state["epoch"], record=False, conn=kw.get("conn", "main"))
        state["epoch"] = r.get("member_epoch", state["epoch"])
        if r.get("assignment"):
            state["assignment"] = r["assignment"].get("topic_partitions") or []
        return state
    if not state["assignment"]:
        run.poll(step, lambda s: bool(s["assignment"]), timeout=15, interval=0.3)
    return state


@scenario("consumer/join-assign-leave")
def _(run):
    t = k.create_topic(run, partitions=2)
    g = run.name("g")
    state = cg_join(run, g, [t])
    cg_heartbeat(run, g, run.name("m0"), state["epoch"], label="steady heartbeat")
    run.call(k.CONSUMER_GROUP_DESCRIBE, k.top(k.CONSUMER_GROUP_DESCRIBE), {"group_ids": [g],
                                                                          "include_authorized_operations": False})
    cg_heartbeat(run, g, run.name("m0"), -1, label="leave")


@scenario("consumer/errors")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    state = cg_join(run, g, [t])
    cg_heartbeat(run, g, run.name("nobody"), 3, label="unknown member")
    cg_heartbeat(run, g, run.name("m0"), state["epoch"] + 7, label="epoch from the future")
    cg_heartbeat(run, g, run.name("m1"), 0, None, label="join without a subscription")
    cg_heartbeat(run, g, run.name("m2"), 0, [t], assignor="no-such-assignor", label="unknown assignor")
    cg_heartbeat(run, g, "", 0, [t], label="empty member id")
    cg_heartbeat(run, "", run.name("m3"), 0, [t], label="empty group id")


@scenario("consumer/heartbeat-to-a-missing-group")
def _(run):
    cg_heartbeat(run, run.name("g"), run.name("m0"), 3, label="a member epoch for a group that does not exist")
    cg_heartbeat(run, run.name("g"), run.name("m0"), -1, label="leave a group that does not exist")


@scenario("consumer/commit-with-member-epoch")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    state = cg_join(run, g, [t])
    k.commit(run, g, t, 3, generation=state["epoch"], member_id=run.name("m0"), label="current epoch")
    k.commit(run, g, t, 3, generation=state["epoch"] - 1, member_id=run.name("m0"), label="stale epoch")
    k.commit(run, g, t, 3, generation=state["epoch"] + 1, member_id=run.name("m0"), label="future epoch")
    k.commit(run, g, t, 3, generation=state["epoch"], member_id=run.name("nobody"), label="unknown member")
    k.commit(run, g, t, 3, version=7, generation=state["epoch"], member_id=run.name("m0"),
             label="an old OffsetCommit version")


@scenario("consumer/static-member")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    state = cg_join(run, g, [t], instance="static-1")
    cg_heartbeat(run, g, run.name("m0"), -2, instance="static-1", label="temporary leave (-2)")
    cg_heartbeat(run, g, run.name("m9"), 0, [t], instance="static-1", label="rejoin as another member id")
    cg_heartbeat(run, g, run.name("m8"), 0, [t], instance="static-1", label="a second joiner with the same instance")
    del state


@scenario("consumer/regex-subscription")
def _(run):
    k.create_topic(run, "orders-a")
    k.create_topic(run, "orders-b")
    k.create_topic(run, "other")
    g = run.name("g")
    state = cg_join(run, g, None, regex=run.name("orders-.*"))
    run.call(k.CONSUMER_GROUP_DESCRIBE, k.top(k.CONSUMER_GROUP_DESCRIBE), {"group_ids": [g],
                                                                          "include_authorized_operations": False})
    cg_heartbeat(run, g, run.name("m0"), state["epoch"], regex="[", label="an invalid regex")


@scenario("consumer/classic-join-to-a-consumer-group")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    cg_join(run, g, [t])
    k.join(run, g, [t], label="classic JoinGroup")
    run.call(k.DESCRIBE_GROUPS, k.top(k.DESCRIBE_GROUPS), {"groups": [g], "include_authorized_operations": False})
    run.call(k.LIST_GROUPS, k.top(k.LIST_GROUPS), {"states_filter": [], "types_filter": ["consumer"]})


@scenario("consumer/describe-unknown-and-classic")
def _(run):
    t = k.create_topic(run)
    k.join_and_sync(run, run.name("classic"), t)
    run.call(k.CONSUMER_GROUP_DESCRIBE, k.top(k.CONSUMER_GROUP_DESCRIBE), {
        "group_ids": [run.name("classic"), run.name("nogroup")], "include_authorized_operations": False})
    cg_heartbeat(run, run.name("classic"), run.name("m0"), 0, [t], label="consumer heartbeat to a classic group")
