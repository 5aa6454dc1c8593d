"""The broker's fast paths for the one API every record goes through: Produce, versions
3-13. Declared, with the schema they stand in for, in protocol/messages/produce.py's
``Api(fast=...)`` (the producer's side: produce_client_codec.py); tests check that
they agree with that declaration on every version (tests/property/test_produce_codec.py).

Why: a single-record Produce used to cost the broker 35-40 us of CPU, most of it the
general codec (a Container per struct, a Python call per field and per tagged-field
section) and copies of the records. Here a request is read with fixed-field
``struct`` unpacks straight from the frame, the records stay memoryviews into it (the
stored batch is their only copy), and the response is packed into one bytearray; a
response this path does not write (tagged fields such as current_leader) returns None,
and the schema does it.

A pipelined producer's next requests repeat the head of an earlier one: a producer
sending one small batch per request (librdkafka with linger.ms=0, many in flight)
repeats the bytes from the client id up to the records length exactly, request after
request (same client id, acks, timeout, topic and partition). A frame that starts with
those bytes parses to the same request around new records, so one comparison replaces
the header's and the body's field-by-field parse, a fifth of what such a request cost
the broker. A connection keeps its recent heads (``RepeatedHeads``); the dispatcher
answers the consecutive frames of a read burst that repeat one as one ``ProduceRun``
(broker/dispatcher.py, broker/handlers/produce.py).
"""

from __future__ import annotations

import functools
import struct
import uuid

from kipper.protocol.fixed_fields import (
    Part,
    Truncated,
    compact_length,
    count_bytes,
    put_count,
    put_string,
    read_count,
    read_text,
)
from kipper.protocol.header import read_client_id, skip_tagged_fields

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
ACKS_TIMEOUT = struct.Struct(">hi")
_SIZE_CID = struct.Struct(">ii")
ROW_V3 = struct.Struct(">ihqq")  # index, error_code, base_offset, log_append_time_ms
ROW_V5 = struct.Struct(">ihqqq")  # ... log_start_offset (v5+)
FLEXIBLE_FROM = 9
TOPIC_ID_FROM = 13


class PartitionProduceData(Part):
    __slots__ = ("index", "records")

    def __init__(self, index: int, records):
        self.index = index
        self.records = records


class TopicProduceData(Part):
    __slots__ = ("name", "topic_id", "partition_data")

    def __init__(self, name: str | None, topic_id, partition_data: list):
        self.name = name
        self.topic_id = topic_id
        self.partition_data = partition_data


class ProduceRequestData(Part):
    __slots__ = ("transactional_id", "acks", "timeout_ms", "topic_data")

    def __init__(self, transactional_id: str | None, acks: int, timeout_ms: int, topic_data: list):
        self.transactional_id = transactional_id
        self.acks = acks
        self.timeout_ms = timeout_ms
        self.topic_data = topic_data


# --- the request -----------------------------------------------------------------------------

def parse_request(buf, pos: int, version: int) -> ProduceRequestData:
    """A Produce request body from ``buf[pos:]``; ``records`` are memoryviews into ``buf``."""
    return parse_with_length_at(buf, pos, version)[0]


def parse_with_length_at(buf, pos: int, version: int) -> tuple[ProduceRequestData, int]:
    """The request, and where the last partition's records length starts (where a
    ``RepeatedHead`` ends).

    Straight-line on purpose: each length is read where it is (one byte in a flexible
    version unless it is 128 or more; records, usually 128 bytes to 16 KiB, in two), so
    a one-record request costs a few dozen operations.
    """
    length_at = -1
    if type(buf) is not memoryview:
        buf = memoryview(buf)
    flexible = version >= FLEXIBLE_FROM
    size = len(buf)
    if flexible:
        n, pos = (buf[pos] - 1, pos + 1) if buf[pos] < 0x80 else compact_length(buf, pos)
    else:
        n, pos = _I16.unpack_from(buf, pos)[0], pos + 2
    transactional_id = None
    if n != -1:
        transactional_id, pos = read_text(buf, pos, n)
    acks, timeout_ms = ACKS_TIMEOUT.unpack_from(buf, pos)
    n, pos = read_count(buf, pos + 6, flexible)  # null (-1) reads as empty, as the general codec does
    topics = []
    for _ in range(n):
        if version >= TOPIC_ID_FROM:
            if pos + 16 > size:
                raise Truncated("topic id past the end of the frame")
            name, topic_id = None, uuid.UUID(bytes=bytes(buf[pos:pos + 16]))
            pos += 16
        else:
            if flexible:
                n, pos = (buf[pos] - 1, pos + 1) if buf[pos] < 0x80 else compact_length(buf, pos)
            else:
                n, pos = _I16.unpack_from(buf, pos)[0], pos + 2
            end = pos + n
            if n < 0 or end > size:
                raise Truncated(f"a topic name of {n} bytes at {pos} in a frame of {size}")
            name, topic_id, pos = str(buf[pos:end], "utf-8"), None, end
        n, pos = read_count(buf, pos, flexible)
        parts = []
        for _ in range(n):
            index = _I32.unpack_from(buf, pos)[0]
            pos += 4
            length_at = pos
            if not flexible:
                n, pos = _I32.unpack_from(buf, pos)[0], pos + 4
            elif buf[pos] < 0x80:
                n, pos = buf[pos] - 1, pos + 1
            elif pos + 1 < size and buf[pos + 1] < 0x80:  # records: a two-byte compact length
                n, pos = (buf[pos] & 0x7F | buf[pos + 1] << 7) - 1, pos + 2
            else:
                n, pos = compact_length(buf, pos)
            if n == -1:
                records = None
            else:
                end = pos + n
                if n < 0 or end > size:
                    raise Truncated(f"records of {n} bytes at {pos} in a frame of {size}")
                records, pos = buf[pos:end], end
            if flexible:
                pos = pos + 1 if buf[pos] == 0 else skip_tagged_fields(buf, pos)
            parts.append(PartitionProduceData(index, records))
        if flexible:
            pos = pos + 1 if buf[pos] == 0 else skip_tagged_fields(buf, pos)
        topics.append(TopicProduceData(name, topic_id, parts))
    # the request's own tagged fields end it; nothing after them is read
    return ProduceRequestData(transactional_id, acks, timeout_ms, topics), length_at


