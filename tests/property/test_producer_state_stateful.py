"""Stateful property test: a producer's batches arrive retried, reordered and
with gaps; the log must never hold a duplicate or a batch out of order."""

from __future__ import annotations

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kipper.broker.producer_state import APPEND, DUPLICATE, LATEST, WINDOW5, ProducerStateManager
from kipper.protocol.batch import BatchHeader
from kipper.protocol.errors import ErrorCode

MAX = 0x7FFFFFFF
PID = 77


def header(first_seq: int, count: int, epoch: int) -> BatchHeader:
    return BatchHeader(0, 100, 0, 2, 0, 0, count - 1, 0, 0, PID, epoch, first_seq, count)


class ProducerRetries(RuleBasedStateMachine):
    @initialize(mode=st.sampled_from([LATEST, WINDOW5]),
                start=st.one_of(st.just(0), st.integers(MAX - 40, MAX), st.integers(0, MAX)),
                window=st.integers(1, 200))
    def setup(self, mode, start, window):
        self.psm = ProducerStateManager(mode, max_in_flight_sequences=window)
        self.epoch = 0
        self.batches: list[tuple[int, int]] = []  # (first_seq, count) in send order, this epoch
        self.next_seq = start
        self.log: list[tuple[int, int, int]] = []  # (epoch, first_seq, count) appended
        self.end_offset = 0
        self.acked = 0  # batches of this epoch known appended, in order

    def _send(self, first_seq: int, count: int):
        v = self.psm.validate([header(first_seq, count, self.epoch)])
        if v.outcome == APPEND:
            self.psm.commit(v, [self.end_offset + count - 1])
            self.log.append((self.epoch, first_seq, count))
            self.end_offset += count
        return v

    @rule(count=st.integers(1, 5))
    def new_batch(self, count):
        self.batches.append((self.next_seq, count))
        self.next_seq = (self.next_seq + count) % (MAX + 1)

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def deliver_any(self, data):
        """A send, retry or reordered send of any batch created so far."""
        i = data.draw(st.integers(0, len(self.batches) - 1))
        v = self._send(*self.batches[i])
        if v.outcome == DUPLICATE:
            # only an exact stored batch may be answered with its old offset
            assert any(e == self.epoch and f == self.batches[i][0] for e, f, _ in self.log)

    @precondition(lambda self: self.batches)
    @rule()
    def deliver_in_order(self):
        """The producer's normal path: the next batch not yet in the log."""
        mine = [(f, c) for e, f, c in self.log if e == self.epoch]
        if len(mine) < len(self.batches):
            self._send(*self.batches[len(mine)])

    @rule()
    def bump_epoch(self):
        """KIP-360: a new epoch restarts sequences at 0."""
        self.epoch += 1
        self.batches = []
        self.next_seq = 0

    @invariant()
    def log_holds_a_contiguous_run_of_batches_without_duplicates(self):
        """A fresh producer id may start at any batch (Kafka accepts any first
        sequence without state); from then on the log follows the producer's
        order exactly, and a bumped epoch starts at its first batch."""
        by_epoch: dict[int, list[tuple[int, int]]] = {}
        for e, f, c in getattr(self, "log", []):
            by_epoch.setdefault(e, []).append((f, c))
        current = by_epoch.get(getattr(self, "epoch", 0), [])
        if current:
            k = self.batches.index(current[0])
            earlier_state = any(e < self.epoch for e in by_epoch)
            assert k == 0 or not earlier_state
            assert current == self.batches[k:k + len(current)]
        for appended in by_epoch.values():
            assert len(set(appended)) == len(appended)
            for (f1, c1), (f2, _) in zip(appended, appended[1:]):
                assert f2 == (f1 + c1) % (MAX + 1)


class ErrorsAreSeedCodes(ProducerRetries):
    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def deliver_any(self, data):
        i = data.draw(st.integers(0, len(self.batches) - 1))
        v = self._send(*self.batches[i])
        assert v.error in (ErrorCode.NONE, ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
                           ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)


TestProducerRetries = ProducerRetries.TestCase
TestProducerRetries.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestErrorsAreSeedCodes = ErrorsAreSeedCodes.TestCase
TestErrorsAreSeedCodes.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
