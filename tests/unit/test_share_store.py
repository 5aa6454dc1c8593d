"""ShareStore: control-batch writes, checkpoint policy, the index, recovery and log cleaning."""

from __future__ import annotations

import time

from construct import Container

from bisect import bisect_right

from kipper.broker.dispatcher import Dispatcher
from kipper.broker.server import open_engines
from kipper.broker.config import load
from kipper.broker.log.topics import TopicManager
from kipper.broker.share.log_view import PartitionLogView
from kipper.broker.share.settings import ShareSettings
from kipper.broker.share.states import ACCEPT, RELEASE
from kipper.broker.share.store import ShareStore
from kipper.protocol import records
from kipper.protocol import share_records as sr

LOCK = 1000


def setup(n=20, *, configs=None, **settings):
    topics = TopicManager(num_partitions=1, auto_create=False)
    _, _, topic = topics.create("t", 1, configs=configs or {})
    plog = topic.partitions[0]
    for _ in range(n // 10):
        plog.append_batch(records.build_batch([(None, b"v")] * 10), 0)
    woken = []
    s = dict(record_lock_duration_ms=LOCK, auto_offset_reset="earliest")
    s.update(settings)
    store = ShareStore(ShareSettings(**s), topics, on_available=lambda t, p: woken.append((t, p)))
    return store, topic, plog, woken


def share_records(plog):
    out = []
    for base, data in plog.batches():
        found = sr.decode_batch(data)
        if found is not None:
            out.append((base, found[0], found[1]))
    return out


def test_first_use_writes_a_checkpoint_at_the_reset_offset():
    store, topic, plog, _ = setup(auto_offset_reset="latest")
    sp = store.get("g", topic, 0, 0)
    assert (sp.spso, sp.speo) == (20, 20)
    [(offset, kind, value)] = share_records(plog)
    assert (offset, kind) == (20, records.SHARE_CHECKPOINT)
    assert (value.start_offset, value.end_offset, value.checkpoint_epoch) == (20, 20, 1)
    assert store.floor("t", 0) == 20


def test_reset_comes_from_group_override_then_topic_config_then_broker_default():
    store, topic, _, _ = setup(configs={"share.auto.offset.reset": "latest"},
                               auto_offset_reset="earliest",
                               auto_offset_reset_groups={"early": "earliest"})
    assert store.get("g", topic, 0, 0).spso == 20
    assert store.get("early", topic, 0, 0).spso == 0


def test_by_duration_starts_at_the_first_record_within_the_duration_else_at_the_log_end():
    """share.auto.offset.reset=by_duration:<ISO-8601> (Kafka 4.4): a new share-partition starts
    at the first record no older than now less the duration; with every record older, at the end."""
    store, topic, plog, _ = setup(n=0, configs={"share.auto.offset.reset": "by_duration:PT1H"})
    hour = 3_600_000
    now = 10 * hour
    plog.append_batch(records.build_batch([(None, b"old", now - 3 * hour)] * 2 + [(None, b"new", now - hour // 2)]), 0)
    plog.append_batch(records.build_batch([(None, b"newer", now - 1)]), 0)
    assert store.get("g", topic, 0, now).spso == 2
    store, topic, plog, _ = setup(n=0, configs={"share.auto.offset.reset": "by_duration:P1DT0.5S"})
    plog.append_batch(records.build_batch([(None, b"old", 1000)] * 3), 0)
    assert store.get("g", topic, 0, 10 * 86_400_000).spso == 3


def test_each_operation_writes_one_delta_and_every_nth_a_checkpoint():
    store, topic, plog, woken = setup(checkpoint_max_deltas=3)
    sp = store.get("g", topic, 0, 0)
    view = PartitionLogView(plog)
    sp.acquire("m", 0, view, max_records=10)
    kinds = []
    for offset in range(4):
        _, changes = sp.acknowledge("m", [(offset, offset, [RELEASE if offset % 2 else ACCEPT])], 0)
        store.persist(sp, changes, 0)
        kinds.append(share_records(plog)[-1][1])
    assert kinds == [records.SHARE_DELTA, records.SHARE_DELTA, records.SHARE_CHECKPOINT,
                     records.SHARE_DELTA]
    assert woken == [("t", 0), ("t", 0)]  # releases make records available: fetches wake up


def test_unloaded_share_partition_is_recovered_from_its_chain_only():
    store, topic, plog, _ = setup(n=200)
    sp = store.get("g", topic, 0, 0)
    view = PartitionLogView(plog)
    sp.acquire("m", 0, view, max_records=150)
    for offset in range(0, 100, 3):
        store.persist(sp, sp.acknowledge("m", [(offset, offset, [ACCEPT])], 0)[1], 0)
    live = sp.durable_view(view)
    store.unload(("g", "t", 0), 0, checkpoint=False)

    touched = []  # base offsets of the batches read

    class Watched:
        """The partition, counting the batches read; a full scan would fail."""

        def __getattr__(self, name):
            return getattr(plog, name)

        def batch_at_offset(self, offset):
            found = plog.batch_at_offset(offset)
            touched.append(found[0])
            return found

        def batches_from(self, offset):
            for base, data in plog.batches_from(offset):
                touched.append(base)
                yield base, data

        def batches(self):
            raise AssertionError("recovery scanned the whole log")

    topic.partitions[0] = Watched()
    try:
        again = store.get("g", topic, 0, 0)
    finally:
        topic.partitions[0] = plog
    assert again is not sp and store.recoveries == 1
    assert again.durable_view(view) == live
    # the chain (34 deltas + 1 checkpoint) and the data batches of the window, nothing else
    assert len(touched) <= 35 + 15 + 2
    bases = [base for base, _ in plog.batches()]
    holding_spso = bisect_right(bases, again.spso) - 1
    assert min(touched) >= bases[max(holding_spso - 1, 0)]  # from the batch before the SPSO's


def test_unload_with_checkpoint_makes_recovery_read_one_record():
    store, topic, plog, _ = setup()
    sp = store.get("g", topic, 0, 0)
    sp.acquire("m", 0, PartitionLogView(plog), max_records=5)
    store.persist(sp, sp.acknowledge("m", [(0, 1, [ACCEPT])], 0)[1], 0)
    store.unload(("g", "t", 0), 0)
    durable = store.index[("t", 0)]["g"]
    assert durable.head_offset == durable.checkpoint_offset
    assert store.get("g", topic, 0, 0).spso == 2


def test_tick_expires_locks_and_persists_the_release():
    store, topic, plog, woken = setup()
    sp = store.get("g", topic, 0, 0)
    sp.acquire("m", 0, PartitionLogView(plog), max_records=5)
    store.tick(LOCK)
    (_, kind, value) = share_records(plog)[-1]
    assert kind == records.SHARE_DELTA
    assert [(s.base_offset, s.last_offset, s.state, s.delivery_count) for s in value.states] == [
        (0, 4, 0, 1)]
    assert woken == [("t", 0)]


def test_tick_checkpoints_again_once_the_log_moved_past_the_checkpoint():
    store, topic, plog, _ = setup(checkpoint_interval_ms=500)
    store.get("g", topic, 0, 0)
    first = store.floor("t", 0)
    store.tick(1000)
    assert store.floor("t", 0) == first  # nothing appended since: no new checkpoint
    plog.append_batch(records.build_batch([(None, b"new")]), 1000)
    store.tick(1000)
    assert store.floor("t", 0) > first


def test_idle_unloaded_share_partition_still_moves_its_checkpoint_forward():
    store, topic, plog, _ = setup(checkpoint_interval_ms=500)
    store.get("g", topic, 0, 0)
    store.unload(("g", "t", 0), 0)
    first = store.floor("t", 0)
    plog.append_batch(records.build_batch([(None, b"new")]), 600)
    store.tick(600)
    assert store.floor("t", 0) > first and ("g", "t", 0) not in store.loaded


def test_log_start_passing_the_spso_drops_records_and_checkpoints():
    store, topic, plog, _ = setup(n=40)
    sp = store.get("g", topic, 0, 0)
    plog.append_batch(records.build_batch([(None, b"x")]), 0)
    store.tick(0)  # new checkpoint is not due yet
    plog.delete_records_before(15)  # below the SCO (40), so DeleteRecords may do it
    store.tick(0)
    assert sp.spso == 15
    assert share_records(plog)[-1][1] == records.SHARE_CHECKPOINT


def test_topic_deletion_forgets_its_share_partitions():
    store, topic, _, _ = setup()
    store.get("g", topic, 0, 0)
    store.topic_deleted("t")
    assert store.loaded == {} and store.floor("t", 0) is None


# --- broker hooks: the ESO holds the log start ---------------------------------------------------

def _state(**overrides):
    base = {"group.share.auto.offset.reset": "earliest", "retention.ms": "1", "log.segment.bytes": "100"}
    base.update(overrides)
    return open_engines(load(overrides=base))


def test_retention_never_removes_the_latest_checkpoint_or_the_deltas_after_it():
    state = _state()
    _, _, topic = state.topics.create("r", 1)
    plog = topic.partitions[0]
    for _ in range(5):
        plog.append_batch(records.build_batch([(None, b"v")] * 10), 0)
    share = state.share
    sp = share.store.get("g", topic, 0, 0)
    sp.acquire("m", 0, PartitionLogView(plog), max_records=5)
    share.store.persist(sp, sp.acknowledge("m", [(0, 0, [ACCEPT])], 0)[1], 0)
    for _ in range(5):
        plog.append_batch(records.build_batch([(None, b"later")] * 10), 0)
    sco = share.store.floor("r", 0)
    assert plog.start_hold == sco == 50
    state.apply_retention(int(time.time() * 1000) + 10_000)  # (a batch a segment, stamped now)
    assert plog.log_start_offset == sco
    durable = share.store.index[("r", 0)]["g"]
    # the data below the SCO is gone; 50 and 51 are the checkpoint and a delta
    assert share.store.recover("g", "r", plog, durable).spso == 52


def test_delete_records_stops_at_the_eso_of_all_groups():
    from kipper.broker.handlers.delete_records import handle_delete_records

    state = _state(**{"retention.ms": "-1"})
    _, _, topic = state.topics.create("d", 1)
    plog = topic.partitions[0]
    plog.append_batch(records.build_batch([(None, b"v")] * 10), 0)
    state.share.store.get("early", topic, 0, 0)  # checkpoint at 10
    plog.append_batch(records.build_batch([(None, b"v")] * 10), 0)
    state.share.store.get("late", topic, 0, 0)  # checkpoint at 21
    req = Container(topics=[Container(name="d", partitions=[Container(partition_index=0, offset=-1)])],
                    timeout_ms=1000)
    from kipper.broker.context import RequestContext, Session
    ctx = RequestContext(state, Session("PLAINTEXT", "127.0.0.1:1"), 21, 2, 1, "test")
    resp = handle_delete_records(req, ctx)
    assert resp["topics"][0]["partitions"][0]["low_watermark"] == 10


def test_share_groups_appear_in_list_groups_and_disabled_share_groups_are_not_served():
    state = _state()
    req = Container(group_id="sg", member_id="m", member_epoch=0, rack_id=None,
                    subscribed_topic_names=["x"])
    state.share.heartbeat(req, client_id="c", client_host="/h", now=0)
    rows = state.groups.list_groups(set(), set())
    assert {"group_id": "sg", "protocol_type": "share", "group_state": "Stable",
            "group_type": "share"} in rows

    share_apis = {76, 77, 78, 79, 90, 91, 92}  # and the share-group offset APIs
    assert share_apis <= set(Dispatcher.of(state).handlers)
    disabled = _state(**{"group.share.enable": "false"})
    assert set(Dispatcher.of(disabled).handlers) == set(Dispatcher.of(state).handlers) - share_apis


def test_a_fetch_right_after_delete_records_sees_the_new_log_start():
    store, topic, plog, _ = setup(n=40)
    sp = store.get("g", topic, 0, 0)
    plog.delete_records_before(25)  # no tick in between
    again = store.get("g", topic, 0, 0)
    assert again is sp and sp.spso == 25
    assert sp.acquire("m", 0, PartitionLogView(plog), max_records=100) == [(25, 39, 1)]


def test_idle_groups_do_not_checkpoint_each_other_forever():
    store, topic, plog, _ = setup(checkpoint_interval_ms=500)
    for group in ("a", "b", "c"):
        store.get(group, topic, 0, 0)
        store.unload((group, "t", 0), 0)
    end = plog.log_end_offset
    for now in (600, 1200, 1800):
        store.tick(now)
    assert plog.log_end_offset == end  # other groups' checkpoints are not data


def test_share_counts_are_exported_with_the_broker_metrics():
    state = _state()
    _, _, topic = state.topics.create("m", 1)
    topic.partitions[0].append_batch(records.build_batch([(None, b"v")] * 3), 0)
    sp = state.share.store.get("g", topic, 0, 0)
    sp.acquire("x", 0, PartitionLogView(topic.partitions[0]), max_records=2)
    snap = state.metrics.take_interval()["share_groups"]
    # record_limit took 2 of the batch's 3 records; the third waits in the window
    assert snap["share_partitions_loaded"] == 1 and snap["in_flight_records"] == 3
    assert snap["available_records"] == 1
    assert snap["checkpoints_written"] == 1 and snap["deltas_written"] == 0