# --- a pipelined producer's next requests -------------------------------------------------------

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


# --- the response ----------------------------------------------------------------------------

_ROW_KEYS = frozenset(("index", "error_code", "base_offset", "log_append_time_ms", "log_start_offset",
                       "error_message", "record_errors"))


# what ends a partition's row when it carries no error (v8+): no record errors, a null
# message, and in flexible versions the row's empty tagged fields
_ROW_TAIL_OK = {False: _I32.pack(0) + _I16.pack(-1), True: b"\x01\x00\x00"}


def encode_response(version: int, correlation_id: int, body) -> bytearray | None:
    """The whole size-prefixed Produce response frame, or None when ``body`` carries
    something this path does not write (tagged fields such as current_leader): the
    general codec then encodes it."""
    if "node_endpoints" in body:
        return None
    responses = body["responses"]
    if len(responses) == 1 and version < TOPIC_ID_FROM:
        parts = responses[0]["partition_responses"]
        if len(parts) == 1:
            p = parts[0]
            if _ROW_KEYS.issuperset(p) and p.get("error_message") is None and not p.get("record_errors"):
                return _one_partition_frame(version, correlation_id, responses[0]["name"] or "", p,
                                            body.get("throttle_time_ms", 0))
    flexible = version >= FLEXIBLE_FROM
    with_errors = version >= 8
    row = ROW_V5 if version >= 5 else ROW_V3
    out = bytearray(9 if flexible else 8)  # size, correlation id and the header's tags, set at the end
    put_count(out, len(responses), flexible)
    for topic in responses:
        if version >= TOPIC_ID_FROM:
            out += (topic.get("topic_id") or uuid.UUID(int=0)).bytes
        else:
            out += _name_field(topic["name"] or "", flexible)
        parts = topic["partition_responses"]
        put_count(out, len(parts), flexible)
        for p in parts:
            if not _ROW_KEYS.issuperset(p):
                return None
            if version >= 5:
                out += row.pack(p["index"], p["error_code"], p["base_offset"],
                                p.get("log_append_time_ms", -1), p.get("log_start_offset", -1))
            else:
                out += row.pack(p["index"], p["error_code"], p["base_offset"],
                                p.get("log_append_time_ms", -1))
            if with_errors:
                errors = p.get("record_errors")
                message = p.get("error_message")
                if not errors and message is None:
                    out += _ROW_TAIL_OK[flexible]
                    continue
                errors = errors or ()
                put_count(out, len(errors), flexible)
                for e in errors:
                    out += _I32.pack(e["batch_index"])
                    put_string(out, e.get("batch_index_error_message"), flexible)
                    if flexible:
                        out.append(0)
                put_string(out, message, flexible)
            if flexible:
                out.append(0)
        if flexible:
            out.append(0)
    out += _I32.pack(body.get("throttle_time_ms", 0))
    if flexible:
        out.append(0)
    _SIZE_CID.pack_into(out, 0, len(out) - 4, correlation_id)
    return out


def _one_partition_frame(version: int, correlation_id: int, name: str, p: dict,
                         throttle_time_ms: int) -> bytes:
    """The answer to a Produce of one partition without a record error (nearly every
    Produce a client sends): one ``struct.pack`` of a layout made once per version and
    topic, the fixed bytes (header tags, the one-topic and one-partition counts, the
    name, the row's empty errors and tags) passed in whole."""
    layout, head, tail = _one_partition_layout(version, name)
    if version >= 5:
        row = (p["index"], p["error_code"], p["base_offset"], p.get("log_append_time_ms", -1),
               p.get("log_start_offset", -1))
    else:
        row = (p["index"], p["error_code"], p["base_offset"], p.get("log_append_time_ms", -1))
    if version >= FLEXIBLE_FROM:
        return layout.pack(layout.size - 4, correlation_id, head, *row, tail, throttle_time_ms, 0)
    return layout.pack(layout.size - 4, correlation_id, head, *row, tail, throttle_time_ms)


@functools.lru_cache(maxsize=4096)
def _one_partition_layout(version: int, name: str) -> tuple[struct.Struct, bytes, bytes]:
    flexible = version >= FLEXIBLE_FROM
    one = count_bytes(1, flexible)
    head = (b"\0" if flexible else b"") + one + _name_field(name, flexible) + one
    tail = _ROW_TAIL_OK[flexible] if version >= 8 else b""  # with the row's tags when flexible
    if flexible:
        tail += b"\0"  # the topic's empty tagged fields
    row = (ROW_V5 if version >= 5 else ROW_V3).format.lstrip(">")
    layout = struct.Struct(f">ii{len(head)}s{row}{len(tail)}si" + ("B" if flexible else ""))
    return layout, head, tail


@functools.lru_cache(maxsize=4096)
def _name_field(name: str, flexible: bool) -> bytes:
    """A topic name as the response carries it (the same few names, over and over)."""
    out = bytearray()
    put_string(out, name, flexible)
    return bytes(out)
