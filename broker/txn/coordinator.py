"""The transaction coordinator of one broker (KIP-98, with KIP-360 epoch handling).

It maps each transactional id to its producer id and epoch, the previous ones
(KIP-360's LastProducerId/LastEpoch), the state of its transaction (see
``states``), the partitions and consumer groups in it, its timeout and times.
Synchronous, with time as an argument. Ending a transaction -- by EndTxn, by
a new producer instance fencing an open one, or by ``tick`` finding it past
transaction.timeout.ms -- moves it to a Prepare state and returns a
``Completion``: the markers to write and the groups whose pending offsets to
settle. The shell carries that out and calls ``complete``; until then the id
answers CONCURRENT_TRANSACTIONS.

Errors follow Kafka's coordinator: PRODUCER_FENCED for a stale epoch (KIP-588's
name for what KIP-360's table calls INVALID_PRODUCER_EPOCH; handlers give old
request versions INVALID_PRODUCER_EPOCH), INVALID_PRODUCER_ID_MAPPING for an id
that is not the transactional id's, INVALID_TXN_STATE for a move the state
does not allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import structlog

from kipper.broker.txn import ending
from kipper.broker.txn.states import COMPLETING, SETTLED, TxnState, transition
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

EPOCH_EXHAUSTED = ending.EPOCH_EXHAUSTED
MAX_EPOCH = 32767
TV1, TV2 = 0, 2  # the transaction version a client used (Kafka records TV_0 for the classic protocol)
NO_PRODUCER_ID = -1
NO_EPOCH = -1

S = TxnState


@dataclass(frozen=True)
class TxnSettings:
    max_timeout_ms: int = 900_000  # transaction.max.timeout.ms (Kafka's default, 15 min)
    id_expiration_ms: int = 604_800_000  # transactional.id.expiration.ms (Kafka's default, 7 days)
    coordinator_epoch: int = 0  # one broker, never a coordinator change

    @classmethod
    def from_config(cls, config) -> "TxnSettings":
        return cls(max_timeout_ms=config["transaction.max.timeout.ms"],
                   id_expiration_ms=config["transactional.id.expiration.ms"])


@dataclass
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    last_producer_id: int = NO_PRODUCER_ID
    last_producer_epoch: int = NO_EPOCH
    state: TxnState = S.EMPTY
    partitions: set = field(default_factory=set)  # {(topic, partition)}
    groups: set = field(default_factory=set)  # consumer groups with pending offsets
    txn_start: int = -1
    last_update: int = 0
    # transaction version 2: the producer id the next completion rotates to (its epoch was
    # exhausted), and the version the client ended its last transaction with
    next_producer_id: int = NO_PRODUCER_ID
    client_tv: int = TV1

    def view(self) -> dict:
        return {"transactional_id": self.transactional_id, "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch, "last_producer_id": self.last_producer_id,
                "last_producer_epoch": self.last_producer_epoch, "state": self.state.value,
                "timeout_ms": self.timeout_ms, "partitions": sorted(self.partitions),
                "groups": sorted(self.groups), "txn_start": self.txn_start,
                "last_update": self.last_update}


class Completion(NamedTuple):
    """Markers to write (with this producer id and epoch) and groups to settle."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    partitions: tuple
    groups: tuple
    next_producer_id: int = NO_PRODUCER_ID  # TV2: the new producer id once the markers are written


class EndResult(NamedTuple):
    """EndTxn's answer; v5 (transaction version 2) carries the producer id and epoch the
    producer goes on with."""

    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_EPOCH
    completion: Completion | None = None


class InitResult(NamedTuple):
    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_EPOCH
    completion: Completion | None = None


@dataclass
class TxnCounters:
    commits: int = 0
    aborts: int = 0
    timed_out: int = 0
    fenced: int = 0  # open transactions aborted because a new instance initialized
    expired: int = 0
    epoch_bumps: int = 0  # KIP-360: InitProducerId bumps and fences (a new id at exhaustion counts too)


