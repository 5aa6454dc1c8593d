"""Which partitions one ShareFetch answer holds (issue 36 item 19; broker/handlers/share_answer.py).

Kafka 4.4 loads a share-partition's state when the first ShareFetch names it and passes the
partition over until the load is done; the loads of one fetch finish in its partition order,
each trying the fetch again, so a new member's first answer holds the partitions loaded up to
the first one with records. A waiting fetch is tried again after each request whose appends
reach it: one Produce request's appends make one answer. The fetch that opens a share session
lists every partition it read, with records or not. How the records are split into answers
decides what a consumer in implicit acknowledgement mode leaves to be delivered again when it
closes (its last poll's records are released).
"""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario
from tests.conformance.scenarios.share import join
from tests.conformance.scenarios.share_probes import share_fetch, share_fetch_body

WAIT = 5000  # long enough for Kafka's loads; an answer that has records comes at once


def setup(run, counts: dict[int, int]) -> tuple[str, str]:
    """A topic whose partitions hold ``counts`` records each (produced before the group
    exists), and a member of a share group reading it from the earliest offset."""
    t = k.create_topic(run, partitions=len(counts))
    for partition, n in counts.items():
        if n:
            k.produce(run, t, k.batch(n), partition=partition)
    g = run.name("sg")
    k.group_config(run, g, {"share.auto.offset.reset": "earliest"})
    join(run, g, [t])
    return t, g


def _waiting(run, g: str, t: str, epoch: int) -> dict:
    return share_fetch_body(run, g, t, epoch=epoch, max_wait_ms=WAIT, partitions=(0, 1))


def produce_to(run, t: str, counts: dict[int, int], label: str):
    """One Produce request holding a batch for each partition of ``counts``."""
    return run.call(k.PRODUCE, k.top(k.PRODUCE), {
        "transactional_id": None, "acks": -1, "timeout_ms": 30000,
        "topic_data": [{"name": t, "topic_id": k.NO_TOPIC_ID, "partition_data": [
            {"index": p, "records": k.batch(n)} for p, n in counts.items()]}]}, label=label, conn="producer")


@scenario("share/split-new-partitions-load-in-order", timed=True)
def _(run):
    # the user's case: 12 and 8 records; a consumer in implicit mode that read 20 and closed
    # had read them in two answers, and its close released the second one's 8
    t, g = setup(run, {0: 12, 1: 8})
    share_fetch(run, g, t, max_wait_ms=WAIT, partitions=(0, 1), label="first: partition 0, loaded first")
    share_fetch(run, g, t, epoch=1, max_wait_ms=WAIT, partitions=(0, 1), label="second: partition 1")


@scenario("share/split-loads-in-request-order", timed=True)
def _(run):
    t, g = setup(run, {0: 12, 1: 8})
    share_fetch(run, g, t, max_wait_ms=WAIT, partitions=(1, 0), label="first: partition 1, named first")
    share_fetch(run, g, t, epoch=1, max_wait_ms=WAIT, partitions=(1, 0), label="second: partition 0")


@scenario("share/split-first-loaded-has-nothing", timed=True)
def _(run):
    t, g = setup(run, {0: 0, 1: 8, 2: 12})
    share_fetch(run, g, t, max_wait_ms=WAIT, partitions=(0, 1, 2),
                label="first: partitions 0 (listed, empty) and 1")
    share_fetch(run, g, t, epoch=1, max_wait_ms=WAIT, partitions=(0, 1, 2), label="second: partition 2")


@scenario("share/split-a-new-session-lists-what-it-read")
def _(run):
    t, g = setup(run, {0: 0, 1: 0})
    # long enough for Kafka to load both states on a loaded machine: it answers when the wait ends
    share_fetch(run, g, t, max_wait_ms=2000, partitions=(0, 1), label="opening: both listed, empty")
    share_fetch(run, g, t, epoch=1, max_wait_ms=300, partitions=(0, 1), label="later: none listed")
    share_fetch(run, g, t, epoch=0, max_wait_ms=0, partitions=(0, 1), label="opening again: both listed")


@scenario("share/split-after-appends-one-produce-request-per-answer", timed=True)
def _(run):
    t, g = setup(run, {0: 0, 1: 0})
    share_fetch(run, g, t, max_wait_ms=2000, partitions=(0, 1), label="open the session, load both")
    waiting = run.send(k.SHARE_FETCH, k.top(k.SHARE_FETCH), _waiting(run, g, t, 1), label="waits")
    run.wait(0.5)
    produce_to(run, t, {0: 2, 1: 3}, label="one request, both partitions")
    run.receive(waiting)
    waiting = run.send(k.SHARE_FETCH, k.top(k.SHARE_FETCH), _waiting(run, g, t, 2),
                       label="waits: answered by the first request alone")
    run.wait(0.5)
    produce_to(run, t, {0: 2}, label="a request for partition 0")
    run.wait(0.3)  # (Kafka completes the waiting fetch a moment after an append: not in that moment)
    produce_to(run, t, {1: 3}, label="then one for partition 1")
    run.receive(waiting)
    share_fetch(run, g, t, epoch=3, max_wait_ms=WAIT, partitions=(0, 1), label="partition 1's records")

