"""Fast paths for the one API every record goes through: Produce, versions 3-13,
on both sides (the broker parses requests and packs responses, the producer packs
requests and parses responses).

Why: a single-record Produce used to cost the broker 35-40 us of CPU, most of it
the general codec (a Container per struct, a Python call per field and per
tagged-field section) and copies of the records. Here the request is read with
fixed-field ``struct`` unpacks straight from the frame, the records stay
memoryviews into it (the stored batch is their only copy), and the response is
packed into one bytearray. Everything else about Produce is declared once in
protocol/messages/produce.py; tests check that these functions agree with that
declaration on every version (tests/property/test_produce_codec.py).
"""

from __future__ import annotations

import functools
import struct
import uuid

from kipper.protocol.header import skip_tagged_fields
from kipper.protocol.primitives import decode_uvarint, encode_uvarint

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ACKS_TIMEOUT = struct.Struct(">hi")
_SIZE_CID = struct.Struct(">ii")
_ROW_V3 = struct.Struct(">ihqq")  # index, error_code, base_offset, log_append_time_ms
_ROW_V5 = struct.Struct(">ihqqq")  # ... log_start_offset (v5+)
_FLEXIBLE = 9
_TOPIC_ID = 13


class Part:
    """One parsed Produce struct: attribute access like the general codec's Containers."""

    __slots__ = ()

    def get(self, name: str, default=None):
        return getattr(self, name, default)

    def __getitem__(self, name: str):
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None


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


class Truncated(ValueError):
    pass


def _compact(buf, pos: int) -> tuple[int, int]:
    """A compact length (unsigned varint N+1, 0 = null) of more than one byte."""
    n, pos = decode_uvarint(buf, pos)
    return n - 1, pos


def _text(buf, pos: int, n: int) -> tuple[str, int]:
    end = pos + n
    if n < 0 or end > len(buf):
        raise Truncated(f"a string of {n} bytes at {pos} in a frame of {len(buf)}")
    return str(buf[pos:end], "utf-8"), end


def _count_of(n: int) -> int:
    if n < -1:
        raise Truncated(f"negative array length {n}")
    return n if n > 0 else 0  # null where the schema says non-nullable reads as empty, as the codec does


def parse_request(buf, pos: int, version: int) -> ProduceRequestData:
    """A Produce request body from ``buf[pos:]``; ``records`` are memoryviews into ``buf``.

    Straight-line on purpose: each length is read where it is (one byte in a flexible
    version unless it is 128 or more), so a one-record request costs a few dozen operations.
    """
    if type(buf) is not memoryview:
        buf = memoryview(buf)
    flexible = version >= _FLEXIBLE
    size = len(buf)
    if flexible:
        n, pos = (buf[pos] - 1, pos + 1) if buf[pos] < 0x80 else _compact(buf, pos)
    else:
        n, pos = _I16.unpack_from(buf, pos)[0], pos + 2
    transactional_id = None
    if n != -1:
        transactional_id, pos = _text(buf, pos, n)
    acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(buf, pos)
    pos += 6
    if flexible:
        n, pos = (buf[pos] - 1, pos + 1) if buf[pos] < 0x80 else _compact(buf, pos)
    else:
        n, pos = _I32.unpack_from(buf, pos)[0], pos + 4
    topics = []
    for _ in range(_count_of(n)):
        if version >= _TOPIC_ID:
            if pos + 16 > size:
                raise Truncated("topic id past the end of the frame")
            name, topic_id = None, uuid.UUID(bytes=bytes(buf[pos:pos + 16]))
            pos += 16
        else:
            if flexible:
                n, pos = (buf[pos] - 1, pos + 1) if buf[pos] < 0x80 else _compact(buf, pos)
            else:
                n, pos = _I16.unpack_from(buf, pos)[0], pos + 2
            name, pos = _text(buf, pos, n)
            topic_id = None
        if flexible:
            n, pos = (buf[pos] - 1, pos + 1) if buf[pos] < 0x80 else _compact(buf, pos)
        else:
            n, pos = _I32.unpack_from(buf, pos)[0], pos + 4
        parts = []
        for _ in range(_count_of(n)):
            index = _I32.unpack_from(buf, pos)[0]
            pos += 4
            if flexible:  # records: compact bytes, usually more than 127 of them
                n, pos = _compact(buf, pos) if buf[pos] >= 0x80 else (buf[pos] - 1, pos + 1)
            else:
                n, pos = _I32.unpack_from(buf, pos)[0], pos + 4
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
    return ProduceRequestData(transactional_id, acks, timeout_ms, topics)


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
    flexible = version >= _FLEXIBLE
    with_errors = version >= 8
    row = _ROW_V5 if version >= 5 else _ROW_V3
    out = bytearray(9 if flexible else 8)  # size, correlation id and the header's tags, set at the end
    responses = body["responses"]
    _count(out, len(responses), flexible)
    for topic in responses:
        if version >= _TOPIC_ID:
            out += (topic.get("topic_id") or uuid.UUID(int=0)).bytes
        else:
            out += _name_field(topic["name"] or "", flexible)
        parts = topic["partition_responses"]
        _count(out, len(parts), flexible)
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
                _count(out, len(errors), flexible)
                for e in errors:
                    out += _I32.pack(e["batch_index"])
                    _string(out, e.get("batch_index_error_message"), flexible)
                    if flexible:
                        out.append(0)
                _string(out, message, flexible)
            if flexible:
                out.append(0)
        if flexible:
            out.append(0)
    out += _I32.pack(body.get("throttle_time_ms", 0))
    if flexible:
        out.append(0)
    _SIZE_CID.pack_into(out, 0, len(out) - 4, correlation_id)
    return out


