"""Record-level encoding and decoding of RecordBatch v2, and control records.

For clients, tools and tests; the broker's append path never comes here. Record
fields use zig-zag varints. Compression wraps everything after the 61-byte
header.
"""

from __future__ import annotations

import struct
import time
from typing import NamedTuple

from kipper.protocol import batch as b
from kipper.protocol import compression
from kipper.protocol.primitives import decode_varint, encode_varint

# Zig-zag varints of small values are precomputed: most record fields are small.
VARINT_CACHE = [encode_varint(i) for i in range(-1, 8192)]


def _varint(v: int) -> bytes:
    if -1 <= v < 8191:
        return VARINT_CACHE[v + 1]
    return encode_varint(v)


class Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple = ()


class Batch(NamedTuple):
    header: b.BatchHeader
    records: list


# --- encoding ------------------------------------------------------------------

def encode_record(offset_delta: int, timestamp_delta: int, key, value, headers=()) -> bytes:
    """One record, length prefix included. Small varints come from a table:
    this runs once per record in producers, so the common shape (no headers,
    fields under 8 KiB) takes a single join."""
    V = VARINT_CACHE
    if not headers and -1 <= timestamp_delta < 8191 and offset_delta < 8191:
        kl = -1 if key is None else len(key)
        vl = -1 if value is None else len(value)
        if kl < 8191 and vl < 8191:
            body = b"".join((b"\x00", V[timestamp_delta + 1], V[offset_delta + 1], V[kl + 1],
                             key or b"", V[vl + 1], value or b"", b"\x00"))
            n = len(body)
            return (V[n + 1] if n < 8191 else encode_varint(n)) + body
    V = VARINT_CACHE
    parts = [b"\x00",
             V[timestamp_delta + 1] if -1 <= timestamp_delta < 8191 else encode_varint(timestamp_delta),
             V[offset_delta + 1] if offset_delta < 8191 else encode_varint(offset_delta)]
    if key is None:
        parts.append(V[0])
    else:
        n = len(key)
        parts.append(V[n + 1] if n < 8191 else encode_varint(n))
        parts.append(key)
    if value is None:
        parts.append(V[0])
    else:
        n = len(value)
        parts.append(V[n + 1] if n < 8191 else encode_varint(n))
        parts.append(value)
    if headers:
        parts.append(_varint(len(headers)))
        for hk, hv in headers:
            hk = hk.encode("utf-8") if isinstance(hk, str) else hk
            parts.append(_varint(len(hk)))
            parts.append(hk)
            if hv is None:
                parts.append(V[0])
            else:
                parts.append(_varint(len(hv)))
                parts.append(hv)
    else:
        parts.append(b"\x00")
    body = b"".join(parts)
    n = len(body)
    return (V[n + 1] if n < 8191 else encode_varint(n)) + body


def build_batch(records, *, base_offset: int = 0, compression_type: int = compression.NONE,
                producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                transactional: bool = False, control: bool = False,
                partition_leader_epoch: int = -1) -> bytes:
    """Encode ``records`` (key, value[, timestamp[, headers]]) as one batch.

    A missing timestamp means now. Offsets are 0..n-1 relative to base_offset.
    """
    if not records:
        raise ValueError("a record batch needs at least one record")
    now = int(time.time() * 1000)
    norm = []
    for r in records:
        key, value = r[0], r[1]
        ts = r[2] if len(r) > 2 and r[2] is not None else now
        headers = r[3] if len(r) > 3 and r[3] else ()
        norm.append((key, value, ts, headers))
    base_ts = norm[0][2]
    max_ts = max(r[2] for r in norm)
    payload = b"".join(encode_record(i, ts - base_ts, k, v, h)
                       for i, (k, v, ts, h) in enumerate(norm))
    return assemble(payload, len(norm), base_ts, max_ts, base_offset=base_offset,
                    compression_type=compression_type, producer_id=producer_id,
                    producer_epoch=producer_epoch, base_sequence=base_sequence,
                    transactional=transactional, control=control,
                    partition_leader_epoch=partition_leader_epoch)


def assemble(payload: bytes, count: int, base_ts: int, max_ts: int, **fields) -> bytes:
    """Wrap already encoded records in a batch header, compressing and CRC-ing."""
    header, records = assemble_parts(payload, count, base_ts, max_ts, **fields)
    return header + records


