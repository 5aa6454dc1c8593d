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

    def end(self, producer_id: int, marker_offset: int, committed: bool) -> AbortedTxn | None:
        """The producer's transaction ended at ``marker_offset``; the aborted entry, if any."""
        first = self.ongoing.pop(producer_id, None)
        if committed or first is None:
            return None
        aborted = AbortedTxn(producer_id, first, marker_offset)
        self._add_aborted(aborted)
        return aborted

    def _add_aborted(self, aborted: AbortedTxn) -> None:
        self.aborted.append(aborted)
        self._lasts.append(aborted.last_offset)
        self._max_span = max(self._max_span, aborted.last_offset - aborted.first_offset)

    def restore(self, aborted, ongoing: dict[int, int]) -> None:
        """Load aborted transactions (in marker order) and open ones (pid -> first offset)."""
        for a in sorted(aborted, key=lambda a: a.last_offset):
            self._add_aborted(a)
        self.ongoing.update(ongoing)

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
