"""The partition side of transactions: last stable offset, the aborted index,
markers in producer state, and transactional offsets staged in the OffsetStore."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from kipper.broker.groups.offsets import OffsetStore
from kipper.broker.producer_state import APPEND, LATEST, REJECT, WINDOW5, ProducerStateManager
from kipper.broker.log.txn_index import AbortedTxn, TxnPartition
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode

# --- last stable offset ---------------------------------------------------------------------------


def test_lso_is_the_high_watermark_without_open_transactions():
    tp = TxnPartition()
    assert tp.last_stable_offset(high_watermark=10, log_start=0) == 10


def test_lso_is_the_first_offset_of_the_oldest_open_transaction():
    tp = TxnPartition()
    tp.begin(7, 4)
    tp.begin(8, 6)
    tp.begin(7, 9)  # a later batch of the same transaction does not move its start
    assert tp.last_stable_offset(20, 0) == 4
    tp.end(7, 12, committed=True)
    assert tp.last_stable_offset(20, 0) == 6
    tp.end(8, 13, committed=False)
    assert tp.last_stable_offset(20, 0) == 20


def test_lso_never_falls_below_the_log_start():
    tp = TxnPartition()
    tp.begin(7, 4)
    assert tp.last_stable_offset(20, log_start=8) == 8


# --- the aborted index ------------------------------------------------------------------------------

def test_only_aborts_of_transactions_with_data_are_indexed():
    tp = TxnPartition()
    tp.begin(1, 0)
    tp.end(1, 5, committed=True)
    tp.end(2, 6, committed=False)  # the partition saw no data of producer 2
    assert tp.aborted == []
    tp.begin(3, 7)
    tp.end(3, 9, committed=False)
    assert tp.aborted == [AbortedTxn(3, 7, 9)]


def _index(*txns) -> TxnPartition:
    tp = TxnPartition()
    for pid, first, last in txns:
        tp.begin(pid, first)
        tp.end(pid, last, committed=False)
    return tp


@pytest.mark.parametrize("fetch_offset,upper,expected", [
    (0, 100, [1, 2, 3]),
    (11, 100, [2, 3]),  # producer 1's abort marker is at 10: before the fetch
    (10, 100, [1, 2, 3]),  # the marker itself is in range
    (0, 20, [1, 2]),  # producer 3 starts at 30
    (0, 21, [1, 2]),
    (0, 31, [1, 2, 3]),
    (41, 100, []),
])
def test_aborted_between_matches_kafkas_overlap_rule(fetch_offset, upper, expected):
    # markers come in offset order: producer 2 (5..40) ends after producer 3 (30..35)
    tp = _index((1, 0, 10), (3, 30, 35), (2, 5, 40))
    got = sorted(a.producer_id for a in tp.aborted_between(fetch_offset, upper))
    assert got == expected


def test_long_aborted_transaction_is_found_from_far_behind_its_marker():
    tp = _index(*[(i, i * 10, i * 10 + 3) for i in range(1, 50)])
    tp.begin(99, 5)
    tp.end(99, 1000, committed=False)  # spans almost everything
    got = {a.producer_id for a in tp.aborted_between(600, 601)}
    assert got == {99}


def test_trim_forgets_aborts_that_ended_before_the_log_start():
    tp = _index((1, 0, 10), (2, 11, 20), (3, 21, 30))
    tp.trim(15)
    assert [a.producer_id for a in tp.aborted] == [2, 3]
    assert [a.producer_id for a in tp.aborted_between(0, 100)] == [2, 3]


# --- markers in producer state -------------------------------------------------------------------

def _header(pid, epoch, seq, n=1, transactional=True) -> b.BatchHeader:
    data = records.build_batch([(None, b"v")] * n, producer_id=pid, producer_epoch=epoch,
                               base_sequence=seq, transactional=transactional)
    return b.read_header(data)


def _append(psm, header, last_offset):
    v = psm.validate([header])
    if v.outcome == APPEND:
        psm.commit(v, [last_offset])
    return v


@pytest.mark.parametrize("mode", [LATEST, WINDOW5])
def test_marker_with_a_bumped_epoch_fences_the_old_epoch_and_restarts_sequences(mode):
    psm = ProducerStateManager(mode)
    assert _append(psm, _header(7, 0, 0, n=5), 4).outcome == APPEND
    assert psm.check_marker(7, 1) == ErrorCode.NONE
    psm.apply_marker(7, 1, now=10)
    v = _append(psm, _header(7, 0, 5), 6)
    assert (v.outcome, v.error) == (REJECT, ErrorCode.INVALID_PRODUCER_EPOCH)
    assert psm.check_marker(7, 0) == ErrorCode.INVALID_PRODUCER_EPOCH
    # the new epoch starts afresh: no batch of it is known yet
    assert psm.entry(7)["batches"] == [] and psm.entry(7)["producer_epoch"] == 1
    assert _append(psm, _header(7, 1, 0), 7).outcome == APPEND
    v = _append(psm, _header(7, 1, 0), 8)
    assert v.outcome != APPEND  # its own retry is still caught


@pytest.mark.parametrize("mode", [LATEST, WINDOW5])
def test_marker_at_the_current_epoch_keeps_the_sequence_going(mode):
    psm = ProducerStateManager(mode)
    _append(psm, _header(7, 0, 0, n=5), 4)
    psm.apply_marker(7, 0, now=50)
    v = _append(psm, _header(7, 0, 3), 9)
    assert (v.outcome, v.error) == (REJECT, ErrorCode.DUPLICATE_SEQUENCE_NUMBER if mode == LATEST
                                    else ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert _append(psm, _header(7, 0, 5), 9).outcome == APPEND


@pytest.mark.parametrize("mode", [LATEST, WINDOW5])
def test_marker_counts_as_a_write_for_expiry(mode):
    psm = ProducerStateManager(mode)
    _append(psm, _header(7, 0, 0), 0)
    psm.apply_marker(7, 1, now=1000)  # emptied by a bumped epoch, written at 1000
    assert psm.expire(now=1500, expiration_ms=1000) == 0
    assert psm.expire(now=2000, expiration_ms=1000) == 1


def test_marker_for_a_producer_the_partition_never_saw_records_its_epoch():
    psm = ProducerStateManager(LATEST)
    psm.apply_marker(9, 3, now=0)
    v = _append(psm, _header(9, 2, 0), 0)
    assert v.error == ErrorCode.INVALID_PRODUCER_EPOCH


# --- transactional offsets ------------------------------------------------------------------------

def test_staged_offsets_become_committed_only_when_the_transaction_commits():
    store = OffsetStore()
    store.commit("g", "t", 0, 3, -1, None, now=0)
    store.stage("g", 1000, "t", 0, 10, -1, "m", now=1)
    store.stage("g", 1000, "t", 1, 20, -1, None, now=1)
    assert store.get("g", "t", 0).offset == 3
    assert store.has_pending("g", "t", 0) and not store.has_pending("g", "t", 2)
    assert store.complete_transaction("g", 1000, committed=True, now=5) == 2
    assert store.get("g", "t", 0).offset == 10 and store.get("g", "t", 0).metadata == "m"
    assert store.get("g", "t", 1).offset == 20
    assert not store.has_pending("g", "t", 0)


def test_aborted_transaction_drops_its_staged_offsets():
    store = OffsetStore()
    store.stage("g", 1000, "t", 0, 10, -1, None, now=1)
    store.stage("g", 2000, "t", 1, 7, -1, None, now=1)  # another producer's transaction
    assert store.complete_transaction("g", 1000, committed=False, now=5) == 1
    assert store.get("g", "t", 0) is None
    assert store.has_pending("g", "t", 1)
    assert store.complete_transaction("g", 3000, committed=True, now=5) == 0


def test_group_with_pending_offsets_does_not_expire():
    store = OffsetStore(retention_ms=10)
    store.commit("g", "t", 0, 3, -1, None, now=0)
    store.stage("g", 1000, "t", 0, 10, -1, None, now=0)
    assert store.expire(now=100, active_groups=set()) == 0
    store.complete_transaction("g", 1000, committed=False, now=0)
    assert store.expire(now=100, active_groups=set()) == 1


# --- the index against a brute-force model -------------------------------------------------------

@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["data", "commit", "abort"]),
                          st.integers(1, 5)), max_size=60),
       st.integers(0, 200), st.integers(0, 200), st.integers(0, 200))
@settings(max_examples=300, deadline=None)
def test_lso_and_aborted_overlap_match_a_brute_force_model(ops, a, b_, log_start):
    tp = TxnPartition()
    offset = 0
    open_first: dict[int, int] = {}
    aborted: list[tuple[int, int, int]] = []
    for pid, op, size in ops:
        if op == "data":
            tp.begin(pid, offset)
            open_first.setdefault(pid, offset)
            offset += size
        else:  # a marker takes one offset
            tp.end(pid, offset, committed=op == "commit")
            first = open_first.pop(pid, None)
            if op == "abort" and first is not None:
                aborted.append((pid, first, offset))
            offset += 1
    hw = offset
    start = min(log_start, hw)
    expected_lso = min(max(min(open_first.values()), start), hw) if open_first else hw
    assert tp.last_stable_offset(hw, start) == expected_lso
    fetch_offset, upper = min(a, b_), max(a, b_)
    want = [t for t in aborted if t[2] >= fetch_offset and t[1] < upper]
    assert [tuple(x) for x in tp.aborted_between(fetch_offset, upper)] == want
    tp.trim(start)
    assert [tuple(x) for x in tp.aborted] == [t for t in aborted if t[2] >= start]
