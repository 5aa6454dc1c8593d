"""The log as a share-partition engine reads it: data batch spans, by header only.

``PartitionLogView`` is the engine's ``LogView`` over a broker Partition;
``CommittedLogView`` is what a read_committed share group sees (share.isolation.level).
The live engine and recovery (recovery.py) read through the same view.
"""

from __future__ import annotations

from kipper.protocol import batch as b


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
