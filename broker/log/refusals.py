"""Produce batches refused (by the checks before the append, the producer state, the
transaction check): counted, and logged sparingly. Kafka's answer carries no text for most
refusals (error_message null), so the log is where kipper says what was wrong.

A producer with a bug sends the same bad batch again and again (it retries a
CORRUPT_MESSAGE, and sends the next one just as malformed), so one line per refusal
would flood the log. ``RefusedBatches.refused`` counts every refusal by error and logs
at most one line per producer per ``interval_ms`` (a second), saying how many of that
producer's refusals it left out since its last line. No traceback: a refused batch is
the client's fault, not the broker's. A producer is its producer id when the batch
carries one, else the connection and client id that sent it. Time is an argument, so
the limit is testable with a manual clock.
"""

from __future__ import annotations

import structlog

log = structlog.get_logger(__name__)

MAX_TRACKED = 4096  # producers remembered before those quiet for an interval are forgotten


class RefusedBatches:
    def __init__(self, interval_ms: int = 1000):
        self.interval_ms = interval_ms
        self.counts: dict[str, int] = {}  # Kafka error name -> batches refused
        self._last: dict[object, tuple[int, int]] = {}  # producer -> (last line at, left out since)

    def refused(self, now: int, producer, *, error: str, message: str, **context) -> bool:
        """Count one refusal; True when it was logged."""
        self.counts[error] = self.counts.get(error, 0) + 1
        last = self._last.get(producer)
        if last is not None and now - last[0] < self.interval_ms:
            self._last[producer] = (last[0], last[1] + 1)
            return False
        if len(self._last) >= MAX_TRACKED:
            self._forget_quiet(now)
        self._last[producer] = (now, 0)
        log.warning("produce_refused", error=error, message=message,
                    left_out=last[1] if last is not None else 0, **context)
        return True

    def _forget_quiet(self, now: int) -> None:
        self._last = {k: v for k, v in self._last.items() if now - v[0] < self.interval_ms}
        if len(self._last) >= MAX_TRACKED:  # that many producers refused within a second
            self._last.clear()

    def snapshot(self) -> dict:
        return {"total": sum(self.counts.values()), "by_error": dict(self.counts)}
