"""RecordBatch v2 at the batch level: the 61-byte header, CRC-32C, offsets.

This is the broker's append path, so nothing here looks at individual records.
The header is declared once with construct (``BATCH_HEADER``); the hot path
reads the same layout through a ``struct.Struct`` derived from that
declaration, which costs a fraction of a microsecond per batch.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import crc32c as _crc32c
from construct import Int8sb, Int16sb, Int32sb, Int32ub, Int64sb, Struct

from kipper.protocol.framing import FrameMemory

BATCH_HEADER = Struct(
    "base_offset" / Int64sb,
    "batch_length" / Int32sb,
    "partition_leader_epoch" / Int32sb,
    "magic" / Int8sb,
    "crc" / Int32ub,
    "attributes" / Int16sb,
    "last_offset_delta" / Int32sb,
    "base_timestamp" / Int64sb,
    "max_timestamp" / Int64sb,
    "producer_id" / Int64sb,
    "producer_epoch" / Int16sb,
    "base_sequence" / Int32sb,
    "records_count" / Int32sb,
)
HEADER_SIZE = 61
LOG_OVERHEAD = 12  # base_offset + batch_length precede the length-counted part
CRC_START = 21  # CRC covers attributes..end
MAGIC_OFFSET = 16
CRC_OFFSET = 17
RECORDS_COUNT_OFFSET = 57  # the int32 records count ends the header

_FMT = struct.Struct(">" + "".join(sc.subcon.fmtstr.lstrip(">") for sc in BATCH_HEADER.subcons))
assert _FMT.size == HEADER_SIZE
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")

# attribute bits
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE = 0x08
TRANSACTIONAL = 0x10
CONTROL = 0x20
DELETE_HORIZON = 0x40

NO_PRODUCER_ID = -1
NO_SEQUENCE = -1


class BatchHeader(NamedTuple):
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def last_sequence(self) -> int:
        """Sequence of the batch's last record, wrapping at Int32.MAX (KIP-98)."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF


