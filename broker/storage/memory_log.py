"""The in-memory LogStorage: record batches stored as the producer sent them.

The append path only reads the 61-byte header, checks the CRC-32C and rewrites
the base offset; records are never decoded here. Batches live in a list with
parallel arrays of base offsets, last offsets and max timestamps, so a fetch
position or a timestamp lookup is a bisect. Batches are grouped in segments
that roll at ``segment.bytes``/``segment.ms`` like the files of a durable log:
the log cleaner never touches the last (active) one. The default storage: for
development and CI, nothing touches the disk.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right

from kipper.broker.storage.log_config import (EMPTY_SEGMENT, LogConfig, RetainedSegment, rolling_mark,
                                              segments_past_retention, waited_for_roll)
from kipper.broker.storage.log_storage import ReadResult, SegmentInfo, first_stamped
from kipper.protocol import batch as b
from kipper.protocol import records

SEGMENT_CHUNK = 4096  # batches the cleaner's reads take at a time


class MemoryLog:
    __slots__ = ("config", "_batches", "_bases", "_lasts", "_max_ts", "_append_times",
                 "_seg_starts", "_seg_first_ms", "_seg_bytes", "_seg_max_ts", "_seg_max_at", "log_start_offset",
                 "log_end_offset", "size_bytes", "_max_ts_seen", "cleaner_checkpoint")

    def __init__(self, config: LogConfig | None = None):
        self.config = config or LogConfig()
        self._batches: list[bytes | memoryview] = []  # read-only views: batch.stored_batch
        # parallel columns as arrays: 8 bytes a batch each, not a list slot and an int object
        self._bases = array("q")
        self._lasts = array("q")
        self._max_ts = array("q")  # running max of batch max_timestamps
        self._append_times = array("q")
        # per segment, as arrays too: a 1,000-partition topic makes few objects for the collector
        self._seg_starts = array("q", (0,))  # index of each segment's first batch
        self._seg_first_ms = array("q", (EMPTY_SEGMENT,))
        # size of each segment as Kafka's file of it has it: batches dropped from memory below the
        # log start (DeleteRecords) stay counted until retention deletes the whole segment
        self._seg_bytes = array("q", (0,))
        self._seg_max_ts = array("q", (-1,))  # largest timestamp in each segment
        # where it is: the last offset of its batch, or, once that batch is dropped from memory
        # below the log start, the offset of its first record with that timestamp
        self._seg_max_at = array("q", (-1,))
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.size_bytes = 0
        self._max_ts_seen = -1  # of every batch appended: the running maxima's column
        self.cleaner_checkpoint = 0  # the first offset the log cleaner has not cleaned

    def __len__(self) -> int:
        return len(self._batches)

    # --- writes -------------------------------------------------------------

    def maybe_roll(self, nbytes: int, now_ms: int, max_timestamp: int = -1) -> int | None:
        """Start a new segment if the active one is full or old (segment.bytes, segment.ms
        by record time, as Kafka)."""
        config = self.config
        if (self._seg_bytes[-1] + nbytes <= config.segment_bytes
                and waited_for_roll(self._seg_first_ms[-1], now_ms, max_timestamp) <= config.segment_ms):
            return None  # every Produce asks: the answer is almost always this
        if not self._seg_bytes[-1]:
            return None  # the active segment is empty
        self._roll_empty()
        return self.log_end_offset

    def _roll_empty(self) -> None:
        """A new, empty active segment at the log end."""
        self._seg_starts.append(len(self._batches))
        self._seg_first_ms.append(EMPTY_SEGMENT)
        self._seg_bytes.append(0)
        self._seg_max_ts.append(-1)
        self._seg_max_at.append(-1)

    def append(self, buf, spans, now_ms: int, epoch: int = b.LEADER_EPOCH,
               as_given: bool = False) -> tuple[int, int]:
        """Append the validated batches ``spans`` [(start, end, header)] of ``buf``,
        stamped with the partition leader ``epoch``; ``as_given``: a follower's append of
        what its leader stored, with the leader's offsets and epochs.

        Returns (base offset of the first batch, last offset appended).
        """
        first = base = self.log_end_offset
        if self._seg_first_ms[-1] == EMPTY_SEGMENT:  # Kafka's rollingBasedTimestamp: the first batch's
            self._seg_first_ms[-1] = rolling_mark(spans[0][2].max_timestamp if spans else -1, now_ms)
        view = buf if type(buf) is memoryview else memoryview(buf)
        batches, bases, lasts, max_ts_column = self._batches, self._bases, self._lasts, self._max_ts
        added = 0
        for start, end, header in spans:
            if as_given:  # (a compacted leader's log may skip offsets)
                base = header.base_offset
                batches.append(bytes(view[start:end]))
            else:
                batches.append(b.stored_batch(view, start, end, base, epoch))  # at most one copy of the producer's bytes
            last = base + header.last_offset_delta
            bases.append(base)
            lasts.append(last)
            max_ts = header.max_timestamp
            if max_ts > self._max_ts_seen:
                self._max_ts_seen = max_ts
            if max_ts > self._seg_max_ts[-1]:
                self._seg_max_ts[-1] = max_ts
                self._seg_max_at[-1] = last
            max_ts_column.append(self._max_ts_seen)
            self._append_times.append(now_ms)
            added += end - start
            base = last + 1
        self.size_bytes += added
        self._seg_bytes[-1] += added
        self.log_end_offset = base
        return first if not as_given else spans[0][2].base_offset, base - 1

    def truncate_to(self, offset: int) -> int:
        """Drop every batch that ends at or after ``offset`` (a follower whose log diverged
        from its leader's, Kafka's truncation to a batch boundary); the new log end."""
        keep = bisect_left(self._lasts, offset)
        if keep >= len(self._batches):
            return self.log_end_offset
        removed = sum(map(len, self._batches[keep:]))
        self.size_bytes -= removed
        new_end = min(offset, self._bases[keep])
        del (self._batches[keep:], self._bases[keep:], self._lasts[keep:], self._max_ts[keep:],
             self._append_times[keep:])
        while len(self._seg_starts) > 1 and self._seg_starts[-1] >= keep:
            removed -= self._seg_bytes.pop()
            for column in (self._seg_starts, self._seg_first_ms, self._seg_max_ts, self._seg_max_at):
                column.pop()
        self._seg_bytes[-1] -= removed
        self._segment_max_from_batches(len(self._seg_starts) - 1)
        if self._seg_starts[-1] >= len(self._batches):
            self._seg_first_ms[-1] = EMPTY_SEGMENT
        self.log_end_offset = new_end
        if new_end < self.log_start_offset:
            self.log_start_offset = self.log_end_offset
        self._max_ts_seen = self._max_ts[-1] if self._max_ts else -1
        self.cleaner_checkpoint = min(self.cleaner_checkpoint, self.log_end_offset)
        return self.log_end_offset

    def restart_at(self, offset: int) -> None:
        """Drop everything and start again empty at ``offset`` (a follower whose log ends
        before its leader's starts: Kafka's truncateFullyAndStartAt)."""
        self.__init__(self.config)
        self.log_start_offset = self.log_end_offset = self.cleaner_checkpoint = offset

    def delete_records_before(self, offset: int) -> int:
        """Advance the log start offset to ``offset`` (DeleteRecords); drop from memory the
        batches that end before it. Their segments stay, with their sizes and largest
        timestamps, until the next retention check deletes them, as Kafka's files do.
        Returns the new log start offset."""
        offset = min(max(offset, self.log_start_offset), self.log_end_offset)
        self.log_start_offset = offset
        drop = 0
        while drop < len(self._batches) and self._lasts[drop] < offset:
            drop += 1
        if drop:
            self._drop_head(drop)
        return self.log_start_offset

    def _drop_head(self, n: int, segments: int = 0) -> None:
        """Drop the first ``n`` batches from memory, and the first ``segments`` segments
        with their bytes (retention: never the active one). A segment whose batches all went
        stays, empty in memory, holding its size and largest timestamp."""
        self.size_bytes -= sum(self._seg_bytes[:segments])
        if n:
            self._locate_dropped_maxima(segments, self._lasts[n - 1])
        del (self._batches[:n], self._bases[:n], self._lasts[:n], self._max_ts[:n],
             self._append_times[:n])
        for column in (self._seg_starts, self._seg_first_ms, self._seg_bytes, self._seg_max_ts, self._seg_max_at):
            del column[:segments]
        for k in range(len(self._seg_starts)):
            self._seg_starts[k] = max(self._seg_starts[k] - n, 0)
        self._recompute_running_max(0, len(self._batches))

    def _locate_dropped_maxima(self, first: int, last_dropped: int) -> None:
        """Before batches up to ``last_dropped`` leave memory: a segment from ``first`` on whose
        largest timestamp is in one of them keeps the offset of the record that carries it
        (Kafka still answers MAX_TIMESTAMP with it while the segment's file is there)."""
        for k in range(first, len(self._seg_starts)):
            at, ts = self._seg_max_at[k], self._seg_max_ts[k]
            if ts < 0 or at > last_dropped or at < 0:
                continue
            i = self._index_of(at)
            if i < len(self._batches) and self._lasts[i] == at:
                self._seg_max_at[k] = first_stamped(self._batches[i], ts, at)

    def _segment_max_from_batches(self, k: int) -> None:
        """Segment ``k``'s largest timestamp and where it is, read again from its batches."""
        starts = [*self._seg_starts, len(self._batches)]
        self._seg_max_ts[k] = self._seg_max_at[k] = -1
        for i in range(starts[k], starts[k + 1]):
            ts = b.read_header(self._batches[i]).max_timestamp
            if ts > self._seg_max_ts[k]:
                self._seg_max_ts[k], self._seg_max_at[k] = ts, self._lasts[i]

    def _recompute_running_max(self, lo: int, hi: int) -> None:
        """Running maxima of batches lo..hi-1; later entries may overstate theirs, which
        only makes a timestamp lookup start a little earlier."""
        running = self._max_ts[lo - 1] if lo > 0 else -1
        for i in range(lo, hi):
            running = max(running, b.read_header(self._batches[i]).max_timestamp)
            self._max_ts[i] = running

    def apply_retention(self, now_ms: int, retention_ms: int, retention_bytes: int,
                        floor: int | None = None) -> int:
        """Drop the segments past time or size retention (log_config.segments_past_retention),
        the active one too (rolled first) when it is wholly past; how many segments went."""
        starts = [*self._seg_starts, len(self._batches)]
        last = len(self._seg_starts) - 1
        n = segments_past_retention([RetainedSegment(
            self._bases[starts[k + 1]] if starts[k + 1] < len(self._batches) else self.log_end_offset,
            self._seg_bytes[k], self._seg_max_ts[k],
            self._append_times[starts[k + 1] - 1] if starts[k + 1] > starts[k] else -1)
            for k in range(last + 1)], now_ms, retention_ms, retention_bytes, floor, self.log_start_offset)
        if not n:
            return 0
        if n > last:
            self._roll_empty()
        dropped = starts[n] if n <= last else len(self._batches)
        new_start = self._bases[dropped] if dropped < len(self._batches) else self.log_end_offset
        self._drop_head(dropped, n)
        self.log_start_offset = max(self.log_start_offset, new_start)
        return n

    # --- reads ----------------------------------------------------------------

    def segment_index(self, offset: int) -> int:
        """The number of the segment holding ``offset`` (counted from the oldest kept)."""
        return bisect_right(self._seg_starts, self._index_of(offset)) - 1

    def _index_of(self, offset: int) -> int:
        """The first batch whose last offset is at or after ``offset``."""
        i = max(bisect_right(self._bases, offset) - 1, 0)
        if i < len(self._lasts) and self._lasts[i] < offset:
            i += 1  # a gap left by the cleaner: the next batch still there
        return i

    def read(self, offset: int, max_bytes: int, *, always_one: bool = True,
             end_offset: int | None = None, one_segment: bool = False, regions: bool = False) -> ReadResult:
        """Batches from the one holding ``offset``, up to ``max_bytes``.

        The first batch is returned even if larger than ``max_bytes`` when
        ``always_one`` (KIP-74), so a consumer can always make progress.
        ``end_offset`` stops before the batch starting there (read_committed
        reads up to the last stable offset, which is a batch boundary). ``one_segment``:
        stop at the end of the segment holding ``offset``, as Kafka's UnifiedLog.read (Fetch).
        The chunks are the stored batches themselves, never copies (``regions`` asks the
        durable log for file ranges; here the batches are already in memory).
        """
        end = self.log_end_offset if end_offset is None else min(end_offset, self.log_end_offset)
        if offset >= end or not self._batches:
            return ReadResult([], 0, 0, -1)
        i = self._index_of(offset)
        out = []
        total = records_ = 0
        n = len(self._batches)
        if one_segment:
            k = bisect_right(self._seg_starts, i)
            n = self._seg_starts[k] if k < len(self._seg_starts) else n
        bases, batches = self._bases, self._batches
        while i < n and bases[i] < end:
            size = len(batches[i])
            if total + size > max_bytes and (out or not always_one):
                break
            out.append(batches[i])
            total += size
            i += 1
        if not out:
            return ReadResult(out, 0, 0, -1)
        for data in out:
            records_ += b.records_count(data)
        return ReadResult(out, total, records_, self._lasts[i - 1])

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after the log start with timestamp
        >= ``timestamp``, a transaction marker's too (Kafka's FileRecords.searchForTimestamp
        reads every batch), searched for in the first segment whose largest timestamp reaches
        ``timestamp`` only, as Kafka's UnifiedLog does: when that segment holds nothing at or
        after the log start (DeleteRecords, before retention deletes it), there is none."""
        starts = [*self._seg_starts, len(self._batches)]
        k = next((k for k in range(len(starts) - 1) if self._largest_timestamp(k, starts) >= timestamp), None)
        if k is None:
            return None
        # the running maximum first reaches ``timestamp`` in batch i, so the record is in batch i
        for j in range(max(bisect_right(self._max_ts, timestamp - 1), starts[k]), starts[k + 1]):
            for batch in records.decode_all(self._batches[j], verify_crc=False):
                for rec in batch.records:
                    if rec.timestamp >= timestamp and rec.offset >= self.log_start_offset:
                        return rec.offset, rec.timestamp
        return None

    def _largest_timestamp(self, k: int, starts: list[int]) -> int:
        """Kafka's LogSegment.largestTimestamp: its records' largest, else when it was last
        written (its file's modification time)."""
        if self._seg_max_ts[k] >= 0 or starts[k + 1] <= starts[k]:
            return self._seg_max_ts[k]
        return self._append_times[starts[k + 1] - 1]

    def max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the largest timestamp (KIP-734) of the first segment that has
        it, as Kafka's UnifiedLog: below the log start too while its segment is kept. The offset
        is its batch's last while the batch is in memory (the partition reads it)."""
        k = max(range(len(self._seg_max_ts)), key=self._seg_max_ts.__getitem__)
        if self._seg_max_ts[k] < 0:
            return None
        return self._seg_max_at[k], self._seg_max_ts[k]

    def batches_from(self, offset: int):
        """(base offset, batch) from the batch holding ``offset`` on, oldest first."""
        if offset >= self.log_end_offset or not self._batches:
            return
        i = self._index_of(offset)
        bases, batches = self._bases, self._batches
        while i < len(batches):
            yield bases[i], batches[i]
            i += 1

    def headers_from(self, offset: int):
        """(base offset, batch header, size) from the batch holding ``offset`` on."""
        read_header = b.read_header
        for base, data in self.batches_from(offset):
            yield base, read_header(data), len(data)

    def batch_at_offset(self, offset: int) -> tuple[int, bytes] | None:
        """The (base offset, batch) holding ``offset``, if it is stored."""
        if offset < self.log_start_offset or offset >= self.log_end_offset or not self._batches:
            return None
        i = self._index_of(offset)
        if i >= len(self._batches) or self._bases[i] > offset:
            return None
        return self._bases[i], self._batches[i]

    # --- segments, for the log cleaner --------------------------------------------------------

    def segments_info(self) -> list[SegmentInfo]:
        out = []
        starts = [*self._seg_starts, len(self._batches)]
        last = len(self._seg_starts) - 1
        for k in range(len(self._seg_starts)):
            lo, hi = starts[k], starts[k + 1]
            if lo >= hi:
                continue
            nxt = self._bases[hi] if hi < len(self._bases) else self.log_end_offset
            out.append(SegmentInfo(self._bases[lo], nxt, self._seg_bytes[k], self._seg_max_ts[k],
                                   self._append_times[hi - 1], k == last))
        return out

    def segment_batches(self, base_offset: int):
        """(base offset, batch) of the segment starting at ``base_offset``, up to its end as
        it is now. Read lazily, SEGMENT_CHUNK batches at a time, each chunk found again by
        offset: the cleaner steps through a segment between requests, so no step may copy
        a whole segment (hundreds of thousands of references, ~10 ms), and retention may
        remove batches in front of it meanwhile."""
        k = self._segment_of(base_offset)
        hi = self._seg_starts[k + 1] if k + 1 < len(self._seg_starts) else len(self._batches)
        end = self._bases[hi] if hi < len(self._bases) else self.log_end_offset
        return self._batches_between(base_offset, end)

    def _batches_between(self, start: int, end: int):
        while True:
            i = bisect_left(self._bases, start)
            bases, batches = self._bases[i:i + SEGMENT_CHUNK], self._batches[i:i + SEGMENT_CHUNK]
            for base, data in zip(bases, batches):
                if base >= end:
                    return
                yield base, data
            if len(bases) < SEGMENT_CHUNK:
                return
            start = bases[-1] + 1

    def _segment_of(self, base_offset: int) -> int:
        """The segment whose first batch in memory starts at ``base_offset`` (segments
        emptied below the log start begin where the next does: the last of them)."""
        i = bisect_left(self._bases, base_offset)
        if i < len(self._bases) and self._bases[i] == base_offset:
            k = bisect_right(self._seg_starts, i) - 1
            if self._seg_starts[k] == i:
                return k
        raise KeyError(f"no segment starts at {base_offset}")

    def cleaned_writer(self, base_offset: int) -> "_MemoryCleaned":
        return _MemoryCleaned(self, base_offset)

    def replace_segment(self, base_offset: int, batches: list[bytes]) -> None:
        """The cleaner's output for one (inactive) segment: same offsets, fewer records."""
        k = self._segment_of(base_offset)
        if k == len(self._seg_starts) - 1:
            raise ValueError("the active segment is never replaced")
        lo, hi = self._seg_starts[k], self._seg_starts[k + 1]
        headers = [b.read_header(d) for d in batches]
        removed = hi - lo - len(batches)
        new_bytes = sum(len(d) for d in batches)
        self.size_bytes += new_bytes - self._seg_bytes[k]
        self._seg_bytes[k] = new_bytes
        times = self._append_times[lo:hi]
        self._batches[lo:hi] = batches
        self._bases[lo:hi] = array("q", [h.base_offset for h in headers])
        self._lasts[lo:hi] = array("q", [h.base_offset + h.last_offset_delta for h in headers])
        self._append_times[lo:hi] = array("q", [times[-1]]) * len(batches)
        self._max_ts[lo:hi] = array("q", [0]) * len(batches)
        for j in range(k + 1, len(self._seg_starts)):
            self._seg_starts[j] -= removed
        if not batches:  # everything in it was cleaned away: the segment goes
            del (self._seg_starts[k], self._seg_first_ms[k], self._seg_bytes[k], self._seg_max_ts[k],
                 self._seg_max_at[k])
            self._seg_starts[0] = 0
        else:
            self._segment_max_from_batches(k)
        self._recompute_running_max(lo, lo + len(batches))

    # --- nothing to keep beside the batches, nothing to flush ------------------------------

    def record_aborted(self, producer_id: int, first: int, last: int, lso: int) -> None:
        pass

    def aborted_transactions(self) -> list:
        return []

    def drop_aborted_from(self, offset: int) -> None:
        pass

    def write_producer_snapshot(self, offset: int, entries) -> None:
        pass

    def latest_producer_snapshot(self) -> None:
        return None

    def flush_if_due(self, now_ms: int) -> bool:
        return False

    def close(self) -> None:
        pass

    def delete(self) -> None:
        self._drop_head(len(self._batches))


class _MemoryCleaned:
    """Collects a segment's cleaned batches; ``commit`` swaps them in."""

    def __init__(self, log: MemoryLog, base_offset: int):
        self.log = log
        self.base_offset = base_offset
        self.batches: list[bytes] = []

    def add(self, data: bytes) -> None:
        self.batches.append(data)

    def sync_in_background(self) -> None:
        return None  # nothing to write

    def commit(self) -> None:
        self.log.replace_segment(self.base_offset, self.batches)

    def abort(self) -> None:
        self.batches = []

