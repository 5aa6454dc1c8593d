"""The topic configs Produce applies before an append (Kafka's LogValidator).

With a topic's defaults this is header-only: the batch size limit
(max.message.bytes, checked in validate.py) and the one-hour future limit on
CreateTime timestamps (message.timestamp.after.max.ms, Kafka 4), both from
the 61-byte header. Records are read only when message.timestamp.before.max.ms
is set: it checks every record's timestamp (a compacted topic's keyless records
are refused in the Produce handler, with Kafka's record errors). A batch is
rewritten only when a config asks for it: LogAppendTime stamps the header and
recomputes the CRC; a topic
compression.type other than producer recompresses the records section.
"""

from __future__ import annotations

from dataclasses import dataclass

from kipper.broker.log.topic_configs import LONG_MAX
from kipper.broker.log.validate import Rejected
from kipper.protocol import batch as b
from kipper.protocol import compression
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode

NO_TIMESTAMP = -1


@dataclass(frozen=True)
class AppendPolicy:
    max_message_bytes: int = 1048588
    log_append_time: bool = False
    before_max_ms: int = LONG_MAX
    after_max_ms: int = 3_600_000
    compact: bool = False
    delete: bool = True
    codec: int | None = None  # None: keep the producer's
    level: int | None = None

    @property
    def reads_records(self) -> bool:
        return self.before_max_ms < LONG_MAX and not self.log_append_time

    @property
    def rewrites(self) -> bool:
        return self.log_append_time or self.codec is not None


def _out_of_range(timestamp: int, offset: int, now: int, policy: AppendPolicy) -> Rejected:
    low = now - policy.before_max_ms if policy.before_max_ms < LONG_MAX else "-inf"
    high = now + policy.after_max_ms
    return Rejected(ErrorCode.INVALID_TIMESTAMP,
                    f"Timestamp {timestamp} of message with offset {offset} is out of range. "
                    f"The timestamp should be within [{low}, {high}]")


def check(policy: AppendPolicy, buf, spans, now: int) -> None:
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
