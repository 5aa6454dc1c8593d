"""Fast paths for Fetch, versions 4-17: every consumed record goes out through here.

Why: a consumer reading a full partition sends one Fetch per ~1 MB (its
max.partition.fetch.bytes), and the general codec spent ~100 us of broker CPU on
each (a Container per struct, a Python call per field, and the first request of a
version compiled its schemas, ~4 ms). Here the request is read with fixed-field
``struct`` unpacks and the response header and partition rows are packed into
bytearrays, with the stored batches left where they are between them (a list of
buffers for ``transport.writelines``, as the general codec's GatherStream does).
Requests with tagged fields (a follower's replica_state, a directory id) and
responses with tagged fields (diverging epoch, current leader, node endpoints) go
to the general codec. Tests check that both agree on every version
(tests/property/test_fetch_codec.py).
"""

from __future__ import annotations

import struct
import uuid

from kipper.protocol.fixed_fields import (
    Part,
    Truncated,
    put_count,
    put_string,
    read_count,
    read_length,
    read_text,
)
from kipper.protocol.primitives import ZERO_UUID

_I32 = struct.Struct(">i")
_SIZE_CID = struct.Struct(">ii")
_FLEXIBLE = 12
_TOPIC_ID = 13

# the request's fixed fields before the topics, by version range
_HEAD_V4 = struct.Struct(">iiiib")  # replica_id, max_wait_ms, min_bytes, max_bytes, isolation_level
_HEAD_V7 = struct.Struct(">iiiibii")  # ... session_id, session_epoch
_HEAD_V15 = struct.Struct(">iiibii")  # replica_id moved into the tagged replica_state
# a requested partition's fields, by version range
_PART_V4 = struct.Struct(">iqi")  # partition, fetch_offset, partition_max_bytes
_PART_V5 = struct.Struct(">iqqi")  # ... log_start_offset before partition_max_bytes
_PART_V9 = struct.Struct(">iiqqi")  # current_leader_epoch after partition
_PART_V12 = struct.Struct(">iiqiqi")  # last_fetched_epoch after fetch_offset


class FetchPartition(Part):
    """A field the version does not carry is None (the general codec leaves it out)."""

    __slots__ = ("partition", "current_leader_epoch", "fetch_offset", "last_fetched_epoch",
                 "log_start_offset", "partition_max_bytes")

    def __init__(self, partition, current_leader_epoch, fetch_offset, last_fetched_epoch,
                 log_start_offset, partition_max_bytes):
        self.partition = partition
        self.current_leader_epoch = current_leader_epoch
        self.fetch_offset = fetch_offset
        self.last_fetched_epoch = last_fetched_epoch
        self.log_start_offset = log_start_offset
        self.partition_max_bytes = partition_max_bytes


class FetchTopic(Part):
    __slots__ = ("topic", "topic_id", "partitions")

    def __init__(self, topic, topic_id, partitions: list):
        self.topic = topic
        self.topic_id = topic_id
        self.partitions = partitions


class ForgottenTopic(Part):
    __slots__ = ("topic", "topic_id", "partitions")

    def __init__(self, topic, topic_id, partitions: list):
        self.topic = topic
        self.topic_id = topic_id
        self.partitions = partitions


class FetchRequestData(Part):
    """Fields a version does not carry are left unset: ``get`` answers None for them,
    as for the general codec's Containers."""

    __slots__ = ("replica_id", "max_wait_ms", "min_bytes", "max_bytes", "isolation_level",
                 "session_id", "session_epoch", "topics", "forgotten_topics_data", "rack_id")


class _Tagged(Exception):
    """A tagged-field section that is not empty: the general codec reads it."""


def parse_request(buf, pos: int, version: int) -> FetchRequestData | None:
    """A Fetch request body from ``buf[pos:]``; None when it carries tagged fields (only
    brokers and KRaft voters send them), which the declared schema then reads."""
    if type(buf) is not memoryview:
        buf = memoryview(buf)
    try:
        return _parse(buf, pos, version)
    except _Tagged:
        return None
    except (IndexError, struct.error) as exc:
        raise Truncated(f"Fetch v{version} request ends early: {exc}") from None


