"""Delivery counts of one producer role in a load task: acknowledged, failed (by
error name) and unacknowledged records, and the send-to-ack latency histogram.
Updated from producer send threads under one lock, in short sections."""

from __future__ import annotations

import threading
import time

from kipper.protocol.histogram import LatencyHistogram
from kipper.spark_jobs.ledger import ACKED, FAILED


class Counts:
    """Delivery results of one role; updated on send threads (one lock, short sections)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sent = 0
        self.acked = 0
        self.failed = 0
        self.unacknowledged = 0
        self.errors: dict[str, int] = {}
        self.first_error: str | None = None
        self.hist = LatencyHistogram()
        self.record = self.hist.record

    def error(self, name: str, text: str, n: int = 1) -> None:
        with self.lock:
            self.failed += n
            self.errors[name] = self.errors.get(name, 0) + n
            if self.first_error is None:
                self.first_error = f"{name}: {text}"

    def callback(self, sent_at: float, ledger=None, counter: int = 0):
        """``ledger`` (spark_jobs/ledger.py): the record's counter is settled there too."""
        if ledger is None:
            def done(error, metadata, sent_at=sent_at):
                us = int((time.perf_counter() - sent_at) * 1e6)
                if error is None:
                    with self.lock:
                        self.acked += 1
                        self.record(us)
                else:
                    self.error(error_name(error), str(error))
            return done
        status = ledger.status  # grows in place (bytearray.extend): the same object throughout

        def settle(error, metadata, sent_at=sent_at):
            us = int((time.perf_counter() - sent_at) * 1e6)
            if error is None:
                with self.lock:
                    self.acked += 1
                    self.record(us)
                    status[counter] = ACKED
            else:
                status[counter] = FAILED
                self.error(error_name(error), str(error))
        return settle

    def result(self) -> dict:
        with self.lock:
            return {"sent": self.sent, "acked": self.acked, "failed": self.failed,
                    "unacknowledged": self.unacknowledged, "errors": dict(self.errors),
                    "first_error": self.first_error, "latency": self.hist.to_dict()}


def error_name(error: BaseException) -> str:
    """A Kafka error's name (THROTTLING_QUOTA_EXCEEDED), else the exception's class."""
    code = getattr(error, "code", None)
    if code is not None and not callable(code):
        return getattr(code, "name", str(code))
    return type(error).__name__
