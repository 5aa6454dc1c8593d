"""Transactions in a whole broker (open_engines), without sockets: the Produce path,
markers in the log and in producer state, LSO and aborted transactions, timeouts by tick."""

from __future__ import annotations


from kipper.broker.composition import Engines
from kipper.broker.dispatcher import Dispatcher
from kipper.broker.server import open_engines
from kipper.broker.config import load
from kipper.broker.context import Session
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages.produce import PRODUCE

E = ErrorCode
TID = "app"


def make_state(**overrides) -> Engines:
    state = open_engines(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0", **overrides}),
                         clock=lambda: 0)
    state.topics.create("t", 2)
    return state


def append(state, pid, epoch, seq, n=2, partition=0, transactional=True, version=9, tid=TID):
    """A Produce of one batch through the broker's dispatcher; the partition's answer."""
    data = records.build_batch([(None, b"v%d" % i, 0) for i in range(n)], producer_id=pid,
                               producer_epoch=epoch, base_sequence=seq, transactional=transactional)
    body = {"transactional_id": tid if transactional else None, "acks": -1, "timeout_ms": 1000,
            "topic_data": [{"name": "t", "partition_data": [{"index": partition, "records": data}]}]}
    frame = encode_request(PRODUCE, version, 1, "test", body)[4:]
    [answer], _ = Dispatcher.of(state).dispatch([frame], 0, Session("PLAINTEXT", "peer"))
    return decode_response(PRODUCE, version, answer[4:])[1].responses[0].partition_responses[0]


def begin(state, now=0, partitions=(0,), timeout=60_000):
    r = state.txn.init_producer_id(TID, timeout, -1, -1, now)
    assert r.error == E.NONE
    assert state.txn.coordinator.add_partitions(
        TID, r.producer_id, r.producer_epoch, [("t", p) for p in partitions], now) == E.NONE
    return r.producer_id, r.producer_epoch


def stored(state, partition=0):
    return records.decode_all(b"".join(d for _, d in state.topics.partition("t", partition).batches()))


def test_produce_verification_can_be_turned_off():
    on = make_state()
    pid, epoch = begin(on)
    assert append(on, pid, epoch, 0, partition=1)["error_code"] == E.INVALID_TXN_STATE
    off = make_state(**{"transaction.partition.verification.enable": "false"})
    pid, epoch = begin(off)
    assert append(off, pid, epoch, 0, partition=1)["error_code"] == E.NONE


def test_transactional_batch_without_a_producer_id_is_appended_and_opens_no_transaction():
    state = make_state()  # as Kafka 4.4 appends it (issue 36, the generator)
    assert append(state, -1, -1, -1)["error_code"] == E.NONE
    plog = state.topics.partition("t", 0)
    assert plog.last_stable_offset == plog.high_watermark


def test_abort_writes_markers_everywhere_and_indexes_the_aborted_data():
    state = make_state()
    append(state, -1, -1, -1, transactional=False)  # offsets 0-1
    pid, epoch = begin(state, partitions=(0, 1))
    assert append(state, pid, epoch, 0)["base_offset"] == 2
    plog = state.topics.partition("t", 0)
    assert plog.last_stable_offset == 2 and plog.high_watermark == 4
    assert state.txn.end_txn(TID, pid, epoch, False, 5) == E.NONE
    assert plog.last_stable_offset == plog.high_watermark == 5
    read = plog.read(0, 1 << 20)
    assert plog.aborted_transactions(0, read.last_offset + 1) == [{"producer_id": pid, "first_offset": 2}]
    first_batch = plog.read(0, 1, always_one=True)
    assert plog.aborted_transactions(0, first_batch.last_offset + 1) == []  # reads ending before it
    # partition 1 got a marker although no data reached it
    [marker] = stored(state, 1)
    assert marker.header.is_control and records.control_type(marker.records[0].key) == records.ABORT
    assert state.txn.coordinator.counters.aborts == 1


def test_commit_applies_staged_offsets_and_creates_the_group():
    state = make_state()
    r = state.txn.init_producer_id(TID, 60_000, -1, -1, 0)
    pid, epoch = r.producer_id, r.producer_epoch
    assert state.txn.coordinator.add_offsets(TID, pid, epoch, "g", 0) == E.NONE
    state.offsets.stage("g", pid, "t", 0, 7, -1, None, 0)
    assert state.txn.end_txn(TID, pid, epoch, True, 1) == E.NONE
    assert state.offsets.get("g", "t", 0).offset == 7 and "g" in state.groups.classic.groups


