"""The producer's side of Produce's fast paths, versions 3-12: the request packed as
buffers around the sealed batches, the response read with fixed-field unpacks.
Declared with the broker's side (produce_codec.py) in protocol/messages/produce.py's
``Api(fast=...)``.

Why: the general codec took 20-40 us a request on the producer's send thread, as much
as encoding a tenth of the batch. Anything this path does not write or read (topic ids
from v13, tagged fields such as current_leader) returns None and goes to the general
codec; property tests check both agree (tests/property/test_produce_codec.py).
"""

from __future__ import annotations

import struct

from kipper.protocol.fixed_fields import (
    Part,
    Truncated,
    put_count,
    put_string,
    read_count,
    read_length,
    read_string,
    read_text,
)
from kipper.protocol.primitives import encode_uvarint
from kipper.protocol.produce_codec import (
    ACKS_TIMEOUT,
    FLEXIBLE_FROM,
    ROW_V3,
    ROW_V5,
    TOPIC_ID_FROM,
)

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
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
