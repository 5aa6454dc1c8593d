"""ProducerIdManager: allocation and KIP-360 epoch bumping for idempotent producers."""

from __future__ import annotations

from kipper.broker.producer_state import ProducerIdManager
from kipper.broker.producer_state.ids import EPOCH_EXHAUSTED
from kipper.protocol.errors import ErrorCode


def test_new_ids_are_unique_and_start_at_epoch_zero():
    ids = ProducerIdManager()
    got = [ids.init(-1, -1) for _ in range(100)]
    assert all(e == ErrorCode.NONE and epoch == 0 for e, _, epoch in got)
    assert len({pid for _, pid, _ in got}) == 100


def test_matching_pair_bumps_the_epoch():
    ids = ProducerIdManager()
    _, pid, epoch = ids.init(-1, -1)
    assert ids.init(pid, epoch) == (ErrorCode.NONE, pid, 1)
    assert ids.init(pid, 1) == (ErrorCode.NONE, pid, 2)


def test_retried_bump_returns_the_same_answer():
    ids = ProducerIdManager()
    _, pid, _ = ids.init(-1, -1)
    first = ids.init(pid, 0)
    assert ids.init(pid, 0) == first


def test_stale_epoch_is_fenced():
    ids = ProducerIdManager()
    _, pid, _ = ids.init(-1, -1)
    ids.init(pid, 0)
    ids.init(pid, 1)
    assert ids.init(pid, 0)[0] == ErrorCode.INVALID_PRODUCER_EPOCH


def test_exactly_one_of_id_and_epoch_unset_is_invalid_request():
    ids = ProducerIdManager()
    assert ids.init(5, -1)[0] == ErrorCode.INVALID_REQUEST
    assert ids.init(-1, 3)[0] == ErrorCode.INVALID_REQUEST


def test_exhausted_epoch_rolls_over_to_a_new_id_and_retries_get_it_again():
    ids = ProducerIdManager()
    _, pid, _ = ids.init(-1, -1)
    ids._current[pid] = EPOCH_EXHAUSTED
    err, new_pid, epoch = ids.init(pid, EPOCH_EXHAUSTED)
    assert err == ErrorCode.NONE and new_pid != pid and epoch == 0
    assert ids.init(pid, EPOCH_EXHAUSTED) == (ErrorCode.NONE, new_pid, 0)


def test_unknown_id_gets_a_fresh_one():
    ids = ProducerIdManager()
    err, pid, epoch = ids.init(987654, 3)
    assert err == ErrorCode.NONE and pid != 987654 and epoch == 0


def test_ids_unused_for_two_periods_are_forgotten_but_used_ones_stay():
    ids = ProducerIdManager()
    _, idle, _ = ids.init(-1, -1)
    _, busy, _ = ids.init(-1, -1)
    ids.rotate()
    ids.init(busy, 0)  # used in the second period
    ids.rotate()
    assert ids.current_epoch(idle) is None
    assert ids.current_epoch(busy) == 1
