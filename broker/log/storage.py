"""What a Partition needs of the bytes it stores: the LogStorage interface.

A storage holds record batches back to back with their base offsets already
assigned, tracks the log start and end offsets, and reads by offset. It knows
nothing of producers, transactions or groups: that is the Partition's job
(broker/log/partition.py). ``MemoryLog`` is the in-memory implementation;
a durable one only has to provide the same methods.
"""

from __future__ import annotations

from typing import Iterator, Protocol


class LogStorage(Protocol):
    log_start_offset: int
    log_end_offset: int
    size_bytes: int

    def append(self, buf, spans, now_ms: int) -> tuple[int, int]:
        """Store the batches ``spans`` [(start, end, header)] of ``buf`` at the log end,
        rewriting each base offset; (first base offset, last offset) appended."""

    def read(self, offset: int, max_bytes: int, *, always_one: bool = True,
             end_offset: int | None = None) -> tuple[list, int]:
        """Batches from the one holding ``offset``, up to ``max_bytes`` (the first one
        always, when ``always_one``: KIP-74), stopping before ``end_offset``."""

    def batches_from(self, offset: int) -> Iterator[tuple[int, bytes]]:
        """(base offset, batch) from the batch holding ``offset`` on, oldest first."""

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
