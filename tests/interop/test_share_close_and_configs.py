"""confluent-kafka's ShareConsumer (and ours where librdkafka has no setting) against the
broker: acknowledgements sent while closing, group-level share configs set through the
admin API, read_committed share groups and KIP-1206's acquire modes.

librdkafka's close() sends the leaving ShareGroupHeartbeat and the final
ShareAcknowledge at once on two connections; both arrival orders must keep the
acknowledgements. Each check that something is *not* delivered again produces a
sentinel record afterwards: released records are always acquired before new ones, so
the sentinel arriving first proves the earlier records stayed acknowledged.
"""

from __future__ import annotations

import time
import uuid

import pytest

from kipper.client.admin import NewTopic, create_topics
from kipper.client.blocking import connect_any
from kipper.client.producer_requests import produce
from kipper.client.share_consumer import ShareConsumer
from kipper.protocol import records
from tests.support import requires
from tests.support.broker import make_broker

ck = requires.module("confluent_kafka", "interop")

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def broker():
    proc = make_broker({"group.share.auto.offset.reset": "earliest",
                        "group.share.min.heartbeat.interval.ms": "100",
                        "group.share.heartbeat.interval.ms": "500"}).start()
    yield proc
    proc.stop()


def _topic(bootstrap) -> str:
    name = f"close-{uuid.uuid4().hex[:8]}"
    with connect_any(bootstrap) as conn:
        assert create_topics(conn, [NewTopic(name, 1, 1)], timeout_ms=10000).topics[0].error_code == 0
    return name


def _produce(bootstrap, topic, values) -> None:
    """One batch holding ``values``."""
    with connect_any(bootstrap) as conn:
        resp = produce(conn, {(topic, 0): records.build_batch([(None, v) for v in values])},
                       acks=1, timeout_ms=10000)
        assert resp.responses[0].partition_responses[0].error_code == 0


def _consumer(bootstrap, group, topic, **extra):
    c = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                          "share.acknowledgement.mode": "explicit", **extra})
    c.subscribe([topic])
    return c


def _poll(c, want: int, timeout: float = 15.0) -> list:
    """Poll until ``want`` records came (or the time is up); every record returned."""
    got = []
    deadline = time.time() + timeout
    while len(got) < want and time.time() < deadline:
        got += [m for m in c.poll(0.5) if m.error() is None]
    return got


