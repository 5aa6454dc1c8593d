"""What a Produce's records are checked against, and rewritten to, before the append
(Kafka's LogValidator): the one place a partition's batch is looked at before
``Partition.append``.

``checked_batch(records, policy, now)`` runs the checks in this order and raises
``Rejected`` (the Kafka error code and message of the partition's answer) at the
first that fails:

1. the batch, from its 61-byte header: framing, one batch per partition (Kafka's rule
   for magic v2), size (max.message.bytes), CRC-32C, codec, record count, no control
   batch from a client;
2. the timestamps the topic's configs refuse: message.timestamp.after.max.ms from the
   header; message.timestamp.before.max.ms record by record, only when it is set;
3. record-level checks: none yet. A per-record validator goes here, in ``checked_batch``
   between the timestamps and the rewrite: it sees every batch that is about to be
   stored, before anything changes, and refuses it with INVALID_RECORD and the record
   errors of Kafka's answer;
4. the rewrite a topic config asks for: LogAppendTime stamps the header and recomputes
   the CRC; a compression.type other than producer recompresses the records section.

With a topic's defaults only the header is read: records are decoded only when a
config asks for it. A compacted topic's refusal of keyless records (``keyless_records``)
reads them too; the Produce handler asks it after the producer-id quota, which comes
first in Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crc32c import crc32c as _crc32c

from kipper.broker.log.topic_configs import LONG_MAX
from kipper.protocol import batch as b
from kipper.protocol import compression
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode

NO_TIMESTAMP = -1


class Rejected(Exception):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class AppendPolicy:
    """The topic configs a Produce applies, in effect for one topic (broker/log/effective.py)."""

    max_message_bytes: int = 1048588
    log_append_time: bool = False
    before_max_ms: int = LONG_MAX
    after_max_ms: int = 3_600_000
    compact: bool = False
    delete: bool = True
    codec: int | None = None  # None: keep the producer's
    level: int | None = None
    # derived once, read on every Produce
    reads_records: bool = field(init=False)
    rewrites: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "reads_records", self.before_max_ms < LONG_MAX and not self.log_append_time)
        object.__setattr__(self, "rewrites", self.log_append_time or self.codec is not None)


def checked_batch(buf, policy: AppendPolicy, now: int):
    """``buf`` (a partition's records in a Produce) checked in the order above: the bytes
    to store (rewritten when a config asks) and the one batch's span in them
    (``[(start, end, header)]``, as ``Partition.append`` takes it); or Rejected."""
    spans = _batch_spans(buf, policy.max_message_bytes)
    check_timestamps(policy, buf, spans, now)
    # 3. record-level checks go here (see above); nothing is decoded for them yet
    if policy.rewrites:
        buf, spans = rewrite(policy, buf, spans, now)
    return buf, spans


# --- 1. the batch, from its header ---------------------------------------------------------------

def _batch_spans(buf, max_batch_bytes: int) -> list[tuple[int, int, b.BatchHeader]]:
    if not buf:
        raise Rejected(ErrorCode.INVALID_RECORD, "produce request carries no records")
    try:
        spans = b.split_batches(buf)
    except b.InvalidBatch as exc:
        raise Rejected(ErrorCode(exc.code), str(exc)) from None
    if len(spans) > 1:  # Kafka's rule for magic v2: a producer sends one batch per partition
        raise Rejected(ErrorCode.INVALID_RECORD,
                       f"a partition's records hold {len(spans)} record batches; a produce request carries one")
    start, end, header = spans[0]
    if end - start > max_batch_bytes:
        raise Rejected(ErrorCode.MESSAGE_TOO_LARGE,
                       f"record batch of {end - start} bytes exceeds the limit of {max_batch_bytes}")
    view = buf if type(buf) is memoryview else memoryview(buf)
    if _crc32c(view[start + b.CRC_START:end]) != header.crc:
        raise Rejected(ErrorCode.CORRUPT_MESSAGE, "record batch CRC-32C mismatch")
    attributes = header.attributes
    if attributes & b.COMPRESSION_MASK not in compression.NAMES:
        raise Rejected(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                       f"unknown compression codec {attributes & b.COMPRESSION_MASK}")
    if header.records_count != header.last_offset_delta + 1:
        raise Rejected(ErrorCode.INVALID_RECORD, "record count does not match the last offset delta")
    if attributes & b.CONTROL:
        raise Rejected(ErrorCode.INVALID_RECORD, "clients may not produce control batches")
    return spans


# --- 2. timestamps ---------------------------------------------------------------------------------

def _out_of_range(timestamp: int, offset: int, now: int, policy: AppendPolicy) -> Rejected:
    low = now - policy.before_max_ms if policy.before_max_ms < LONG_MAX else "-inf"
    high = now + policy.after_max_ms
    return Rejected(ErrorCode.INVALID_TIMESTAMP,
                    f"Timestamp {timestamp} of message with offset {offset} is out of range. "
                    f"The timestamp should be within [{low}, {high}]")


def check_timestamps(policy: AppendPolicy, buf, spans, now: int) -> None:
    """Raise Rejected for the timestamps the topic's configs refuse."""
    if not policy.log_append_time:
        limit = now + policy.after_max_ms
        for _, _, h in spans:
            if h.max_timestamp != NO_TIMESTAMP and h.max_timestamp > limit:
                raise _out_of_range(h.max_timestamp, h.base_offset, now, policy)
    if not policy.reads_records:
        return
    floor = now - policy.before_max_ms
    for start, end, _ in spans:
        batch = _decoded(lambda: records.decode_batch(buf, start, end, verify_crc=False))
        for rec in batch.records:
            if rec.timestamp != NO_TIMESTAMP and rec.timestamp < floor:
                raise _out_of_range(rec.timestamp, rec.offset, now, policy)


# --- 3. record by record -------------------------------------------------------------------------

def keyless_records(buf, spans) -> list[int]:
    """Indexes (within the partition's records) of the records without a key (a compacted
    topic refuses them)."""
    out = []
    index = 0
    for start, end, _ in spans:
        for rec in records.decode_batch(buf, start, end, verify_crc=False).records:
            if rec.key is None:
                out.append(index)
            index += 1
    return out


# --- 4. the rewrite --------------------------------------------------------------------------------

def rewrite(policy: AppendPolicy, buf, spans, now: int):
    """(buf, spans) after LogAppendTime and recompression; the input when neither applies."""
    if not policy.rewrites:
        return buf, spans
    out = b"".join(_decoded(lambda: _rewrite_batch(policy, bytes(buf[start:end]), h, now))
                   for start, end, h in spans)
    return out, b.split_batches(out)


def _decoded(work):
    """Records that cannot be read (a bad compressed payload) are CORRUPT_MESSAGE."""
    try:
        return work()
    except (ValueError, IndexError, compression.DecompressionError, compression.UnsupportedCodec) as exc:
        raise Rejected(ErrorCode.CORRUPT_MESSAGE, f"record batch cannot be decoded: {exc}") from None


def _rewrite_batch(policy: AppendPolicy, data: bytes, h: b.BatchHeader, now: int) -> bytes:
    attributes = h.attributes
    payload = data[b.HEADER_SIZE:]
    if policy.codec is not None and policy.codec != h.compression:
        raw = compression.decompress(h.compression, payload)
        payload = compression.compress(policy.codec, raw, policy.level)
        attributes = (attributes & ~b.COMPRESSION_MASK) | policy.codec
    max_timestamp = h.max_timestamp
    if policy.log_append_time:
        attributes |= b.TIMESTAMP_TYPE
        max_timestamp = now
    fields = h._asdict()
    fields.update(attributes=attributes, max_timestamp=max_timestamp, crc=0,
                  batch_length=b.HEADER_SIZE - b.LOG_OVERHEAD + len(payload))
    out = bytearray(b.pack_header(**fields))
    out += payload
    b.write_crc(out)
    return bytes(out)
