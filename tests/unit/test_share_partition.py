"""SharePartition engine with a manual clock and an in-memory log view (no sockets)."""

from __future__ import annotations

import pytest

from kipper.broker.share.partition import SharePartition, merge_entries
from kipper.broker.share.states import (
    ACCEPT, ACKNOWLEDGED, ACQUIRED, ARCHIVED, AVAILABLE, GAP, REJECT, RELEASE, RENEW, TRANSITIONS,
    IllegalTransition, check_move,
)
from kipper.protocol.errors import ErrorCode

LOCK = 1000


class FakeLog:
    """Batches as (first, last, control) with a nominal 100 bytes each."""

    def __init__(self, batches, log_start=0):
        self.batches = list(batches)
        self.log_start_offset = log_start

    @property
    def log_end_offset(self):
        return self.batches[-1][1] + 1 if self.batches else 0

    def data_spans(self, start, end=None):
        for first, last, control in self.batches:
            if end is not None and first >= end:
                return
            if last >= start and not control:
                yield first, last, 100


def data(n, per_batch=10):
    return FakeLog([(i, min(i + per_batch, n) - 1, False) for i in range(0, n, per_batch)])


def engine(start=0, limit=5, lock_limit=200):
    return SharePartition("g", "t", 0, start_offset=start, delivery_count_limit=limit,
                          lock_duration_ms=LOCK, max_in_flight_records=lock_limit)


def states(sp):
    return [(r.first, r.last, r.state, r.count, r.member) for r in sp.runs]


# --- acquisition --------------------------------------------------------------------------

def test_acquire_takes_new_records_from_the_speo_with_delivery_count_one():
    sp, log = engine(), data(50)
    assert sp.acquire("a", 0, log, max_records=25) == [(0, 24, 1)]
    # record_limit cuts inside the third batch: its rest joins the window, AVAILABLE, as in Kafka
    assert (sp.spso, sp.speo) == (0, 30)
    assert states(sp) == [(0, 24, ACQUIRED, 1, "a"), (25, 29, AVAILABLE, 0, None)]
    assert sp.acquire("b", 0, log, max_records=10) == [(25, 34, 1)]


def test_second_member_gets_the_next_records_not_the_same_ones():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    assert sp.acquire("b", 0, log, max_records=10) == [(10, 19, 1)]


def test_acquisition_stops_at_the_lock_partition_limit():
    sp, log = engine(lock_limit=100), data(500)
    assert sp.acquire("a", 0, log, max_records=1000) == [(0, 99, 1)]
    assert sp.acquire("b", 0, log, max_records=1000) == []
    sp.acknowledge("a", [(0, 9, [ACCEPT])], 0)
    assert sp.acquire("b", 0, log, max_records=1000) == [(100, 109, 1)]


def test_max_bytes_stops_after_the_first_batch_that_fills_it():
    sp, log = engine(), data(50)
    assert sp.acquire("a", 0, log, max_records=50, max_bytes=150) == [(0, 9, 1)]


def test_control_batches_and_gaps_are_never_acquired():
    log = FakeLog([(0, 4, False), (5, 5, True), (6, 9, False), (12, 14, False)])
    sp = engine()
    assert sp.acquire("a", 0, log, max_records=100) == [(0, 4, 1), (6, 9, 1), (12, 14, 1)]
    sp.acknowledge("a", [(0, 14, [ACCEPT])], 0)
    assert (sp.spso, sp.speo, sp.runs) == (15, 15, [])


def test_released_records_are_acquired_again_before_new_ones_with_a_higher_count():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    sp.acknowledge("a", [(3, 4, [RELEASE])], 0)
    assert sp.acquire("b", 0, log, max_records=5) == [(3, 4, 2), (10, 12, 1)]


# --- acknowledgement ----------------------------------------------------------------------

def test_accept_moves_the_spso_over_acknowledged_records():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    errors, changes = sp.acknowledge("a", [(0, 4, [ACCEPT])], 0)
    assert errors == [ErrorCode.NONE] and changes == [(0, 4, ACKNOWLEDGED, 1)]
    assert sp.spso == 5


def test_only_the_member_holding_a_record_may_acknowledge_it():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    errors, changes = sp.acknowledge("b", [(0, 0, [ACCEPT])], 0)
    assert errors == [ErrorCode.INVALID_RECORD_STATE] and changes == []
    assert states(sp) == [(0, 9, ACQUIRED, 1, "a")]


