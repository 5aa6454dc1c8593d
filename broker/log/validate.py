"""Checks a Produce ``records`` field before anything is appended.

Batch framing, magic, CRC-32C and size are checked from the 61-byte headers;
no record is decoded. Returns the batch spans or a Kafka error code with a
message for the partition response. The one exception is a compacted topic,
which refuses records without a key (``keyless_records``): only there are
records read on the append path.
"""

from __future__ import annotations

from crc32c import crc32c as _crc32c

from kipper.protocol import batch as b
from kipper.protocol import compression
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode


class Rejected(Exception):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def validate_records(buf, max_batch_bytes: int) -> list[tuple[int, int, b.BatchHeader]]:
    if not buf:
        raise Rejected(ErrorCode.INVALID_RECORD, "produce request carries no records")
    try:
        spans = b.split_batches(buf)
    except b.InvalidBatch as exc:
        raise Rejected(ErrorCode(exc.code), str(exc)) from None
    if len(spans) > 1:  # Kafka's rule for magic v2: a producer sends one batch per partition
        raise Rejected(ErrorCode.INVALID_RECORD,
                       f"a partition's records hold {len(spans)} record batches; a produce request carries one")
    view = buf if type(buf) is memoryview else memoryview(buf)
    for start, end, header in spans:  # the header's fields directly: this runs for every batch
        if end - start > max_batch_bytes:
            raise Rejected(ErrorCode.MESSAGE_TOO_LARGE,
                           f"record batch of {end - start} bytes exceeds the limit of {max_batch_bytes}")
        if _crc32c(view[start + b.CRC_START:end]) != header.crc:
            raise Rejected(ErrorCode.CORRUPT_MESSAGE, "record batch CRC-32C mismatch")
        attributes = header.attributes
        if attributes & b.COMPRESSION_MASK not in compression.NAMES:
            raise Rejected(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                           f"unknown compression codec {attributes & b.COMPRESSION_MASK}")
        if header.records_count != header.last_offset_delta + 1:
            raise Rejected(ErrorCode.INVALID_RECORD,
                           "record count does not match the last offset delta")
        if attributes & b.CONTROL:
            raise Rejected(ErrorCode.INVALID_RECORD, "clients may not produce control batches")
    return spans


def keyless_records(buf, spans) -> list[int]:
    """Indexes (within the partition's records) of the records without a key."""
    out = []
    index = 0
    for start, end, _ in spans:
        for rec in records.decode_batch(buf, start, end, verify_crc=False).records:
            if rec.key is None:
                out.append(index)
            index += 1
    return out