class InvalidBatch(ValueError):
    """A batch that cannot be read at all. ``code`` is the Kafka error to answer with."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


CORRUPT_MESSAGE = 2
INVALID_RECORD = 87
UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
UNSUPPORTED_COMPRESSION_TYPE = 76


_new_tuple = tuple.__new__


def read_header(buf, pos: int = 0) -> BatchHeader:
    # tuple.__new__ directly: NamedTuple's _make is a Python-level call, and every
    # produced batch is read here once
    return _new_tuple(BatchHeader, _FMT.unpack_from(buf, pos))


def records_count(buf, pos: int = 0) -> int:
    """The records count of the batch at ``pos``, read alone (a Fetch sums it per batch)."""
    return _I32.unpack_from(buf, pos + RECORDS_COUNT_OFFSET)[0]


def split_batches(buf) -> list[tuple[int, int, BatchHeader]]:
    """Split a ``records`` field into (start, end, header) per batch.

    Checks framing and the magic byte only; the caller decides about CRCs.
    """
    n = len(buf)
    if n >= HEADER_SIZE:  # one whole, sound batch: nearly every partition of every Produce
        h = read_header(buf, 0)
        if h.batch_length + LOG_OVERHEAD == n and h.magic == 2 and h.records_count >= 0 \
                and h.last_offset_delta >= 0 and h.batch_length >= HEADER_SIZE - LOG_OVERHEAD:
            return [(0, n, h)]
    out = []
    pos = 0
    while pos < n:
        if n - pos < HEADER_SIZE:
            raise InvalidBatch(f"{n - pos} trailing bytes are not a record batch", CORRUPT_MESSAGE)
        h = read_header(buf, pos)
        if h.magic != 2:
            raise InvalidBatch(f"record batch magic {h.magic} is not supported (only v2)",
                               UNSUPPORTED_FOR_MESSAGE_FORMAT)
        end = pos + h.batch_length + LOG_OVERHEAD
        if h.batch_length < HEADER_SIZE - LOG_OVERHEAD or end > n:
            raise InvalidBatch(f"record batch length {h.batch_length} does not fit the data",
                               CORRUPT_MESSAGE)
        if h.records_count < 0 or h.last_offset_delta < 0:
            raise InvalidBatch("negative record count or offset delta", INVALID_RECORD)
        out.append((pos, end, h))
        pos = end
    return out


def compute_crc(buf, start: int = 0, end: int | None = None) -> int:
    view = memoryview(buf)[start + CRC_START:end if end is not None else len(buf)]
    return _crc32c.crc32c(view)


def crc_valid(buf, start: int, end: int, header: BatchHeader) -> bool:
    return compute_crc(buf, start, end) == header.crc


# The partition leader epoch a leader stamps into every batch it appends (Kafka's
# LogValidator does): on one never re-elected node, every partition's epoch is 0.
LEADER_EPOCH = 0
_OFFSET_LENGTH_EPOCH = struct.Struct(">qii")


def with_base_offset_parts(view: memoryview, start: int, end: int, base_offset: int,
                           epoch: int = LEADER_EPOCH) -> tuple:
    """The batch ``view[start:end]`` with its base offset and partition leader epoch
    rewritten (neither is covered by the CRC), as two pieces: the first 16 bytes, and a
    view of the rest. Nothing is copied; a ``writev`` (the durable log's) takes them as
    they are."""
    length = _I32.unpack_from(view, start + 8)[0]
    return _OFFSET_LENGTH_EPOCH.pack(base_offset, length, epoch), view[start + 16:end]


def with_base_offset(buf, start: int, end: int, base_offset: int, epoch: int = LEADER_EPOCH) -> bytes:
    """The batch ``buf[start:end]`` with its base offset rewritten, as one new object: one
    copy. For a Produce stored by copying (see ``stored_batch``) this is the only copy of
    the producer's bytes the broker makes."""
    if type(buf) is not memoryview:
        buf = memoryview(buf)
    return b"".join(with_base_offset_parts(buf, start, end, base_offset, epoch))


def stored_batch(view: memoryview, start: int, end: int, base_offset: int, epoch: int = LEADER_EPOCH):
    """The batch ``view[start:end]`` as the in-memory log stores it, base offset rewritten.

    A batch received into a large frame's own mapping (``framing.FrameMemory``) is kept
    where it landed: its base offset is patched in place and a read-only view of it is
    stored, so the producer's bytes are never copied. The decoder never writes a buffer
    again while a view into it is alive. A batch must fill at least half of that mapping,
    so a small one does not keep a large mapping alive. Every other batch is copied once
    (``with_base_offset``).
    """
    memory = view.obj
    if type(memory) is FrameMemory and (end - start) * 2 >= len(memory):
        batch = view[start:end]
        _I64.pack_into(batch, 0, base_offset)
        _I32.pack_into(batch, 12, epoch)
        return batch.toreadonly()
    return with_base_offset(view, start, end, base_offset, epoch)


def set_partition_leader_epoch(batch: bytearray, epoch: int) -> None:
    _I32.pack_into(batch, 12, epoch)


def write_crc(batch: bytearray) -> None:
    _U32.pack_into(batch, CRC_OFFSET, _crc32c.crc32c(memoryview(batch)[CRC_START:]))


def with_crc(header: bytes, records) -> bytes:
    """``header`` (61 bytes, CRC 0) with the CRC of a batch made of it and
    ``records``, computed without joining them."""
    out = bytearray(header)
    _U32.pack_into(out, CRC_OFFSET, _crc32c.crc32c(records, _crc32c.crc32c(memoryview(out)[CRC_START:])))
    return bytes(out)


def pack_header(**fields) -> bytes:
    """Build a header (CRC left for ``write_crc``); missing fields default to 0."""
    return _FMT.pack(*(fields.get(name, 0) for name in BatchHeader._fields))
