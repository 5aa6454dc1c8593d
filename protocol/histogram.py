"""The HDR-style latency histogram that kipper's metrics formats share.

The broker's metrics dumps and the Spark load generator's task results both
carry latencies in this layout: log-linear buckets in microseconds, 8 per
power of two from 1 us to ~137 s, so any percentile read from it is within
12.5%. Histograms merge by adding counts. It lives in protocol/ because it is
a data format both sides of the wire read, not a broker or client concern.
"""

from __future__ import annotations

from bisect import bisect_left

_SUB = 8
BUCKET_BOUNDS = sorted({int((1 << e) * (1 + s / _SUB)) for e in range(0, 28) for s in range(_SUB)})
_INDEX = {b: i for i, b in enumerate(BUCKET_BOUNDS)}


class LatencyHistogram:
    __slots__ = ("counts", "count", "sum_us", "max_us", "min_us")

    def __init__(self):
        self.counts = [0] * (len(BUCKET_BOUNDS) + 1)
        self.count = 0
        self.sum_us = 0
        self.max_us = 0
        self.min_us = 0

    def record(self, us: int) -> None:
        self.record_many(us, 1)

    def record_many(self, us: int, n: int) -> None:
        """``record(us)``, ``n`` times over."""
        self.counts[bisect_left(BUCKET_BOUNDS, us)] += n
        if not self.count or us < self.min_us:
            self.min_us = us
        self.count += n
        self.sum_us += us * n
        if us > self.max_us:
            self.max_us = us

    def take(self) -> "LatencyHistogram":
        """A histogram holding this one's counts, which start again from zero."""
        out = LatencyHistogram()
        out.counts, out.count, out.sum_us, out.max_us, out.min_us = (
            self.counts, self.count, self.sum_us, self.max_us, self.min_us)
        self.__init__()
        return out

    def add(self, other: "LatencyHistogram") -> None:
        for i, n in enumerate(other.counts):
            self.counts[i] += n
        if other.count and (not self.count or other.min_us < self.min_us):
            self.min_us = other.min_us
        self.count += other.count
        self.sum_us += other.sum_us
        self.max_us = max(self.max_us, other.max_us)

    def percentile(self, q: float) -> int:
        """Upper bound (us) of the bucket holding the q-quantile, capped at the maximum."""
        if not self.count:
            return 0
        rank = q * self.count
        seen = 0
        for i, n in enumerate(self.counts):
            seen += n
            if n and seen >= rank:
                return min(BUCKET_BOUNDS[i], self.max_us) if i < len(BUCKET_BOUNDS) else self.max_us
        return self.max_us

    def snapshot(self) -> dict:
        return {
            "count": self.count, "sum_us": self.sum_us, "min_us": self.min_us,
            "max_us": self.max_us, "p50_us": self.percentile(0.5), "p99_us": self.percentile(0.99),
            # sparse: [upper bound in us (-1: above the last bound), count]
            "buckets": [[BUCKET_BOUNDS[i] if i < len(BUCKET_BOUNDS) else -1, n]
                        for i, n in enumerate(self.counts) if n],
        }

    to_dict = snapshot

    @classmethod
    def from_dict(cls, d: dict) -> "LatencyHistogram":
        h = cls()
        for bound, n in d.get("buckets", ()):
            h.counts[_INDEX.get(bound, len(BUCKET_BOUNDS))] += n
        h.count, h.sum_us = d.get("count", 0), d.get("sum_us", 0)
        h.min_us, h.max_us = d.get("min_us", 0), d.get("max_us", 0)
        return h

    def summary_ms(self) -> dict:
        return {"count": self.count,
                "mean_ms": round(self.sum_us / self.count / 1000, 3) if self.count else 0.0,
                "min_ms": round(self.min_us / 1000, 3),
                **{f"p{name}_ms": round(self.percentile(q) / 1000, 3)
                   for name, q in (("50", 0.5), ("90", 0.9), ("99", 0.99), ("999", 0.999))},
                "max_ms": round(self.max_us / 1000, 3)}
