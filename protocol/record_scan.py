"""The records of a magic-v2 batch walked field by field, in pure Python.

This is the reference form of the record parser and the fallback where the C form
(``_record_scan.c``, built by setup.py) is not installed. The two take the same
arguments and give the same answer for every input, message text included
(tests/property/test_record_scan.py compares them). Nothing is decoded into objects:
the walk proves that each record parses as Kafka's ``DefaultRecord.readFrom`` reads it
and that the records fill the batch exactly, and takes the largest record timestamp on
the way (Kafka's LogValidator recomputes the batch's max timestamp from its records).

``scan(buf, start, end, count, base_timestamp)`` reads ``count`` records from
``buf[start:end]`` (the records section of an uncompressed batch, or a decompressed
payload) and returns, when they parse, the largest of -1 and every record's timestamp
(``base_timestamp`` plus its delta, as a Java long: wrapping past 2^63), else
``(error_code, record_index, message)``; ``record_index`` is -1 when no single record
is at fault (bytes after the last record, a negative count).
"""

from __future__ import annotations

INVALID_RECORD = 87  # Kafka's InvalidRecordException: every structural fault of a record

# Kafka reads a varint in at most 5 bytes (ByteUtils.readVarint) and a varlong in at
# most 10 (readVarlong); bits shifted past 32 / 64 are dropped, as Java drops them.
_VARINT_BYTES = 5
_VARLONG_BYTES = 10
_MASK = {_VARINT_BYTES: 0xFFFFFFFF, _VARLONG_BYTES: 0xFFFFFFFFFFFFFFFF}
NO_TIMESTAMP = -1  # Kafka's RecordBatch.NO_TIMESTAMP: where the max timestamp starts
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _long(value: int) -> int:
    """``value`` as a Java long holds it (wrapping past 2^63)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


class _Fault(Exception):
    def __init__(self, index: int, message: str):
        self.index = index
        self.message = message


def _varint(buf, pos: int, limit: int, max_bytes: int, index: int, what: str, where: str):
    """(zig-zag value, next position) of the varint at ``pos``, which must end before ``limit``."""
    raw = 0
    shift = 0
    for _ in range(max_bytes):
        if pos >= limit:
            raise _Fault(index, f"record {index}: {what} runs past the end of the {where}")
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            raw &= _MASK[max_bytes]
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
    kind = "varint" if max_bytes == _VARINT_BYTES else "varlong"
    raise _Fault(index, f"record {index}: {what} {kind} is longer than {max_bytes} bytes")


def _bytes_field(buf, pos: int, end: int, index: int, what: str, null_ok: bool) -> int:
    """The position after a length-prefixed field of the record ending at ``end``."""
    size, pos = _varint(buf, pos, end, _VARINT_BYTES, index, f"{what} length", "record")
    if size < 0:
        if size == -1 and null_ok:
            return pos
        raise _Fault(index, f"record {index}: {what} length {size} is negative")
    if size > end - pos:
        raise _Fault(index, f"record {index}: {what} of {size} bytes runs past the end of the record")
    return pos + size


def _record(buf, pos: int, end: int, index: int) -> int:
    """Walk the fields of record ``index``, which spans ``buf[pos:end]``; its timestamp delta."""
    if pos >= end:
        raise _Fault(index, f"record {index}: attributes run past the end of the record")
    pos += 1  # attributes: unused in v2, as Kafka leaves them
    delta, pos = _varint(buf, pos, end, _VARLONG_BYTES, index, "timestamp delta", "record")
    _, pos = _varint(buf, pos, end, _VARINT_BYTES, index, "offset delta", "record")
    pos = _bytes_field(buf, pos, end, index, "key", True)
    pos = _bytes_field(buf, pos, end, index, "value", True)
    headers, pos = _varint(buf, pos, end, _VARINT_BYTES, index, "header count", "record")
    if headers < 0:
        raise _Fault(index, f"record {index}: header count {headers} is negative")
    if headers > end - pos:
        raise _Fault(index, f"record {index}: header count {headers} exceeds the {end - pos} bytes left in the record")
    for _ in range(headers):
        pos = _bytes_field(buf, pos, end, index, "header key", False)
        pos = _bytes_field(buf, pos, end, index, "header value", True)
    if pos != end:
        raise _Fault(index, f"record {index}: {end - pos} bytes left over after its fields")
    return delta


def scan(buf, start: int, end: int, count: int, base_timestamp: int):
    """The records' max timestamp (at least -1) when ``buf[start:end]`` holds exactly
    ``count`` well-formed records, else (error code, record index or -1, message)."""
    if not 0 <= start <= end <= len(buf):
        raise ValueError(f"span [{start}, {end}) is not within a buffer of {len(buf)} bytes")
    if not -0x80000000 <= count <= 0x7FFFFFFF:
        raise ValueError(f"record count {count} is not an int32")
    if not _LONG_MIN <= base_timestamp <= _LONG_MAX:
        raise ValueError(f"base timestamp {base_timestamp} is not an int64")
    if count < 0:
        return INVALID_RECORD, -1, f"record count {count} is negative"
    data = bytes(memoryview(buf)[start:end])  # any buffer; indexing bytes is faster
    deltas = _fast_walk(data, count)
    if deltas is not None:
        low, high = deltas
        if count == 0:
            return NO_TIMESTAMP
        if _LONG_MIN <= base_timestamp + low and base_timestamp + high <= _LONG_MAX:
            return max(NO_TIMESTAMP, base_timestamp + high)  # no record's timestamp wraps
    try:
        return _walk(data, count, base_timestamp)
    except _Fault as fault:
        return INVALID_RECORD, fault.index, fault.message


def _walk(buf, count: int, base_timestamp: int) -> int:
    """The max timestamp of ``count`` records filling ``buf``; _Fault for the first fault."""
    pos = 0
    end = len(buf)
    top = NO_TIMESTAMP
    for index in range(count):
        if pos >= end:
            raise _Fault(index, f"record {index}: the batch ends after {index} of its {count} records")
        size, pos = _varint(buf, pos, end, _VARINT_BYTES, index, "length", "batch")
        if size < 0:
            raise _Fault(index, f"record {index}: length {size} is negative")
        if size > end - pos:
            raise _Fault(index, f"record {index}: length {size} runs past the end of the batch "
                                f"({end - pos} bytes left)")
        timestamp = _long(base_timestamp + _record(buf, pos, pos + size, index))
        if timestamp > top:
            top = timestamp
        pos += size
    if pos != end:
        raise _Fault(-1, f"{end - pos} bytes follow the last of the {count} records")
    return top


def _fast_walk(buf: bytes, count: int):
    """(lowest, highest) timestamp delta when ``count`` records fill ``buf`` exactly,
    read inline for the common shape (lengths in one or two bytes, no headers); None
    when in doubt (a fault, or a shape left to ``_walk``, which then decides)."""
    pos = 0
    end = len(buf)
    low = high = 0
    for index in range(count):
        if pos >= end:
            return None
        size = buf[pos]
        if size < 0x80:
            pos += 1
        elif pos + 1 < end and buf[pos + 1] < 0x80:
            size = (size & 0x7F) | (buf[pos + 1] << 7)
            pos += 2
        else:
            return None
        size = (size >> 1) ^ -(size & 1)
        record_end = pos + size
        if size < 3 or record_end > end:  # attributes, timestamp delta, offset delta at least
            return None
        p = pos + 1
        raw = buf[p]  # the timestamp delta, a varlong of at most 10 bytes: usually one
        if raw < 0x80:
            p += 1
        else:
            raw = shift = 0
            while True:
                if p >= record_end or shift >= 70:
                    return None
                byte = buf[p]
                p += 1
                raw |= (byte & 0x7F) << shift
                if byte < 0x80:
                    break
                shift += 7
            raw &= 0xFFFFFFFFFFFFFFFF
        delta = (raw >> 1) ^ -(raw & 1)
        if index == 0:
            low = high = delta
        elif delta > high:
            high = delta
        elif delta < low:
            low = delta
        q = p  # the offset delta: only where it ends
        while q < record_end and buf[q] & 0x80:
            q += 1
        if q >= record_end or q - p >= 5:
            return None
        p = q + 1
        if p >= record_end:
            return None
        for _field in range(2):  # key, value
            n = buf[p]
            if n < 0x80:
                p += 1
            elif p + 1 < record_end and buf[p + 1] < 0x80:
                n = (n & 0x7F) | (buf[p + 1] << 7)
                p += 2
            else:
                return None
            n = (n >> 1) ^ -(n & 1)
            if n > 0:
                p += n
            elif n < -1:
                return None
            if p >= record_end:
                return None
        if buf[p] != 0 or p + 1 != record_end:  # headers: _walk reads them
            return None
        pos = record_end
    return (low, high) if pos == end else None
