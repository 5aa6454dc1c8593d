"""Idempotent-producer state of one partition: seed 000 and KIP-360 rules.

``validate`` looks at the headers of a Produce request's batches for this
partition and returns a ``Validation`` without changing anything; the shell
appends and then calls ``commit`` with the offsets the log assigned (Kafka's
ProducerAppendInfo). Two modes:

- ``latest`` (seed 000): only the latest batch per producer id. Its exact
  retry is answered with the original offset; a batch whose sequences are all
  within ``max.in.flight.sequence.number.per.connection`` behind the last one
  (already appended) is DUPLICATE_SEQUENCE_NUMBER; anything else out of order,
  as Kafka answers it: a batch that starts inside that window but carries
  sequences past the last appended (0-2 appended, then 1-3) is not a duplicate,
  and a client that took it for one would lose its new records.
- ``window5``: Kafka's classic cache of the last five batches.

State survives log deletion (KIP-360); it goes only when ``expire(now)``
finds its last batch's timestamp ``producer.id.expiration.ms`` old and no transaction
open (Kafka's isProducerExpired).

A transactional batch the leader is about to verify with its coordinator (KIP-890) leaves
a ``Verifying`` note of its producer's lowest sequence until a transactional batch of that
producer is appended here (or ``producer.id.expiration.ms`` passes): meanwhile any batch
of the producer with a higher first sequence is out of order, as Kafka's
VerificationStateEntry makes it, so a batch that failed verification is never overtaken.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from kipper.broker.producer_state.table import ProducerTable
from kipper.protocol.batch import BatchHeader
from kipper.protocol.errors import ErrorCode

INT32_MAX = 0x7FFFFFFF
NO_PRODUCER_EPOCH = -1  # a batch's epoch when its producer has none (Kafka's RecordBatch constant)
_new_tuple = tuple.__new__
SEQ_MOD = 1 << 31

LATEST = "latest"
WINDOW5 = "window5"
DEPTH = {LATEST: 1, WINDOW5: 5}  # window5: Kafka's NUM_BATCHES_TO_RETAIN

APPEND, DUPLICATE, REJECT = "append", "duplicate", "reject"
# the refusals a batch's sequence earns; a note of a batch being verified comes before them
_SEQUENCE_ERRORS = (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, ErrorCode.DUPLICATE_SEQUENCE_NUMBER)


def next_sequence(seq: int) -> int:
    return 0 if seq == INT32_MAX else seq + 1


def sequence_distance(newer: int, older: int) -> int:
    """How far ``newer`` is past ``older`` on the 31-bit sequence circle."""
    return (newer - older) % SEQ_MOD


class PendingBatch(NamedTuple):
    producer_id: int
    producer_epoch: int
    first_seq: int
    last_seq: int
    offset_delta: int
    row: int  # table row seen by validate (-1: new), rechecked at commit
    max_timestamp: int  # the batch's (Kafka's BatchMetadata timestamp)


class Validation:
    __slots__ = ("outcome", "error", "message", "duplicate_base_offset", "duplicate_timestamp", "pending")

    def __init__(self, outcome: str, error: ErrorCode = ErrorCode.NONE, message: str | None = None,
                 duplicate_base_offset: int = -1, pending: list[PendingBatch] | None = None,
                 duplicate_timestamp: int = -1):
        self.outcome = outcome
        self.error = error
        self.message = message
        self.duplicate_base_offset = duplicate_base_offset
        self.duplicate_timestamp = duplicate_timestamp  # the stored batch's, for the answer
        self.pending = pending if pending is not None else []


class Verifying:
    """Kafka's VerificationStateEntry: when the note was made, the lowest first sequence a
    verified batch of the producer carried at ``epoch`` (a newer epoch starts it afresh),
    and whether the Produce was of transaction version 2 (it may bump the epoch)."""

    __slots__ = ("timestamp", "lowest_sequence", "epoch", "supports_epoch_bump")

    def __init__(self, timestamp: int, sequence: int, epoch: int, supports_epoch_bump: bool):
        self.timestamp = timestamp
        self.lowest_sequence = sequence
        self.epoch = epoch
        self.supports_epoch_bump = supports_epoch_bump

    def lower_to(self, sequence: int, epoch: int) -> None:
        if epoch == self.epoch and sequence < self.lowest_sequence:
            self.lowest_sequence = sequence
        if epoch > self.epoch:
            self.epoch, self.lowest_sequence = epoch, sequence


@dataclass
class Counters:
    """Shared across partitions; the shell exports them."""

    duplicates: int = 0  # retries answered without appending (NONE or 46)
    duplicate_sequence_errors: int = 0
    out_of_order: int = 0
    fencings: int = 0
    expired: int = 0


class ProducerStateManager:
    def __init__(self, mode: str = LATEST, max_in_flight_sequences: int = 10_000_000,
                 counters: Counters | None = None):
        if mode not in DEPTH:
            raise ValueError(f"unknown producer.state.mode {mode}")
        self.mode = mode
        self.window = max_in_flight_sequences
        self.table = ProducerTable(DEPTH[mode])
        self.counters = counters or Counters()
        # producer id -> the coordinator epoch of its last marker here (Kafka's
        # ProducerStateEntry.coordinatorEpoch, -1 until a marker): only transactional
        # producers have one, so it is kept apart from the table's columns
        self.coordinator_epochs: dict[int, int] = {}
        self.verifying: dict[int, Verifying] = {}  # producer id -> its note (module docstring)

    def __len__(self) -> int:
        return len(self.table)

    # --- validation (pure) ------------------------------------------------------------

    def validate(self, headers: list[BatchHeader]) -> Validation:
        """Check the idempotent batches of one Produce for this partition."""
        table = self.table
        seen: dict[int, tuple[int, int]] | None = None  # pid -> (epoch, last_seq) of earlier batches here
        pending = []
        for h in headers:
            pid = h.producer_id
            if pid < 0:
                continue
            last_seq = h.last_sequence
            if seen is not None and pid in seen:
                epoch, current_last = seen[pid]
                row = -2  # duplicates are only looked up against stored batches
            else:
                row = table.find(pid)
                if row < 0:
                    epoch = current_last = None
                else:
                    epoch = table.epochs[row]
                    newest = table.newest(row)
                    current_last = newest[0] if newest else None
            verdict = self._check(h, row, epoch, current_last, h.base_sequence, last_seq)
            if self.verifying and pid in self.verifying and (verdict is None or verdict.error in _SEQUENCE_ERRORS):
                verdict = self._overtaking(h, current_last) or verdict
            if verdict is not None:
                return verdict
            if len(headers) > 1:
                if seen is None:
                    seen = {}
                seen[pid] = (h.producer_epoch, last_seq)
            # tuple.__new__: a NamedTuple's own __new__ is a Python-level call, once per batch
            pending.append(_new_tuple(PendingBatch, (pid, h.producer_epoch, h.base_sequence, last_seq,
                                                     h.last_offset_delta, row, h.max_timestamp)))
        return Validation(APPEND, pending=pending)

    def _check(self, h: BatchHeader, row: int, epoch, current_last, first_seq, last_seq):
        if h.base_sequence < 0:
            return Validation(REJECT, ErrorCode.INVALID_RECORD,
                              "idempotent batch without a base sequence")
        if epoch is None:
            return None  # unknown producer id: any first sequence (Kafka does the same)
        if h.producer_epoch < epoch:
            return Validation(REJECT, ErrorCode.INVALID_PRODUCER_EPOCH,
                              f"epoch {h.producer_epoch} is older than the current epoch {epoch}")
        if h.producer_epoch > epoch:
            # a new epoch starts at sequence 0, unless the producer had none (-1, Kafka's
            # NO_PRODUCER_EPOCH): then any sequence goes, as Kafka's checkSequence lets it
            if first_seq != 0 and epoch != NO_PRODUCER_EPOCH:
                return Validation(REJECT, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                                  f"new epoch {h.producer_epoch} must start at sequence 0, not {first_seq}")
            return None
        if current_last is None:
            # no batch yet in this epoch (a transaction marker began it): its first batch starts
            # at sequence 0, unless the epoch is none (Kafka's checkSequence, NO_SEQUENCE)
            if first_seq == 0 or epoch == NO_PRODUCER_EPOCH:
                return None
            return Validation(REJECT, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                              f"epoch {epoch} has no batch yet: it starts at sequence 0, not {first_seq}")
        if first_seq == next_sequence(current_last):
            # in order, the common case: a stored batch (at or behind current_last) cannot
            # start here, so there is no duplicate to look for
            return None
        if row >= 0:
            dup = self._find_duplicate(row, first_seq, last_seq)
            if dup is not None:
                return Validation(DUPLICATE, duplicate_base_offset=dup[0], duplicate_timestamp=dup[1])
        window = self.window
        if self.mode == LATEST and sequence_distance(current_last, first_seq) < window:
            if sequence_distance(current_last, last_seq) < window:  # every sequence already appended
                return Validation(REJECT, ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
                                  f"sequences {first_seq}-{last_seq} are at or behind the last appended {current_last}")
            return Validation(REJECT, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                              f"sequences {first_seq}-{last_seq} overlap the last appended {current_last}: "
                              f"expected sequence {next_sequence(current_last)}")
        return Validation(REJECT, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                          f"expected sequence {next_sequence(current_last)}, got {first_seq}")

    def _overtaking(self, h: BatchHeader, current_last) -> Validation | None:
        """A batch that would overtake one still being verified (Kafka's checkSequence looks
        at its VerificationStateEntry first): at transaction version 2 a producer with no
        batch here starts at sequence 0; any first sequence above the lowest verified is out
        of order."""
        note = self.verifying[h.producer_id]
        first = h.base_sequence
        if note.supports_epoch_bump and first != 0 and current_last is None:
            return Validation(REJECT, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                              f"sequence {first} of a producer with no batch here, its transaction being "
                              f"verified: expected sequence 0")
        if first > note.lowest_sequence:
            return Validation(REJECT, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                              f"sequence {first} is past {note.lowest_sequence}, the earliest of a "
                              f"transactional batch being verified")
        return None

    def _find_duplicate(self, row: int, first_seq: int, last_seq: int) -> tuple[int, int] | None:
        """(base offset, timestamp) of the stored batch ``first_seq..last_seq`` retries."""
        for b_last_seq, b_last_offset, b_delta, b_timestamp in self.table.batches(row):
            b_first_seq = (b_last_seq - b_delta) % SEQ_MOD
            if b_first_seq == first_seq and b_last_seq == last_seq:
                return b_last_offset - b_delta, b_timestamp
        return None

    def record(self, validation: Validation) -> None:
        """Count an outcome (kept apart from ``validate`` so that stays pure)."""
        if validation.outcome is APPEND:
            return
        c = self.counters
        if validation.outcome == DUPLICATE:
            c.duplicates += 1
        elif validation.error == ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
            c.duplicates += 1
            c.duplicate_sequence_errors += 1
        elif validation.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER:
            c.out_of_order += 1
        elif validation.error == ErrorCode.INVALID_PRODUCER_EPOCH:
            c.fencings += 1

    # --- commit ------------------------------------------------------------------------------

    def commit(self, validation: Validation, last_offsets: list[int]) -> None:
        """Apply a validated append; ``last_offsets`` are the log's last offset of
        each pending batch, in order."""
        for p, last_offset in zip(validation.pending, last_offsets):
            # Kafka's BatchMetadata timestamp: the batch's max timestamp (the append time on a
            # LogAppendTime topic, whose batches are stamped before this); DescribeProducers
            # reports it, a duplicate's answer carries it, and expiry counts from it
            self.store_batch(p.producer_id, p.producer_epoch, p.last_seq, last_offset, p.offset_delta,
                             p.max_timestamp, row=p.row)

    def store_batch(self, producer_id: int, producer_epoch: int, last_seq: int, last_offset: int,
                    offset_delta: int, timestamp: int, row: int = -1) -> None:
        """Record a batch as the producer's newest (a new epoch forgets the older batches);
        ``row`` is where validation found the producer, rechecked here."""
        table = self.table
        pids = table.pids
        if row < 0 or row >= len(pids) or pids[row] != producer_id:
            row = table.find(producer_id)
        if row < 0:
            row = table.insert(producer_id, producer_epoch)
        elif producer_epoch != table.epochs[row]:
            table.epochs[row] = producer_epoch
            table.clear_batches(row)
        table.push_batch(row, last_seq, last_offset, offset_delta, timestamp)

    # --- verification (KIP-890) -----------------------------------------------------------------

    def start_verification(self, producer_id: int, sequence: int, epoch: int, supports_epoch_bump: bool,
                           now: int) -> None:
        """Note a transactional batch about to be verified (Kafka's maybeCreateVerificationStateEntry)."""
        note = self.verifying.get(producer_id)
        if note is None:
            note = self.verifying[producer_id] = Verifying(now, sequence, epoch, supports_epoch_bump)
        note.lower_to(sequence, epoch)

    def end_verification(self, producer_id: int, producer_epoch: int, control: bool) -> None:
        """A transactional batch of the producer was appended: its transaction is open here or
        ended, so the note goes; a transaction-version-2 marker of the note's own epoch keeps
        it, since the producer's next transaction follows at a bumped epoch (Kafka's
        updateProducers)."""
        note = self.verifying.get(producer_id)
        if note is not None and not (note.supports_epoch_bump and control and producer_epoch == note.epoch):
            del self.verifying[producer_id]

    # --- transaction markers (KIP-98) ----------------------------------------------------------

    def check_marker(self, producer_id: int, producer_epoch: int, coordinator_epoch: int = -1) -> ErrorCode:
        """A COMMIT/ABORT marker may not carry a producer epoch older than the partition's,
        nor a coordinator epoch older than the producer's last marker's (Kafka's
        TransactionCoordinatorFencedException)."""
        row = self.table.find(producer_id)
        if row >= 0 and producer_epoch < self.table.epochs[row]:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        if self.coordinator_epochs.get(producer_id, -1) > coordinator_epoch:
            return ErrorCode.TRANSACTION_COORDINATOR_FENCED
        return ErrorCode.NONE

    def apply_marker(self, producer_id: int, producer_epoch: int, now: int, coordinator_epoch: int = -1) -> None:
        """After a marker is appended: a newer epoch replaces the producer's (fencing
        the older one here) with no batches yet, so the new epoch starts afresh."""
        if coordinator_epoch >= 0:
            self.coordinator_epochs[producer_id] = coordinator_epoch
        table = self.table
        row = table.find(producer_id)
        if row < 0:
            table.set_empty(table.insert(producer_id, producer_epoch), now)
        elif producer_epoch != table.epochs[row]:
            table.epochs[row] = producer_epoch
            table.set_empty(row, now)
        else:
            table.touch(row, now)

    # --- expiry and introspection --------------------------------------------------------------

    def expire(self, now: int, expiration_ms: int, keep=frozenset()) -> int:
        """Drop producers whose last batch's timestamp is ``expiration_ms`` old (Kafka's
        isProducerExpired), except those in ``keep`` (an open transaction)."""
        table = self.table
        removed = 0
        row = 0
        while row < len(table):
            pid = table.pids[row]
            if now - table.last_write(row) >= expiration_ms and pid not in keep:
                table.remove(row)  # the last row moved here: look at this row again
                self.coordinator_epochs.pop(pid, None)
                removed += 1
            else:
                row += 1
        self.counters.expired += removed
        for pid in [pid for pid, note in self.verifying.items() if now - note.timestamp >= expiration_ms]:
            del self.verifying[pid]  # never verified (Kafka's removeExpiredProducers)
        return removed

    def entry(self, pid: int) -> dict | None:
        """A readable view of one producer's state (tests, tools)."""
        row = self.table.find(pid)
        if row < 0:
            return None
        batches = [{"first_seq": (s - d) % SEQ_MOD, "last_seq": s, "base_offset": o - d,
                    "last_offset": o, "timestamp": t}
                   for s, o, d, t in self.table.batches(row)]
        return {"producer_id": pid, "producer_epoch": self.table.epochs[row],
                "last_write": self.table.last_write(row), "batches": batches}

    def active(self):
        """(producer id, epoch, last sequence or -1, last timestamp, coordinator epoch or -1)
        of every producer the partition keeps state for (DescribeProducers)."""
        table = self.table
        epochs = self.coordinator_epochs
        for row in range(len(table)):
            newest = table.newest(row)
            pid = table.pids[row]
            yield (pid, table.epochs[row], newest[0] if newest is not None else -1,
                   table.last_write(row), epochs.get(pid, -1))

    def nbytes(self) -> int:
        return self.table.nbytes()
