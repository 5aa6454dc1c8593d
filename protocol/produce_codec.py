"""Fast paths for the one API every record goes through: Produce, versions 3-13.

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

import struct
import uuid

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


def _skip_tags(buf, pos: int) -> int:
    """Tagged fields: Produce requests define none, so every one is skipped."""
    if buf[pos] == 0:
        return pos + 1
    count, pos = decode_uvarint(buf, pos)
    for _ in range(count):
        _, pos = decode_uvarint(buf, pos)
        size, pos = decode_uvarint(buf, pos)
        pos += size
    return pos


def _length(buf, pos: int, flexible: bool, classic: struct.Struct) -> tuple[int, int]:
    """A length (or count): compact (unsigned varint N+1, 0 = null) or classic (-1 = null)."""
    if flexible:
        n = buf[pos]
        if n < 0x80:
            return n - 1, pos + 1
        n, pos = decode_uvarint(buf, pos)
        return n - 1, pos
    return classic.unpack_from(buf, pos)[0], pos + classic.size


def _text(buf, pos: int, n: int) -> tuple[str, int]:
    end = pos + n
    if n < 0 or end > len(buf):
        raise Truncated(f"a string of {n} bytes at {pos} in a frame of {len(buf)}")
    return str(buf[pos:end], "utf-8"), end


def parse_request(buf, pos: int, version: int) -> ProduceRequestData:
    """A Produce request body from ``buf[pos:]``; ``records`` are memoryviews into ``buf``."""
    if type(buf) is not memoryview:
        buf = memoryview(buf)
    flexible = version >= _FLEXIBLE
    size = len(buf)
    n, pos = _length(buf, pos, flexible, _I16)
    transactional_id = None
    if n != -1:
        transactional_id, pos = _text(buf, pos, n)
    acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(buf, pos)
    pos += 6
    topics = []
    count, pos = _length(buf, pos, flexible, _I32)
    for _ in range(_count_of(count)):
        if version >= _TOPIC_ID:
            if pos + 16 > size:
                raise Truncated("topic id past the end of the frame")
            name, topic_id = None, uuid.UUID(bytes=bytes(buf[pos:pos + 16]))
            pos += 16
        else:
            n, pos = _length(buf, pos, flexible, _I16)
            name, pos = _text(buf, pos, n)
            topic_id = None
        parts = []
        pcount, pos = _length(buf, pos, flexible, _I32)
        for _ in range(_count_of(pcount)):
            index = _I32.unpack_from(buf, pos)[0]
            n, pos = _length(buf, pos + 4, flexible, _I32)
            if n == -1:
                records = None
            else:
                end = pos + n
                if n < 0 or end > size:
                    raise Truncated(f"records of {n} bytes at {pos} in a frame of {size}")
                records, pos = buf[pos:end], end
            if flexible:
                pos = _skip_tags(buf, pos)
            parts.append(PartitionProduceData(index, records))
        if flexible:
            pos = _skip_tags(buf, pos)
        topics.append(TopicProduceData(name, topic_id, parts))
    if flexible:
        _skip_tags(buf, pos)
    return ProduceRequestData(transactional_id, acks, timeout_ms, topics)


def _count_of(n: int) -> int:
    if n < -1:
        raise Truncated(f"negative array length {n}")
    return max(n, 0)  # null where the schema says non-nullable reads as empty, as the codec does


# --- the response ----------------------------------------------------------------------------

_ROW_KEYS = frozenset(("index", "error_code", "base_offset", "log_append_time_ms", "log_start_offset",
                       "error_message", "record_errors"))


def encode_response(version: int, correlation_id: int, body) -> bytearray | None:
    """The whole size-prefixed Produce response frame, or None when ``body`` carries
    something this path does not write (tagged fields such as current_leader): the
    general codec then encodes it."""
    if "node_endpoints" in body:
        return None
    flexible = version >= _FLEXIBLE
    row = _ROW_V5 if version >= 5 else _ROW_V3
    out = bytearray(8)  # size and correlation id, filled in at the end
    if flexible:
        out.append(0)  # response header v1: no tagged fields
    responses = body["responses"]
    _count(out, len(responses), flexible)
    for topic in responses:
        if version >= _TOPIC_ID:
            out += (topic.get("topic_id") or uuid.UUID(int=0)).bytes
        else:
            _string(out, topic["name"], flexible)
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
            if version >= 8:
                errors = p.get("record_errors") or ()
                _count(out, len(errors), flexible)
                for e in errors:
                    out += _I32.pack(e["batch_index"])
                    _string(out, e.get("batch_index_error_message"), flexible)
                    if flexible:
                        out.append(0)
                _string(out, p.get("error_message"), flexible)
            if flexible:
                out.append(0)
        if flexible:
            out.append(0)
    out += _I32.pack(body.get("throttle_time_ms", 0))
    if flexible:
        out.append(0)
    _SIZE_CID.pack_into(out, 0, len(out) - 4, correlation_id)
    return out


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