def test_timeout_abort_by_tick_fences_the_old_epoch_in_the_partition():
    state = make_state()
    pid, epoch = begin(state, now=0, timeout=1000)
    append(state, pid, epoch, 0)
    assert state.txn.tick(1000) == 0
    assert state.txn.tick(1001) == 1
    marker = stored(state)[-1]
    assert (marker.header.producer_id, marker.header.producer_epoch) == (pid, epoch + 1)
    psm = state.producer_states.get("t", 0)
    assert psm.entry(pid)["producer_epoch"] == epoch + 1
    # even with verification off, the partition's producer state refuses the old epoch
    state.alter_broker_configs("", {"transaction.partition.verification.enable": "false"})
    assert append(state, pid, epoch, 2)["error_code"] == E.INVALID_PRODUCER_EPOCH


def test_marker_is_refused_when_the_partition_holds_a_newer_epoch():
    state = make_state()
    append(state, 4242, 3, 0, transactional=False)  # an idempotent producer at epoch 3
    plog = state.topics.partition("t", 0)
    end = plog.log_end_offset
    assert state.txn.write_markers(4242, 2, True, 0, "t", 0, 0) == E.INVALID_PRODUCER_EPOCH
    assert plog.log_end_offset == end
    assert state.txn.write_markers(4242, 3, True, 0, "t", 0, 0) == E.NONE
    assert state.txn.write_markers(4242, 3, True, 0, "t", 9, 0) == E.UNKNOWN_TOPIC_OR_PARTITION


def test_deleted_topic_forgets_its_transaction_index():
    state = make_state()
    pid, epoch = begin(state)
    append(state, pid, epoch, 0)
    assert state.topics.partition("t", 0).txn_index_if_any is not None
    state.delete_topic(state.topics.get("t"))
    assert state.topics.partition("t", 0) is None  # with the partition goes its index
    assert state.txn.end_txn(TID, pid, epoch, True, 1) == E.NONE  # markers skip the lost topic


# --- a partition not in the transaction (KIP-890), as Kafka 4.4 answers each Produce version -------

def test_a_partition_not_in_the_transaction_is_refused_as_the_version_knows_it():
    state = make_state()
    r = state.txn.init_producer_id(TID, 60_000, -1, -1, 0)
    for version, code in ((3, E.INVALID_TXN_STATE), (9, E.INVALID_TXN_STATE), (10, E.INVALID_TXN_STATE),
                          (11, E.TRANSACTION_ABORTABLE)):
        row = append(state, r.producer_id, r.producer_epoch, 0, version=version)
        assert row["error_code"] == code, version
        assert row.get("log_start_offset", -1) == -1  # refused before the log, as Kafka answers
    assert stored(state) == [] and state.txn.transaction(TID).state.value == "Empty"


def test_produce_v12_adds_its_partition_to_the_transaction():
    state = make_state()
    r = state.txn.init_producer_id(TID, 60_000, -1, -1, 0)
    assert append(state, r.producer_id, r.producer_epoch, 0, version=12)["error_code"] == E.NONE
    meta = state.txn.transaction(TID)
    assert meta.state.value == "Ongoing" and meta.partitions == {("t", 0)}
    assert state.topics.partition("t", 0).last_stable_offset == 0  # open in the partition too
    assert state.txn.end_txn(TID, r.producer_id, r.producer_epoch, True, 0) == E.NONE
    data, marker = stored(state)
    assert [rec.value for rec in data.records] == [b"v0", b"v1"] and marker.header.is_control


def test_produce_v12_adds_nothing_for_a_stale_epoch_or_another_transactional_id():
    state = make_state()
    r = state.txn.init_producer_id(TID, 60_000, -1, -1, 0)
    other = state.txn.init_producer_id("other", 60_000, -1, -1, 0)
    pid, epoch = r.producer_id, r.producer_epoch
    assert append(state, pid, epoch + 1, 0, version=12)["error_code"] == E.INVALID_PRODUCER_EPOCH
    assert append(state, other.producer_id, 0, 0, version=12)["error_code"] == E.INVALID_PRODUCER_ID_MAPPING
    assert append(state, pid, epoch, 0, version=12, tid=None)["error_code"] == \
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED  # a transactional batch needs the request's id
    assert stored(state) == [] and state.txn.transaction(TID).partitions == set()
