"""One log segment: ``<base>.log`` with its sparse ``.index``, ``.timeindex`` and ``.txnindex``.

The ``.log`` file holds record batches back to back, exactly as a Kafka broker
stores them. Its indexes are Kafka's formats:

- ``.index``: (int32 offset relative to the base, int32 file position), an entry at the first
  batch after more than ``index.interval.bytes`` of data (none at the start), keyed by the last
  offset of the batch at that position;
- ``.timeindex``: (int64 timestamp, int32 relative offset): the largest timestamp so far and
  its offset, at an index point where it grew;
- ``.txnindex``: aborted transactions whose ABORT marker is in this segment
  (int16 version, producer id, first offset, last offset, last stable offset).

The indexes live in memory while the segment is open and are written to their
files when the segment rolls or the broker stops cleanly; after a crash they are
rebuilt by ``recover``, which also validates every batch (length, magic,
CRC-32C, and every record with the parser the append path runs) and cuts the file
at the first one that is not whole. Reads use
``pread``: nothing of the data stays in the broker's memory.
"""

from __future__ import annotations

import os
import struct
import time
from array import array
from bisect import bisect_right
from pathlib import Path

import crc32c

from kipper.broker.storage.files import in_background
from kipper.broker.storage.log_config import EMPTY_SEGMENT, rolling_mark
from kipper.protocol import batch as b
from kipper.protocol import record_check

_INDEX_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_TXN_ENTRY = struct.Struct(">hqqqq")
_LENGTH = struct.Struct(">qi")  # base offset, batch length
_SCAN_BLOCK = 1 << 20
_WALK_BLOCK = 65536  # headers of small batches are read in blocks of this size


def file_name(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}{suffix}"


