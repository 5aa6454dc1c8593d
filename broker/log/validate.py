"""What a Produce's records are checked against, and rewritten to, before the append
(Kafka's LogValidator): the one place a partition's batch is looked at before
``Partition.append``.

``checked_batch(records, policy, now)`` runs the checks in this order and raises
``Rejected`` (the Kafka error code and message of the partition's answer) at the
first that fails:

1. the batch, from its 61-byte header: framing as Kafka's ProduceRequest reads it (exactly
   one batch, of magic v2, else INVALID_RECORD; bytes too few to be a second batch are
   dropped), base offset 0 (Kafka's UnifiedLog refuses any other with INVALID_RECORD),
   size (max.message.bytes), CRC-32C, codec, record count, no control batch from a client;
2. every record, with the record parser (protocol/record_check.py, compiled), as
   Kafka's LogValidator iterates every record of every batch (decompressing a
   compressed one): each record's fields within its length, the records filling the
   batch exactly and numbering its record count. A record that does not parse is
   INVALID_RECORD with its index in the record errors; a payload that does not
   decompress is CORRUPT_MESSAGE. It comes before anything decodes records, so that
   nothing after it meets a malformed one. The walk also takes the records' max timestamp,
   which Kafka keeps in place of the header's (a LogAppendTime flag a client set makes
   every record read as the header's max timestamp, in Kafka's iterator as here);
3. the timestamps the topic's configs refuse: message.timestamp.after.max.ms from that
   max timestamp; message.timestamp.before.max.ms record by record, only when it is set. A
   refused batch is INVALID_TIMESTAMP with a record error for each record out of range (the
   records are read then, as Kafka lists them);
4. the rewrite: LogAppendTime stamps the header and recomputes the CRC; on a CreateTime
   topic a header that disagrees with the records (its max timestamp, a LogAppendTime flag)
   is written as Kafka's LogValidator writes it (CreateTime, the records' max timestamp); a
   compression.type other than producer recompresses the records section.

Only a refusal of records (timestamps, keyless records on a compacted topic: Kafka's
RecordValidationException) carries its message in the answer, as Kafka's does; every other
refusal answers error_message null, its text going to the log (``Rejected.shown``).

With a topic's defaults the records are walked but not decoded into objects: they
are decoded only when a config asks for it. A compacted topic's refusal of keyless
records (``keyless_records``) reads them too; the Produce handler asks it after the
producer-id quota, which comes first in Kafka.
"""

from __future__ import annotations

import struct
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
    the log (a partition's records that are not exactly one magic-v2 batch). ``shown``:
    whether the answer's error_message carries ``message`` (Kafka's does for a refusal of
    records only); otherwise it goes to the log alone."""

    def __init__(self, code: ErrorCode, message: str, record_errors: tuple = (), *,
                 log_start: bool | None = None, shown: bool = False):
        super().__init__(message)
        self.code = code
        self.message = message
        self.record_errors = record_errors
        self.log_start = code not in _NO_LOG_START if log_start is None else log_start
        self.shown = shown


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
    to store (rewritten when a config asks, or when the header disagrees with the records)
    and the one batch's span in them (``[(start, end, header)]``, as ``Partition.append``
    takes it); or Rejected.

    (Step 1 is written out here rather than called: this runs for every Produce.)"""
    # 1. the batch, from its header
    n = len(buf)
    header = b.read_header(buf, 0) if n >= b.HEADER_SIZE else None
    if header is not None and header.batch_length + b.LOG_OVERHEAD == n and header.magic == 2 \
            and header.records_count >= 0 and header.last_offset_delta >= 0 \
            and header.batch_length >= b.HEADER_SIZE - b.LOG_OVERHEAD:  # one whole batch: nearly always
        start, end = 0, n
    else:
        start, end, header = produced_batch(buf)
    spans = [(start, end, header)]
    if header.base_offset != 0:
        raise Rejected(ErrorCode.INVALID_RECORD, f"the base offset of the record batch is {header.base_offset}, not 0")
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
    max_timestamp = record_check.walk_batch(buf, start, end, header)
    if type(max_timestamp) is not int:  # one batch a partition: its record index is the partition's
        problem = max_timestamp
        raise Rejected(ErrorCode(problem.code), problem.message,
                       ((problem.batch_index, problem.message),) if problem.batch_index >= 0 else ())
    if attributes & b.TIMESTAMP_TYPE:  # every record reads as the header's max timestamp
        max_timestamp = max(header.max_timestamp, NO_TIMESTAMP)
    # 3. timestamps
    check_timestamps(policy, buf, spans, now, max_timestamp)
    # 4. the rewrite
    if policy.rewrites or (not policy.log_append_time and (
            max_timestamp != header.max_timestamp or attributes & b.TIMESTAMP_TYPE)):
        buf, spans = rewrite(policy, buf, spans, now, max_timestamp)
    return buf, spans