def _parse(buf, pos: int, version: int) -> FetchRequestData:
    """Straight-line for the usual request (a few topics and partitions, one-byte compact
    lengths, no tagged fields): each helper call here costs about as much as a field."""
    flexible = version >= _FLEXIBLE
    req = FetchRequestData()
    if version >= 15:
        (req.max_wait_ms, req.min_bytes, req.max_bytes, req.isolation_level, req.session_id,
         req.session_epoch) = _HEAD_V15.unpack_from(buf, pos)
        pos += _HEAD_V15.size
    elif version >= 7:
        (req.replica_id, req.max_wait_ms, req.min_bytes, req.max_bytes, req.isolation_level,
         req.session_id, req.session_epoch) = _HEAD_V7.unpack_from(buf, pos)
        pos += _HEAD_V7.size
    else:
        (req.replica_id, req.max_wait_ms, req.min_bytes, req.max_bytes,
         req.isolation_level) = _HEAD_V4.unpack_from(buf, pos)
        pos += _HEAD_V4.size
    part_row = (_PART_V12 if version >= 12 else _PART_V9 if version >= 9 else
                _PART_V5 if version >= 5 else _PART_V4)
    row_size = part_row.size
    n, pos = read_count(buf, pos, flexible)
    topics = []
    for _ in range(n):
        name, topic_id, pos = _topic_key(buf, pos, version, flexible)
        c = buf[pos]
        if flexible and 0 < c < 0x80:
            n_parts, pos = c - 1, pos + 1
        else:
            n_parts, pos = read_count(buf, pos, flexible)
        parts = []
        for _ in range(n_parts):
            row = part_row.unpack_from(buf, pos)
            pos += row_size
            if version >= 12:
                parts.append(FetchPartition(*row))
                if buf[pos]:
                    raise _Tagged
                pos += 1
            elif version >= 9:
                index, epoch, offset, start, max_bytes = row
                parts.append(FetchPartition(index, epoch, offset, None, start, max_bytes))
            elif version >= 5:
                index, offset, start, max_bytes = row
                parts.append(FetchPartition(index, None, offset, None, start, max_bytes))
            else:
                index, offset, max_bytes = row
                parts.append(FetchPartition(index, None, offset, None, None, max_bytes))
        if flexible:
            if buf[pos]:
                raise _Tagged
            pos += 1
        topics.append(FetchTopic(name, topic_id, parts))
    req.topics = topics
    if version >= 7:
        forgotten = []
        n, pos = read_count(buf, pos, flexible)
        for _ in range(n):
            name, topic_id, pos = _topic_key(buf, pos, version, flexible)
            n_parts, pos = read_count(buf, pos, flexible)
            ids = list(struct.unpack_from(f">{n_parts}i", buf, pos))
            pos += 4 * n_parts
            if flexible:
                pos = _no_tags(buf, pos)
            forgotten.append(ForgottenTopic(name, topic_id, ids))
        req.forgotten_topics_data = forgotten
    if version >= 11:
        n, pos = read_length(buf, pos, flexible)
        req.rack_id, pos = read_text(buf, pos, n)
    if flexible and buf[pos]:
        raise _Tagged
    return req


# topic ids seen in requests: a consumer sends the same few in every Fetch, and making a
# UUID (Python code, with checks) cost more than the rest of the topic's fields
_TOPIC_IDS: dict[bytes, uuid.UUID] = {}
_TOPIC_IDS_MAX = 10_000


def _topic_key(buf, pos: int, version: int, flexible: bool):
    """(name, topic_id, pos): a name up to v12, an id from v13."""
    if version >= _TOPIC_ID:
        raw = bytes(buf[pos:pos + 16])
        if len(raw) != 16:
            raise Truncated("topic id past the end of the frame")
        topic_id = _TOPIC_IDS.get(raw)
        if topic_id is None:
            if len(_TOPIC_IDS) >= _TOPIC_IDS_MAX:
                _TOPIC_IDS.clear()
            topic_id = _TOPIC_IDS[raw] = uuid.UUID(bytes=raw)
        return None, topic_id, pos + 16
    n, pos = read_length(buf, pos, flexible)
    name, pos = read_text(buf, pos, n)
    return name, None, pos