class LogSegment:
    __slots__ = ("directory", "base_offset", "fd", "size", "next_offset", "index_interval",
                 "_idx_offsets", "_idx_positions", "_time_ts", "_time_offsets", "_since_index",
                 "max_timestamp", "max_timestamp_offset", "first_append_ms", "last_append_ms",
                 "aborted", "unflushed")

    def __init__(self, directory: Path, base_offset: int, *, index_interval: int = 4096,
                 create: bool = False):
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval = index_interval
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        self.fd = os.open(self.path(".log"), flags, 0o644)
        self.size = os.fstat(self.fd).st_size
        self.next_offset = base_offset
        self._idx_offsets = array("q")  # last offset of the batch at each indexed position
        self._idx_positions = array("q")
        self._time_ts = array("q")
        self._time_offsets = array("q")
        self._since_index = 0
        self.max_timestamp = -1
        self.max_timestamp_offset = -1
        self.first_append_ms = EMPTY_SEGMENT  # its rolling_mark once written
        self.last_append_ms = -1
        self.aborted: list[tuple[int, int, int, int]] = []  # (pid, first, last, lso)
        self.unflushed = False
        if self.size:  # a segment from an earlier run: its times as the files tell them
            self.last_append_ms = int(os.fstat(self.fd).st_mtime * 1000)
            first = os.pread(self.fd, b.HEADER_SIZE, 0)
            if len(first) == b.HEADER_SIZE:  # (without a timestamp: Kafka counts from the load)
                self.first_append_ms = rolling_mark(b.read_header(first).max_timestamp, int(time.time() * 1000))

    def path(self, suffix: str) -> Path:
        return self.directory / file_name(self.base_offset, suffix)

    # --- writes --------------------------------------------------------------------------

    def append(self, chunks: list, sizes: list[int], headers: list, base_offsets: list[int],
               now_ms: int) -> None:
        """Write whole batches at the end of the file, in one ``writev`` of ``chunks`` (each
        batch's bytes with its base offset set, in any number of pieces); ``sizes`` are the
        batches' sizes."""
        position = self.size
        total = _write_all(self.fd, chunks)
        for size, h, base in zip(sizes, headers, base_offsets):
            last = base + h.last_offset_delta
            if h.max_timestamp > self.max_timestamp:
                self.max_timestamp, self.max_timestamp_offset = h.max_timestamp, last
            if self._since_index > self.index_interval:
                self._add_index_entry(last, position)
            self._since_index += size
            position += size
            self.next_offset = last + 1
        self.size += total
        if self.first_append_ms == EMPTY_SEGMENT:  # Kafka's rollingBasedTimestamp: the first batch's
            self.first_append_ms = rolling_mark(headers[0].max_timestamp if headers else -1, now_ms)
        self.last_append_ms = now_ms
        self.unflushed = True

    def _add_index_entry(self, last_offset: int, position: int) -> None:
        """Kafka's LogSegment: once more than ``index.interval.bytes`` came since the last entry
        (never at the segment's start), the batch's last offset at its position, and the largest
        timestamp so far with its offset when it grew past the time index's last entry."""
        self._idx_offsets.append(last_offset)
        self._idx_positions.append(position)
        self._since_index = 0
        if self.max_timestamp > (self._time_ts[-1] if self._time_ts else -1):
            self._time_ts.append(self.max_timestamp)
            self._time_offsets.append(self.max_timestamp_offset)

    def cleaned_writer(self) -> "CleanedSegment":
        return CleanedSegment(self)

    def swap_in(self, fd: int, size: int, index, times, max_ts: tuple[int, int]) -> None:
        """A cleaned copy (``fd``, already renamed over this segment's file) replaces it.
        The old file is closed on the storage thread: closing the last reference to a large
        unlinked file frees its pages, milliseconds the event loop should not wait."""
        in_background(os.close, self.fd)
        self.fd, self.size = fd, size
        self._idx_offsets, self._idx_positions = index
        self._time_ts, self._time_offsets = times
        self.max_timestamp, self.max_timestamp_offset = max_ts
        self._since_index = 0
        self.unflushed = False
        self.write_indexes()

    def record_aborted(self, producer_id: int, first: int, last: int, lso: int) -> None:
        self.aborted.append((producer_id, first, last, lso))
        with open(self.path(".txnindex"), "ab") as f:
            f.write(_TXN_ENTRY.pack(0, producer_id, first, last, lso))

    def drop_aborted_from(self, offset: int) -> None:
        """Forget aborted transactions whose marker is at or after ``offset`` (replayed again)."""
        kept = [a for a in self.aborted if a[2] < offset]
        if len(kept) != len(self.aborted):
            self.aborted = kept
            self._write_txnindex()

    def _write_txnindex(self) -> None:
        data = b"".join(_TXN_ENTRY.pack(0, *a) for a in self.aborted)
        with open(self.path(".txnindex"), "wb") as f:
            f.write(data)

    def flush(self) -> None:
        if self.unflushed:
            os.fsync(self.fd)
            self.unflushed = False

    # --- reads ---------------------------------------------------------------------------

    def pread(self, length: int, position: int) -> bytes:
        return os.pread(self.fd, length, position)

    def position_for(self, offset: int) -> int:
        """A file position at or before the batch holding ``offset`` (index lookup)."""
        i = bisect_right(self._idx_offsets, offset) - 1
        return self._idx_positions[i] if i >= 0 else 0

    def walk(self, position: int, end: int | None = None):
        """(position, header) of each whole batch from ``position``, reading blocks of small
        batches and only the header after a large one (a Fetch sends the batches with
        sendfile: reading them here would be the copy it saves)."""
        end = self.size if end is None else end
        fd = self.fd
        block = b""
        block_pos = position
        pos = position
        want = _WALK_BLOCK
        while pos + b.HEADER_SIZE <= end:
            rel = pos - block_pos
            if rel < 0 or rel + b.HEADER_SIZE > len(block):
                block = os.pread(fd, min(want, end - pos), pos)
                block_pos, rel = pos, 0
                if len(block) < b.HEADER_SIZE:
                    return
            h = b.read_header(block, rel)
            size = h.batch_length + b.LOG_OVERHEAD
            if size < b.HEADER_SIZE or pos + size > end:
                return
            yield pos, h
            pos += size
            want = _WALK_BLOCK if size < _WALK_BLOCK // 4 else b.HEADER_SIZE

    def find(self, offset: int):
        """(position, header) of the batch holding ``offset`` or the first one after it."""
        for pos, h in self.walk(self.position_for(offset)):
            if h.base_offset + h.last_offset_delta >= offset:
                return pos, h
        return None

    def timestamp_position(self, timestamp: int) -> int:
        """A position before every batch that may hold a record at or after ``timestamp``."""
        i = bisect_right(self._time_ts, timestamp - 1) - 1
        return self.position_for(self._time_offsets[i]) if i >= 0 else 0

    # --- recovery ----------------------------------------------------------------------------

    def recover(self) -> tuple[int, str | None]:
        """Validate every batch (length, magic, offsets going up, CRC-32C, its records),
        rebuild the indexes, and cut the file at the first batch that is not whole.
        (bytes cut, why)."""
        self._idx_offsets, self._idx_positions = array("q"), array("q")
        self._time_ts, self._time_offsets = array("q"), array("q")
        self._since_index = 0
        self.max_timestamp = self.max_timestamp_offset = -1
        expected = self.next_offset = self.base_offset
        fd = self.fd
        size = os.fstat(fd).st_size
        pos, reason = 0, None
        buf, buf_pos = b"", 0
        while pos < size:
            rel = pos - buf_pos
            if rel + b.HEADER_SIZE > len(buf):
                buf, buf_pos, rel = os.pread(fd, min(_SCAN_BLOCK, size - pos), pos), pos, 0
                if len(buf) < b.HEADER_SIZE:
                    reason = "a batch header is cut short"
                    break
            base, length = _LENGTH.unpack_from(buf, rel)
            total = b.LOG_OVERHEAD + length
            if length < b.HEADER_SIZE - b.LOG_OVERHEAD:
                reason = f"a batch length ({length}) is invalid"
                break
            if pos + total > size:
                reason = "a batch is cut short"
                break
            if buf[rel + b.MAGIC_OFFSET] != 2:
                reason = f"a batch has magic {buf[rel + b.MAGIC_OFFSET]}"
                break
            h = b.read_header(buf, rel)
            if base < expected:
                reason = f"offset {base} goes back (expected {expected} or more)"
                break
            if rel + total > len(buf):  # a batch larger than the block is read whole
                buf, buf_pos, rel = os.pread(fd, min(max(total, _SCAN_BLOCK), size - pos), pos), pos, 0
            if crc32c.crc32c(memoryview(buf)[rel + b.CRC_START:rel + total]) != h.crc:
                reason = f"the batch at offset {base} fails its CRC-32C"
                break
            problem = record_check.check_batch(buf, rel, rel + total, h)
            if problem is not None:  # the parser the append path runs: never serve what it refuses
                reason = f"the batch at offset {base} does not parse: {problem.message}"
                break
            last = base + h.last_offset_delta
            if h.max_timestamp > self.max_timestamp:
                self.max_timestamp, self.max_timestamp_offset = h.max_timestamp, last
            if self._since_index > self.index_interval:
                self._add_index_entry(last, pos)
            self._since_index += total
            expected = self.next_offset = last + 1
            pos += total
        cut = size - pos
        if cut:
            os.ftruncate(fd, pos)
        self.size = pos
        return cut, reason

    # --- index files -----------------------------------------------------------------------

    def write_indexes(self) -> None:
        """Write both index files, ending the time index with the exact largest timestamp
        (as Kafka does when a segment becomes inactive)."""
        if self.max_timestamp > (self._time_ts[-1] if self._time_ts else -1):
            self._time_ts.append(self.max_timestamp)
            self._time_offsets.append(self.max_timestamp_offset)
        base = self.base_offset
        index = b"".join(_INDEX_ENTRY.pack(o - base, p)
                         for o, p in zip(self._idx_offsets, self._idx_positions))
        times = b"".join(_TIME_ENTRY.pack(t, o - base) for t, o in zip(self._time_ts, self._time_offsets))
        for suffix, data in ((".index", index), (".timeindex", times)):
            with open(self.path(suffix), "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())

    def load_indexes(self) -> bool:
        """Read the index files written at the last roll or clean stop; False if any is
        missing or does not fit the log (the caller then rebuilds with ``recover``)."""
        try:
            index = self.path(".index").read_bytes()
            times = self.path(".timeindex").read_bytes()
        except OSError:
            return False
        if len(index) % _INDEX_ENTRY.size or len(times) % _TIME_ENTRY.size:
            return False
        base = self.base_offset
        offsets, positions = array("q"), array("q")
        for rel, pos in _INDEX_ENTRY.iter_unpack(index):
            if pos >= self.size or (positions and pos <= positions[-1]):
                return False
            offsets.append(base + rel)
            positions.append(pos)
        ts, toffs = array("q"), array("q")
        for t, rel in _TIME_ENTRY.iter_unpack(times):
            ts.append(t)
            toffs.append(base + rel)
        self._idx_offsets, self._idx_positions = offsets, positions
        self._time_ts, self._time_offsets = ts, toffs
        last = None
        for pos, h in self.walk(positions[-1] if positions else 0):
            last = (pos, h)
            if h.max_timestamp > self.max_timestamp:
                self.max_timestamp = h.max_timestamp
                self.max_timestamp_offset = h.base_offset + h.last_offset_delta
        if last is not None:
            pos, h = last
            if pos + h.batch_length + b.LOG_OVERHEAD != self.size:
                return False
            self.next_offset = h.base_offset + h.last_offset_delta + 1
            self._since_index = self.size - (positions[-1] if positions else 0)
        if ts and ts[-1] > self.max_timestamp:
            self.max_timestamp, self.max_timestamp_offset = ts[-1], toffs[-1]
        return True

    def load_txnindex(self) -> None:
        try:
            data = self.path(".txnindex").read_bytes()
        except OSError:
            return
        whole = len(data) - len(data) % _TXN_ENTRY.size
        self.aborted = [(pid, first, last, lso)
                        for _, pid, first, last, lso in _TXN_ENTRY.iter_unpack(data[:whole])]

    # --- end of life -------------------------------------------------------------------------

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def delete(self) -> None:
        self.close()
        for suffix in (".log", ".index", ".timeindex", ".txnindex"):
            try:
                self.path(suffix).unlink()
            except FileNotFoundError:
                pass


_IOV_MAX = 1024  # the most buffers one writev takes on Linux and macOS (IOV_MAX); more fail with EINVAL


def _write_all(fd: int, chunks: list) -> int:
    """Write ``chunks`` in order at the file's end; returns their total size."""
    total = 0
    for at in range(0, len(chunks), _IOV_MAX):
        total += _writev_all(fd, chunks[at:at + _IOV_MAX])
    return total


def _writev_all(fd: int, chunks: list) -> int:
    total = sum(len(c) for c in chunks)
    written = os.writev(fd, chunks)
    while written < total:  # a short write: write what is left of the chunks, from where it stopped
        rest, done = [], 0
        for c in chunks:
            if done + len(c) > written:
                rest.append(memoryview(c)[max(0, written - done):])
            done += len(c)
        written += os.writev(fd, rest)
    return total


class CleanedSegment:
    """The log cleaner's copy of an inactive segment, written a batch at a time beside
    it (``<base>.log.cleaned``, fdatasynced as it grows so the final sync is short),
    indexed as it goes, then renamed over the segment in ``commit`` (atomic)."""

    SYNC_EVERY = 4 << 20

    def __init__(self, segment: LogSegment):
        self.segment = segment
        self.path = segment.path(".log.cleaned")
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.size = self._unsynced = self._since_index = 0
        self.index = (array("q"), array("q"))
        self.times = (array("q"), array("q"))
        self.max_ts = (-1, -1)

    def add(self, data: bytes) -> None:
        h = b.read_header(data)
        last = h.base_offset + h.last_offset_delta
        if h.max_timestamp > self.max_ts[0]:
            self.max_ts = (h.max_timestamp, last)
        if self._since_index > self.segment.index_interval:  # (as LogSegment.append: _add_index_entry)
            self.index[0].append(last)
            self.index[1].append(self.size)
            self._since_index = 0
            if self.max_ts[0] > (self.times[0][-1] if self.times[0] else -1):
                self.times[0].append(self.max_ts[0])
                self.times[1].append(self.max_ts[1])
        _write_all(self.fd, [data])
        self.size += len(data)
        self._since_index += len(data)
        self._unsynced += len(data)
        if self._unsynced >= self.SYNC_EVERY:
            os.fdatasync(self.fd)
            self._unsynced = 0

    def sync_in_background(self):
        """Start the copy's final fsync on the storage thread; ``commit`` once it is done
        finds nothing left to write."""
        return in_background(os.fsync, self.fd)

    def commit(self) -> None:
        os.fsync(self.fd)
        os.replace(self.path, self.segment.path(".log"))
        self.segment.swap_in(self.fd, self.size, self.index, self.times, self.max_ts)

    def abort(self) -> None:
        os.close(self.fd)
        self.path.unlink(missing_ok=True)
