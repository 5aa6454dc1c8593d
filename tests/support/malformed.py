"""Hand-built magic-v2 batches, good and malformed, with a correct CRC-32C.

Records are written field by field (``field``/``record``), so a test can put any value
in any field: a length that lies, a varint of six bytes, a negative header count. The
catalogue ``MALFORMED`` lists the faults issue 28 found accepted (and more), each with
the error Kafka's leader answers and the index of the record at fault (-1: none).
Shared by the parser's unit tests, the property tests and the broker's tests.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

from kipper.protocol import batch as b
from kipper.protocol import compression
from kipper.protocol.primitives import encode_uvarint, encode_varint

INVALID_RECORD = 87
CORRUPT_MESSAGE = 2
UNSUPPORTED_COMPRESSION_TYPE = 76
CODECS = (compression.NONE, compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD)


def varint(value: int) -> bytes:
    return encode_varint(value)


def long_varint(value: int, size: int) -> bytes:
    """``value`` zig-zag encoded in exactly ``size`` bytes (non-minimal when longer
    than needed; Kafka reads those as the same value)."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    for i in range(size):
        byte = (raw >> (7 * i)) & 0x7F
        out.append(byte | (0x80 if i < size - 1 else 0))
    return bytes(out)


def field(data: bytes | None) -> bytes:
    """A length-prefixed field: -1 for None."""
    return varint(-1) if data is None else varint(len(data)) + data


def body(key: bytes | None = b"k", value: bytes | None = b"v", headers=(), *, offset_delta: int = 0,
         timestamp_delta: int = 0, attributes: int = 0) -> bytes:
    """A record's fields, without its length prefix."""
    out = bytes([attributes]) + varint(timestamp_delta) + varint(offset_delta) + field(key) + field(value)
    out += varint(len(headers))
    for hk, hv in headers:
        out += field(hk) + field(hv)
    return out


def record(fields: bytes, length: int | None = None) -> bytes:
    """``fields`` with a length prefix: their length unless ``length`` says otherwise."""
    return varint(len(fields) if length is None else length) + fields


def records(n: int, start: int = 0) -> bytes:
    """``n`` sound records with offset deltas start..start+n-1."""
    return b"".join(record(body(b"k%d" % i, b"value-%d" % i, offset_delta=i)) for i in range(start, start + n))


def batch(payload: bytes, count: int, codec: int = compression.NONE, *, compress: bool = True,
          last_offset_delta: int | None = None, **fields) -> bytes:
    """A batch around ``payload`` (compressed with ``codec`` unless ``compress`` is
    False: then it is the records section as given), with a correct CRC."""
    section = compression.compress(codec, payload) if codec and compress else payload
    header = dict(batch_length=b.HEADER_SIZE - b.LOG_OVERHEAD + len(section), magic=2, attributes=codec,
                  last_offset_delta=count - 1 if last_offset_delta is None else last_offset_delta,
                  base_timestamp=1_700_000_000_000, max_timestamp=1_700_000_000_000, producer_id=-1,
                  producer_epoch=-1, base_sequence=-1, records_count=count, partition_leader_epoch=-1)
    header.update(fields)
    out = bytearray(b.pack_header(**header)) + section
    b.write_crc(out)
    return bytes(out)


def with_header(data: bytes, **fields) -> bytes:
    """One batch with header fields replaced (base offset, max timestamp, attributes...)
    and its CRC made right again."""
    header = b.read_header(data)._asdict()
    header.update(fields)
    out = bytearray(b.pack_header(**header)) + data[b.HEADER_SIZE:]
    b.write_crc(out)
    return bytes(out)


def legacy_message(magic: int, key: bytes = b"k", value: bytes = b"v", timestamp: int = 1_700_000_000_000) -> bytes:
    """A message set of one magic v0 or v1 message (offset, size, CRC-32, magic, attributes,
    [timestamp,] key, value): the format before record batches."""
    fields = struct.pack(">bb", magic, 0) + (struct.pack(">q", timestamp) if magic == 1 else b"")
    fields += struct.pack(">i", len(key)) + key + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(fields)) + fields
    return struct.pack(">qi", 0, len(message)) + message


def recrc(data) -> bytes:
    """``data`` (one batch) with its CRC recomputed and its batch length made to fit."""
    out = bytearray(data)
    struct.pack_into(">i", out, 8, len(out) - b.LOG_OVERHEAD)
    b.write_crc(out)
    return bytes(out)


class Case(NamedTuple):
    payload: bytes  # the records, uncompressed
    count: int
    code: int
    index: int  # the record at fault; -1 when none is


GOOD = records(1)
TWO = records(2)
BIG = b"x" * 300  # a value whose length takes two varint bytes

