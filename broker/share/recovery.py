"""Rebuilding a share-partition from its control records, and the log view the engine reads.

Recovery starts at the chain head kept in the ``Durable`` index entry, follows
each SHARE_DELTA's BackOffset back to the SHARE_CHECKPOINT with the same
checkpoint epoch, then applies checkpoint and deltas oldest first. Each step is
a lookup by offset in the partition's log, so recovery reads only the records
of the chain, never the whole log.
"""

from __future__ import annotations

from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol import share_records as sr


class RecoveryError(Exception):
    """The chain of control records is broken (a bug, or the log lost it)."""


class PartitionLogView:
    """The engine's ``LogView`` over a broker Partition: batch headers only."""

    __slots__ = ("partition",)

    def __init__(self, partition):
        self.partition = partition

    @property
    def log_start_offset(self) -> int:
        return self.partition.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.partition.log_end_offset

    def data_spans(self, start: int, end: int | None = None):
        p = self.partition
        if start >= p.log_end_offset:
            return
        for base, h, size in p.headers_from(start):
            if end is not None and base >= end:
                return
            last = base + h.last_offset_delta
            if last >= start and not h.attributes & b.CONTROL:
                yield base, last, size


class CommittedLogView(PartitionLogView):
    """What a read_committed share group sees: the log up to the last stable offset,
    without the batches of aborted transactions. An open transaction stalls the
    group at its first offset; aborted data is a gap, never handed out (Kafka's
    share.isolation.level=read_committed). Recovery reads through the same view, so
    the gaps it sees are the ones the live engine stepped over."""

    __slots__ = ()

    @property
    def log_end_offset(self) -> int:
        return self.partition.last_stable_offset

    def data_spans(self, start: int, end: int | None = None):
        p = self.partition
        stable = p.last_stable_offset
        end = stable if end is None else min(end, stable)
        if start >= end:
            return
        txn = p.txn_index_if_any
        aborted = txn is not None and bool(txn.aborted)
        for base, h, size in p.headers_from(start):
            if base >= end:
                return
            last = base + h.last_offset_delta
            if last < start or h.attributes & b.CONTROL:
                continue
            if aborted and h.attributes & b.TRANSACTIONAL and any(
                    a.producer_id == h.producer_id and a.first_offset <= base
                    for a in txn.aborted_between(base, last + 1)):
                continue
            yield base, last, size


def log_view(partition, read_committed: bool) -> PartitionLogView:
    return CommittedLogView(partition) if read_committed else PartitionLogView(partition)


def read_share_record(partition, offset: int):
    """(control type, value) of the share record stored at ``offset``."""
    if offset < partition.log_start_offset or offset >= partition.log_end_offset:
        raise RecoveryError(f"share record at {offset} is outside the log "
                            f"[{partition.log_start_offset}, {partition.log_end_offset})")
    found = partition.batch_at_offset(offset)
    if found is None or found[0] != offset:
        raise RecoveryError(f"no batch starts at share record offset {offset}")
    found = sr.decode_batch(found[1])
    if found is None:
        raise RecoveryError(f"batch at {offset} is not a share control record")
    return found


def read_chain(plog, group_id: str, head_offset: int, checkpoint_epoch: int):
    """(checkpoint value, [delta values oldest first]) ending at ``head_offset``."""
    deltas = []
    offset = head_offset
    while True:
        kind, value = read_share_record(plog, offset)
        if value.group_id != group_id or value.checkpoint_epoch != checkpoint_epoch:
            raise RecoveryError(f"record at {offset} belongs to {value.group_id} epoch "
                                f"{value.checkpoint_epoch}, not {group_id} epoch {checkpoint_epoch}")
        if kind == records.SHARE_CHECKPOINT:
            deltas.reverse()
            return value, deltas
        deltas.append(value)
        if value.back_offset >= offset:
            raise RecoveryError(f"delta at {offset} points forward to {value.back_offset}")
        offset = value.back_offset


def _entries(value) -> list[tuple[int, int, int, int]]:
    return [(s.base_offset, s.last_offset, s.state, s.delivery_count) for s in value.states]


def rebuild(sp, checkpoint, deltas, log) -> None:
    """Load ``sp`` (a fresh SharePartition) from decoded checkpoint and deltas."""
    sp.restore(checkpoint.start_offset, checkpoint.end_offset,
               [_entries(checkpoint)] + [_entries(d) for d in deltas], log)
    sp.move_start(log.log_start_offset)