@functools.lru_cache(maxsize=4096)
def _name_field(name: str, flexible: bool) -> bytes:
    """A topic name as the response carries it (the same few names, over and over)."""
    out = bytearray()
    _string(out, name, flexible)
    return bytes(out)


def _count(out: bytearray, n: int, flexible: bool) -> None:
    if flexible:
        out += encode_uvarint(n + 1)
    else:
        out += _I32.pack(n)


def _string(out: bytearray, text: str | None, flexible: bool) -> None:
    """A (nullable) string, classic or compact."""
    if text is None:
        if flexible:
            out.append(0)
        else:
            out += b"\xff\xff"
        return
    raw = text.encode("utf-8")
    if flexible:
        out += encode_uvarint(len(raw) + 1)
    else:
        out += _I16.pack(len(raw))
    out += raw


# --- the producer's side -------------------------------------------------------------------

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
    which the general codec then encodes. Why: the general codec took 20-40 us a
    request on the producer's send thread, as much as encoding a tenth of the batch."""
    if version >= _TOPIC_ID:
        return None
    flexible = version >= _FLEXIBLE
    head = bytearray(_HEADER.pack(0, 0, version, correlation_id))
    if client_id is None:
        head += b"\xff\xff"
    else:
        raw = client_id.encode("utf-8")
        head += _I16.pack(len(raw))
        head += raw
    if flexible:
        head.append(0)  # request header v2's tagged fields
    _string(head, body["transactional_id"], flexible)
    head += _ACKS_TIMEOUT.pack(body["acks"], body["timeout_ms"])
    topics = body["topic_data"]
    _count(head, len(topics), flexible)
    out = [head]
    for topic in topics:
        _string(head, topic["name"], flexible)
        parts = topic["partition_data"]
        _count(head, len(parts), flexible)
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
    flexible = version >= _FLEXIBLE
    correlation_id = _I32.unpack_from(frame, 0)[0]
    pos = 4
    if flexible:
        if frame[pos] != 0:
            return None
        pos += 1
    if version >= _TOPIC_ID:
        return None
    row = _ROW_V5 if version >= 5 else _ROW_V3
    n, pos = _read_count(frame, pos, flexible)
    topics = []
    for _ in range(n):
        if flexible:
            k, pos = (frame[pos] - 1, pos + 1) if frame[pos] < 0x80 else _compact(frame, pos)
        else:
            k, pos = _I16.unpack_from(frame, pos)[0], pos + 2
        topic = TopicProduceResponse()
        topic.name, pos = _text(frame, pos, k)
        m, pos = _read_count(frame, pos, flexible)
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
                e, pos = _read_count(frame, pos, flexible)
                for _ in range(e):
                    r = BatchIndexAndErrorMessage()
                    r.batch_index = _I32.unpack_from(frame, pos)[0]
                    r.batch_index_error_message, pos = _read_string(frame, pos + 4, flexible)
                    p.record_errors.append(r)
                    if flexible:
                        if frame[pos] != 0:
                            return None
                        pos += 1
                p.error_message, pos = _read_string(frame, pos, flexible)
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


def _read_count(frame, pos: int, flexible: bool) -> tuple[int, int]:
    if flexible:
        n, pos = (frame[pos] - 1, pos + 1) if frame[pos] < 0x80 else _compact(frame, pos)
    else:
        n, pos = _I32.unpack_from(frame, pos)[0], pos + 4
    return _count_of(n), pos


def _read_string(frame, pos: int, flexible: bool) -> tuple[str | None, int]:
    if flexible:
        n, pos = (frame[pos] - 1, pos + 1) if frame[pos] < 0x80 else _compact(frame, pos)
    else:
        n, pos = _I16.unpack_from(frame, pos)[0], pos + 2
    if n == -1:
        return None, pos
    return _text(frame, pos, n)
