"""Share-group scenarios (KIP-932) with confluent-kafka's ShareConsumer and with ours.

Each scenario runs once per client through a thin adapter, against one broker
with a 1 s acquisition lock (the minimum) and a delivery-count limit of 2.
The verdicts come from what the broker acknowledged (commit results), not from
what a client says it received.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from kipper.client.admin import NewTopic, create_topics, share_group_describe
from kipper.client.blocking import connect_any
from kipper.client.producer_requests import produce
from kipper.client.share_acks import AcknowledgeType
from kipper.client.share_consumer import ShareConsumer
from kipper.protocol import records
from tests.support import requires
from tests.support.broker import make_broker

ck = requires.module("confluent_kafka", "interop")

pytestmark = pytest.mark.interop

LOCK_MS = 1000
LIMIT = 2


@pytest.fixture(scope="module")
def share_broker():
    proc = make_broker({"group.share.record.lock.duration.ms": str(LOCK_MS),
                        "group.share.delivery.count.limit": str(LIMIT),
                        "group.share.auto.offset.reset": "earliest"}).start()
    yield proc
    proc.stop()


# --- adapters ----------------------------------------------------------------------------------

class Rec:
    __slots__ = ("offset", "value", "delivery_count", "raw")

    def __init__(self, offset, value, delivery_count, raw):
        self.offset, self.value, self.delivery_count, self.raw = offset, value, delivery_count, raw


ACK = {"accept": AcknowledgeType.ACCEPT, "release": AcknowledgeType.RELEASE,
       "reject": AcknowledgeType.REJECT}


class Confluent:
    def __init__(self, bootstrap, group, topic):
        self.c = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                                   "share.acknowledgement.mode": "explicit"})
        self.c.subscribe([topic])

    def poll(self, timeout):
        return [Rec(m.offset(), m.value(), m.delivery_count(), m)
                for m in self.c.poll(timeout) if m.error() is None]

    def ack(self, rec, kind):
        self.c.acknowledge(rec.raw, getattr(ck.AcknowledgeType, kind.upper()))

    def commit(self):
        results = self.c.commit_sync()
        return all(err is None for err in results.values())

    def close(self):
        self.c.close()


class Ours:
    def __init__(self, bootstrap, group, topic):
        self.c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                                "share.acknowledgement.mode": "explicit"})
        self.c.subscribe([topic])

    def poll(self, timeout):
        return [Rec(r.offset, r.value, r.delivery_count, r) for r in self.c.poll(timeout)]

    def ack(self, rec, kind):
        self.c.acknowledge(rec.raw, ACK[kind])

    def commit(self):
        return all(err is None for err in self.c.commit_sync().values())

    def close(self):
        self.c.close()


CLIENTS = {"confluent": Confluent, "ours": Ours}


@pytest.fixture(params=sorted(CLIENTS))
def make(request, share_broker):
    made = []

    def factory(group, topic):
        consumer = CLIENTS[request.param](share_broker.bootstrap, group, topic)
        made.append(consumer)
        return consumer
    yield factory
    for consumer in made:
        try:
            consumer.close()
        except Exception:
            pass


# --- helpers -----------------------------------------------------------------------------------

def _topic(bootstrap, n_records=0, batch=100):
    name = f"share-{uuid.uuid4().hex[:8]}"
    with connect_any(bootstrap) as conn:
        resp = create_topics(conn, [NewTopic(name, 1, 1)], timeout_ms=10000)
        assert resp.topics[0].error_code == 0
    _produce(bootstrap, name, n_records, batch)
    return name


def _produce(bootstrap, topic, n, batch=100, start=0):
    with connect_any(bootstrap) as conn:
        for first in range(start, start + n, batch):
            count = min(batch, start + n - first)
            data = records.build_batch([(None, f"v{i}".encode()) for i in range(first, first + count)])
            resp = produce(conn, {(topic, 0): data}, acks=1, timeout_ms=10000)
            assert resp.responses[0].partition_responses[0].error_code == 0


def _members(bootstrap, group):
    with connect_any(bootstrap) as conn:
        body = share_group_describe(conn, [group])
    return len(body.groups[0].members)


def _wait(predicate, timeout=15.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _poll_until(consumer, predicate, timeout=15.0, on_record=None):
    """Poll (acknowledging each poll as ``on_record`` says) until ``predicate(all seen)``."""
    seen = []
    deadline = time.time() + timeout
    while time.time() < deadline and not predicate(seen):
        recs = consumer.poll(0.3)
        for r in recs:
            consumer.ack(r, on_record(r) if on_record else "accept")
        if recs:
            assert consumer.commit()
        seen += recs
    return seen


# --- scenarios ---------------------------------------------------------------------------------

def test_two_consumers_share_2000_records_and_none_is_accepted_twice(make, share_broker):
    bootstrap = share_broker.bootstrap
    topic = _topic(bootstrap)
    group = f"g-{uuid.uuid4().hex[:8]}"
    consumers = [make(group, topic), make(group, topic)]
    accepted: list[list[bytes]] = [[], []]  # values: the group's checkpoint shifts offsets
    total = 2000
    done = threading.Event()
    errors = []

    def run(k):
        try:
            while not done.is_set():
                recs = consumers[k].poll(0.2)
                for r in recs:
                    consumers[k].ack(r, "accept")
                if recs:
                    assert consumers[k].commit(), "an acknowledgement was refused"
                    accepted[k] += [r.value for r in recs]
                    time.sleep(0.002 * len(recs) / 10)  # some work, so both get a share
                if sum(map(len, accepted)) >= total:
                    done.set()
        except Exception as exc:  # surfaced below
            errors.append(exc)
            done.set()

    threads = [threading.Thread(target=run, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    assert _wait(lambda: _members(bootstrap, group) == 2)
    _produce(bootstrap, topic, total, batch=50)
    for t in threads:
        t.join(60)
    assert not errors, errors
    a, b = set(accepted[0]), set(accepted[1])
    assert len(accepted[0]) == len(a) and len(accepted[1]) == len(b)
    assert not a & b, f"accepted by both: {sorted(a & b)[:10]}"
    assert a | b == {f"v{i}".encode() for i in range(total)}
    assert a and b, "both consumers should get a share of the records"


def test_release_redelivers_with_a_higher_delivery_count(make, share_broker):
    topic = _topic(share_broker.bootstrap, 5)
    c = make(f"g-{uuid.uuid4().hex[:8]}", topic)
    first = _poll_until(c, lambda seen: any(r.offset == 2 for r in seen),
                        on_record=lambda r: "release" if r.offset == 2 else "accept")
    assert [r.delivery_count for r in first if r.offset == 2] == [1]
    again = _poll_until(c, lambda seen: any(r.offset == 2 for r in seen))
    assert [(r.offset, r.delivery_count) for r in again] == [(2, 2)]


def test_rejected_record_is_never_redelivered(make, share_broker):
    topic = _topic(share_broker.bootstrap, 10)
    group = f"g-{uuid.uuid4().hex[:8]}"
    c = make(group, topic)
    seen = _poll_until(c, lambda seen: len(seen) >= 10,
                       on_record=lambda r: "reject" if r.offset == 3 else
                       ("release" if r.delivery_count == 1 else "accept"))
    # everything but 3 was released once and comes back; 3 never does
    seen += _poll_until(c, lambda s: False, timeout=2.5,
                        on_record=lambda r: "release" if r.delivery_count == 1 else "accept")
    assert [r.delivery_count for r in seen if r.offset == 3] == [1]
    assert sorted({r.offset for r in seen if r.delivery_count == 2}) == [o for o in range(10) if o != 3]


def test_records_of_a_consumer_that_stops_acknowledging_go_to_the_other_after_the_lock(make, share_broker):
    bootstrap = share_broker.bootstrap
    topic = _topic(bootstrap)
    group = f"g-{uuid.uuid4().hex[:8]}"
    stuck = make(group, topic)
    assert _wait(lambda: _members(bootstrap, group) == 1)
    _produce(bootstrap, topic, 20)
    held = []
    deadline = time.time() + 10
    while not held and time.time() < deadline:
        held = stuck.poll(0.5)  # acquired, never acknowledged, never polled again
    assert held and all(r.delivery_count == 1 for r in held)
    other = make(group, topic)
    started = time.time()
    got = _poll_until(other, lambda seen: {r.offset for r in seen} >= {r.offset for r in held})
    assert time.time() - started >= LOCK_MS / 1000 * 0.5  # not before the lock ran out
    redelivered = {r.offset: r.delivery_count for r in got}
    assert all(redelivered[r.offset] == 2 for r in held)


def test_delivery_count_limit_archives_the_record(make, share_broker):
    topic = _topic(share_broker.bootstrap, 3)
    c = make(f"g-{uuid.uuid4().hex[:8]}", topic)
    seen = _poll_until(c, lambda s: False, timeout=3.0,
                       on_record=lambda r: "release" if r.offset == 1 else "accept")
    assert [r.delivery_count for r in seen if r.offset == 1] == list(range(1, LIMIT + 1))
    assert sorted(r.offset for r in seen if r.offset != 1) == [0, 2]


def _implicit(client, bootstrap, group, topic):
    if client == "confluent":
        c = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
        c.subscribe([topic])
        return lambda t: [m for m in c.poll(t) if m.error() is None], c
    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    c.subscribe([topic])
    return c.poll, c


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_implicit_mode_accepts_each_poll_on_the_next(client, share_broker):
    bootstrap = share_broker.bootstrap
    topic = _topic(bootstrap, 30)
    group = f"g-{uuid.uuid4().hex[:8]}"
    poll, c = _implicit(client, bootstrap, group, topic)
    got = 0
    deadline = time.time() + 15
    while got < 30 and time.time() < deadline:
        got += len(poll(0.3))
    c.commit_sync()  # accepts the last poll (librdkafka's close() does not, see docs)
    c.close()
    assert got == 30
    poll, c = _implicit(client, bootstrap, group, topic)
    left = sum(len(poll(0.5)) for _ in range(4))  # > the 1 s lock: nothing was merely held
    c.close()
    assert left == 0


def test_our_commit_callback_runs_on_the_application_thread_and_reports_refusals(share_broker):
    topic = _topic(share_broker.bootstrap, 4)
    results, threads = [], []

    def on_completion(batch):
        threads.append(threading.get_ident())
        results.append(batch)

    c = ShareConsumer({"bootstrap.servers": share_broker.bootstrap, "group.id": f"cb-{uuid.uuid4().hex[:6]}",
                       "share.acknowledgement.mode": "explicit"}, on_completion=on_completion)
    c.subscribe([topic])
    recs = []
    while len(recs) < 4:
        recs += c.poll(0.5)
    c.acknowledge(recs[0], AcknowledgeType.ACCEPT)
    for r in recs[1:]:
        c.acknowledge(r, AcknowledgeType.RELEASE)
    c.commit_async()
    assert results == []  # nothing yet: the answer is read on a later call
    again = c.poll(2.0)  # the released records come back; the async answer is handled here
    (tp,) = results[0]
    assert results[0][tp] is None and threads == [threading.get_ident()]
    for r in again:
        c.acknowledge(r, AcknowledgeType.ACCEPT)
    assert c.commit_sync()[tp] is None
    _produce(share_broker.bootstrap, topic, 2, start=4)
    fresh = []
    while len(fresh) < 2:
        fresh += c.poll(0.5)
    time.sleep(LOCK_MS / 1000 + 0.3)  # let the locks run out (first delivery: available again)
    for r in fresh:
        c.acknowledge(r, AcknowledgeType.ACCEPT)  # too late
    late = c.commit_sync()
    assert late[tp] is not None and late[tp].code.name == "INVALID_RECORD_STATE"
    assert results[-1] == late
    c.close()
