"""Rate-quota arithmetic: a token bucket (the quota) and sampled stats (metrics).

The bucket follows Kafka's TokenBucket (KIP-599): it holds at most
``burst = rate x samples x window`` tokens, refills at ``rate`` per second and
starts full. A new producer id takes one token and is admitted only when a
whole token is there; otherwise the wait until one is
``ceil((1 - tokens) / rate)`` seconds. Over any interval T a user is admitted
at most ``burst + rate x T`` new ids.

``SampledStat`` is Kafka's sampled Rate / Avg: ``samples`` windows of
``window_ms``; a rate divides by the elapsed time, but by no less than
``(samples - 1)`` windows, as Kafka's Rate.windowSize does.
"""

from __future__ import annotations

import math


class TokenBucket:
    __slots__ = ("tokens", "last_ms")

    def __init__(self, tokens: float, now: int):
        self.tokens = tokens
        self.last_ms = now

    def refill(self, now: int, rate: float, burst: float) -> float:
        elapsed = now - self.last_ms
        if elapsed > 0:
            self.tokens = min(burst, self.tokens + rate * elapsed / 1000.0)
            self.last_ms = now
        elif self.tokens > burst:  # the quota was lowered
            self.tokens = burst
        return self.tokens

    def take(self, now: int, rate: float, burst: float) -> int:
        """Take one token: 0 when admitted, else the ms until a token is there."""
        tokens = self.refill(now, rate, burst)
        if tokens >= 1.0:
            self.tokens = tokens - 1.0
            return 0
        return max(1, math.ceil((1.0 - tokens) * 1000.0 / rate - 1e-9))


class SampledStat:
    __slots__ = ("samples", "window_ms", "_starts", "_sums", "_counts")

    def __init__(self, samples: int, window_ms: int):
        self.samples = samples
        self.window_ms = window_ms
        self._starts: list[int] = []
        self._sums: list[float] = []
        self._counts: list[int] = []

    def record(self, now: int, value: float) -> None:
        if not self._starts or now - self._starts[-1] >= self.window_ms:
            self._starts.append(now)
            self._sums.append(0.0)
            self._counts.append(0)
            self._purge(now)
        self._sums[-1] += value
        self._counts[-1] += 1

    def _purge(self, now: int) -> None:
        horizon = now - self.samples * self.window_ms
        while self._starts and self._starts[0] <= horizon:
            self._starts.pop(0)
            self._sums.pop(0)
            self._counts.pop(0)

    def rate(self, now: int) -> float:
        """Sum per second over the retained samples."""
        self._purge(now)
        if not self._starts:
            return 0.0
        elapsed = max(now - self._starts[0], (self.samples - 1) * self.window_ms, 1)
        return sum(self._sums) * 1000.0 / elapsed

    def avg(self, now: int) -> float:
        self._purge(now)
        n = sum(self._counts)
        return sum(self._sums) / n if n else 0.0

    def total(self, now: int) -> float:
        self._purge(now)
        return sum(self._sums)