def produced_batch(buf, counts: bool = True) -> tuple[int, int, b.BatchHeader]:
    """(start, end, header) of the one batch of a Produce's records for a partition, read
    as Kafka reads them (ProduceRequest.validateRecords over ByteBufferLogInputStream):
    no batch, a first batch of magic 0 or 1, or a second batch is INVALID_RECORD; a size
    below the smallest message, or a magic Kafka does not know, is CORRUPT_MESSAGE; bytes
    after the batch too few to be another are dropped (Kafka trims them). Only the batch
    Kafka would read is looked at further; Rejected for what Kafka refuses here. ``counts``:
    also a negative record count or offset delta (Kafka's LogValidator; its validateRecords,
    which answers before acks are looked at, reads no further than the batch's size)."""
    first = _next_batch(buf, 0)
    if first is None:
        raise Rejected(ErrorCode.INVALID_RECORD, "a produce request carries one record batch per partition, "
                                                 f"and these {len(buf)} bytes hold none", log_start=False)
    end, magic = first
    if magic != 2:
        raise Rejected(ErrorCode.INVALID_RECORD, f"record batch magic {magic} is not supported (only v2)",
                       log_start=False)
    if _next_batch(buf, end) is not None:
        raise Rejected(ErrorCode.INVALID_RECORD, "a partition's records hold more than one record batch; "
                                                 "a produce request carries one", log_start=False)
    if end < b.HEADER_SIZE:  # Kafka reads the batch and finds its CRC wrong
        raise Rejected(ErrorCode.CORRUPT_MESSAGE, f"record batch of {end} bytes is shorter than its header")
    header = b.read_header(buf, 0)
    if counts and (header.records_count < 0 or header.last_offset_delta < 0):
        raise Rejected(ErrorCode.INVALID_RECORD, "negative record count or offset delta")
    return 0, end, header


_SIZE = struct.Struct(">i")
SMALLEST_MESSAGE = 14  # Kafka's LegacyRecord.RECORD_OVERHEAD_V0: no batch is smaller
HEADER_UP_TO_MAGIC = 17


def _next_batch(buf, pos: int) -> tuple[int, int] | None:
    """(end, magic) of the batch at ``pos``, or None when the bytes left are too few to
    hold one (Kafka's ByteBufferLogInputStream.nextBatch)."""
    left = len(buf) - pos
    if left < b.LOG_OVERHEAD:
        return None
    size = _SIZE.unpack_from(buf, pos + 8)[0]
    if size < SMALLEST_MESSAGE:
        raise Rejected(ErrorCode.CORRUPT_MESSAGE, f"record size {size} is less than the minimum record "
                                                  f"overhead ({SMALLEST_MESSAGE})", log_start=False)
    if left < HEADER_UP_TO_MAGIC:
        return None
    magic = struct.unpack_from(">b", buf, pos + b.MAGIC_OFFSET)[0]
    if not 0 <= magic <= 2:
        raise Rejected(ErrorCode.CORRUPT_MESSAGE, f"invalid magic found in record: {magic}", log_start=False)
    if left < size + b.LOG_OVERHEAD:
        return None
    return pos + size + b.LOG_OVERHEAD, magic


# --- 3. timestamps ---------------------------------------------------------------------------------

TIMESTAMPS_REFUSED = "One or more records have been rejected due to invalid timestamp"