def _set_group_config(bootstrap, group, configs: dict) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource("GROUP", group, incremental_configs=[
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(10)


# --- acknowledgements on close ------------------------------------------------------------------

def test_accept_then_close_is_never_delivered_again_in_either_arrival_order(broker):
    topic = _topic(broker.bootstrap)
    group = f"acc-{uuid.uuid4().hex[:6]}"
    for i in range(50):
        values = [b"%d-%d" % (i, k) for k in range(3)]
        _produce(broker.bootstrap, topic, values)
        c = _consumer(broker.bootstrap, group, topic)
        got = _poll(c, 3)
        # an earlier round's record released by its close would come first, with count 2
        assert [(m.value(), m.delivery_count()) for m in got] == [(v, 1) for v in values], i
        for m in got:
            c.acknowledge(m, ck.AcknowledgeType.ACCEPT)
        c.close()
    _produce(broker.bootstrap, topic, [b"sentinel"])
    last = _consumer(broker.bootstrap, group, topic)
    assert [m.value() for m in _poll(last, 1)] == [b"sentinel"]
    last.close()


def test_reject_then_close_archives_the_records(broker):
    topic = _topic(broker.bootstrap)
    group = f"rej-{uuid.uuid4().hex[:6]}"
    _produce(broker.bootstrap, topic, [b"a", b"b", b"c"])
    c = _consumer(broker.bootstrap, group, topic)
    got = _poll(c, 3)
    assert len(got) == 3
    for m in got:
        c.acknowledge(m, ck.AcknowledgeType.REJECT)
    c.close()
    _produce(broker.bootstrap, topic, [b"sentinel"])
    again = _consumer(broker.bootstrap, group, topic)
    assert [m.value() for m in _poll(again, 1)] == [b"sentinel"]
    again.close()


def test_release_on_close_is_delivered_again_with_a_higher_count(broker):
    topic = _topic(broker.bootstrap)
    group = f"rel-{uuid.uuid4().hex[:6]}"
    _produce(broker.bootstrap, topic, [b"a", b"b", b"c"])
    c = _consumer(broker.bootstrap, group, topic)
    got = _poll(c, 3)
    for m in got:
        c.acknowledge(m, ck.AcknowledgeType.RELEASE)
    c.close()
    again = _consumer(broker.bootstrap, group, topic)
    redelivered = _poll(again, 3)
    assert [(m.value(), m.delivery_count()) for m in redelivered] == [(b"a", 2), (b"b", 2), (b"c", 2)]
    for m in redelivered:
        again.acknowledge(m, ck.AcknowledgeType.ACCEPT)
    again.close()


def _implicit(bootstrap, group, topic):
    """The default acknowledgement mode: what a poll returned is accepted by the next poll."""
    c = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    c.subscribe([topic])
    return c


def test_implicit_mode_close_releases_the_last_poll_as_on_kafka(broker):
    # issue 36 item 19, measured on Kafka 4.4 with librdkafka 2.16 and the Java client: the
    # close sends ShareAcknowledge (epoch -1) without the last poll's records, so they are
    # released and delivered again; records of earlier polls were accepted by the next poll
    topic = _topic(broker.bootstrap)
    group = f"imp-{uuid.uuid4().hex[:6]}"
    values = [b"v%d" % i for i in range(20)]
    _produce(broker.bootstrap, topic, values)
    first = _implicit(broker.bootstrap, group, topic)
    assert [m.value() for m in _poll(first, 20)] == values
    first.close()
    second = _implicit(broker.bootstrap, group, topic)
    again = _poll(second, 20)
    assert [(m.value(), m.delivery_count()) for m in again] == [(v, 2) for v in values]
    assert _poll(second, 1, timeout=1.5) == []  # this poll accepted them
    second.close()
    _produce(broker.bootstrap, topic, [b"sentinel"])
    last = _implicit(broker.bootstrap, group, topic)
    assert [(m.value(), m.delivery_count()) for m in _poll(last, 1)] == [(b"sentinel", 1)]
    last.close()


# --- group configs ------------------------------------------------------------------------------

def test_a_one_second_lock_set_on_the_group_expires_while_the_default_holds(broker):
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

    topic = _topic(broker.bootstrap)
    short, default = f"lock1s-{uuid.uuid4().hex[:6]}", f"lock30s-{uuid.uuid4().hex[:6]}"
    _set_group_config(broker.bootstrap, short, {"share.record.lock.duration.ms": "1000"})
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    described = admin.describe_configs([ConfigResource("GROUP", short)])
    rows = next(iter(described.values())).result(10)
    assert rows["share.record.lock.duration.ms"].value == "1000"
    assert rows["share.record.lock.duration.ms"].source == ConfigSource.GROUP_CONFIG.value
    assert rows["share.isolation.level"].value == "read_uncommitted"  # every share config is listed
    assert rows["share.delivery.count.limit"].source == ConfigSource.DEFAULT_CONFIG.value
    _produce(broker.bootstrap, topic, [b"x"])
    holders, takers = [], []
    try:
        for group in (short, default):
            holder = _consumer(broker.bootstrap, group, topic)
            holders.append(holder)
            assert [m.value() for m in _poll(holder, 1)] == [b"x"]  # held, never acknowledged
            takers.append(_consumer(broker.bootstrap, group, topic))
        started = time.time()
        back = _poll(takers[0], 1, timeout=10)
        assert [(m.value(), m.delivery_count()) for m in back] == [(b"x", 2)]
        assert _poll(takers[1], 1, timeout=max(3.0, time.time() - started + 1.5)) == []
    finally:
        for c in holders + takers:
            c.close()


def test_read_committed_group_stalls_on_an_open_transaction_and_skips_aborted_ones(broker):
    topic = _topic(broker.bootstrap)
    group = f"rc-{uuid.uuid4().hex[:6]}"
    _set_group_config(broker.bootstrap, group, {"share.isolation.level": "read_committed"})

    def txn_producer(tid):
        p = ck.Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": tid})
        p.init_transactions(10)
        return p

    p = txn_producer(f"rc-{uuid.uuid4().hex[:6]}")
    for values, commit in (([b"c1", b"c2"], True), ([b"x1", b"x2"], False)):
        p.begin_transaction()
        for v in values:
            p.produce(topic, value=v, partition=0)
        p.commit_transaction(10) if commit else p.abort_transaction(10)
    p.begin_transaction()
    p.produce(topic, value=b"o1", partition=0)
    p.flush(10)
    _produce(broker.bootstrap, topic, [b"plain"])  # behind the open transaction
    c = _consumer(broker.bootstrap, group, topic)
    try:
        first = _poll(c, 2)
        assert [m.value() for m in first] == [b"c1", b"c2"]
        for m in first:
            c.acknowledge(m, ck.AcknowledgeType.ACCEPT)
        assert _poll(c, 1, timeout=2.0) == []  # the open transaction stalls the group
        p.commit_transaction(10)
        rest = _poll(c, 2)
        assert [m.value() for m in rest] == [b"o1", b"plain"]  # across the markers' gaps
        for m in rest:
            c.acknowledge(m, ck.AcknowledgeType.ACCEPT)
    finally:
        c.close()


# --- KIP-1206 acquire modes ---------------------------------------------------------------------

def test_a_batch_larger_than_max_poll_records_comes_whole_unless_record_limit(broker):
    topic = _topic(broker.bootstrap)
    values = [b"r%d" % i for i in range(50)]
    _produce(broker.bootstrap, topic, values)
    whole = _consumer(broker.bootstrap, f"bo-{uuid.uuid4().hex[:6]}", topic, **{"max.poll.records": 10})
    try:
        got = []
        deadline = time.time() + 15
        while not got and time.time() < deadline:
            got = [m for m in whole.poll(0.5) if m.error() is None]
        assert [m.value() for m in got] == values  # one poll, the whole batch
        for m in got:
            whole.acknowledge(m, ck.AcknowledgeType.ACCEPT)
    finally:
        whole.close()
    cut = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": f"rl-{uuid.uuid4().hex[:6]}",
                         "share.acknowledgement.mode": "explicit", "max.poll.records": 10,
                         "share.acquire.mode": "record_limit"})
    cut.subscribe([topic])
    try:
        got = []
        deadline = time.time() + 15
        while not got and time.time() < deadline:
            got = cut.poll(0.5)
        assert [r.value for r in got] == values[:10]
    finally:
        cut.close()
