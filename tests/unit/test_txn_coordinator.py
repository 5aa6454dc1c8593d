"""TransactionCoordinator under a manual clock: the KIP-360 decision table for
transactional ids, the state machine, fencing, timeouts and id expiry."""

from __future__ import annotations

import itertools

import pytest

from kipper.broker.txn import (
    TRANSITIONS, IllegalTransition, TransactionCoordinator, TxnSettings, TxnState, transition,
)
from kipper.broker.txn.coordinator import EPOCH_EXHAUSTED
from kipper.protocol.errors import ErrorCode

S = TxnState
E = ErrorCode
TID = "app-1"
TIMEOUT = 60_000


def coordinator(**settings) -> TransactionCoordinator:
    ids = itertools.count(1000)
    return TransactionCoordinator(TxnSettings(**settings), lambda: next(ids))


def init(c, pid=-1, epoch=-1, now=0, tid=TID, timeout=TIMEOUT):
    return c.init_producer_id(tid, timeout, pid, epoch, now)


def state_of(c, tid=TID) -> TxnState:
    return c.transactions[tid].state


def open_txn(c, pid, epoch, now=0, partitions=(("t", 0),)):
    assert c.add_partitions(TID, pid, epoch, list(partitions), now) == E.NONE


def finish(c, error_and_completion, now=0):
    error, completion = error_and_completion
    assert error == E.NONE and completion is not None
    c.complete(completion, now)
    return completion


# --- the KIP-360 decision table ---------------------------------------------------------------

def test_1a_first_init_allocates_a_new_producer_id_at_epoch_zero():
    c = coordinator()
    r = init(c)
    assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1000, 0)
    assert init(c, tid="other").producer_id == 1001  # one counter for all ids


def test_1b_i_init_without_id_bumps_the_epoch_and_clears_the_last_pair():
    c = coordinator()
    init(c)
    r = init(c)
    assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1000, 1)
    meta = c.transactions[TID]
    assert (meta.last_producer_id, meta.last_producer_epoch) == (-1, -1)


def test_1b_ii_init_without_id_at_an_exhausted_epoch_moves_to_a_new_producer_id():
    c = coordinator()
    init(c)
    c.transactions[TID].producer_epoch = EPOCH_EXHAUSTED
    r = init(c)
    assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1001, 0)
    meta = c.transactions[TID]
    assert (meta.last_producer_id, meta.last_producer_epoch) == (-1, -1)
    assert c.by_producer_id(1000) is None and c.by_producer_id(1001) is meta


def test_2a_i_matching_pair_bumps_and_remembers_the_previous_pair():
    c = coordinator()
    init(c)
    r = init(c, 1000, 0)
    assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1000, 1)
    meta = c.transactions[TID]
    assert (meta.last_producer_id, meta.last_producer_epoch) == (1000, 0)


def test_2a_ii_matching_pair_at_an_exhausted_epoch_gets_a_new_id_and_remembers_the_old():
    c = coordinator()
    init(c)
    c.transactions[TID].producer_epoch = EPOCH_EXHAUSTED
    r = init(c, 1000, EPOCH_EXHAUSTED)
    assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1001, 0)
    meta = c.transactions[TID]
    assert (meta.last_producer_id, meta.last_producer_epoch) == (1000, EPOCH_EXHAUSTED)


def test_2b_retry_with_the_last_pair_gets_the_current_pair_again():
    c = coordinator()
    init(c)
    first = init(c, 1000, 0)
    again = init(c, 1000, 0)
    assert again[:3] == first[:3] == (E.NONE, 1000, 1)


def test_2b_retry_of_an_overflow_bump_gets_the_new_producer_id_again():
    c = coordinator()
    init(c)
    c.transactions[TID].producer_epoch = EPOCH_EXHAUSTED
    first = init(c, 1000, EPOCH_EXHAUSTED)
    assert init(c, 1000, EPOCH_EXHAUSTED)[:3] == first[:3] == (E.NONE, 1001, 0)


