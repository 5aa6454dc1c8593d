"""Share groups (KIP-932, seed 004): acquire, acknowledge (accept, release, reject), lock
expiry, the delivery limit, share session epochs and the heartbeat's errors; the record-lock
cap; the share-group offset APIs."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario
from tests.conformance.scenarios.share_probes import (
    alter_share_offsets, delete_share_offsets, describe_share_offsets, share_fetch,
)

ACCEPT, RELEASE, REJECT = 1, 2, 3


def join(run, group, topics, member="m0", *, conn="main") -> int:
    """Join and wait (unrecorded heartbeats) until the member has its assignment."""
    first = run.call(k.SHARE_GROUP_HEARTBEAT, k.top(k.SHARE_GROUP_HEARTBEAT), {
        "group_id": group, "member_id": run.name(member), "member_epoch": 0, "rack_id": None,
        "subscribed_topic_names": topics}, conn=conn, label="share join")
    state = {"epoch": first.get("member_epoch", -1), "done": bool((first.get("assignment") or {}).get("topic_partitions"))}

    def step():
        r = run.call(k.SHARE_GROUP_HEARTBEAT, k.top(k.SHARE_GROUP_HEARTBEAT), {
            "group_id": group, "member_id": run.name(member), "member_epoch": state["epoch"], "rack_id": None,
            "subscribed_topic_names": None}, conn=conn, record=False)
        state["epoch"] = r.get("member_epoch", state["epoch"])
        state["done"] = state["done"] or bool((r.get("assignment") or {}).get("topic_partitions"))
        return state
    if not state["done"]:
        run.poll(step, lambda s: s["done"], timeout=15, interval=0.3)
    return state["epoch"]


def setup(run, n=3, configs=None):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(n))
    g = run.name("sg")
    k.group_config(run, g, {"share.auto.offset.reset": "earliest", **(configs or {})})
    epoch = join(run, g, [t])
    return t, g, epoch


def first_fetch(run, g, t, **kw):
    """The session's first fetch waits for records: Kafka loads a share partition's state
    on first use, kipper has it at once."""
    return share_fetch(run, g, t, max_wait_ms=5000, **kw)


def ack(run, g, t, epoch, batches, label="share acknowledge"):
    return run.call(k.SHARE_ACKNOWLEDGE, k.top(k.SHARE_ACKNOWLEDGE), {
        "group_id": g, "member_id": run.name("m0"), "share_session_epoch": epoch, "is_renew_ack": False,
        "topics": [{"topic_id": k.topic_id(run, t), "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": a, "last_offset": b, "acknowledge_types": [kind]} for a, b, kind in batches]}]}]},
        label=label)


@scenario("share/acquire-and-accept")
def _(run):
    t, g, _ = setup(run)
    first_fetch(run, g, t)
    ack(run, g, t, 1, [(0, 2, ACCEPT)])
    share_fetch(run, g, t, epoch=2, label="nothing left")
    run.call(k.SHARE_GROUP_DESCRIBE, k.top(k.SHARE_GROUP_DESCRIBE), {"group_ids": [g],
                                                                    "include_authorized_operations": False})


@scenario("share/release-redelivers")
def _(run):
    t, g, _ = setup(run)
    first_fetch(run, g, t)
    ack(run, g, t, 1, [(0, 0, RELEASE), (1, 2, ACCEPT)])
    share_fetch(run, g, t, epoch=2, label="the released record, delivery count 2")


@scenario("share/reject-archives")
def _(run):
    t, g, _ = setup(run)
    first_fetch(run, g, t)
    ack(run, g, t, 1, [(0, 1, REJECT), (2, 2, RELEASE)])
    share_fetch(run, g, t, epoch=2, label="only the released one comes back")


@scenario("share/acknowledge-in-fetch")
def _(run):
    t, g, _ = setup(run)
    first_fetch(run, g, t)
    share_fetch(run, g, t, epoch=1, acks=[{"first_offset": 0, "last_offset": 2, "acknowledge_types": [ACCEPT]}],
                label="acknowledge with the next fetch")
    k.produce(run, t, k.batch(2, start=3))
    share_fetch(run, g, t, epoch=2, max_wait_ms=2000, label="the new records")


@scenario("share/lock-expiry", timed=True)
def _(run):
    t, g, _ = setup(run, configs={"share.record.lock.duration.ms": "1000"})
    first_fetch(run, g, t)
    run.wait(2.5)
    share_fetch(run, g, t, epoch=1, max_wait_ms=2000, label="after the lock expired")
    ack(run, g, t, 2, [(0, 2, ACCEPT)], label="acknowledge the redelivered records")


@scenario("share/delivery-limit", timed=True)
def _(run):
    t, g, _ = setup(run, n=1, configs={"share.delivery.count.limit": "2"})
    first_fetch(run, g, t)
    ack(run, g, t, 1, [(0, 0, RELEASE)], label="release 1")
    share_fetch(run, g, t, epoch=2, label="delivery 2")
    ack(run, g, t, 3, [(0, 0, RELEASE)], label="release 2: the limit")
    share_fetch(run, g, t, epoch=4, label="archived: nothing")


@scenario("share/session-epochs")
def _(run):
    t, g, _ = setup(run)
    share_fetch(run, g, t, epoch=3, label="a session that does not exist")
    first_fetch(run, g, t)
    share_fetch(run, g, t, epoch=5, label="wrong epoch")
    share_fetch(run, g, t, epoch=0, label="open a second session for the member")
    ack(run, g, t, 9, [(0, 0, ACCEPT)], label="acknowledge with a wrong epoch")
    share_fetch(run, g, t, epoch=-1, label="close")
    ack(run, g, t, 1, [(0, 0, ACCEPT)], label="acknowledge after close")


@scenario("share/bad-acknowledgements")
def _(run):
    t, g, _ = setup(run)
    first_fetch(run, g, t)
    ack(run, g, t, 1, [(5, 9, ACCEPT)], label="offsets never delivered")
    ack(run, g, t, 2, [(2, 1, ACCEPT)], label="last before first")
    ack(run, g, t, 3, [(0, 0, 7)], label="unknown acknowledge type")


@scenario("share/heartbeat-errors")
def _(run):
    t = k.create_topic(run)
    g = run.name("sg")
    epoch = join(run, g, [t])
    for label, member, ep, topics in (("unknown member", "nobody", 1, None),
                                      ("epoch from the future", "m0", epoch + 9, None),
                                      ("join without topics", "m1", 0, None),
                                      ("empty member id", "", 0, [t])):
        run.call(k.SHARE_GROUP_HEARTBEAT, k.top(k.SHARE_GROUP_HEARTBEAT), {
            "group_id": g, "member_id": run.name(member) if member else "", "member_epoch": ep, "rack_id": None,
            "subscribed_topic_names": topics}, label=label)


@scenario("share/group-id-of-another-kind")
def _(run):
    t = k.create_topic(run)
    k.join_and_sync(run, run.name("classic"), t)
    run.call(k.SHARE_GROUP_HEARTBEAT, k.top(k.SHARE_GROUP_HEARTBEAT), {
        "group_id": run.name("classic"), "member_id": run.name("m0"), "member_epoch": 0, "rack_id": None,
        "subscribed_topic_names": [t]}, label="share heartbeat to a classic group")
    run.call(k.SHARE_GROUP_DESCRIBE, k.top(k.SHARE_GROUP_DESCRIBE), {
        "group_ids": [run.name("classic")], "include_authorized_operations": False})


@scenario("share/two-members")
def _(run):
    t = k.create_topic(run, partitions=2)
    g = run.name("sg")
    k.group_config(run, g, {"share.auto.offset.reset": "earliest"})
    join(run, g, [t], "m0")
    join(run, g, [t], "m1", conn="second")
    run.call(k.SHARE_GROUP_DESCRIBE, k.top(k.SHARE_GROUP_DESCRIBE), {"group_ids": [g],
                                                                    "include_authorized_operations": False})


@scenario("share/offsets-admin")
def _(run):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(5))
    g, nosuch = run.name("sg"), run.name("nosuch")
    describe_share_offsets(run, g, {t: [0], nosuch: [0]}, label="no state yet")
    alter_share_offsets(run, g, {nosuch: {0: 0}, t: {0: 2}}, label="alter makes the group")
    describe_share_offsets(run, g, None, label="the start offset and the lag")
    run.call(k.SHARE_GROUP_DESCRIBE, k.top(k.SHARE_GROUP_DESCRIBE), {"group_ids": [g],
                                                                    "include_authorized_operations": False})
    alter_share_offsets(run, g, {t: {0: -1}}, label="back to uninitialized")
    describe_share_offsets(run, g, None, label="uninitialized but listed")
    delete_share_offsets(run, g, [nosuch, t])
    delete_share_offsets(run, g, [t], label="nothing left to delete")
    describe_share_offsets(run, g, None, label="after the delete")
    k.commit(run, run.name("classic"), t, 1)
    alter_share_offsets(run, run.name("classic"), {t: {0: 1}}, label="alter a classic group")
    delete_share_offsets(run, run.name("classic"), [t], label="delete of a classic group")
    delete_share_offsets(run, run.name("unknown"), [t], label="delete of an unknown group")
    alter_share_offsets(run, "", {t: {0: 1}}, label="alter an empty group id")


@scenario("share/offsets-with-a-member")
def _(run):
    t, g, epoch = setup(run)
    first_fetch(run, g, t)
    ack(run, g, t, 1, [(0, 2, ACCEPT)])
    alter_share_offsets(run, g, {t: {0: 0}}, label="refused while the member is there")
    delete_share_offsets(run, g, [t], label="delete refused too")
    share_fetch(run, g, t, epoch=2, label="close the session")
    run.call(k.SHARE_GROUP_HEARTBEAT, k.top(k.SHARE_GROUP_HEARTBEAT), {
        "group_id": g, "member_id": run.name("m0"), "member_epoch": -1, "rack_id": None,
        "subscribed_topic_names": None}, label="leave")
    alter_share_offsets(run, g, {t: {0: 0}}, label="reset to the start")
    describe_share_offsets(run, g, None, label="after the reset")
    # (the redelivery is tests/integration/test_share_offsets.py's: Kafka's first fetch after
    # the reset answers empty while it loads the new state, or not, as timing has it)


def _capped(run, batches, size, cap=100):
    t = k.create_topic(run)
    for i in range(batches):
        k.produce(run, t, k.batch(size, start=i * size))
    g = run.name("sg")
    k.group_config(run, g, {"share.auto.offset.reset": "earliest", "share.partition.max.record.locks": str(cap)})
    join(run, g, [t], "m0")
    join(run, g, [t], "m1", conn="second")
    return t, g


def _fetch_in_mode(run, g, t, member, mode, *, conn="main", max_wait_ms=5000, label="share fetch"):
    return run.call(k.SHARE_FETCH, k.top(k.SHARE_FETCH), {
        "group_id": g, "member_id": run.name(member), "share_session_epoch": 0, "max_wait_ms": max_wait_ms,
        "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 200, "batch_size": 200,
        "share_acquire_mode": mode, "is_renew_ack": False,
        "topics": [{"topic_id": k.topic_id(run, t), "partitions": [
            {"partition_index": 0, "partition_max_bytes": 1 << 20, "acknowledgement_batches": []}]}],
        "forgotten_topics_data": []}, conn=conn, label=label)


@scenario("share/record-lock-cap-batch-optimized", timed=True)
def _(run):
    t, g = _capped(run, batches=10, size=30)
    _fetch_in_mode(run, g, t, "m0", 0, label="100 rounded up to the batch that crosses it")
    _fetch_in_mode(run, g, t, "m1", 0, conn="second", max_wait_ms=500, label="at the cap: nothing")


@scenario("share/record-lock-cap-record-limit")
def _(run):
    t, g = _capped(run, batches=1, size=300)
    _fetch_in_mode(run, g, t, "m0", 1, label="exactly the cap")
    _fetch_in_mode(run, g, t, "m1", 1, conn="second", max_wait_ms=500, label="the rest of the cut batch")


@scenario("share/renew-in-a-session")
def _(run):
    """KIP-1222: a member renews its acquisition locks with a ShareFetch whose is_renew_ack is
    set and every fetch limit 0; a renewal that would also fetch is refused."""
    t, g, _ = setup(run)
    first_fetch(run, g, t, label="acquire")
    renew = {"group_id": g, "member_id": run.name("m0"), "share_session_epoch": 1, "max_wait_ms": 0, "min_bytes": 0,
             "max_bytes": 0, "max_records": 0, "batch_size": 0, "share_acquire_mode": 0, "is_renew_ack": True,
             "topics": [{"topic_id": k.topic_id(run, t), "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                 {"first_offset": 0, "last_offset": 0, "acknowledge_types": [4]}]}]}], "forgotten_topics_data": []}
    run.call(k.SHARE_FETCH, 2, renew, label="renew with every limit 0")
    run.call(k.SHARE_FETCH, 2, dict(renew, share_session_epoch=2, max_records=10, max_bytes=1 << 20),
             label="a renewal that would fetch")
