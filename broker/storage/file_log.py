"""The durable LogStorage: one partition's directory of segments.

Appends go to the active (last) segment with one ``writev`` of each batch's new
base offset and a view of the rest of it as received (nothing is copied first);
the file holds the batches as they are stored in memory, so a killed process
loses nothing that was acknowledged (the page cache has it). A segment rolls at
``segment.bytes`` or ``segment.ms``; rolling fsyncs it and writes its index
files. Reads find the segment by base offset, the position through the sparse
index, and ``pread`` the batches: the broker's memory does not grow with what
it stores. Retention and DeleteRecords delete whole segments below the log
start offset. The flush policy (``flush.messages``, ``flush.ms``) only decides
how often ``fsync`` runs, that is what survives a power cut.
"""

from __future__ import annotations

import os
import re
import shutil
from bisect import bisect_right
from pathlib import Path

import structlog

from kipper.broker.storage.file_region import FileRegion
from kipper.broker.storage.log_config import LogConfig, RetainedSegment, segments_past_retention, waited_for_roll
from kipper.broker.storage.log_storage import ReadResult, SegmentInfo, first_stamped
from kipper.broker.storage.segment import LogSegment, file_name
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.coordinator_records import CorruptSnapshot, decode_snapshot, encode_snapshot

log = structlog.get_logger(__name__)

_SEGMENT = re.compile(r"^(\d{20})\.log$")
_SNAPSHOT = re.compile(r"^(\d{20})\.snapshot$")
SNAPSHOTS_KEPT = 2


