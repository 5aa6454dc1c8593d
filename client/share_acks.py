"""The share consumer's bookkeeping, sans-I/O: delivered records and their acknowledgements.

``ShareFetchDecoder`` turns one ShareFetch partition answer into records that
carry their delivery count, keeping only offsets the broker says were acquired
(offsets in an acquired range that hold no record become GAP acknowledgements).
``AckTracker`` remembers, per partition, what the last poll delivered and how
each record is acknowledged, and builds the AcknowledgementBatches of the next
request: implicit mode accepts whatever was not acknowledged explicitly.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from kipper.protocol import records


class AcknowledgeType(IntEnum):
    """Kafka's AcknowledgeType (KIP-932); GAP is only ever sent by the client itself."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class ShareRecord(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple
    delivery_count: int


class IllegalStateError(Exception):
    """An API call out of order (e.g. explicit mode, records left unacknowledged)."""


def decode_partition(topic: str, partition: int, data, acquired) -> tuple[list[ShareRecord], list[int]]:
    """(records in acquired ranges, offsets of the ranges that hold no record)."""
    ranges = sorted((a.first_offset, a.last_offset, a.delivery_count) for a in acquired)
    if not ranges:
        return [], []
    out: list[ShareRecord] = []
    seen: set[int] = set()
    k = 0
    for batch in records.decode_all(data or b""):
        if batch.header.is_control:
            continue
        for rec in batch.records:
            off = rec.offset
            while k < len(ranges) and ranges[k][1] < off:
                k += 1
            if k == len(ranges):
                break
            first, last, count = ranges[k]
            if off < first:
                continue
            out.append(ShareRecord(topic, partition, off, rec.timestamp, rec.key, rec.value,
                                   rec.headers, count))
            seen.add(off)
    gaps = []
    if len(seen) != sum(last - first + 1 for first, last, _ in ranges):
        gaps = [o for first, last, _ in ranges for o in range(first, last + 1) if o not in seen]
    return out, gaps


def ack_batches(acks: dict[int, int]) -> list[dict]:
    """{offset: type} -> AcknowledgementBatches: runs of consecutive offsets with one type."""
    out: list[dict] = []
    for offset in sorted(acks):
        t = acks[offset]
        if out and out[-1]["last_offset"] + 1 == offset and out[-1]["acknowledge_types"][0] == t:
            out[-1]["last_offset"] = offset
        else:
            out.append({"first_offset": offset, "last_offset": offset, "acknowledge_types": [t]})
    return out


class _Delivered:
    __slots__ = ("ranges", "gaps", "acks")

    def __init__(self):
        self.ranges: list[tuple[int, int]] = []
        self.gaps: set[int] = set()
        self.acks: dict[int, int] = {}


class AckTracker:
    def __init__(self, implicit: bool):
        self.implicit = implicit
        self.delivered: dict[TopicPartition, _Delivered] = {}
        self.pending: dict[TopicPartition, list[dict]] = {}  # ready to send

    def delivered_records(self, tp: TopicPartition, recs: list[ShareRecord], gaps: list[int]) -> None:
        d = self.delivered.setdefault(tp, _Delivered())
        start = None
        prev = None
        for r in recs:
            if start is None:
                start = prev = r.offset
            elif r.offset == prev + 1:
                prev = r.offset
            else:
                d.ranges.append((start, prev))
                start = prev = r.offset
        if start is not None:
            d.ranges.append((start, prev))
        d.gaps.update(gaps)

    def acknowledge(self, tp: TopicPartition, offset: int, ack_type: int) -> None:
        d = self.delivered.get(tp)
        if d is None or not any(f <= offset <= last for f, last in d.ranges):
            raise IllegalStateError(f"{tp.topic}-{tp.partition}@{offset} is not in flight")
        d.acks[offset] = int(ack_type)

    def unacknowledged(self) -> int:
        return sum(sum(last - f + 1 for f, last in d.ranges) - len(d.acks)
                   for d in self.delivered.values())

    def close_poll(self) -> None:
        """The application is done with the last poll: move its acknowledgements to pending."""
        if not self.implicit and self.unacknowledged():
            raise IllegalStateError("explicit acknowledgement mode: every record of the last "
                                    "poll must be acknowledged before the next poll or commit")
        for tp, d in self.delivered.items():
            acks = dict(d.acks)
            for gap in d.gaps:
                acks[gap] = AcknowledgeType.GAP
            if self.implicit and not acks:
                batches = [{"first_offset": f, "last_offset": last,
                            "acknowledge_types": [int(AcknowledgeType.ACCEPT)]} for f, last in d.ranges]
            else:
                if self.implicit:
                    for f, last in d.ranges:
                        for o in range(f, last + 1):
                            acks.setdefault(o, int(AcknowledgeType.ACCEPT))
                batches = ack_batches(acks)
            if batches:
                self.pending.setdefault(tp, []).extend(batches)
        self.delivered.clear()

    def take(self, partitions=None) -> dict[TopicPartition, list[dict]]:
        """Pending acknowledgement batches (of ``partitions`` only, if given), removed."""
        if partitions is None:
            out, self.pending = self.pending, {}
            return out
        out = {tp: self.pending.pop(tp) for tp in list(self.pending) if tp in partitions}
        return out
