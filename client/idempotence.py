"""Sequence bookkeeping for the idempotent producer (KIP-98, KIP-360, seed 000).

A batch gets its producer id, epoch and base sequence once, when it is first
drained, and keeps them through every retry. Per partition, sequenced batches
are tracked in order until acknowledged; a retry is only sent once every
earlier batch of its partition is on the wire again, so the broker always
sees sequences in order.

Failure handling follows KIP-360: a batch that fails for good takes every
later batch already sequenced for its partition with it, and the producer
bumps its epoch locally (after in-flight requests settle) and restarts all
sequences at 0. Fencing errors are fatal.

When the broker advertises max.in.flight.sequence.number.per.connection
(seed 000), the 5-request limit is lifted and a partition instead stops
taking new batches while that many sequences are unacknowledged.

Sans-I/O: plain state, no sockets, no clock.
"""

from __future__ import annotations

import operator

from kipper.protocol.errors import ErrorCode, is_retriable

UNINITIALIZED, INITIALIZING, READY, BUMPING, FATAL = (
    "uninitialized", "initializing", "ready", "bumping", "fatal")
CLASSIC_MAX_IN_FLIGHT = 5  # Kafka's limit for idempotent producers without seed 000
EPOCH_EXHAUSTED = 32767 - 1

FATAL_ERRORS = frozenset({ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED,
                          ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                          ErrorCode.CLUSTER_AUTHORIZATION_FAILED})

RETRY, SUCCESS, FAIL = "retry", "success", "fail"

_IN_FLIGHT = operator.attrgetter("in_flight")


class IdempotenceState:
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.state = UNINITIALIZED if enabled else READY
        self.producer_id = -1
        self.producer_epoch = -1
        self.window: int | None = None  # broker's max in-flight sequences, if advertised
        self.fatal_error: BaseException | None = None
        self._next_seq: dict[tuple[str, int], int] = {}
        self._unacked: dict[tuple[str, int], list] = {}  # sequenced batches, in sequence order
        self._unacked_records: dict[tuple[str, int], int] = {}  # their record counts, summed
        self.epoch_bumps = 0

    # --- producer id ------------------------------------------------------------------

    def needs_producer_id(self) -> bool:
        return self.enabled and self.state == UNINITIALIZED

    def set_producer_id(self, producer_id: int, producer_epoch: int, window: int | None) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        if window is not None and window > 0:
            self.window = window
        self._next_seq.clear()
        self.state = READY

    def fail_fatally(self, error: BaseException) -> None:
        self.state = FATAL
        self.fatal_error = error

    # --- sending -------------------------------------------------------------------------

    def can_send(self, tp, batch, in_flight_requests: int, max_in_flight: int) -> bool:
        """May ``batch`` (head of its partition queue) go out now?"""
        if not self.enabled:
            return in_flight_requests < max_in_flight
        if self.state not in (READY, BUMPING):
            return False
        unacked = self._unacked.get(tp, ())
        if batch.base_sequence >= 0:
            # a retry: every earlier batch of the partition must be on the wire
            for other in unacked:
                if other is batch:
                    return in_flight_requests < max_in_flight
                if not other.in_flight:
                    return False
            return True
        if self.state == BUMPING:
            return False  # no new sequences until the epoch is bumped
        # map over an attrgetter runs in C: with a large window and a backlog, a
        # partition has hundreds of unacknowledged batches, looked at per drain
        if not all(map(_IN_FLIGHT, unacked)):
            return False  # a retry is waiting: nothing may jump ahead of it
        if self.window is not None:
            return self._unacked_records.get(tp, 0) + batch.count <= self.window
        return in_flight_requests < max_in_flight

    def max_in_flight(self, configured: int, explicit: bool) -> int:
        """Requests allowed on one connection."""
        if self.enabled and self.window is not None and not explicit:
            return 1_000_000  # seed 000: sequences, not requests, are the limit
        if self.enabled:
            return min(configured, CLASSIC_MAX_IN_FLIGHT)
        return configured

    def assign(self, tp, batch) -> None:
        """Give a batch its producer id, epoch and sequence, once."""
        if not self.enabled or batch.base_sequence >= 0:
            return
        seq = self._next_seq.get(tp, 0)
        batch.producer_id = self.producer_id
        batch.producer_epoch = self.producer_epoch
        batch.base_sequence = seq
        self._next_seq[tp] = (seq + batch.count) & 0x7FFFFFFF
        self._unacked.setdefault(tp, []).append(batch)
        self._unacked_records[tp] = self._unacked_records.get(tp, 0) + batch.count

    # --- outcomes --------------------------------------------------------------------------

    def on_success(self, tp, batch) -> None:
        unacked = self._unacked.get(tp)
        if unacked:
            try:
                unacked.remove(batch)
            except ValueError:
                return
            self._unacked_records[tp] -= batch.count
            if not unacked:
                del self._unacked[tp]
                del self._unacked_records[tp]

    def classify(self, tp, batch, code: int) -> str:
        """What to do with a batch the broker answered with ``code``."""
        if code in (ErrorCode.NONE, ErrorCode.DUPLICATE_SEQUENCE_NUMBER):
            return SUCCESS
        if not self.enabled or batch.base_sequence < 0:
            return RETRY if _retriable(code) else FAIL
        if code in FATAL_ERRORS:
            return FAIL
        if code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER:
            unacked = self._unacked.get(tp, [])
            # waiting for an earlier batch that is being retried: retry after it
            return RETRY if unacked and unacked[0] is not batch else FAIL
        if code == ErrorCode.UNKNOWN_PRODUCER_ID:
            return FAIL
        return RETRY if _retriable(code) else FAIL

    def on_failure(self, tp, batch, code: int | None) -> list:
        """A batch failed for good. Returns the later batches of its partition
        that must fail with it (KIP-360), and schedules an epoch bump."""
        if not self.enabled or batch.base_sequence < 0:
            return []
        if code in FATAL_ERRORS:
            return []
        unacked = self._unacked.pop(tp, [])
        self._unacked_records.pop(tp, None)
        later = [b for b in unacked if b is not batch and not b.done]
        if self.state in (READY, BUMPING):
            self.state = BUMPING
        return later

    def forget_all(self) -> list:
        """Every sequenced, unacknowledged batch (for a fatal shutdown)."""
        out = [b for bs in self._unacked.values() for b in bs]
        self._unacked.clear()
        self._unacked_records.clear()
        return out

    def maybe_finish_bump(self) -> bool:
        """Bump the epoch locally once every sequenced batch has settled
        (KIP-360 for idempotent producers). Returns False if a new producer
        id is needed instead."""
        if self.state != BUMPING or self._unacked:
            return True
        if self.producer_epoch >= EPOCH_EXHAUSTED:
            self.state = UNINITIALIZED  # InitProducerId (KIP-360: with our id and epoch)
            return False
        self.producer_epoch += 1
        self.epoch_bumps += 1
        self._next_seq.clear()
        self.state = READY
        return True

    def unacked_count(self) -> int:
        return sum(len(v) for v in self._unacked.values())


def _retriable(code: int) -> bool:
    return is_retriable(code)
