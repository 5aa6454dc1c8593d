"""A pipelined producer's next requests: the ones that repeat the head of an earlier one.

A producer sending one small batch per request (librdkafka with linger.ms=0, many in
flight) repeats the bytes from the client id up to the records length exactly, request
after request (same client id, acks, timeout, topic and partition). A frame that starts
with those bytes parses to the same request around new records, so one comparison
replaces the header's and the body's field-by-field parse, a fifth of what such a
request cost the broker. A connection keeps its recent heads (``RepeatedHeads``); the
dispatcher answers the consecutive frames of a read burst that repeat one as one
``ProduceRun`` (broker/dispatcher.py, broker/handlers/produce.py).
"""

from __future__ import annotations

import struct

from kipper.protocol.header import read_client_id
from kipper.protocol.produce_codec import (
    FLEXIBLE_FROM, PartitionProduceData, ProduceRequestData, TopicProduceData, parse_with_length_at,
)

_I32 = struct.Struct(">i")


class RepeatedHead:
    """A one-partition Produce request's bytes from the client id up to its records
    length, and what they parsed to."""

    __slots__ = ("version", "head", "length_at", "client_id", "transactional_id", "acks",
                 "timeout_ms", "name", "topic_id", "index")


MAX_HEADS = 64  # per connection: a producer's partitions of one-partition requests


class RepeatedHeads:
    """A connection's ``RepeatedHead``s, found by their bytes: a producer writing to a few
    partitions one request at a time alternates between a few heads. Past ``MAX_HEADS``
    it starts again from none. ``found``: the head the last frame ``parse_frame`` read
    repeated, or None (the dispatcher compares the frames after it with that head)."""

    __slots__ = ("_by_bytes", "_lengths", "found")

    def __init__(self):
        self._by_bytes: dict[bytes, RepeatedHead] = {}
        self._lengths: list[int] = []  # the heads' lengths (one per topic name length, usually one)
        self.found: RepeatedHead | None = None

    def find(self, frame, version: int) -> RepeatedHead | None:
        """The head ``frame`` starts with, or None."""
        for end in self._lengths:
            head = self._by_bytes.get(bytes(frame[8:end]))
            if head is not None and head.version == version:
                return head
        return None

    def keep(self, head: RepeatedHead) -> None:
        if len(self._by_bytes) >= MAX_HEADS:
            self._by_bytes.clear()
            self._lengths.clear()
        self._by_bytes[head.head] = head
        if head.length_at not in self._lengths:
            self._lengths.append(head.length_at)


def parse_frame(frame, version: int, kept) -> tuple[str | None, ProduceRequestData, RepeatedHeads | None]:
    """(client id, request, the heads to keep) of a request ``frame`` (after the size
    prefix); ``kept`` is the connection's ``RepeatedHeads``, or None before its first."""
    if kept is not None:
        kept.found = None
        head = kept.find(frame, version)
        records = _records_after(frame, head) if head is not None else None  # find compared its bytes
        if records is not None:
            kept.found = head
            return head.client_id, ProduceRequestData(head.transactional_id, head.acks, head.timeout_ms, [
                TopicProduceData(head.name, head.topic_id, [PartitionProduceData(head.index, records)])]), kept
    flexible = version >= FLEXIBLE_FROM
    client_id, pos = read_client_id(frame, flexible)
    request, length_at = parse_with_length_at(frame, pos, version)
    if len(request.topic_data) != 1 or len(request.topic_data[0].partition_data) != 1 \
            or request.topic_data[0].partition_data[0].records is None:
        return client_id, request, kept
    topic = request.topic_data[0]
    head = RepeatedHead()
    head.version, head.head, head.length_at = version, bytes(frame[8:length_at]), length_at
    head.client_id, head.transactional_id = client_id, request.transactional_id
    head.acks, head.timeout_ms = request.acks, request.timeout_ms
    head.name, head.topic_id, head.index = topic.name, topic.topic_id, topic.partition_data[0].index
    if kept is None:
        kept = RepeatedHeads()
    kept.keep(head)  # a head the next requests may repeat; this one repeated none
    return client_id, request, kept


def repeated_records(frame, version: int, head: RepeatedHead):
    """The records (a view into ``frame``) of a request that repeats ``head``: it starts
    with the head's bytes, and its records run to the end of the frame but for the empty
    tagged fields of the partition, the topic and the request (flexible versions). None
    otherwise: the frame is parsed in full."""
    if head.version != version or bytes(frame[8:head.length_at]) != head.head:
        return None  # (a memoryview's == is slower than a copy's)
    return _records_after(frame, head)


def _records_after(frame, head: RepeatedHead):
    """``repeated_records`` of a frame known to start with ``head``'s bytes."""
    pos = head.length_at
    size = len(frame)
    if pos + 4 > size:  # too short to hold records: the full parse says what is wrong
        return None
    if head.version >= FLEXIBLE_FROM:
        if frame[pos] < 0x80:
            n, pos = frame[pos] - 1, pos + 1
        elif frame[pos + 1] < 0x80:
            n, pos = (frame[pos] & 0x7F | frame[pos + 1] << 7) - 1, pos + 2
        else:
            return None
        end = pos + n
        if n < 0 or end + 3 != size or frame[end] or frame[end + 1] or frame[end + 2]:
            return None
    else:
        n = _I32.unpack_from(frame, pos)[0]
        pos += 4
        end = pos + n
        if n < 0 or end != size:
            return None
    return frame[pos:end]


class ProduceRun:
    """What the Produce handler answers when a request is followed, in its read burst, by
    requests that repeat its head (``more``: their records, in order). A request alone is
    a run of one, which the dispatcher hands over as ``(request,)``.

    Iterating yields each request in turn: ``first``, then the same object with its one
    partition's records replaced by the next request's (the requests differ in nothing
    else), so a run of many costs no object per request. A handler uses each request
    before it takes the next and keeps no reference to it."""

    __slots__ = ("first", "more")

    def __init__(self, first: ProduceRequestData, more: list = ()):
        self.first = first
        self.more = more

    def __len__(self) -> int:
        return 1 + len(self.more)

    def __iter__(self):
        first = self.first
        yield first
        if self.more:
            partition = first.topic_data[0].partition_data[0]
            for records in self.more:
                partition.records = records
                yield first
