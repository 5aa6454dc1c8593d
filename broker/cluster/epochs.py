"""Kafka's leader-epoch cache: the offset at which each leader epoch began in a partition's log.

A leader notes (epoch, log end) when it becomes leader; a follower notes the epoch of each
batch it appends whose epoch is new. ``end_offset_for`` is the answer to OffsetForLeaderEpoch
and the check behind a Fetch's diverging epoch: the end of an epoch is where the next one
began, or the log end for the latest. Truncation removes the epochs that began at or after
the new log end (Kafka's LeaderEpochFileCache, kept in memory; a durable log rebuilds it from
its batches' partition leader epochs when it opens).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

UNDEFINED = -1


class LeaderEpochCache:
    __slots__ = ("epochs", "starts")

    def __init__(self):
        self.epochs: list[int] = []  # ascending
        self.starts: list[int] = []  # the first offset of each, ascending

    @classmethod
    def from_headers(cls, headers) -> LeaderEpochCache:
        """The cache of a log, from its batches' (base offset, header, size)."""
        cache = cls()
        for base, h, _ in headers:
            epoch = h.partition_leader_epoch
            if epoch >= 0 and (not cache.epochs or epoch > cache.epochs[-1]):
                cache.epochs.append(epoch)
                cache.starts.append(base)
        return cache

    def __repr__(self) -> str:
        return f"LeaderEpochCache({list(zip(self.epochs, self.starts))})"

    @property
    def latest_epoch(self) -> int:
        return self.epochs[-1] if self.epochs else UNDEFINED

    def start_of(self, epoch: int) -> int | None:
        i = bisect_left(self.epochs, epoch)
        return self.starts[i] if i < len(self.epochs) and self.epochs[i] == epoch else None

    def assign(self, epoch: int, start_offset: int) -> None:
        """``epoch`` begins at ``start_offset``; entries that would break the order (a later or
        equal epoch, or one that began at or after the new start) go first."""
        if epoch < 0 or start_offset < 0:
            return
        if self.epochs and self.epochs[-1] == epoch and self.starts[-1] <= start_offset:
            return
        while self.epochs and (self.epochs[-1] >= epoch or self.starts[-1] >= start_offset):
            self.epochs.pop()
            self.starts.pop()
        self.epochs.append(epoch)
        self.starts.append(start_offset)

    def end_offset_for(self, requested: int, log_end_offset: int) -> tuple[int, int]:
        """(the largest epoch <= ``requested``, the end offset of that epoch), as Kafka's
        LeaderEpochFileCache.endOffsetFor; (-1, -1) for an undefined or unknown epoch."""
        if requested == UNDEFINED or not self.epochs:
            return UNDEFINED, UNDEFINED
        if self.epochs[-1] == requested:
            return requested, log_end_offset
        higher = bisect_right(self.epochs, requested)
        if higher == len(self.epochs):
            return UNDEFINED, UNDEFINED
        if higher == 0:  # older than every epoch kept: the first kept one's start
            return requested, self.starts[0]
        return self.epochs[higher - 1], self.starts[higher]

    def truncate_from_end(self, end_offset: int) -> None:
        """The log now ends at ``end_offset``: epochs that began there or later are gone."""
        while self.starts and self.starts[-1] >= end_offset:
            self.epochs.pop()
            self.starts.pop()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at ``start_offset`` (retention, DeleteRecords)."""
        i = bisect_right(self.starts, start_offset)
        if i:
            epoch = self.epochs[i - 1]
            del self.epochs[:i], self.starts[:i]
            self.epochs.insert(0, epoch)
            self.starts.insert(0, start_offset)