class FileLog:
    def __init__(self, directory: Path, config: LogConfig, owner=None):
        """``owner`` (the LogManager) is told when the log start moves and when the log
        is deleted, so that its checkpoint files stay true."""
        self.directory = directory
        self.config = config
        self.owner = owner
        self.segments: list[LogSegment] = []
        self._bases: list[int] = []
        self.log_start_offset = 0
        self.unflushed_messages = 0
        self.last_flush_ms = 0
        self.recovery_point = 0  # offsets below it are known to be on disk (fsynced)
        self.cleaner_checkpoint = 0  # the first offset the log cleaner has not cleaned

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    def create(cls, directory: Path, config: LogConfig, now_ms: int, owner=None) -> "FileLog":
        directory.mkdir(parents=True, exist_ok=True)
        log_ = cls(directory, config, owner)
        log_._add_segment(LogSegment(directory, 0, index_interval=config.index_interval_bytes,
                                     create=True))
        log_.last_flush_ms = now_ms
        return log_

    @classmethod
    def open(cls, directory: Path, config: LogConfig, *, log_start_offset: int, recovery_point: int,
             clean: bool, now_ms: int, owner=None) -> "FileLog":
        """Load the segments; after an unclean stop, recover every segment from the one
        holding the recovery point on (validate, cut a torn tail, rebuild indexes)."""
        log_ = cls(directory, config, owner)
        bases = sorted(int(m.group(1)) for f in os.listdir(directory) if (m := _SEGMENT.match(f)))
        for name in os.listdir(directory):  # leftovers of an interrupted write
            if name.endswith((".tmp", ".cleaned", ".swap")):
                (directory / name).unlink(missing_ok=True)
        if not bases:
            bases = [log_start_offset]
        for base in bases:
            log_._add_segment(LogSegment(directory, base, index_interval=config.index_interval_bytes,
                                         create=True))
        first_unsafe = 0 if not clean else len(bases)
        if not clean:
            first_unsafe = max(bisect_right(bases, recovery_point) - 1, 0)
        for i, seg in enumerate(log_.segments):
            if i < first_unsafe and seg.load_indexes():
                seg.load_txnindex()
                continue
            cut, reason = seg.recover()
            if i < first_unsafe or clean:
                log.warning("segment_index_rebuilt", directory=str(directory), base_offset=seg.base_offset)
            seg.load_txnindex()
            if cut:
                log.warning("log_truncated", directory=str(directory), base_offset=seg.base_offset,
                            bytes_removed=cut, reason=reason, next_offset=seg.next_offset)
                for later in log_.segments[i + 1:]:  # nothing after a torn batch can be trusted
                    log.warning("segment_removed_after_truncation", directory=str(directory),
                                base_offset=later.base_offset)
                    later.delete()
                del log_.segments[i + 1:], log_._bases[i + 1:]
                break
        log_.log_start_offset = max(log_start_offset, log_.segments[0].base_offset)
        log_.log_start_offset = min(log_.log_start_offset, log_.log_end_offset)
        log_.recovery_point = log_.log_end_offset if clean else min(recovery_point, log_.log_end_offset)
        log_.last_flush_ms = now_ms
        return log_

    def _add_segment(self, seg: LogSegment) -> None:
        self.segments.append(seg)
        self._bases.append(seg.base_offset)

    # --- offsets ---------------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        return self.segments[-1].next_offset

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    @property
    def active(self) -> LogSegment:
        return self.segments[-1]

    def __len__(self) -> int:
        return sum(1 for _ in self.headers_from(self.log_start_offset))

    # --- writes ------------------------------------------------------------------------------

    def maybe_roll(self, nbytes: int, now_ms: int, max_timestamp: int = -1) -> int | None:
        """Roll before an append of ``nbytes`` (largest timestamp ``max_timestamp``) if the
        active segment is full or old; the new segment's base offset, or None."""
        seg = self.active
        if not seg.size:
            return None
        cfg = self.config
        if seg.size + nbytes > cfg.segment_bytes or waited_for_roll(
                seg.first_append_ms, now_ms, max_timestamp) > cfg.segment_ms:
            return self.roll(now_ms)
        return None

    def roll(self, now_ms: int) -> int:
        old = self.active
        if not old.size:  # an empty active segment stays (Kafka replaces it with one alike):
            return old.base_offset  # a second segment of the same base offset would share its file
        old.flush()
        old.write_indexes()
        self.recovery_point = max(self.recovery_point, old.next_offset)
        base = old.next_offset
        self._add_segment(LogSegment(self.directory, base, index_interval=self.config.index_interval_bytes,
                                     create=True))
        log.debug("segment_rolled", directory=str(self.directory), base_offset=base)
        return base

    def append(self, buf, spans, now_ms: int, epoch: int = b.LEADER_EPOCH,
               as_given: bool = False) -> tuple[int, int]:
        """As MemoryLog.append: stamped with ``epoch``, or ``as_given`` (a follower's)."""
        first = offset = self.log_end_offset
        if as_given:
            first = offset = spans[0][2].base_offset
        view = buf if type(buf) is memoryview else memoryview(buf)
        chunks, sizes, headers, bases = [], [], [], []
        for start, end, header in spans:
            if as_given:
                offset = header.base_offset
                chunks.append(view[start:end])
            else:
                chunks += b.with_base_offset_parts(view, start, end, offset, epoch)  # no copy: writev takes the pieces
            sizes.append(end - start)
            headers.append(header)
            bases.append(offset)
            offset += header.last_offset_delta + 1
        self.active.append(chunks, sizes, headers, bases, now_ms)
        self.unflushed_messages += sum(h.records_count for h in headers)
        if self.unflushed_messages >= self.config.flush_messages:
            self.flush(now_ms)
        return first, offset - 1

    def truncate_to(self, offset: int) -> int:
        """Drop every batch that ends at or after ``offset`` (a follower whose log diverged
        from its leader's): later segments are deleted, the one holding ``offset`` cut at
        that batch and its indexes rebuilt. The new log end."""
        if offset >= self.log_end_offset:
            return self.log_end_offset
        while len(self.segments) > 1 and self.segments[-1].base_offset >= offset:
            self.segments.pop().delete()
            self._bases.pop()
        seg = self.active
        found = seg.find(offset)
        if found is not None:
            os.ftruncate(seg.fd, found[0])
            seg.recover()
            seg.drop_aborted_from(offset)
        if seg.base_offset > offset:  # nothing left, and the log started after ``offset``
            seg.delete()
            self.segments[-1] = LogSegment(self.directory, offset, index_interval=self.config.index_interval_bytes,
                                           create=True)
            self._bases[-1] = offset
        self.log_start_offset = min(self.log_start_offset, self.log_end_offset)
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        for snapshot in self._snapshot_offsets():
            if snapshot > self.log_end_offset:
                (self.directory / file_name(snapshot, ".snapshot")).unlink(missing_ok=True)
        return self.log_end_offset

    def restart_at(self, offset: int) -> None:
        """Drop every segment and start again empty at ``offset`` (Kafka's truncateFullyAndStartAt)."""
        for seg in self.segments:
            seg.delete()
        self.segments, self._bases = [], []
        self._add_segment(LogSegment(self.directory, offset, index_interval=self.config.index_interval_bytes,
                                     create=True))
        self.log_start_offset = self.recovery_point = offset
        for snapshot in self._snapshot_offsets():
            (self.directory / file_name(snapshot, ".snapshot")).unlink(missing_ok=True)

    def flush(self, now_ms: int) -> None:
        for seg in self.segments:
            seg.flush()
        self.recovery_point = self.log_end_offset
        self.unflushed_messages = 0
        self.last_flush_ms = now_ms

    def flush_if_due(self, now_ms: int) -> bool:
        if self.unflushed_messages and now_ms - self.last_flush_ms >= self.config.flush_ms:
            self.flush(now_ms)
            return True
        return False

    def record_aborted(self, producer_id: int, first: int, last: int, lso: int) -> None:
        self._segment_for(last).record_aborted(producer_id, first, last, lso)

    def aborted_transactions(self) -> list[tuple[int, int, int, int]]:
        return [a for seg in self.segments for a in seg.aborted]

    def drop_aborted_from(self, offset: int) -> None:
        for seg in self.segments:
            seg.drop_aborted_from(offset)

    # --- reads -----------------------------------------------------------------------------

    def _segment_index(self, offset: int) -> int:
        return max(bisect_right(self._bases, offset) - 1, 0)

    def segment_index(self, offset: int) -> int:
        """The number of the segment holding ``offset`` (counted from the oldest kept)."""
        return self._segment_index(offset)

    def _segment_for(self, offset: int) -> LogSegment:
        return self.segments[self._segment_index(offset)]

    def read(self, offset: int, max_bytes: int, *, always_one: bool = True,
             end_offset: int | None = None, one_segment: bool = False, regions: bool = False) -> ReadResult:
        """``regions``: each chunk a ``FileRegion`` for sendfile instead of the bytes (Fetch on
        a plain socket); the batches' headers are all that is read here then."""
        end = self.log_end_offset if end_offset is None else min(end_offset, self.log_end_offset)
        chunks, total, count, last = [], 0, 0, -1
        if offset >= end:
            return ReadResult(chunks, 0, 0, -1)
        done = False
        for seg in self.segments[self._segment_index(offset):]:
            found = seg.find(offset)
            if found is None:
                continue
            start = stop = found[0]
            for pos, h in seg.walk(start):
                size = h.batch_length + b.LOG_OVERHEAD
                if h.base_offset >= end or (total + size > max_bytes and (total or not always_one)):
                    done = True
                    break
                total += size
                count += h.records_count
                last = h.base_offset + h.last_offset_delta
                stop = pos + size
            if stop > start:
                # one read of many batches, or none: the connection sends them from the file
                chunks.append(FileRegion(seg.fd, start, stop - start) if regions
                              else seg.pread(stop - start, start))
                if one_segment:
                    break
            if done or last + 1 >= end:
                break
            offset = max(offset, last + 1)
        return ReadResult(chunks, total, count, last)

    def headers_from(self, offset: int):
        """(base offset, header, size) of each batch from the one holding ``offset``."""
        if offset >= self.log_end_offset:
            return
        for seg in self.segments[self._segment_index(offset):]:
            found = seg.find(offset)
            if found is None:
                continue
            for pos, h in seg.walk(found[0]):
                yield h.base_offset, h, h.batch_length + b.LOG_OVERHEAD

    def batches_from(self, offset: int):
        """(base offset, batch) from the batch holding ``offset`` on, oldest first."""
        for seg in self.segments[self._segment_index(offset):]:
            found = seg.find(offset)
            if found is None:
                continue
            for pos, h in seg.walk(found[0]):
                yield h.base_offset, seg.pread(h.batch_length + b.LOG_OVERHEAD, pos)

    def batch_at_offset(self, offset: int) -> tuple[int, bytes] | None:
        if offset < self.log_start_offset or offset >= self.log_end_offset:
            return None
        seg = self._segment_for(offset)
        found = seg.find(offset)
        if found is None:
            return None
        pos, h = found
        if h.base_offset > offset:
            return None
        return h.base_offset, seg.pread(h.batch_length + b.LOG_OVERHEAD, pos)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """Searched for in the first segment whose largest timestamp (else its last write's
        time) reaches ``timestamp`` only, as Kafka's UnifiedLog does (memory_log says why)."""
        seg = next((s for s in self.segments
                    if (s.max_timestamp if s.max_timestamp >= 0 else s.last_append_ms) >= timestamp), None)
        if seg is None:
            return None
        for pos, h in seg.walk(seg.timestamp_position(timestamp)):
            if h.max_timestamp < timestamp:  # (a marker's record counts, as Kafka's)
                continue
            batch = records.decode_batch(seg.pread(h.batch_length + b.LOG_OVERHEAD, pos), verify_crc=False)
            for rec in batch.records:
                if rec.timestamp >= timestamp and rec.offset >= self.log_start_offset:
                    return rec.offset, rec.timestamp
        return None

    def max_timestamp(self) -> tuple[int, int] | None:
        """As memory_log's: below the log start too, while the segment is kept."""
        best = max(self.segments, key=lambda s: s.max_timestamp)
        if best.max_timestamp < 0:
            return None
        at = best.max_timestamp_offset
        if at < self.log_start_offset:  # (the partition reads only batches from the log start on)
            found = best.find(at)
            if found is not None:
                pos, h = found
                at = first_stamped(best.pread(h.batch_length + b.LOG_OVERHEAD, pos), best.max_timestamp, at)
        return at, best.max_timestamp

    # --- moving the log start -----------------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        offset = min(max(offset, self.log_start_offset), self.log_end_offset)
        if offset != self.log_start_offset:
            self.log_start_offset = offset  # (the segments below it go at the next retention check)
            if self.owner is not None:
                self.owner.log_start_moved(self)
        return self.log_start_offset

    def _delete_segments_below(self, offset: int) -> int:
        """Delete segments that end at or before ``offset`` (never the active one)."""
        n = 0
        while len(self.segments) > 1 and self.segments[1].base_offset <= offset:
            seg = self.segments.pop(0)
            self._bases.pop(0)
            seg.delete()
            n += 1
        return n

    def apply_retention(self, now_ms: int, retention_ms: int, retention_bytes: int,
                        floor: int | None = None) -> int:
        """Delete the segments past time or size retention (log_config.segments_past_retention),
        the active one too (rolled first) when it is wholly past; how many went."""
        segs = self.segments
        n = segments_past_retention(
            [RetainedSegment(segs[k + 1].base_offset if k + 1 < len(segs) else s.next_offset, s.size,
                             s.max_timestamp, s.last_append_ms) for k, s in enumerate(segs)],
            now_ms, retention_ms, retention_bytes, floor, self.log_start_offset)
        if n:
            if n == len(segs):
                self.roll(now_ms)
            new_start = self.segments[n].base_offset
            self.log_start_offset = max(self.log_start_offset, new_start)
            self._delete_segments_below(new_start)
            if self.owner is not None:
                self.owner.log_start_moved(self)
        return n

    # --- segments, for the log cleaner ------------------------------------------------------------

    def segments_info(self) -> list[SegmentInfo]:
        out = []
        last = len(self.segments) - 1
        for i, seg in enumerate(self.segments):
            nxt = self.segments[i + 1].base_offset if i < last else seg.next_offset
            out.append(SegmentInfo(seg.base_offset, nxt, seg.size, seg.max_timestamp,
                                   seg.last_append_ms, i == last))
        return out

    def segment_batches(self, base_offset: int):
        """(base offset, batch) of one segment, read as they are asked for."""
        seg = self.segments[self._bases.index(base_offset)]
        for pos, h in seg.walk(0):
            yield h.base_offset, seg.pread(h.batch_length + b.LOG_OVERHEAD, pos)

    def cleaned_writer(self, base_offset: int):
        i = self._bases.index(base_offset)
        if i == len(self.segments) - 1:
            raise ValueError("the active segment is never replaced")
        return self.segments[i].cleaned_writer()

    def replace_segment(self, base_offset: int, batches: list[bytes]) -> None:
        writer = self.cleaned_writer(base_offset)
        for data in batches:
            writer.add(data)
        writer.commit()

    # --- producer snapshots -------------------------------------------------------------------

    def write_producer_snapshot(self, offset: int, entries) -> None:
        from kipper.broker.storage.files import write_atomically

        write_atomically(self.directory / file_name(offset, ".snapshot"), encode_snapshot(entries),
                         sync=False)
        snapshots = self._snapshot_offsets()
        for old in snapshots[:-SNAPSHOTS_KEPT]:
            (self.directory / file_name(old, ".snapshot")).unlink(missing_ok=True)

    def _snapshot_offsets(self) -> list[int]:
        return sorted(int(m.group(1)) for f in os.listdir(self.directory) if (m := _SNAPSHOT.match(f)))

    def latest_producer_snapshot(self):
        """(offset, entries) of the newest readable snapshot at or below the log end."""
        for offset in reversed(self._snapshot_offsets()):
            if offset > self.log_end_offset:
                continue
            try:
                return offset, decode_snapshot((self.directory / file_name(offset, ".snapshot")).read_bytes())
            except (OSError, CorruptSnapshot) as exc:
                log.warning("producer_snapshot_unreadable", directory=str(self.directory),
                            offset=offset, error=str(exc))
        return None

    # --- end of life ---------------------------------------------------------------------------

    def close(self) -> None:
        """A clean stop: everything fsynced and indexed, so the next start trusts it."""
        for seg in self.segments:
            seg.flush()
        self.active.write_indexes()
        self.recovery_point = self.log_end_offset
        for seg in self.segments:
            seg.close()

    def delete(self) -> None:
        for seg in self.segments:
            seg.close()
        if self.owner is not None:
            self.owner.log_deleted(self)
        else:
            shutil.rmtree(self.directory, ignore_errors=True)
