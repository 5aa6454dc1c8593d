"""Fast paths for the one API every record goes through: Produce, versions 3-13, on
both sides: the broker parses requests and packs responses, the producer packs
requests (3-12) and parses responses. Declared, with the schema they stand in for,
in protocol/messages/produce.py's ``Api(fast=...)``; tests check that they agree with
that declaration on every version (tests/property/test_produce_codec.py).

Why: a single-record Produce used to cost the broker 35-40 us of CPU, most of it
the general codec (a Container per struct, a Python call per field and per
tagged-field section) and copies of the records; on the producer's send thread the
general codec took 20-40 us a request, as much as encoding a tenth of the batch.
Here a request is read with fixed-field ``struct`` unpacks straight from the frame,
the records stay memoryviews into it (the stored batch is their only copy), a
response is packed into one bytearray, and a request is packed as buffers around the
sealed batches. Anything a path does not write or read (topic ids from v13 on the
producer's side, tagged fields such as current_leader) returns None, and the schema
does it. A pipelined producer's next requests: produce_runs.py.
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
    read_length,
    read_string,
    read_text,
)
from kipper.protocol.header import skip_tagged_fields
from kipper.protocol.primitives import encode_uvarint

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


# --- the broker's side: the request ------------------------------------------------------------

def parse_request(buf, pos: int, version: int) -> ProduceRequestData:
    """A Produce request body from ``buf[pos:]``; ``records`` are memoryviews into ``buf``."""
    return parse_with_length_at(buf, pos, version)[0]


def parse_with_length_at(buf, pos: int, version: int) -> tuple[ProduceRequestData, int]:
    """The request, and where the last partition's records length starts (where a
    repeated head ends: produce_runs.py).

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


# --- the broker's side: the response ----------------------------------------------------------------------------

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


# --- the producer's side: the request and the response -----------------------------------------

_HEADER = struct.Struct(">ihhi")  # size (set last), api key 0, version, correlation id


class PartitionProduceResponse(Part):
    __slots__ = ("index", "error_code", "base_offset", "log_append_time_ms", "log_start_offset",
                 "record_errors", "error_message")


class BatchIndexAndErrorMessage(Part):
    __slots__ = ("batch_index", "batch_index_error_message")


class TopicProduceResponse(Part):
    __slots__ = ("name", "partition_responses")


class ProduceResponseData(Part):
    __slots__ = ("responses", "throttle_time_ms")


def encode_request_parts(version: int, correlation_id: int, client_id: str | None, body) -> list | None:
    """A Produce request frame as a list of buffers for a scatter-gather send, each
    partition's records (a list of chunks: a sealed batch's header and records)
    left where they are; None for what this path does not write (topic ids, v13),
    which the general codec then encodes."""
    if version >= TOPIC_ID_FROM:
        return None
    flexible = version >= FLEXIBLE_FROM
    head = bytearray(_HEADER.pack(0, 0, version, correlation_id))
    if client_id is None:
        head += b"\xff\xff"
    else:
        raw = client_id.encode("utf-8")
        head += _I16.pack(len(raw))
        head += raw
    if flexible:
        head.append(0)  # request header v2's tagged fields
    put_string(head, body["transactional_id"], flexible)
    head += ACKS_TIMEOUT.pack(body["acks"], body["timeout_ms"])
    topics = body["topic_data"]
    put_count(head, len(topics), flexible)
    out = [head]
    for topic in topics:
        put_string(head, topic["name"], flexible)
        parts = topic["partition_data"]
        put_count(head, len(parts), flexible)
        for p in parts:
            head += _I32.pack(p["index"])
            chunks = p["records"]
            if chunks is None:
                head += b"\x00" if flexible else b"\xff\xff\xff\xff"
            else:
                if not isinstance(chunks, list):
                    chunks = [chunks]
                n = sum(map(len, chunks))
                head += encode_uvarint(n + 1) if flexible else _I32.pack(n)
                out += chunks
                head = bytearray()  # what follows the records
                out.append(head)
            if flexible:
                head.append(0)
        if flexible:
            head.append(0)
    if flexible:
        head.append(0)
    _I32.pack_into(out[0], 0, sum(map(len, out)) - 4)
    return out


def parse_response(frame, version: int):
    """(correlation_id, body) of a Produce response frame (without its size prefix),
    or None when it carries tagged fields (current_leader, node_endpoints): the
    general codec then reads it, so nothing it would give is lost."""
    if type(frame) is not memoryview:
        frame = memoryview(frame)
    try:
        return _parse_response(frame, version)
    except (struct.error, IndexError) as exc:
        raise Truncated(f"Produce response cut short: {exc}") from exc


def _parse_response(frame: memoryview, version: int):
    flexible = version >= FLEXIBLE_FROM
    correlation_id = _I32.unpack_from(frame, 0)[0]
    pos = 4
    if flexible:
        if frame[pos] != 0:
            return None
        pos += 1
    if version >= TOPIC_ID_FROM:
        return None
    row = ROW_V5 if version >= 5 else ROW_V3
    n, pos = read_count(frame, pos, flexible)
    topics = []
    for _ in range(n):
        k, pos = read_length(frame, pos, flexible)
        topic = TopicProduceResponse()
        topic.name, pos = read_text(frame, pos, k)
        m, pos = read_count(frame, pos, flexible)
        rows = []
        for _ in range(m):
            p = PartitionProduceResponse()
            fields = row.unpack_from(frame, pos)
            pos += row.size
            p.index, p.error_code, p.base_offset = fields[:3]
            p.log_append_time_ms = fields[3]
            p.log_start_offset = fields[4] if version >= 5 else -1
            p.record_errors = []
            p.error_message = None
            if version >= 8:
                e, pos = read_count(frame, pos, flexible)
                for _ in range(e):
                    r = BatchIndexAndErrorMessage()
                    r.batch_index = _I32.unpack_from(frame, pos)[0]
                    r.batch_index_error_message, pos = read_string(frame, pos + 4, flexible)
                    p.record_errors.append(r)
                    if flexible:
                        if frame[pos] != 0:
                            return None
                        pos += 1
                p.error_message, pos = read_string(frame, pos, flexible)
            if flexible:
                if frame[pos] != 0:
                    return None
                pos += 1
            rows.append(p)
        topic.partition_responses = rows
        if flexible:
            if frame[pos] != 0:
                return None
            pos += 1
        topics.append(topic)
    body = ProduceResponseData()
    body.responses = topics
    body.throttle_time_ms = _I32.unpack_from(frame, pos)[0] if version >= 1 else 0
    if flexible and frame[pos + 4] != 0:
        return None
    return correlation_id, body