def test_one_bad_offset_fails_its_whole_batch_and_leaves_the_records_as_they_were():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    sp.acquire("b", 0, log, max_records=5)
    errors, changes = sp.acknowledge("a", [(5, 12, [ACCEPT]), (0, 1, [REJECT])], 0)
    assert errors == [ErrorCode.INVALID_RECORD_STATE, ErrorCode.NONE]
    assert changes == [(0, 1, ARCHIVED, 1)]
    assert states(sp)[0][:4] == (2, 9, ACQUIRED, 1)


def test_acknowledging_below_the_spso_or_past_what_was_acquired_fails_as_in_kafka():
    sp, log = engine(), data(50)
    assert sp.acknowledge("a", [(0, 0, [ACCEPT])], 0)[0] == [ErrorCode.INVALID_RECORD_STATE]  # nothing yet
    sp.acquire("a", 0, log, max_records=10)
    sp.acknowledge("a", [(0, 4, [ACCEPT])], 0)
    errors, _ = sp.acknowledge("a", [(3, 6, [ACCEPT]), (8, 10, [ACCEPT]), (12, 14, [ACCEPT])], 0)
    # Kafka 4.4: "Batch record not found. The last/first offset in request is past acquired records."
    assert errors == [ErrorCode.INVALID_RECORD_STATE, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]


def test_a_record_already_acknowledged_cannot_be_acknowledged_again():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    sp.acknowledge("a", [(5, 5, [ACCEPT])], 0)
    assert sp.acknowledge("a", [(5, 5, [REJECT])], 0)[0] == [ErrorCode.INVALID_RECORD_STATE]


def test_malformed_batches_are_invalid_requests():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    errors, _ = sp.acknowledge("a", [(3, 2, [ACCEPT]), (0, 3, [ACCEPT, ACCEPT]), (0, 0, [7]),
                                     (0, 0, [RENEW])], 0)
    assert errors == [ErrorCode.INVALID_REQUEST] * 4


def test_per_offset_types_apply_to_each_offset():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=4)
    errors, changes = sp.acknowledge("a", [(0, 3, [ACCEPT, RELEASE, RELEASE, REJECT])], 0)
    assert errors == [0]
    assert changes == [(0, 0, ACKNOWLEDGED, 1), (1, 2, AVAILABLE, 1), (3, 3, ARCHIVED, 1)]
    assert sp.spso == 1


def test_gap_acknowledgement_archives():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=2)
    assert sp.acknowledge("a", [(0, 1, [GAP])], 0)[1] == [(0, 1, ARCHIVED, 1)]


def test_reject_is_never_redelivered():
    sp, log = engine(), data(3, per_batch=3)
    sp.acquire("a", 0, log, max_records=3)
    sp.acknowledge("a", [(1, 1, [REJECT])], 0)
    sp.acknowledge("a", [(0, 0, [RELEASE]), (2, 2, [RELEASE])], 0)
    assert sp.acquire("b", 0, log, max_records=10) == [(0, 0, 2), (2, 2, 2)]


def test_renew_extends_the_lock_without_a_durable_change():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=5)
    errors, changes = sp.acknowledge("a", [(0, 4, [RENEW])], 900, allow_renew=True)
    assert errors == [0] and changes == []
    assert sp.expire(LOCK) == []
    assert sp.expire(900 + LOCK) == [(0, 4, AVAILABLE, 1)]


# --- lock expiry, leaving members, delivery limit -------------------------------------------

def test_expired_lock_makes_the_record_available_again():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=5)
    assert sp.expire(LOCK - 1) == []
    assert sp.expire(LOCK) == [(0, 4, AVAILABLE, 1)]
    assert sp.lock_expiries == 5
    assert sp.acquire("b", LOCK, log, max_records=5) == [(0, 4, 2)]
    assert sp.acknowledge("a", [(0, 4, [ACCEPT])], LOCK)[0] == [ErrorCode.INVALID_RECORD_STATE]


def test_release_at_the_delivery_count_limit_archives():
    sp, log = engine(limit=2), data(1, per_batch=1)
    sp.acquire("a", 0, log, max_records=1)
    assert sp.acknowledge("a", [(0, 0, [RELEASE])], 0)[1] == [(0, 0, AVAILABLE, 1)]
    sp.acquire("a", 0, log, max_records=1)
    assert sp.acknowledge("a", [(0, 0, [RELEASE])], 0)[1] == [(0, 0, ARCHIVED, 2)]
    assert (sp.spso, sp.runs) == (1, [])


