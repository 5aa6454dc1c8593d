"""Producer id allocation for InitProducerId, with KIP-360 epoch bumping.

Ids come from a monotonic counter at epoch 0. A producer that presents its
(producer id, epoch) gets the epoch bumped when the pair is current, the
same answer again when it is retrying the previous bump, and
INVALID_PRODUCER_EPOCH otherwise. An exhausted epoch rolls over to a new id;
the old id remembers its successor so a retried bump is still idempotent.

Issued ids are remembered in two generations (a plain dict of id -> epoch
each) rotated every ``producer.id.expiration.ms``: an id unused for one to
two periods is forgotten, with no per-entry timestamp to store.
"""

from __future__ import annotations

from typing import Callable

from kipper.protocol.errors import ErrorCode

EPOCH_EXHAUSTED = 32767 - 1  # Kafka moves to a new id once epoch >= Short.MAX - 1


class ProducerIdsUnavailable(Exception):
    """No block of ids to hand out yet (a cluster's broker waits for its controller's):
    InitProducerId answers COORDINATOR_LOAD_IN_PROGRESS, as Kafka does."""


class ProducerIdManager:
    def __init__(self, first_id: int = 1000, reserve: Callable[[int], int | tuple[int, int]] | None = None):
        """``reserve(first_unused) -> block end``: persist a block of ids before any of
        them is handed out (with log.dirs, so no id is ever given twice); or ``-> (start,
        end)``: a block elsewhere, which a cluster's controller hands out (raising
        ProducerIdsUnavailable while there is none)."""
        self._next = first_id
        self._reserve = reserve
        self._block_end = first_id if reserve is not None else 1 << 62
        self._current: dict[int, int] = {}
        self._previous: dict[int, int] = {}
        self._last_epoch: dict[int, int] = {}  # id -> epoch before its latest bump
        self._successor: dict[int, tuple[int, int]] = {}  # id -> (id, epoch) after overflow
        self.allocated = 0
        self.bumps = 0

    @property
    def next_id(self) -> int:
        """The id the next allocation starts from (a reset broker carries on from here)."""
        return self._next

    def _take(self) -> int:
        pid = self._next
        if pid >= self._block_end:
            block = self._reserve(pid)
            if isinstance(block, tuple):
                pid, self._block_end = block
            else:
                self._block_end = block
        self._next = pid + 1
        return pid

    def _new(self) -> tuple[int, int]:
        pid = self._take()
        self._current[pid] = 0
        self.allocated += 1
        return pid, 0

    def _epoch_of(self, pid: int) -> int | None:
        epoch = self._current.get(pid)
        if epoch is None:
            epoch = self._previous.pop(pid, None)
            if epoch is not None:
                self._current[pid] = epoch  # used again: keep it for another period
        return epoch

    def init(self, producer_id: int, producer_epoch: int) -> tuple[ErrorCode, int, int]:
        """InitProducerId for an idempotent producer: (error, id, epoch)."""
        if (producer_id < 0) != (producer_epoch < 0):
            return ErrorCode.INVALID_REQUEST, -1, -1
        if producer_id < 0:
            return (ErrorCode.NONE, *self._new())
        epoch = self._epoch_of(producer_id)
        if epoch is None:
            # expired or never issued here: KIP-360 allows handing out a new id
            return (ErrorCode.NONE, *self._new())
        successor = self._successor.get(producer_id)
        if successor is not None:
            if producer_epoch == epoch:
                return (ErrorCode.NONE, *successor)
            return ErrorCode.INVALID_PRODUCER_EPOCH, -1, -1
        if producer_epoch == epoch:
            self.bumps += 1
            if epoch >= EPOCH_EXHAUSTED:
                new = self._new()
                self._successor[producer_id] = new
                return (ErrorCode.NONE, *new)
            self._last_epoch[producer_id] = epoch
            self._current[producer_id] = epoch + 1
            return ErrorCode.NONE, producer_id, epoch + 1
        if producer_epoch == self._last_epoch.get(producer_id):
            return ErrorCode.NONE, producer_id, epoch
        return ErrorCode.INVALID_PRODUCER_EPOCH, -1, -1

    def allocate(self) -> int:
        """A fresh id from the same counter, for the transaction coordinator, which
        keeps transactional ids' epochs itself."""
        pid = self._take()
        self.allocated += 1
        return pid

    def current_epoch(self, producer_id: int) -> int | None:
        return self._current.get(producer_id, self._previous.get(producer_id))

    def rotate(self) -> int:
        """Forget ids unused for a whole period; returns how many went."""
        dropped = self._previous
        for pid in dropped:
            self._last_epoch.pop(pid, None)
            self._successor.pop(pid, None)
        self._previous, self._current = self._current, {}
        return len(dropped)

    def __len__(self) -> int:
        return len(self._current) + len(self._previous)