def test_2c_any_other_pair_is_fenced():
    c = coordinator()
    init(c)
    init(c, 1000, 0)
    init(c, 1000, 1)  # now epoch 2, last epoch 1
    assert init(c, 1000, 0).error == E.PRODUCER_FENCED
    assert init(c, 1000, 5).error == E.PRODUCER_FENCED
    assert c.transactions[TID].producer_epoch == 2  # nothing changed


def test_a_new_instance_clears_the_last_pair_so_the_old_one_cannot_retry_its_bump():
    c = coordinator()
    init(c)
    init(c, 1000, 0)  # old instance bumps to 1 (last = 0)
    init(c)  # a new instance: epoch 2, last pair cleared
    assert init(c, 1000, 0).error == E.PRODUCER_FENCED
    assert init(c, 1000, 1).error == E.PRODUCER_FENCED


def test_a_producer_id_the_transactional_id_no_longer_has_is_fenced():
    c = coordinator()
    init(c)
    init(c, tid="other")  # 1001 belongs to another transactional id
    assert init(c, 1001, 0).error == E.PRODUCER_FENCED


def test_expired_mapping_with_a_pair_gets_a_new_producer_id():
    c = coordinator(id_expiration_ms=1000)
    init(c)
    c.tick(1000)
    assert TID not in c.transactions
    r = init(c, 1000, 0, now=1001)
    assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, 1001, 0)


def test_only_one_of_producer_id_and_epoch_is_an_invalid_request():
    c = coordinator()
    assert init(c, 1000, -1).error == E.INVALID_REQUEST
    assert init(c, -1, 0).error == E.INVALID_REQUEST


@pytest.mark.parametrize("timeout", [0, -1, 900_001])
def test_timeout_outside_one_to_the_maximum_is_invalid(timeout):
    c = coordinator(max_timeout_ms=900_000)
    assert init(c, timeout=timeout).error == E.INVALID_TRANSACTION_TIMEOUT
    assert init(c, timeout=900_000).error == E.NONE


# --- the state machine -------------------------------------------------------------------------

def test_commit_goes_through_prepare_commit_to_complete_commit():
    c = coordinator()
    init(c)
    open_txn(c, 1000, 0, partitions=[("t", 0), ("t", 1)])
    assert c.add_offsets(TID, 1000, 0, "g", 0) == E.NONE
    assert state_of(c) == S.ONGOING
    error, completion = c.end_txn(TID, 1000, 0, True, 5)
    assert error == E.NONE and state_of(c) == S.PREPARE_COMMIT
    assert completion.partitions == (("t", 0), ("t", 1)) and completion.groups == ("g",)
    assert (completion.producer_id, completion.producer_epoch, completion.committed) == (1000, 0, True)
    c.complete(completion, 6)
    assert state_of(c) == S.COMPLETE_COMMIT and not c.transactions[TID].partitions


def test_requests_while_markers_are_written_get_concurrent_transactions():
    c = coordinator()
    init(c)
    open_txn(c, 1000, 0)
    _, completion = c.end_txn(TID, 1000, 0, False, 0)
    assert c.add_partitions(TID, 1000, 0, [("t", 1)], 0) == E.CONCURRENT_TRANSACTIONS
    assert c.add_offsets(TID, 1000, 0, "g", 0) == E.CONCURRENT_TRANSACTIONS
    assert c.end_txn(TID, 1000, 0, False, 0) == (E.CONCURRENT_TRANSACTIONS, None)
    assert c.end_txn(TID, 1000, 0, True, 0) == (E.INVALID_TXN_STATE, None)
    assert init(c).error == E.CONCURRENT_TRANSACTIONS
    c.complete(completion, 1)
    assert init(c)[:3] == (E.NONE, 1000, 1)


def test_retried_end_txn_after_completion_succeeds_and_the_opposite_is_invalid():
    c = coordinator()
    init(c)
    open_txn(c, 1000, 0)
    finish(c, c.end_txn(TID, 1000, 0, True, 0))
    assert c.end_txn(TID, 1000, 0, True, 1) == (E.NONE, None)
    assert c.end_txn(TID, 1000, 0, False, 1) == (E.INVALID_TXN_STATE, None)


def test_end_txn_without_a_transaction_is_invalid_txn_state():
    c = coordinator()
    init(c)
    assert c.end_txn(TID, 1000, 0, True, 0) == (E.INVALID_TXN_STATE, None)