def test_lock_expiry_at_the_delivery_count_limit_archives():
    sp, log = engine(limit=2), data(1, per_batch=1)
    sp.acquire("a", 0, log, max_records=1)
    sp.expire(LOCK)
    sp.acquire("a", LOCK, log, max_records=1)
    assert sp.expire(2 * LOCK) == [(0, 0, ARCHIVED, 2)]
    assert sp.acquire("a", 2 * LOCK, log, max_records=1) == []


def test_release_member_frees_only_that_members_records():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=5)
    sp.acquire("b", 0, log, max_records=5)
    assert sp.release_member("a") == [(0, 4, AVAILABLE, 1)]
    assert sp.acquired_by("b") == 5 and sp.acquired_by("a") == 0


def test_spso_never_passes_a_record_that_is_not_done():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    sp.acknowledge("a", [(1, 9, [ACCEPT])], 0)
    assert sp.spso == 0
    sp.acknowledge("a", [(0, 0, [REJECT])], 0)
    assert (sp.spso, sp.speo, sp.runs) == (10, 10, [])


def test_log_start_moving_past_the_spso_drops_the_records_below_it():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    sp.acknowledge("a", [(0, 2, [RELEASE])], 0)
    assert sp.move_start(5)
    assert (sp.spso, sp.available_records) == (5, 0)
    assert not sp.move_start(3)
    # gone below the start: Kafka answers an acknowledgement of them NONE ("already archived")
    assert sp.acknowledge("a", [(3, 3, [ACCEPT])], 0) == ([ErrorCode.NONE], [])


# --- durable views ------------------------------------------------------------------------------

def test_acquired_records_are_written_as_available_with_one_delivery_less():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    sp.acknowledge("a", [(9, 9, [ACCEPT])], 0)
    assert sp.checkpoint_view() == (0, 10, [(0, 8, AVAILABLE, 0), (9, 9, ACKNOWLEDGED, 1)])


def test_trailing_first_deliveries_are_left_out_of_a_checkpoint():
    sp, log = engine(), data(50)
    sp.acquire("a", 0, log, max_records=10)
    assert sp.checkpoint_view() == (0, 0, [])


def test_merge_entries_joins_touching_equal_entries_only():
    assert merge_entries([(5, 6, 0, 1), (0, 4, 0, 1), (7, 7, 2, 1), (9, 9, 2, 1)]) == [
        (0, 6, 0, 1), (7, 7, 2, 1), (9, 9, 2, 1)]


def test_transition_table_rejects_moves_out_of_terminal_states():
    for terminal in (ACKNOWLEDGED, ARCHIVED):
        assert TRANSITIONS[terminal] == frozenset()
        with pytest.raises(IllegalTransition):
            check_move(terminal, AVAILABLE)
    with pytest.raises(IllegalTransition):
        check_move(AVAILABLE, ACKNOWLEDGED)


def test_an_acknowledgement_of_records_already_acknowledged_below_the_spso_is_ignored():
    # Kafka 4.4: a batch ending below the start offset answers NONE and changes nothing, as
    # does one reaching back past the in-flight batch the start offset is in; one starting
    # inside that batch meets its acknowledged offsets (INVALID_RECORD_STATE)
    sp, log = engine(), data(50, per_batch=5)
    sp.acquire("a", 0, log, max_records=5)
    assert sp.acknowledge("a", [(0, 4, [ACCEPT])], 0) == ([ErrorCode.NONE], [(0, 4, ACKNOWLEDGED, 1)])
    assert sp.spso == 5
    assert sp.acknowledge("a", [(0, 4, [ACCEPT]), (2, 2, [RELEASE])], 0) == ([ErrorCode.NONE] * 2, [])
    sp.acquire("a", 0, log, max_records=5)
    assert sp.acknowledge("a", [(3, 7, [ACCEPT])], 0) == ([ErrorCode.NONE], [])  # ignored whole
    assert states(sp)[0][:3] == (5, 9, ACQUIRED)
    assert sp.acknowledge("a", [(3, 12, [ACCEPT])], 0)[0] == [ErrorCode.INVALID_REQUEST]  # past the acquired
    sp.acknowledge("a", [(5, 6, [ACCEPT])], 0)
    assert sp.spso == 7
    assert sp.acknowledge("a", [(6, 8, [ACCEPT])], 0)[0] == [ErrorCode.INVALID_RECORD_STATE]  # inside 5-9
    assert sp.acknowledge("a", [(4, 8, [ACCEPT])], 0) == ([ErrorCode.NONE], [])
