"""One cleaning pass over one partition: Kafka's log compaction, in small steps.

``cleanable`` decides whether a partition needs cleaning: its dirty part (from
the cleaner checkpoint to the first segment it may not touch yet) against the
whole, compared with ``min.cleanable.dirty.ratio``, or forced when dirty data is
older than ``max.compaction.lag.ms``. The active segment, segments with records
younger than ``min.compaction.lag.ms`` and anything at or past the last stable
offset are never cleaned.

A ``CleaningPass`` first maps each key of the dirty part to its last offset, then
rewrites every segment from the log start to the end of the dirty part, keeping:

- a record whose key has no later record (its value, or a tombstone until the
  batch's delete horizon has passed: KIP-534 sets the horizon to the first
  cleaning time + ``delete.retention.ms``);
- a COMMIT/ABORT marker until no batch of its transaction is left and its
  delete horizon has passed; aborted transactional data goes at once;
- share-group control records at or after the earliest share checkpoint.

Offsets never change: a cleaned batch keeps its base offset and last offset delta
(records keep their own offsets), so consumers see gaps, and a fetch from a
removed offset gets the next record still there. Work is done in steps bounded
by a time budget, so the event loop keeps answering while a partition is cleaned.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from typing import NamedTuple

from kipper.broker.storage.log_config import LogConfig
from kipper.protocol import batch as b
from kipper.protocol import record_check, records


class Cleanable(NamedTuple):
    dirty_ratio: float
    first_dirty: int
    end: int  # one past the last offset this pass may clean (a segment boundary)
    dirty_bytes: int
    forced: bool  # max.compaction.lag.ms passed


def dirty_ratio(partition) -> float:
    """The dirty share of the cleanable log (for metrics), whatever the lags say."""
    log = partition.log
    first_dirty = max(log.cleaner_checkpoint, log.log_start_offset)
    clean = dirty = 0
    for s in log.segments_info():
        if s.active:
            break
        if s.next_offset <= first_dirty:
            clean += s.size
        else:
            dirty += s.size
    return dirty / (clean + dirty) if clean + dirty else 0.0


def cleanable(partition, config: LogConfig, now: int) -> Cleanable | None:
    if not config.compact:
        return None
    log = partition.log
    first_dirty = max(log.cleaner_checkpoint, log.log_start_offset)
    lso = partition.last_stable_offset
    clean = dirty = 0
    end = first_dirty
    forced = False
    for s in log.segments_info():
        if s.active or s.next_offset > lso:
            break
        if s.next_offset <= first_dirty:
            clean += s.size
            continue
        if config.min_compaction_lag_ms and now - s.max_timestamp < config.min_compaction_lag_ms:
            break
        dirty += s.size
        end = s.next_offset
        if s.max_timestamp >= 0 and now - s.max_timestamp > config.max_compaction_lag_ms:
            forced = True
    if not dirty:
        return None
    ratio = dirty / (clean + dirty)
    if ratio < config.min_cleanable_dirty_ratio and not forced:
        return None
    return Cleanable(ratio, first_dirty, end, dirty, forced)


WAITING = "waiting"  # what a pass yields while the storage thread works for it
RECORDS_PER_STEP = 16  # records read between two yields inside one batch


class Uncleanable(Exception):
    """A batch the record parser refuses, read from the log or about to be written: the
    pass stops, nothing of it replaces a segment, and the partition is not cleaned again
    (Kafka marks such a partition uncleanable). Recovery cuts such a batch at a start
    after a crash; the append path never stores one."""

    def __init__(self, base_offset: int, message: str):
        super().__init__(f"the batch at offset {base_offset} {message}")
        self.base_offset = base_offset


def parsed(data: bytes, h: b.BatchHeader, what: str = "does not parse") -> None:
    problem = record_check.check_batch(data, 0, len(data), h)
    if problem is not None:
        raise Uncleanable(h.base_offset, f"{what}: {problem.message}")


class PassStats(NamedTuple):
    bytes_read: int
    bytes_written: int
    records_removed: int
    seconds: float


class CleaningPass:
    def __init__(self, partition, config: LogConfig, plan: Cleanable, now: int):
        self.partition = partition
        self.config = config
        self.plan = plan
        self.now = now
        self.offsets: dict[bytes, int] = {}
        self.bytes_read = self.bytes_written = self.records_removed = 0
        self.started = time.perf_counter()
        self.done = False
        self.failed: Uncleanable | None = None
        self.waiting = False  # the last step ended waiting for the storage thread
        self._aborted = _aborted_ranges(partition)
        self._steps = self._run()

    def step(self, budget_s: float) -> bool:
        """Work for about ``budget_s``; True while there is more to do."""
        deadline = time.perf_counter() + budget_s
        try:
            for state in self._steps:
                self.waiting = state is WAITING
                if self.waiting or time.perf_counter() >= deadline:
                    return True
        except Uncleanable as exc:
            self.failed = exc
        self.waiting = False
        self.done = True
        return False

    def stats(self) -> PassStats:
        return PassStats(self.bytes_read, self.bytes_written, self.records_removed,
                         time.perf_counter() - self.started)

    # --- the pass --------------------------------------------------------------------------

    def _segments(self, start: int, end: int):
        return [s for s in self.partition.log.segments_info()
                if not s.active and s.next_offset > start and s.base_offset < end]

    def _run(self):
        log = self.partition.log
        plan = self.plan
        for seg in self._segments(plan.first_dirty, plan.end):  # 1. the offset map
            for base, data in log.segment_batches(seg.base_offset):
                h = b.read_header(data)
                parsed(data, h)
                if not h.is_control and not self._is_aborted(h):
                    for i, rec in enumerate(records.iter_batch_records(data, h), 1):
                        if rec.key is not None and rec.offset < plan.end:
                            self.offsets[rec.key] = rec.offset
                        if i % RECORDS_PER_STEP == 0:
                            yield  # a large batch is read over several steps
                yield
        observed: set[int] = set()  # producers with transactional batches since their marker
        clean_to = plan.end  # a segment that changed under the pass is dirty still
        for seg in self._segments(log.log_start_offset, plan.end):  # 2. rewrite
            if not self._still_there(seg.base_offset):
                continue  # retention or DeleteRecords removed it meanwhile
            writer, changed = log.cleaned_writer(seg.base_offset), False
            try:
                for base, data in log.segment_batches(seg.base_offset):
                    self.bytes_read += len(data)
                    out = yield from self._clean_batch(data, observed)
                    changed |= out is not data
                    if out is not None:
                        writer.add(out)
                        self.bytes_written += len(out)
                    yield
            except Uncleanable:
                writer.abort()
                raise
            syncing = writer.sync_in_background() if changed else None
            while syncing is not None and not syncing.done():
                yield WAITING  # the disk works; the loop serves requests
            if changed and self._still_there(seg.base_offset):
                try:
                    writer.commit()
                except (KeyError, ValueError):
                    writer.abort()  # the segment changed under the pass: cleaned next time
                    clean_to = min(clean_to, seg.base_offset)
            else:
                writer.abort()
            yield
        log.cleaner_checkpoint = max(log.cleaner_checkpoint, clean_to)

    def _still_there(self, base_offset: int) -> bool:
        return any(s.base_offset == base_offset and not s.active
                   for s in self.partition.log.segments_info())

    def _clean_batch(self, data: bytes, observed: set[int]):
        """The batch to keep (``data`` itself when nothing changes), or None: a generator
        that yields every RECORDS_PER_STEP records read or written and returns it, since
        one producer batch may hold thousands of records."""
        h = b.read_header(data)
        parsed(data, h)
        now = self.now
        horizon_set = bool(h.attributes & b.DELETE_HORIZON)
        horizon = h.base_timestamp if horizon_set else now + self.config.delete_retention_ms
        if h.is_control:
            if not h.is_transactional:  # share-group state: kept from the earliest checkpoint on
                hold = self.partition.start_hold
                return data if hold is not None and h.base_offset >= hold else None
            had_batches = h.producer_id in observed
            observed.discard(h.producer_id)
            if not had_batches and horizon_set and now > horizon:
                return None  # nothing of its transaction is left, and its horizon passed
            if horizon_set:
                return data
            marker = list(records.iter_batch_records(data, h))
            return _checked(records.rebuild_batch(h, marker, delete_horizon_ms=horizon))
        if h.is_transactional:
            observed.add(h.producer_id)
            if self._is_aborted(h):
                self.records_removed += h.records_count
                return None
        kept = []
        tombstones = False
        for i, rec in enumerate(records.iter_batch_records(data, h), 1):
            if i % RECORDS_PER_STEP == 0:
                yield
            if rec.key is None or self.offsets.get(rec.key, -1) > rec.offset:
                continue  # keyless, or a later record of its key exists
            if rec.value is None:
                if horizon_set and now > horizon:
                    continue  # a tombstone past its delete horizon
                tombstones = True
            kept.append(rec)
        self.records_removed += h.records_count - len(kept)
        if not kept:
            return None
        if len(kept) == h.records_count and (horizon_set or not tombstones):
            return data
        return _checked((yield from records.rebuild_steps(h, kept, delete_horizon_ms=horizon if tombstones else None)))

    def _is_aborted(self, h) -> bool:
        ranges = self._aborted.get(h.producer_id)
        if not h.is_transactional or not ranges:
            return False
        i = bisect_right(ranges, (h.base_offset, 1 << 62)) - 1
        return i >= 0 and ranges[i][0] <= h.base_offset < ranges[i][1]


def _checked(rebuilt: bytes) -> bytes:
    """The cleaner's copy of a batch, through the parser before it may replace anything."""
    parsed(rebuilt, b.read_header(rebuilt), "as the cleaner rebuilt it does not parse")
    return rebuilt


def _aborted_ranges(partition) -> dict[int, list[tuple[int, int]]]:
    txn = partition.txn_index_if_any
    out: dict[int, list[tuple[int, int]]] = {}
    for a in (txn.aborted if txn is not None else ()):
        out.setdefault(a.producer_id, []).append((a.first_offset, a.last_offset))
    for ranges in out.values():
        ranges.sort()
    return out
