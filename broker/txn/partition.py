"""Transactions as one partition sees them: the last stable offset and the aborted index.

For each producer with an open transaction the partition keeps the offset of
its first transactional batch; the last stable offset (LSO) is the smallest of
those, or the high watermark when none is open. An ABORT marker turns the
open entry into an aborted transaction (producer id, first offset, offset of
the marker), which Fetch with read_committed lists when it overlaps the
returned range -- Kafka's AbortedTxn index, kept in memory.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import NamedTuple


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int  # the ABORT marker


class TxnPartition:
    __slots__ = ("ongoing", "aborted", "_lasts", "_max_span")

    def __init__(self) -> None:
        self.ongoing: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self.aborted: list[AbortedTxn] = []  # in marker order, so sorted by last_offset
        self._lasts: list[int] = []
        self._max_span = 0  # longest last - first seen, bounds the overlap scan

    def begin(self, producer_id: int, offset: int) -> None:
        """A transactional batch of ``producer_id`` was appended at ``offset``."""
        self.ongoing.setdefault(producer_id, offset)

    def end(self, producer_id: int, marker_offset: int, committed: bool) -> None:
        first = self.ongoing.pop(producer_id, None)
        if committed or first is None:
            return
        self.aborted.append(AbortedTxn(producer_id, first, marker_offset))
        self._lasts.append(marker_offset)
        self._max_span = max(self._max_span, marker_offset - first)

    def last_stable_offset(self, high_watermark: int, log_start: int) -> int:
        if not self.ongoing:
            return high_watermark
        return min(max(min(self.ongoing.values()), log_start), high_watermark)

    def aborted_between(self, fetch_offset: int, upper: int) -> list[AbortedTxn]:
        """Aborted transactions that overlap [fetch_offset, upper) -- Kafka's
        collectAbortedTransactions: last_offset >= fetch_offset and first_offset < upper."""
        out = []
        lasts = self._lasts
        for i in range(bisect_left(lasts, fetch_offset), len(lasts)):
            a = self.aborted[i]
            if a.last_offset - self._max_span >= upper:
                break  # every later entry starts at or after upper
            if a.first_offset < upper:
                out.append(a)
        return out

    def trim(self, log_start: int) -> None:
        """Forget aborted transactions that ended before the log start."""
        n = bisect_left(self._lasts, log_start)
        if n:
            del self.aborted[:n], self._lasts[:n]

    def __bool__(self) -> bool:
        return bool(self.ongoing or self.aborted)