def assemble_parts(payload: bytes, count: int, base_ts: int, max_ts: int, *, base_offset: int = 0,
                   compression_type: int = compression.NONE, producer_id: int = -1,
                   producer_epoch: int = -1, base_sequence: int = -1, transactional: bool = False,
                   control: bool = False, partition_leader_epoch: int = -1,
                   last_offset_delta: int | None = None,
                   extra_attributes: int = 0) -> tuple[bytes, bytes]:
    """``assemble`` as (61-byte header, records): the records are not copied
    (the producer sends the two as they are, scatter-gather)."""
    if compression_type != compression.NONE:
        payload = compression.compress(compression_type, payload)
    attributes = compression_type | extra_attributes
    if transactional:
        attributes |= b.TRANSACTIONAL
    if control:
        attributes |= b.CONTROL
    header = b.pack_header(
        base_offset=base_offset,
        batch_length=b.HEADER_SIZE - b.LOG_OVERHEAD + len(payload),
        partition_leader_epoch=partition_leader_epoch, magic=2, crc=0,
        attributes=attributes, last_offset_delta=count - 1 if last_offset_delta is None else last_offset_delta,
        base_timestamp=base_ts, max_timestamp=max_ts, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=base_sequence, records_count=count)
    return b.with_crc(header, payload), payload


REBUILD_CHUNK = 32  # records encoded between two yields of rebuild_steps


def rebuild_batch(header: b.BatchHeader, kept: list[Record], *,
                  delete_horizon_ms: int | None = None) -> bytes:
    """A cleaned copy of a batch (the log cleaner): the records in ``kept`` at their own
    offsets and timestamps, under the original base offset, last offset delta, producer
    fields and codec. With ``delete_horizon_ms`` the batch carries KIP-534's delete
    horizon: the DELETE_HORIZON attribute, with the horizon as its base timestamp."""
    steps = rebuild_steps(header, kept, delete_horizon_ms=delete_horizon_ms)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def rebuild_steps(header: b.BatchHeader, kept: list[Record], *,
                  delete_horizon_ms: int | None = None):
    """``rebuild_batch`` in steps: a generator that yields after every REBUILD_CHUNK
    records it encodes and returns the batch, so that the cleaner, which runs between
    requests, never encodes a large batch in one go."""
    base = header.base_offset
    base_ts = delete_horizon_ms if delete_horizon_ms is not None else (
        kept[0].timestamp if kept else header.base_timestamp)
    parts = []
    for i in range(0, len(kept), REBUILD_CHUNK):
        parts.append(b"".join(encode_record(r.offset - base, r.timestamp - base_ts, r.key, r.value, r.headers)
                              for r in kept[i:i + REBUILD_CHUNK]))
        yield
    max_ts = max((r.timestamp for r in kept), default=header.max_timestamp)
    keep_bits = header.attributes & b.TIMESTAMP_TYPE
    horizon_bit = b.DELETE_HORIZON if delete_horizon_ms is not None else 0
    return assemble(b"".join(parts), len(kept), base_ts, max_ts, base_offset=base,
                    compression_type=header.compression, producer_id=header.producer_id,
                    producer_epoch=header.producer_epoch, base_sequence=header.base_sequence,
                    transactional=header.is_transactional, control=header.is_control,
                    partition_leader_epoch=header.partition_leader_epoch,
                    last_offset_delta=header.last_offset_delta,
                    extra_attributes=keep_bits | horizon_bit)


# --- decoding ------------------------------------------------------------------

def _decode_bytes(buf, pos):
    n, pos = decode_varint(buf, pos)
    if n < 0:
        return None, pos
    end = pos + n
    if end > len(buf):
        raise ValueError("record field runs past the end of the batch")
    return bytes(buf[pos:end]), end


def decode_records(payload, count: int, base_offset: int, base_ts: int) -> list[Record]:
    return list(iter_records(payload, count, base_offset, base_ts))


def iter_records(payload, count: int, base_offset: int, base_ts: int):
    """The records of an (uncompressed) payload, each decoded as it is asked for."""
    pos = 0
    for _ in range(count):
        length, pos = decode_varint(payload, pos)
        end = pos + length
        if length < 0 or end > len(payload):
            raise ValueError("record length runs past the end of the batch")
        pos += 1  # attributes
        ts_delta, pos = decode_varint(payload, pos)
        off_delta, pos = decode_varint(payload, pos)
        key, pos = _decode_bytes(payload, pos)
        value, pos = _decode_bytes(payload, pos)
        n_headers, pos = decode_varint(payload, pos)
        headers = []
        for _ in range(n_headers):
            hk, pos = _decode_bytes(payload, pos)
            hv, pos = _decode_bytes(payload, pos)
            headers.append(((hk or b"").decode("utf-8"), hv))
        yield Record(base_offset + off_delta, base_ts + ts_delta, key, value, tuple(headers))
        pos = end