def test_a_new_transaction_starts_with_no_partitions_or_groups():
    c = coordinator()
    init(c)
    open_txn(c, 1000, 0, partitions=[("t", 0)])
    c.add_offsets(TID, 1000, 0, "g", 0)
    finish(c, c.end_txn(TID, 1000, 0, True, 0))
    open_txn(c, 1000, 0, now=10, partitions=[("t", 2)])
    meta = c.transactions[TID]
    assert meta.partitions == {("t", 2)} and not meta.groups and meta.txn_start == 10


def test_unknown_transactional_id_or_foreign_producer_id_is_a_bad_mapping():
    c = coordinator()
    init(c)
    assert c.add_partitions("nobody", 1000, 0, [("t", 0)], 0) == E.INVALID_PRODUCER_ID_MAPPING
    assert c.add_partitions(TID, 999, 0, [("t", 0)], 0) == E.INVALID_PRODUCER_ID_MAPPING
    assert c.end_txn(TID, 999, 0, True, 0) == (E.INVALID_PRODUCER_ID_MAPPING, None)
    assert c.describe("nobody") == (E.TRANSACTIONAL_ID_NOT_FOUND, None)
    assert c.describe(TID)[1]["state"] == "Empty"


def test_transitions_table_is_enforced_by_transition():
    c = coordinator()
    init(c)
    meta = c.transactions[TID]
    with pytest.raises(IllegalTransition):
        transition(meta, S.PREPARE_COMMIT, 0)
    assert meta.state == S.EMPTY
    assert set(TRANSITIONS) == set(TxnState)
    assert not TRANSITIONS[S.DEAD]
    assert TRANSITIONS[S.PREPARE_EPOCH_FENCE] == {S.PREPARE_ABORT}


# --- fencing -------------------------------------------------------------------------------------

def test_new_instance_aborts_the_open_transaction_with_a_bumped_epoch_and_retries():
    c = coordinator()
    init(c)
    open_txn(c, 1000, 0, partitions=[("t", 0), ("t", 1)])
    r = init(c, now=5)
    assert r.error == E.CONCURRENT_TRANSACTIONS and r.producer_id == -1
    fence = r.completion
    assert (fence.producer_id, fence.producer_epoch, fence.committed) == (1000, 1, False)
    assert fence.partitions == (("t", 0), ("t", 1))
    assert state_of(c) == S.PREPARE_ABORT
    c.complete(fence, 5)
    assert init(c, now=6)[:3] == (E.NONE, 1000, 2)  # the retry bumps again
    assert c.counters.fenced == 1


def test_epoch_bumps_count_every_bump_and_fence_but_not_a_retried_bump():
    c = coordinator()
    init(c)  # 1a: a new id, no bump
    assert c.counters.epoch_bumps == 0
    init(c)  # 1b.i
    r = init(c, 1000, 1)  # 2a.i
    assert r.producer_epoch == 2 and c.counters.epoch_bumps == 2
    init(c, 1000, 1)  # 2b: the retried bump answers the current pair again
    assert c.counters.epoch_bumps == 2
    open_txn(c, 1000, 2)
    c.complete(init(c).completion, 0)  # the fence bumps, and so does the retry after it
    init(c)
    assert c.counters.epoch_bumps == 4 and c.snapshot()["epoch_bumps"] == 4


def test_fenced_producer_gets_producer_fenced_everywhere():
    c = coordinator()
    init(c)
    open_txn(c, 1000, 0)
    c.complete(init(c).completion, 0)
    init(c)  # the new instance at epoch 2
    assert c.add_partitions(TID, 1000, 0, [("t", 0)], 0) == E.PRODUCER_FENCED
    assert c.add_offsets(TID, 1000, 0, "g", 0) == E.PRODUCER_FENCED
    assert c.end_txn(TID, 1000, 0, True, 0) == (E.PRODUCER_FENCED, None)
    assert c.verify_produce(1000, 0, "t", 0) == E.INVALID_PRODUCER_EPOCH
    assert c.verify_offset_commit(TID, 1000, 0, "g") == E.INVALID_PRODUCER_EPOCH


