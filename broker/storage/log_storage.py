"""What a Partition needs of the bytes it stores: the LogStorage interface.

A storage holds record batches back to back with their base offsets already
assigned, tracks the log start and end offsets, and reads by offset. It knows
nothing of producers, transactions or groups: that is the Partition's job
(broker/log/partition.py). ``MemoryLog`` is the in-memory implementation,
``FileLog`` (broker/storage/file_log.py) the durable one.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple, Protocol

from kipper.protocol import batch as b
from kipper.protocol import records


class ReadResult(NamedTuple):
    """What a read found: whole batches back to back (a chunk may hold many)."""

    chunks: list
    size: int
    records: int
    last_offset: int  # the last offset of the last batch read; -1 when nothing was read


class SegmentInfo(NamedTuple):
    """One segment as the log cleaner sees it."""

    base_offset: int
    next_offset: int  # one past its last offset
    size: int
    max_timestamp: int
    last_append_ms: int
    active: bool  # the segment being appended to: never cleaned


class LogStorage(Protocol):
    log_start_offset: int
    log_end_offset: int
    size_bytes: int

    def append(self, buf, spans, now_ms: int, epoch: int = 0, as_given: bool = False) -> tuple[int, int]:
        """Store the batches ``spans`` [(start, end, header)] of ``buf`` at the log end,
        rewriting each base offset and partition leader epoch (``epoch``); ``as_given``: as
        they are (a follower's copy of its leader's batches). (first base offset, last
        offset) appended."""

    def restart_at(self, offset: int) -> None:
        """Drop everything; the log starts (empty) at ``offset``."""

    def truncate_to(self, offset: int) -> int:
        """Drop every batch that ends at or after ``offset`` (a follower's log that diverged
        from its leader's); the new log end."""

    def maybe_roll(self, nbytes: int, now_ms: int) -> int | None:
        """Start a new segment before an append of ``nbytes`` if the current one is full
        or old; the new segment's base offset, or None (also when there are no segments)."""

    def read(self, offset: int, max_bytes: int, *, always_one: bool = True,
             end_offset: int | None = None, one_segment: bool = False, regions: bool = False) -> ReadResult:
        """Batches from the one holding ``offset``, up to ``max_bytes`` (the first one
        always, when ``always_one``: KIP-74), stopping before ``end_offset`` (and at the end
        of the segment holding ``offset`` with ``one_segment``). The chunks are buffers, or
        with ``regions`` a durable log's ``FileRegion``s for sendfile (storage/file_region.py)."""

    def segment_index(self, offset: int) -> int:
        """The number of the segment holding ``offset``: two offsets in one segment have one."""

    def batches_from(self, offset: int) -> Iterator[tuple[int, bytes]]:
        """(base offset, batch) from the batch holding ``offset`` on, oldest first."""

    def headers_from(self, offset: int) -> Iterator[tuple[int, object, int]]:
        """(base offset, batch header, size) from the batch holding ``offset`` on."""

    def batch_at_offset(self, offset: int) -> tuple[int, bytes] | None:
        """The (base offset, batch) holding ``offset``, if it is stored."""

    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset to ``offset`` (DeleteRecords); the new start."""

    def apply_retention(self, now_ms: int, retention_ms: int, retention_bytes: int,
                        floor: int | None = None) -> int:
        """Drop whole old data past time or size retention, never at or after
        ``floor`` and never the active data; how much was dropped."""

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with timestamp >= ``timestamp``."""

    def max_timestamp(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp (KIP-734)."""

    # what a durable storage keeps beside the batches (a memory log keeps nothing)

    # the log cleaner (broker/cleaner/): segments, and replacing one with its cleaned batches

    cleaner_checkpoint: int  # the first offset not yet cleaned

    def segments_info(self) -> list[SegmentInfo]: ...

    def segment_batches(self, base_offset: int) -> Iterator[tuple[int, bytes]]: ...

    def cleaned_writer(self, base_offset: int):
        """A writer (add(batch), commit(), abort()) of a cleaned copy of an inactive segment:
        the same offsets, fewer records; ``commit`` swaps it in."""

    def record_aborted(self, producer_id: int, first: int, last: int, lso: int) -> None:
        """An aborted transaction ended by the marker at ``last`` (Kafka's .txnindex)."""

    def aborted_transactions(self) -> list[tuple[int, int, int, int]]:
        """(producer id, first, last, last stable offset) of each aborted transaction kept."""

    def drop_aborted_from(self, offset: int) -> None:
        """Forget aborted transactions whose marker is at or after ``offset``."""

    def write_producer_snapshot(self, offset: int, entries) -> None:
        """Producer state as of ``offset`` (Kafka's <offset>.snapshot)."""

    def latest_producer_snapshot(self):
        """(offset, entries) of the newest snapshot, or None."""

    def flush_if_due(self, now_ms: int) -> bool:
        """fsync if flush.ms has passed since the last flush."""

    def close(self) -> None:
        """A clean stop: flush and write what the next start will trust."""

    def delete(self) -> None:
        """The partition is gone: remove everything stored."""


def first_stamped(batch, timestamp: int, otherwise: int | None) -> int | None:
    """The offset of the first record of ``batch`` stamped ``timestamp`` (Kafka's
    offsetOfMaxTimestamp; under LogAppendTime every record has the batch's time), else
    ``otherwise``: no record carries the batch's largest timestamp when a client wrote a
    LogAppendTime flag on a CreateTime topic (Kafka keeps the header as written)."""
    if b.read_header(batch).attributes & b.TIMESTAMP_TYPE:
        return b.read_header(batch).base_offset
    for rec in records.decode_batch(batch, verify_crc=False).records:
        if rec.timestamp == timestamp:
            return rec.offset
    return otherwise