class _NoJournal:
    def stored(self, meta, now): pass
    def removed(self, transactional_id, now): pass


class TransactionCoordinator:
    def __init__(self, settings: TxnSettings, allocate_id: Callable[[], int], journal=None,
                 server_tv: Callable[[], int] = lambda: TV1):
        """``journal`` (broker/txn/journal.py) records every change of a transactional
        id's metadata in __transaction_state, so a restart can restore it. ``server_tv``:
        the finalized transaction.version, which the aborts the coordinator starts itself
        (timeouts, fencing) follow."""
        self.settings = settings
        self.server_tv = server_tv
        self._allocate = allocate_id  # shared with idempotent producers' ids
        self.journal = journal or _NoJournal()
        self.transactions: dict[str, TransactionMetadata] = {}
        self._by_producer_id: dict[int, TransactionMetadata] = {}
        self.counters = TxnCounters()

    def __len__(self) -> int:
        return len(self.transactions)

    def by_producer_id(self, producer_id: int) -> TransactionMetadata | None:
        return self._by_producer_id.get(producer_id)

    def describe(self, transactional_id: str) -> tuple[ErrorCode, dict | None]:
        meta = self.transactions.get(transactional_id)
        if meta is None:
            return ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, None
        return ErrorCode.NONE, meta.view()

    def list(self, states: set[TxnState], producer_ids: set[int], duration_ms: int, pattern,
             now: int) -> list[TransactionMetadata]:
        """ListTransactions (Kafka's listTransactionStates): Dead ids never; the filters
        are ANDed; ``duration_ms`` >= 0 keeps transactions open longer than that."""
        out = []
        for meta in self.transactions.values():
            if meta.state == S.DEAD:
                continue
            if producer_ids and meta.producer_id not in producer_ids:
                continue
            if states and meta.state not in states:
                continue
            if duration_ms >= 0 and now - meta.txn_start <= duration_ms:
                continue
            if pattern is not None and not pattern.fullmatch(meta.transactional_id):
                continue
            out.append(meta)
        return out

    # --- InitProducerId: the KIP-360 decision table ----------------------------------------

    def unload(self, owned) -> int:
        """Forget the transactional ids ``owned(id)`` picks (their coordinator moved)."""
        gone = [tid for tid in self.transactions if owned(tid)]
        for tid in gone:
            meta = self.transactions.pop(tid)
            if self._by_producer_id.get(meta.producer_id) is meta:
                del self._by_producer_id[meta.producer_id]
        return len(gone)

    def init_producer_id(self, transactional_id: str, timeout_ms: int, producer_id: int,
                         producer_epoch: int, now: int) -> InitResult:
        if (producer_id < 0) != (producer_epoch < 0):
            return InitResult(ErrorCode.INVALID_REQUEST)
        if not 0 < timeout_ms <= self.settings.max_timeout_ms:
            return InitResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        expected = (producer_id, producer_epoch) if producer_id >= 0 else None
        meta = self.transactions.get(transactional_id)
        if meta is None:
            # 1a, and KIP-360's expired mapping: whatever the producer held, a new id
            pid = self._allocate()
            meta = TransactionMetadata(transactional_id, pid, 0, timeout_ms, last_update=now)
            self.transactions[transactional_id] = meta
            self._by_producer_id[pid] = meta
            self.journal.stored(meta, now)
            log.info("transactional_id_initialized", transactional_id=transactional_id,
                     producer_id=pid, producer_epoch=0)
            return InitResult(ErrorCode.NONE, pid, 0)
        if meta.state in COMPLETING:
            return InitResult(ErrorCode.CONCURRENT_TRANSACTIONS)
        if expected is not None and expected[0] not in (meta.producer_id, meta.last_producer_id):
            return InitResult(ErrorCode.PRODUCER_FENCED)  # another id took the transactional id over
        if meta.state == S.ONGOING:
            # a new instance (or a retry after an error) while a transaction is open: abort it
            # under a bumped epoch and let the client retry, which bumps again (as Kafka does)
            if expected is not None and expected != (meta.producer_id, meta.producer_epoch):
                return InitResult(ErrorCode.PRODUCER_FENCED)
            self.counters.fenced += 1
            return InitResult(ErrorCode.CONCURRENT_TRANSACTIONS,
                              completion=self._fence(meta, now))
        return self._bump(meta, expected, timeout_ms, now)

    def _bump(self, meta: TransactionMetadata, expected, timeout_ms: int, now: int) -> InitResult:
        current = (meta.producer_id, meta.producer_epoch)
        if expected is None or expected == current:
            # 1b / 2a: bump, or a new producer id when the epoch would overflow
            last = current if expected is not None else (NO_PRODUCER_ID, NO_EPOCH)
            if meta.producer_epoch >= EPOCH_EXHAUSTED:
                del self._by_producer_id[meta.producer_id]
                meta.producer_id = self._allocate()
                meta.producer_epoch = 0
                self._by_producer_id[meta.producer_id] = meta
            else:
                meta.producer_epoch += 1
            meta.last_producer_id, meta.last_producer_epoch = last
            self.counters.epoch_bumps += 1
        elif expected != (meta.last_producer_id, meta.last_producer_epoch):
            return InitResult(ErrorCode.PRODUCER_FENCED)  # 2c
        # 2b (a retried bump) falls through and gets the current pair again
        meta.timeout_ms = timeout_ms
        transition(meta, S.EMPTY, now)
        meta.txn_start = -1  # (no transaction: Kafka's Empty has no start time)
        meta.partitions.clear()
        meta.groups.clear()
        self.journal.stored(meta, now)
        log.info("producer_epoch_bumped", transactional_id=meta.transactional_id,
                 producer_id=meta.producer_id, producer_epoch=meta.producer_epoch)
        return InitResult(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)

    def _fence(self, meta: TransactionMetadata, now: int) -> Completion:
        """Bump the epoch of an open transaction and abort it with the new epoch, so
        the markers fence the old one in every partition it wrote to. With transaction
        version 2 finalized the abort is the version-2 one (Kafka uses the cluster's version
        for what the coordinator ends itself): one bump, a new producer id at exhaustion."""
        transition(meta, S.PREPARE_EPOCH_FENCE, now)
        self.counters.epoch_bumps += 1
        if self.server_tv() >= TV2:
            return self._prepare(meta, committed=False, now=now, tv=TV2)
        meta.producer_epoch += 1  # never past Short.MAX: InitProducerId rotates at MAX - 1
        meta.last_producer_id, meta.last_producer_epoch = NO_PRODUCER_ID, NO_EPOCH
        return self._prepare(meta, committed=False, now=now)

    def _prepare(self, meta: TransactionMetadata, committed: bool, now: int, tv: int = TV1,
                 empty: bool = False) -> Completion:
        """Prepare*: journaled before any marker, so a restart finishes the job. With
        transaction version 2 the epoch is bumped here (the markers carry the new one) and
        an exhausted epoch takes a new producer id once the markers are written."""
        if tv >= TV2:
            if meta.producer_epoch >= EPOCH_EXHAUSTED:
                meta.next_producer_id = self._allocate()
            meta.last_producer_id, meta.last_producer_epoch = meta.producer_id, meta.producer_epoch
            if meta.producer_epoch < MAX_EPOCH:  # (an abort at MAX goes through without a bump)
                meta.producer_epoch += 1
            if empty:
                meta.txn_start = now
        meta.client_tv = tv
        transition(meta, S.PREPARE_COMMIT if committed else S.PREPARE_ABORT, now)
        self.journal.stored(meta, now)
        return Completion(meta.transactional_id, meta.producer_id, meta.producer_epoch, committed,
                          tuple(sorted(meta.partitions)), tuple(sorted(meta.groups)),
                          meta.next_producer_id)

    # --- the transaction's contents ----------------------------------------------------------

    def _check(self, transactional_id: str, producer_id: int, producer_epoch: int):
        """(error, metadata) for a request that names the transaction's id and epoch."""
        meta = self.transactions.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, meta
        if meta.producer_epoch != producer_epoch:
            return ErrorCode.PRODUCER_FENCED, meta
        if meta.state in COMPLETING:
            return ErrorCode.CONCURRENT_TRANSACTIONS, meta
        return ErrorCode.NONE, meta

    def _open(self, meta: TransactionMetadata, now: int) -> None:
        if meta.state in SETTLED:
            meta.partitions.clear()
            meta.groups.clear()
            meta.txn_start = now
        transition(meta, S.ONGOING, now)

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions, now: int, tv: int = TV1) -> ErrorCode:
        """AddPartitionsToTxn, or (``tv`` 2) the partition a Produce v12 or an
        AddPartitionsToTxn v4+ adds for a transaction-version-2 producer."""
        error, meta = self._check(transactional_id, producer_id, producer_epoch)
        if error != ErrorCode.NONE:
            return error
        if meta.state == S.ONGOING and meta.partitions.issuperset(partitions):
            return ErrorCode.NONE  # as Kafka: already there, nothing to write
        meta.client_tv = tv
        self._open(meta, now)
        meta.partitions.update(partitions)
        self.journal.stored(meta, now)
        return ErrorCode.NONE

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                    group_id: str, now: int, tv: int = TV1) -> ErrorCode:
        """AddOffsetsToTxn, or (``tv`` 2) the group a TxnOffsetCommit v5+ adds."""
        error, meta = self._check(transactional_id, producer_id, producer_epoch)
        if error != ErrorCode.NONE:
            return error
        if meta.state == S.ONGOING and group_id in meta.groups:
            return ErrorCode.NONE
        meta.client_tv = tv
        self._open(meta, now)
        meta.groups.add(group_id)
        self.journal.stored(meta, now)
        return ErrorCode.NONE

    def end_txn_v2(self, transactional_id: str, producer_id: int, producer_epoch: int,
                   committed: bool, now: int) -> EndResult:
        """EndTxn v5 (transaction version 2): the table in ``ending``. A retry is answered
        with the current pair; a completion's pair is known once ``complete`` ran."""
        meta = self.transactions.get(transactional_id)
        decision = ending.decide(meta, producer_id, producer_epoch, committed)
        if decision.error != ErrorCode.NONE:
            return EndResult(decision.error)
        if not decision.prepare:
            return EndResult(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)
        self.counters.epoch_bumps += 1
        return EndResult(ErrorCode.NONE, completion=self._prepare(meta, committed, now, tv=TV2,
                                                                  empty=decision.empty))

    def end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int,
                committed: bool, now: int) -> tuple[ErrorCode, Completion | None]:
        meta = self.transactions.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, None
        if meta.producer_epoch != producer_epoch:
            return ErrorCode.PRODUCER_FENCED, None
        state = meta.state
        if state == S.ONGOING:
            return ErrorCode.NONE, self._prepare(meta, committed, now)
        done, pending = ((S.COMPLETE_COMMIT, S.PREPARE_COMMIT) if committed
                         else (S.COMPLETE_ABORT, S.PREPARE_ABORT))
        if state == done:
            return ErrorCode.NONE, None  # a retry of an EndTxn that already completed
        if state in (pending, S.PREPARE_EPOCH_FENCE):
            return ErrorCode.CONCURRENT_TRANSACTIONS, None
        return ErrorCode.INVALID_TXN_STATE, None

    def complete(self, completion: Completion, now: int) -> None:
        """The markers of ``completion`` are written: Prepare* -> Complete*."""
        meta = self.transactions[completion.transactional_id]
        transition(meta, S.COMPLETE_COMMIT if completion.committed else S.COMPLETE_ABORT, now)
        if meta.next_producer_id >= 0:  # TV2 at an exhausted epoch: the new producer id, epoch 0
            self._by_producer_id.pop(meta.producer_id, None)
            meta.producer_id, meta.producer_epoch = meta.next_producer_id, 0
            meta.next_producer_id = NO_PRODUCER_ID
            self._by_producer_id[meta.producer_id] = meta
            log.info("producer_id_rotated", transactional_id=meta.transactional_id,
                     producer_id=meta.producer_id, last_producer_id=meta.last_producer_id)
        meta.partitions.clear()
        meta.groups.clear()
        self.journal.stored(meta, now)
        if completion.committed:
            self.counters.commits += 1
        else:
            self.counters.aborts += 1

    # --- checks for the partition leader and the group coordinator --------------------------

    def verify_produce(self, producer_id: int, producer_epoch: int, topic: str,
                       partition: int) -> ErrorCode:
        """KIP-890 part 1: a transactional batch is accepted only for a partition added
        to the producer's open transaction, at its current epoch."""
        meta = self._by_producer_id.get(producer_id)
        if meta is None:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if meta.producer_epoch != producer_epoch:
            return ErrorCode.INVALID_PRODUCER_EPOCH  # Kafka's leader maps PRODUCER_FENCED to this
        if meta.state != S.ONGOING or (topic, partition) not in meta.partitions:
            return ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    def verify_offset_commit(self, transactional_id: str, producer_id: int, producer_epoch: int,
                             group_id: str) -> ErrorCode:
        meta = self.transactions.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if meta.producer_epoch != producer_epoch:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        if meta.state != S.ONGOING or group_id not in meta.groups:
            return ErrorCode.INVALID_TXN_STATE  # AddOffsetsToTxn must come first
        return ErrorCode.NONE

    # --- time ----------------------------------------------------------------------------------

    def tick(self, now: int) -> list[Completion]:
        """Abort transactions open past their timeout (bumping the epoch, as Kafka does)
        and remove settled transactional ids unused for transactional.id.expiration.ms."""
        out = []
        expiry = self.settings.id_expiration_ms
        for tid, meta in list(self.transactions.items()):
            if meta.state == S.ONGOING and meta.txn_start + meta.timeout_ms < now:
                log.info("transaction_timed_out", transactional_id=tid, producer_id=meta.producer_id,
                         producer_epoch=meta.producer_epoch, timeout_ms=meta.timeout_ms)
                self.counters.timed_out += 1
                out.append(self._fence(meta, now))
            elif meta.state in SETTLED and now - meta.last_update >= expiry:
                transition(meta, S.DEAD, now)
                del self.transactions[tid]
                self._by_producer_id.pop(meta.producer_id, None)
                self.journal.removed(tid, now)
                self.counters.expired += 1
                log.info("transactional_id_expired", transactional_id=tid)
        return out

    def restore(self, meta: TransactionMetadata) -> Completion | None:
        """A transactional id as __transaction_state last recorded it (at start); the
        completion to carry out again if it was between Prepare* and Complete*."""
        self.transactions[meta.transactional_id] = meta
        self._by_producer_id[meta.producer_id] = meta
        if meta.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return Completion(meta.transactional_id, meta.producer_id, meta.producer_epoch,
                              meta.state == S.PREPARE_COMMIT, tuple(sorted(meta.partitions)),
                              tuple(sorted(meta.groups)), meta.next_producer_id)
        return None

    def snapshot(self) -> dict:
        by_state = {state.value: 0 for state in TxnState if state != S.DEAD}  # fixed keys
        for meta in self.transactions.values():
            by_state[meta.state.value] += 1
        c = self.counters
        return {"transactional_ids": len(self.transactions), "states": by_state,
                "commits": c.commits, "aborts": c.aborts, "timed_out": c.timed_out,
                "fenced": c.fenced, "expired": c.expired, "epoch_bumps": c.epoch_bumps}
