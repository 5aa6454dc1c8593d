"""Metrics dumps: one JSON line per interval, appended off the event loop.

``MetricsDumper.tick`` runs on the loop (a Periodic): it takes the registry's
interval snapshot, stamps it (schema version, time, broker id, interval) and
hands the dict to a writer thread through a bounded queue. Only that thread
serializes, writes, and rotates ``metrics-<broker>-<n>.jsonl`` files by size,
keeping the newest ``max_files``. If the writer falls behind, lines are dropped
and counted (``dump.dropped`` in the next line): the loop never waits on disk.
The schema is documented in docs/METRICS.md.
"""

from __future__ import annotations

import json
import os
import queue
import re
import threading
import time
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

SCHEMA_VERSION = 1
QUEUE_LINES = 1000  # lines waiting for the writer; beyond this they are dropped and counted
_STOP = object()


def _rows(section, key: str, name: str) -> list[dict]:
    """Providers may key rows by name ({"alice": {...}}) or list them; the dump
    always carries a list of rows with the name inside ([{"user": "alice", ...}])."""
    rows = section.get(key) if isinstance(section, dict) else None
    if isinstance(rows, dict):
        return [{name: k, **v} if isinstance(v, dict) else {name: k, "value": v}
                for k, v in rows.items()]
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def _quota_user(row: dict) -> dict:
    """One user of the "quotas" provider in the documented shape; KIP-936's metric
    names (group ProducerIds: rate, tokens, throttle-time) are accepted as given."""
    kip = row.get("ProducerIds") if isinstance(row.get("ProducerIds"), dict) else {}
    out = {"user": row.get("user"), "quota": row.get("quota"),
           "producer_id_rate": row.get("producer_id_rate", kip.get("rate")),
           "tokens": row.get("tokens", kip.get("tokens")),
           "throttle_time_ms": row.get("throttle_time_ms", kip.get("throttle-time"))}
    for k, v in row.items():
        if k not in out and k != "ProducerIds" and (v is None or isinstance(v, (int, float, str))):
            out[k] = v
    return out


def normalize_quotas(section) -> dict:
    if not isinstance(section, dict):
        return {"users": []}
    out = {k: v for k, v in section.items() if k != "users"}
    out["users"] = [_quota_user(r) for r in _rows(section, "users", "user")]
    return out


def normalize_share(section) -> dict:
    if not isinstance(section, dict):
        return {"partitions": []}
    out = {k: v for k, v in section.items() if k != "partitions"}
    out["partitions"] = _rows(section, "partitions", "key")
    return out


def file_pattern(broker_id: int) -> re.Pattern:
    return re.compile(rf"^metrics-{broker_id}-(\d+)\.jsonl$")


class DumpWriter(threading.Thread):
    """Appends serialized lines to size-rotated files. Owns every byte of file I/O."""

    def __init__(self, directory: str | Path, broker_id: int, max_bytes: int, max_files: int,
                 queue_lines: int = QUEUE_LINES):
        super().__init__(name="kipper-metrics-dump", daemon=True)
        self.directory = Path(directory)
        self.broker_id = broker_id
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.queue: queue.Queue = queue.Queue(queue_lines)
        self.lines_written = 0
        self.failed = False
        self._file = None
        self._size = 0
        self._seq = 0

    # --- on the writer thread --------------------------------------------------------

    def _existing(self) -> list[tuple[int, Path]]:
        pattern = file_pattern(self.broker_id)
        out = []
        for entry in os.scandir(self.directory):
            m = pattern.match(entry.name)
            if m:
                out.append((int(m.group(1)), Path(entry.path)))
        return sorted(out)

    def _open_next(self) -> None:
        if self._file is not None:
            self._file.close()
        existing = self._existing()
        self._seq = (existing[-1][0] + 1) if existing else 0
        # a new run starts a new file, so an old run's tail is never mixed into it
        path = self.directory / f"metrics-{self.broker_id}-{self._seq}.jsonl"
        self._file = open(path, "ab", buffering=0)
        self._size = 0
        for _, old in existing[:max(0, len(existing) + 1 - self.max_files)]:
            try:
                old.unlink()
            except OSError:
                pass

    def _write(self, line: bytes) -> None:
        if self._file is None or (self._size and self._size + len(line) > self.max_bytes):
            self._open_next()
        self._file.write(line)  # one write per line: a reader never sees half a line
        self._size += len(line)
        self.lines_written += 1

    def run(self) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.failed = True
            log.error("metrics_dump_failed", directory=str(self.directory), error=str(exc))
        while True:
            item = self.queue.get()
            if item is _STOP:
                break
            if self.failed:
                continue
            try:
                self._write(json.dumps(item, separators=(",", ":"), default=str).encode() + b"\n")
            except OSError as exc:
                self.failed = True
                log.error("metrics_dump_failed", directory=str(self.directory), error=str(exc))
        if self._file is not None:
            self._file.close()


class MetricsDumper:
    """The loop's half: snapshot, stamp, enqueue. Never touches a file."""

    def __init__(self, metrics, broker_id: int, directory: str | Path, *, max_bytes: int,
                 max_files: int, clock: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic, queue_lines: int = QUEUE_LINES):
        self.metrics = metrics
        self.broker_id = broker_id
        self.clock = clock
        self.monotonic = monotonic
        self.writer = DumpWriter(directory, broker_id, max_bytes, max_files, queue_lines)
        self.dropped = 0
        self._last = monotonic()
        self._closed = False

    def start(self) -> None:
        self.writer.start()

    def snapshot(self) -> dict:
        now = self.monotonic()
        snap = self.metrics.take_interval()
        line = {"schema": SCHEMA_VERSION, "ts_ms": int(self.clock() * 1000),
                "broker_id": self.broker_id, "interval_ms": max(1, round((now - self._last) * 1000))}
        self._last = now
        line.update(snap)
        if "quotas" in line:
            line["quotas"] = normalize_quotas(line["quotas"])
        if "share" in line:
            line["share"] = normalize_share(line["share"])
        line["dump"] = {"dropped": self.dropped}
        return line

    def tick(self) -> None:
        """On the loop: take this interval and queue it for the writer."""
        if self._closed:
            return
        line = self.snapshot()
        try:
            self.writer.queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1

    def close(self, timeout: float = 5.0) -> None:
        """Queue the last interval, then let the writer drain and close its file."""
        if self._closed:
            return
        self._closed = True
        try:
            # shutting down: waiting for room is fine now, and the last interval must not be lost
            self.writer.queue.put(self.snapshot(), timeout=timeout)
            self.writer.queue.put(_STOP, timeout=timeout)
        except queue.Full:
            log.warning("metrics_dump_queue_full_at_close")
            return
        if self.writer.is_alive():
            self.writer.join(timeout)


def from_config(metrics, config) -> MetricsDumper | None:
    directory = config["metrics.dump.dir"]
    if not directory:
        return None
    return MetricsDumper(metrics, config["node.id"], directory,
                         max_bytes=config["metrics.dump.max.bytes"],
                         max_files=config["metrics.dump.max.files"])