def check_timestamps(policy: AppendPolicy, buf, spans, now: int, max_timestamp: int) -> None:
    """Raise Rejected for the timestamps the topic's configs refuse: INVALID_TIMESTAMP with a
    record error for every record out of range, as Kafka's LogValidator answers. The records'
    max timestamp (step 2) tells whether any record is too far ahead, so the records are read
    only when one may be, or when message.timestamp.before.max.ms is set."""
    for start, end, h in spans:
        # a batch the producer marked LogAppendTime: its records read as its max timestamp, and
        # Kafka refuses the mark unless that is a CreateTime topic's timestamp (not -1)
        if h.attributes & b.TIMESTAMP_TYPE and (policy.log_append_time or h.max_timestamp == NO_TIMESTAMP):
            batch = _decoded(lambda: records.decode_batch(buf, start, end, verify_crc=False))
            # a compressed batch kept as it is: Kafka reads its records without keys and values
            partial = h.compression != 0 and policy.codec in (None, h.compression)
            raise Rejected(ErrorCode.INVALID_TIMESTAMP, TIMESTAMPS_REFUSED, tuple(
                (i, f"Invalid timestamp type in message {_record_text(rec, h.max_timestamp, partial)}. "
                    "Producer should not set timestamp type to LogAppendTime.")
                for i, rec in enumerate(batch.records)), shown=True)
    if policy.log_append_time:
        return
    if policy.reads_records or (max_timestamp != NO_TIMESTAMP and max_timestamp > now + policy.after_max_ms):
        for start, end, _ in spans:
            errors = timestamp_errors(policy, buf, start, end, now)
            if errors:
                raise Rejected(ErrorCode.INVALID_TIMESTAMP, TIMESTAMPS_REFUSED, errors, shown=True)


def timestamp_errors(policy: AppendPolicy, buf, start: int, end: int, now: int) -> tuple:
    """(index in the batch, message) of each record of ``buf[start:end]`` whose CreateTime
    timestamp is out of [now - message.timestamp.before.max.ms, now + ...after.max.ms]."""
    before, after = policy.before_max_ms, policy.after_max_ms
    batch = _decoded(lambda: records.decode_batch(buf, start, end, verify_crc=False))
    flagged = batch.header.attributes & b.TIMESTAMP_TYPE  # Kafka reads each record at the header's
    out = []
    for index, rec in enumerate(batch.records):
        ts = batch.header.max_timestamp if flagged else rec.timestamp
        if ts != NO_TIMESTAMP and (now - ts > before or ts - now > after):
            # Kafka's bounds, computed on Java longs (an unset before.max.ms makes the low one
            # hugely negative)
            out.append((index, f"Timestamp {ts} of message with offset {rec.offset} is out of range. "
                               f"The timestamp should be within [{_long(now - before)}, {_long(now + after)}]"))
    return tuple(out)


def _record_text(rec, timestamp: int, partial: bool = False) -> str:
    """A record as Kafka's DefaultRecord.toString prints it (``partial``: PartialDefaultRecord's,
    as LogValidator reads a compressed batch it assigns offsets to in place)."""
    return (f"{'Partial' if partial else ''}DefaultRecord(offset={rec.offset}, timestamp={timestamp}, "
            f"key={len(rec.key or b'')} bytes, value={len(rec.value or b'')} bytes)")


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

def rewrite(policy: AppendPolicy, buf, spans, now: int, max_timestamp: int | None = None):
    """(buf, spans) after LogAppendTime, the header's timestamps made those of the records
    (``max_timestamp``, on a CreateTime topic) and recompression."""
    out = b"".join(_decoded(lambda: _rewrite_batch(policy, bytes(buf[start:end]), h, now, max_timestamp))
                   for start, end, h in spans)
    return out, b.split_batches(out)


def _decoded(work):
    """Records that cannot be read (a bad compressed payload) are CORRUPT_MESSAGE."""
    try:
        return work()
    except (ValueError, IndexError, compression.DecompressionError, compression.UnsupportedCodec) as exc:
        raise Rejected(ErrorCode.CORRUPT_MESSAGE, f"record batch cannot be decoded: {exc}") from None


def _rewrite_batch(policy: AppendPolicy, data: bytes, h: b.BatchHeader, now: int,
                   records_max_timestamp: int | None) -> bytes:
    attributes = h.attributes
    payload = data[b.HEADER_SIZE:]
    if policy.codec is not None and policy.codec != h.compression:
        raw = compression.decompress(h.compression, payload)
        payload = compression.compress(policy.codec, raw, policy.level)
        attributes = (attributes & ~b.COMPRESSION_MASK) | policy.codec
    if policy.log_append_time:
        attributes |= b.TIMESTAMP_TYPE
        max_timestamp = now
    else:  # CreateTime, with the max timestamp Kafka takes from the records
        attributes &= ~b.TIMESTAMP_TYPE
        max_timestamp = h.max_timestamp if records_max_timestamp is None else records_max_timestamp
    fields = h._asdict()
    fields.update(attributes=attributes, max_timestamp=max_timestamp, crc=0,
                  batch_length=b.HEADER_SIZE - b.LOG_OVERHEAD + len(payload))
    out = bytearray(b.pack_header(**fields))
    out += payload
    b.write_crc(out)
    return bytes(out)