def iter_batch_records(buf, header: b.BatchHeader):
    """The records of one stored batch (``header`` read from it), decompressed at once
    and decoded one by one as they are asked for; the CRC is not checked."""
    payload = memoryview(buf)[b.HEADER_SIZE:]
    if header.compression:
        payload = compression.decompress(header.compression, payload)
    return iter_records(payload, header.records_count, header.base_offset, header.base_timestamp)


def decode_batch(buf, start: int = 0, end: int | None = None, *, verify_crc: bool = True) -> Batch:
    """One batch; anything unreadable raises InvalidBatch with the Kafka code to report."""
    end = len(buf) if end is None else end
    if end - start < b.HEADER_SIZE:
        raise b.InvalidBatch(f"{end - start} bytes are too short for a record batch",
                             b.CORRUPT_MESSAGE)
    h = b.read_header(buf, start)
    if h.magic != 2:
        raise b.InvalidBatch(f"record batch magic {h.magic} is not supported (only v2)",
                             b.UNSUPPORTED_FOR_MESSAGE_FORMAT)
    if verify_crc and b.compute_crc(buf, start, end) != h.crc:
        raise b.InvalidBatch("record batch CRC mismatch", b.CORRUPT_MESSAGE)
    payload = memoryview(buf)[start + b.HEADER_SIZE:end]
    try:
        if h.compression:
            payload = compression.decompress(h.compression, payload)
        recs = decode_records(payload, h.records_count, h.base_offset, h.base_timestamp)
    except compression.UnsupportedCodec as exc:
        raise b.InvalidBatch(str(exc), b.UNSUPPORTED_COMPRESSION_TYPE) from exc
    except (ValueError, IndexError, compression.DecompressionError) as exc:
        raise b.InvalidBatch(f"record batch cannot be decoded: {exc}", b.CORRUPT_MESSAGE) from exc
    return Batch(h, recs)


def decode_all(buf, *, verify_crc: bool = True) -> list[Batch]:
    """Every complete batch in ``buf``; a partial trailing batch (Fetch may
    cut one off at max_bytes) is ignored."""
    out = []
    pos = 0
    n = len(buf)
    while n - pos >= b.HEADER_SIZE:
        h = b.read_header(buf, pos)
        end = pos + h.batch_length + b.LOG_OVERHEAD
        if end > n:
            break
        out.append(decode_batch(buf, pos, end, verify_crc=verify_crc))
        pos = end
    return out


# --- control records ---------------------------------------------------------------

ABORT, COMMIT, LEADER_CHANGE = 0, 1, 2
SHARE_CHECKPOINT, SHARE_DELTA = 5, 6  # seed 004 (KIP-932 draft numbering)

_CONTROL_KEY = struct.Struct(">hh")


def control_key(record_type: int, version: int = 0) -> bytes:
    return _CONTROL_KEY.pack(version, record_type)


def control_type(key: bytes) -> int:
    if key is None or len(key) < 4:
        return -1
    return _CONTROL_KEY.unpack_from(key, 0)[1]


def build_control_batch(record_type: int, value: bytes, *, base_offset: int = 0,
                        producer_id: int = -1, producer_epoch: int = -1,
                        transactional: bool = False, timestamp: int | None = None) -> bytes:
    return build_batch([(control_key(record_type), value, timestamp)], base_offset=base_offset,
                       producer_id=producer_id, producer_epoch=producer_epoch,
                       transactional=transactional, control=True)


_END_TXN_MARKER = struct.Struct(">hi")


def end_txn_marker(coordinator_epoch: int) -> bytes:
    return _END_TXN_MARKER.pack(0, coordinator_epoch)


def marker_coordinator_epoch(value) -> int:
    """The coordinator epoch in a COMMIT/ABORT marker's value (-1 if it has none)."""
    if value is None or len(value) < _END_TXN_MARKER.size:
        return -1
    return _END_TXN_MARKER.unpack_from(value, 0)[1]