# name -> the records section (uncompressed) and what Kafka's leader answers
MALFORMED: dict[str, Case] = {
    # the eleven of issue 28 (the two compressed ones are every codec below)
    "record length past the batch end": Case(TWO + record(body(), length=40), 3, INVALID_RECORD, 2),
    "bytes left over after the last record": Case(TWO + b"\x00\x00\x00", 2, INVALID_RECORD, -1),
    "records_count 3 with two records": Case(TWO, 3, INVALID_RECORD, 2),
    "key length beyond its record": Case(record(b"\x00\x00\x00" + varint(50) + b"kk" + field(b"v") + b"\x00"),
                                         1, INVALID_RECORD, 0),
    "record shorter than its length prefix": Case(record(body(), length=len(body()) + 3) + b"\x00\x00\x00",
                                                  1, INVALID_RECORD, 0),
    "negative header count": Case(record(body()[:-1] + varint(-1)), 1, INVALID_RECORD, 0),
    "header key length past the record": Case(record(body()[:-1] + varint(1) + varint(9) + b"hk" + field(b"v")),
                                              1, INVALID_RECORD, 0),
    "record length varint longer than 5 bytes": Case(b"\x80\x80\x80\x80\x80\x01" + body(), 1, INVALID_RECORD, 0),
    "empty records section claiming one record": Case(b"", 1, INVALID_RECORD, 0),
    # more of the same family
    "negative record length": Case(GOOD + record(body(), length=-2), 2, INVALID_RECORD, 1),
    "zero-length record": Case(record(b""), 1, INVALID_RECORD, 0),
    "record ends inside its timestamp delta": Case(record(b"\x00\x80"), 1, INVALID_RECORD, 0),
    "timestamp delta varlong longer than 10 bytes": Case(record(b"\x00" + b"\x80" * 10 + b"\x00" + body()[2:]),
                                                         1, INVALID_RECORD, 0),
    "offset delta varint longer than 5 bytes": Case(record(b"\x00\x00" + b"\x80" * 5 + b"\x00" + body()[3:]),
                                                    1, INVALID_RECORD, 0),
    "key length -2": Case(record(b"\x00\x00\x00" + varint(-2) + field(b"v") + b"\x00"), 1, INVALID_RECORD, 0),
    "value length -5": Case(record(b"\x00\x00\x00" + field(b"k") + varint(-5) + b"\x00"), 1, INVALID_RECORD, 0),
    "value past the record": Case(record(b"\x00\x00\x00" + field(b"k") + varint(9) + b"v\x00"),
                                  1, INVALID_RECORD, 0),
    "record ends before its header count": Case(record(body()[:-1]), 1, INVALID_RECORD, 0),
    "header count beyond the record": Case(record(body()[:-1] + varint(1000) + b"\x00\x00"), 1, INVALID_RECORD, 0),
    "negative header key length": Case(record(body()[:-1] + varint(1) + varint(-1) + field(b"v")),
                                       1, INVALID_RECORD, 0),
    "header value length -2": Case(record(body()[:-1] + varint(1) + field(b"h") + varint(-2)), 1, INVALID_RECORD, 0),
    "header value past the record": Case(record(body()[:-1] + varint(1) + field(b"h") + varint(7) + b"v"),
                                         1, INVALID_RECORD, 0),
    "two headers announced, one present": Case(record(body()[:-1] + varint(2) + field(b"h") + field(b"v")),
                                               1, INVALID_RECORD, 0),
    "bytes left inside a record": Case(GOOD + record(body() + b"\x07\x07"), 2, INVALID_RECORD, 1),
    "a third record short of its length": Case(TWO + record(body(BIG, BIG), length=len(body(BIG, BIG)) + 1),
                                               3, INVALID_RECORD, 2),
    "one record where none is counted": Case(GOOD, 0, INVALID_RECORD, -1),
    "negative records count": Case(GOOD, -1, INVALID_RECORD, -1),
}

# sound records in unusual shapes Kafka reads: each must be accepted
ODD_BUT_SOUND: dict[str, tuple[bytes, int]] = {
    "null key and value": (record(body(None, None)), 1),
    "empty key and value": (record(body(b"", b"")), 1),
    "headers with null and empty values": (record(body(headers=((b"a", None), (b"", b""), (b"a", b"2")))), 1),
    "non-minimal varints": (record(b"\x00" + long_varint(0, 3) + long_varint(0, 5) + long_varint(-1, 5)
                                   + long_varint(1, 2) + b"v" + long_varint(0, 4)), 1),
    "a 10-byte timestamp delta": (record(b"\x00" + long_varint(-1, 10) + body()[2:]), 1),
    "a five-byte record length": (long_varint(len(body()), 5) + body(), 1),
    "large fields": (record(body(BIG * 40, BIG * 300, headers=((b"h" * 200, BIG),))), 1),
    "many records": (records(3000), 3000),
    "negative deltas": (record(body(timestamp_delta=-5000, offset_delta=-3)), 1),
}


def uvarint(value: int) -> bytes:
    return encode_uvarint(value)