def _no_tags(buf, pos: int) -> int:
    if buf[pos] != 0:
        raise _Tagged
    return pos + 1


# --- the response ----------------------------------------------------------------------------

_ROW_V4 = struct.Struct(">ihqq")  # partition_index, error_code, high_watermark, last_stable_offset
_ROW_V5 = struct.Struct(">ihqqq")  # ... log_start_offset
_ABORTED = struct.Struct(">qq")  # producer_id, first_offset
_TOP_V7 = struct.Struct(">ihi")  # throttle_time_ms, error_code, session_id
_TAGGED_ROW_FIELDS = ("diverging_epoch", "current_leader", "snapshot_id")


def encode_response(version: int, correlation_id: int, body):
    """The whole size-prefixed Fetch response frame, or None when ``body`` carries tagged
    fields this path does not write (the general codec then encodes it).

    The frame is a bytearray, or, when partitions carry stored batches (``records`` as a
    list of chunks), a list of buffers: the packed fields with the chunks between them,
    never copied.
    """
    if body.get("node_endpoints"):
        return None
    flexible = version >= _FLEXIBLE
    row = _ROW_V5 if version >= 5 else _ROW_V4
    out = bytearray(9 if flexible else 8)  # size, correlation id and the header's tags, set at the end
    if version >= 7:
        out += _TOP_V7.pack(body.get("throttle_time_ms", 0), body.get("error_code", 0),
                            body.get("session_id", 0))
    else:
        out += _I32.pack(body.get("throttle_time_ms", 0))
    frame = None  # the list of buffers, once a partition brings chunks
    responses = body["responses"]
    put_count(out, len(responses), flexible)
    for topic in responses:
        if version >= _TOPIC_ID:
            out += (topic.get("topic_id") or ZERO_UUID).bytes
        else:
            put_string(out, topic.get("topic") or "", flexible)
        parts = topic["partitions"]
        put_count(out, len(parts), flexible)
        for p in parts:
            if flexible:
                for name in _TAGGED_ROW_FIELDS:
                    if p.get(name) is not None:
                        return None
            if version >= 5:
                out += row.pack(p["partition_index"], p["error_code"], p["high_watermark"],
                                p.get("last_stable_offset", -1), p.get("log_start_offset", -1))
            else:
                out += row.pack(p["partition_index"], p["error_code"], p["high_watermark"],
                                p.get("last_stable_offset", -1))
            aborted = p.get("aborted_transactions")
            if aborted is None:
                out += b"\x00" if flexible else b"\xff\xff\xff\xff"
            else:
                put_count(out, len(aborted), flexible)
                for a in aborted:
                    out += _ABORTED.pack(a["producer_id"], a["first_offset"])
                    if flexible:
                        out.append(0)
            if version >= 11:
                out += _I32.pack(p.get("preferred_read_replica", -1))
            records = p.get("records")
            if records is None:
                out += b"\x00" if flexible else b"\xff\xff\xff\xff"
            elif type(records) is list or type(records) is tuple:
                put_count(out, sum(map(len, records)), flexible)
                if records:
                    if frame is None:
                        frame = []
                    frame.append(out)
                    frame.extend(records)
                    out = bytearray()
            else:
                put_count(out, len(records), flexible)
                out += records
            if flexible:
                out.append(0)
        if flexible:
            out.append(0)
    if flexible:
        out.append(0)
    if frame is None:
        _SIZE_CID.pack_into(out, 0, len(out) - 4, correlation_id)
        return out
    frame.append(out)
    _SIZE_CID.pack_into(frame[0], 0, sum(map(len, frame)) - 4, correlation_id)
    return frame