def test_reinit_with_own_pair_while_a_transaction_is_open_fences_it_as_kafka_does():
    c = coordinator()
    init(c)
    open_txn(c, 1000, 0)
    r = init(c, 1000, 0)
    assert r.error == E.CONCURRENT_TRANSACTIONS
    c.complete(r.completion, 0)
    # the fence cleared the last pair: the old epoch may not bump any more
    assert init(c, 1000, 0).error == E.PRODUCER_FENCED


# --- timeouts and expiry ------------------------------------------------------------------------

def test_open_transaction_is_aborted_after_its_timeout_with_a_bumped_epoch():
    c = coordinator()
    init(c, timeout=1000)
    open_txn(c, 1000, 0, now=500, partitions=[("t", 0)])
    assert c.tick(1500) == []  # the clock starts at the first AddPartitionsToTxn
    [abort] = c.tick(1501)
    assert (abort.producer_id, abort.producer_epoch, abort.committed) == (1000, 1, False)
    c.complete(abort, 1501)
    assert state_of(c) == S.COMPLETE_ABORT and c.counters.timed_out == 1
    assert c.end_txn(TID, 1000, 0, True, 1600) == (E.PRODUCER_FENCED, None)
    assert c.tick(100_000) == []  # aborted once


def test_settled_transactional_id_is_not_timed_out():
    c = coordinator()
    init(c, timeout=1000)
    assert c.tick(10_000) == [] and state_of(c) == S.EMPTY


def test_transactional_id_expires_only_when_settled_and_idle():
    c = coordinator(id_expiration_ms=10_000)
    init(c, now=0, timeout=900_000)
    open_txn(c, 1000, 0, now=0)
    c.tick(20_000)
    assert state_of(c) == S.ONGOING  # an open transaction never expires
    finish(c, c.end_txn(TID, 1000, 0, True, 20_000), now=20_000)
    c.tick(29_999)
    assert TID in c.transactions
    c.tick(30_000)
    assert TID not in c.transactions and c.by_producer_id(1000) is None
    assert c.counters.expired == 1
    assert c.add_partitions(TID, 1000, 0, [("t", 0)], 30_001) == E.INVALID_PRODUCER_ID_MAPPING


# --- checks for the partition leader and the group coordinator ----------------------------------

def test_produce_is_verified_against_the_open_transaction():
    c = coordinator()
    init(c)
    assert c.verify_produce(1000, 0, "t", 0) == E.INVALID_TXN_STATE  # nothing open
    open_txn(c, 1000, 0, partitions=[("t", 0)])
    assert c.verify_produce(1000, 0, "t", 0) == E.NONE
    assert c.verify_produce(1000, 0, "t", 1) == E.INVALID_TXN_STATE  # not added
    assert c.verify_produce(4242, 0, "t", 0) == E.INVALID_PRODUCER_ID_MAPPING
    finish(c, c.end_txn(TID, 1000, 0, True, 0))
    assert c.verify_produce(1000, 0, "t", 0) == E.INVALID_TXN_STATE  # a late batch


def test_offset_commit_needs_the_group_added_to_the_open_transaction():
    c = coordinator()
    init(c)
    open_txn(c, 1000, 0)
    assert c.verify_offset_commit(TID, 1000, 0, "g") == E.INVALID_TXN_STATE
    c.add_offsets(TID, 1000, 0, "g", 0)
    assert c.verify_offset_commit(TID, 1000, 0, "g") == E.NONE
    assert c.verify_offset_commit(TID, 1001, 0, "g") == E.INVALID_PRODUCER_ID_MAPPING


def test_snapshot_counts_ids_by_state_and_outcomes():
    c = coordinator()
    init(c)
    init(c, tid="idle")
    open_txn(c, 1000, 0)
    finish(c, c.end_txn(TID, 1000, 0, True, 0))
    snap = c.snapshot()
    assert snap["transactional_ids"] == 2 and snap["commits"] == 1 and snap["aborts"] == 0
    assert snap["states"]["CompleteCommit"] == 1 and snap["states"]["Empty"] == 1
    assert set(snap["states"]) == {s.value for s in TxnState} - {"Dead"}
