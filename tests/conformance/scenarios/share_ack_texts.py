"""The text of a refused share acknowledgement, compared word for word (issue 36, the
entry share-acknowledge-error-text; broker/share/ack_check.py): Kafka sends its
SharePartition's refusal as the partition's error message (ShareAcknowledge) and
acknowledgement error message (ShareFetch), worded by batch or by offset as its cache of
in-flight batches tracks them (a batch stays whole until part of it changes)."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario
from tests.conformance.scenarios.share import ACCEPT, RELEASE, join
from tests.conformance.scenarios.share_probes import share_fetch

WAIT = 5000


def ack(run, g, t, member, epoch, batches, label, conn="main"):
    """ShareAcknowledge of partition 0: (first, last, [types]) batches."""
    return run.call(k.SHARE_ACKNOWLEDGE, k.top(k.SHARE_ACKNOWLEDGE), {
        "group_id": g, "member_id": run.name(member), "share_session_epoch": epoch, "is_renew_ack": False,
        "topics": [{"topic_id": k.topic_id(run, t), "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": a, "last_offset": b, "acknowledge_types": types} for a, b, types in batches]}]}]},
        label=label, conn=conn, messages=True)


@scenario("share/acknowledgement-refusal-texts")
def _(run):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(3), label="offsets 0-2")
    k.produce(run, t, k.batch(3, start=3), label="offsets 3-5")
    # all produced before any acknowledgement: kipper's share state records (seed 004) come after
    k.produce(run, t, k.batch(3, start=6), label="offsets 6-8")
    g = run.name("sg")
    k.group_config(run, g, {"share.auto.offset.reset": "earliest"})
    join(run, g, [t])
    share_fetch(run, g, t, max_wait_ms=WAIT, max_records=6, label="m0 acquires 0-5: one in-flight batch")
    ack(run, g, t, "m0", 1, [(7, 9, [ACCEPT])], "first offset past the acquired records")
    ack(run, g, t, "m0", 2, [(4, 8, [ACCEPT])], "last offset past them")
    ack(run, g, t, "m0", 3, [(0, 2, [RELEASE])], "release part of the batch: tracked by offset from now")
    ack(run, g, t, "m0", 4, [(0, 2, [ACCEPT])], "0-2 again: not acquired, by offset")
    ack(run, g, t, "m0", 5, [(3, 3, [RELEASE])], "release offset 3")
    ack(run, g, t, "m0", 6, [(3, 5, [ACCEPT, ACCEPT, ACCEPT])], "one type per offset, 3 not acquired")
    share_fetch(run, g, t, epoch=7, max_wait_ms=WAIT, label="m0 acquires 0-3 again and 6-8: a new batch")
    ack(run, g, t, "m0", 8, [(6, 8, [RELEASE])], "release batch 6-8 whole")
    ack(run, g, t, "m0", 9, [(6, 8, [ACCEPT])], "6-8 again: not acquired, by batch")
    ack(run, g, t, "m0", 10, [(6, 6, [ACCEPT])], "part of 6-8: still by batch")
    join(run, g, [t], "m1", conn="second")
    share_fetch(run, g, t, member="m1", max_wait_ms=WAIT, conn="second", label="m1 acquires 6-8")
    ack(run, g, t, "m0", 11, [(6, 8, [ACCEPT])], "m1's batch")
    ack(run, g, t, "m0", 12, [(7, 7, [ACCEPT])], "part of m1's batch")
    share_fetch(run, g, t, epoch=13, max_wait_ms=0, acks=[{"first_offset": 6, "last_offset": 8,
                                                          "acknowledge_types": [ACCEPT]}],
                label="in a ShareFetch: the acknowledgement error message")
    ack(run, g, t, "m0", 14, [(6, 8, [ACCEPT, ACCEPT, ACCEPT])], "m1's batch, a type per offset")
