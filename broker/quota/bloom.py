"""A time-controlled bloom filter (KIP-936's TimeControlledBloomFilter).

Filters are kept with their creation time. The newest one is *writable* while
it is younger than the window; a put after that starts a new filter. Every
filter younger than 1.5 x the window is *readable*, so at any moment one
filter takes writes and at most two answer reads: a producer id is remembered
for between 1 and 1.5 windows after it was last put. ``dispose(now)`` drops
filters at or past 1.5 x the window; reads already ignore them. Each filter is
a pybloom-live ScalableBloomFilter sized for ``expected_items`` at the given
false-positive rate, growing in slices (at the same overall rate) if more
arrive.
"""

from __future__ import annotations

from pybloom_live import BloomFilter

DISPOSE_AFTER = 1.5  # windows; KIP-936


class GrowingBloomFilter:
    """Slice i holds ``expected_items x 2**i`` ids at ``error_rate / 2**(i+1)``,
    so the union's false-positive rate stays below ``error_rate`` however many
    ids arrive. (pybloom-live's ScalableBloomFilter starts at 0.9 x the rate
    and tightens by 0.9 per slice, which adds up to several times the rate.)"""

    __slots__ = ("expected_items", "error_rate", "slices")

    def __init__(self, expected_items: int, error_rate: float):
        self.expected_items = expected_items
        self.error_rate = error_rate
        self.slices = [BloomFilter(expected_items, error_rate / 2)]

    def add(self, key: str) -> None:
        last = self.slices[-1]
        if last.count >= last.capacity:
            n = len(self.slices)
            last = BloomFilter(self.expected_items << n, self.error_rate / (2 << n))
            self.slices.append(last)
        last.add(key)

    def __contains__(self, key: str) -> bool:
        for s in self.slices:
            if key in s:
                return True
        return False

    def __len__(self) -> int:
        return sum(s.count for s in self.slices)

    def nbytes(self) -> int:
        return sum(len(s.bitarray) // 8 for s in self.slices)


class TimedBloomFilter:
    __slots__ = ("window_ms", "expected_items", "error_rate", "filters")

    def __init__(self, window_ms: int, expected_items: int, error_rate: float):
        self.window_ms = window_ms
        self.expected_items = expected_items
        self.error_rate = error_rate
        self.filters: list[tuple[int, GrowingBloomFilter]] = []  # oldest first

    def _readable(self, created: int, now: int) -> bool:
        return now - created < DISPOSE_AFTER * self.window_ms

    def might_contain(self, value: int, now: int) -> bool:
        key = str(value)
        for created, f in reversed(self.filters):
            if self._readable(created, now) and key in f:
                return True
        return False

    def put(self, value: int, now: int) -> None:
        if not self.filters or now - self.filters[-1][0] >= self.window_ms:
            self.filters.append((now, GrowingBloomFilter(self.expected_items, self.error_rate)))
        self.filters[-1][1].add(str(value))

    def writable_since(self, now: int) -> int | None:
        """Creation time of the filter that takes writes now, if any."""
        if self.filters and now - self.filters[-1][0] < self.window_ms:
            return self.filters[-1][0]
        return None

    def readable_count(self, now: int) -> int:
        return sum(1 for created, _ in self.filters if self._readable(created, now))

    def dispose(self, now: int) -> int:
        keep = [(c, f) for c, f in self.filters if self._readable(c, now)]
        removed = len(self.filters) - len(keep)
        self.filters = keep
        return removed

    def active(self, now: int) -> bool:
        return any(self._readable(c, now) for c, _ in self.filters)

    def nbytes(self) -> int:
        return sum(f.nbytes() for _, f in self.filters)
