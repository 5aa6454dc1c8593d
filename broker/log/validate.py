"""What a Produce's records are checked against, and rewritten to, before the append
(Kafka's LogValidator): the one place a partition's batch is looked at before
``Partition.append``.

``checked_batch(records, policy, now)`` runs the checks in this order and raises
``Rejected`` (the Kafka error code and message of the partition's answer) at the
first that fails:

1. the batch, from its 61-byte header: framing, one batch per partition (Kafka's rule
   for magic v2), size (max.message.bytes), CRC-32C, codec, record count, no control
   batch from a client;
2. every record, with the record parser (protocol/record_check.py, compiled), as
   Kafka's LogValidator iterates every record of every batch (decompressing a
   compressed one): each record's fields within its length, the records filling the
   batch exactly and numbering its record count. A record that does not parse is
   INVALID_RECORD with its index in the record errors; a payload that does not
   decompress is CORRUPT_MESSAGE. It comes before anything decodes records, so that
   nothing after it meets a malformed one;
3. the timestamps the topic's configs refuse: message.timestamp.after.max.ms from the
   header; message.timestamp.before.max.ms record by record, only when it is set. A refused
   batch is INVALID_TIMESTAMP with a record error for each record out of range (the records
   are read then, as Kafka lists them);
4. the rewrite a topic config asks for: LogAppendTime stamps the header and recomputes
   the CRC; a compression.type other than producer recompresses the records section.

With a topic's defaults the records are walked but not decoded into objects: they
are decoded only when a config asks for it. A compacted topic's refusal of keyless
records (``keyless_records``) reads them too; the Produce handler asks it after the
producer-id quota, which comes first in Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crc32c import crc32c as _crc32c

from kipper.broker.log.topic_configs import LONG_MAX
from kipper.protocol import batch as b
from kipper.protocol import compression, record_check
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode

NO_TIMESTAMP = -1


class Rejected(Exception):
    """``record_errors``: (index of the record in the partition's records, message) for
    Produce v8+'s record_errors; empty when no single record is at fault. ``log_start``:
    whether the answer carries the partition's log start offset, as Kafka's does for a batch
    its log refuses; not for a corrupt or too large batch, nor for what Kafka refuses before
    the log (a partition's records that are not exactly one magic-v2 batch)."""

    def __init__(self, code: ErrorCode, message: str, record_errors: tuple = (), *,
                 log_start: bool | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.record_errors = record_errors
        self.log_start = code not in _NO_LOG_START if log_start is None else log_start


_NO_LOG_START = (ErrorCode.CORRUPT_MESSAGE, ErrorCode.MESSAGE_TOO_LARGE)


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
    min_insync_replicas: int = 1  # acks=all in a cluster: the ISR must be at least this large
    # derived once, read on every Produce
    reads_records: bool = field(init=False)
    rewrites: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "reads_records", self.before_max_ms < LONG_MAX and not self.log_append_time)
        object.__setattr__(self, "rewrites", self.log_append_time or self.codec is not None)


def checked_batch(buf, policy: AppendPolicy, now: int):
    """``buf`` (a partition's records in a Produce) checked in the order above: the bytes
    to store (rewritten when a config asks) and the one batch's span in them
    (``[(start, end, header)]``, as ``Partition.append`` takes it); or Rejected.

    (Step 1 is written out here rather than called: this runs for every Produce.)"""
    # 1. the batch, from its header
    if not buf:
        raise Rejected(ErrorCode.INVALID_RECORD, "produce request carries no records", log_start=False)
    try:
        spans = b.split_batches(buf)
    except b.InvalidBatch as exc:
        raise Rejected(ErrorCode(exc.code), str(exc), log_start=False) from None
    if len(spans) > 1:  # Kafka's rule for magic v2: a producer sends one batch per partition
        raise Rejected(ErrorCode.INVALID_RECORD,
                       f"a partition's records hold {len(spans)} record batches; a produce request carries one", log_start=False)
    start, end, header = spans[0]
    if end - start > policy.max_message_bytes:
        raise Rejected(ErrorCode.MESSAGE_TOO_LARGE,
                       f"record batch of {end - start} bytes exceeds the limit of {policy.max_message_bytes}")
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
    # 2. every record
    problem = record_check.check_batch(buf, start, end, header)
    if problem is not None:  # one batch a partition: its record index is the partition's
        raise Rejected(ErrorCode(problem.code), problem.message,
                       ((problem.batch_index, problem.message),) if problem.batch_index >= 0 else ())
    # 3. timestamps
    check_timestamps(policy, buf, spans, now)
    # 4. the rewrite
    if policy.rewrites:
        buf, spans = rewrite(policy, buf, spans, now)
    return buf, spans


# --- 3. timestamps ---------------------------------------------------------------------------------

TIMESTAMPS_REFUSED = "One or more records have been rejected due to invalid timestamp"


def check_timestamps(policy: AppendPolicy, buf, spans, now: int) -> None:
    """Raise Rejected for the timestamps the topic's configs refuse: INVALID_TIMESTAMP with a
    record error for every record out of range, as Kafka's LogValidator answers. The header's
    max timestamp tells whether any record is too far ahead, so the records are read only
    when one may be, or when message.timestamp.before.max.ms is set."""
    if policy.log_append_time:
        return
    limit = now + policy.after_max_ms
    for start, end, h in spans:
        if policy.reads_records or (h.max_timestamp != NO_TIMESTAMP and h.max_timestamp > limit):
            errors = timestamp_errors(policy, buf, start, end, now)
            if errors:
                raise Rejected(ErrorCode.INVALID_TIMESTAMP, TIMESTAMPS_REFUSED, errors)


def timestamp_errors(policy: AppendPolicy, buf, start: int, end: int, now: int) -> tuple:
    """(index in the batch, message) of each record of ``buf[start:end]`` whose CreateTime
    timestamp is out of [now - message.timestamp.before.max.ms, now + ...after.max.ms]."""
    before, after = policy.before_max_ms, policy.after_max_ms
    batch = _decoded(lambda: records.decode_batch(buf, start, end, verify_crc=False))
    out = []
    for index, rec in enumerate(batch.records):
        ts = rec.timestamp
        if ts != NO_TIMESTAMP and (now - ts > before or ts - now > after):
            # Kafka's bounds, computed on Java longs (an unset before.max.ms makes the low one
            # hugely negative)
            out.append((index, f"Timestamp {ts} of message with offset {rec.offset} is out of range. "
                               f"The timestamp should be within [{_long(now - before)}, {_long(now + after)}]"))
    return tuple(out)


def _long(value: int) -> int:
    """``value`` as a Java long computes it (wrapping past 2^63)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


# --- keyless records (a compacted topic) -----------------------------------------------------------

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
