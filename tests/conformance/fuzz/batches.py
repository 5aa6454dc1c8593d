"""Record sets from a batch spec (values.batch_spec), with the producer fields already
resolved on one broker: well-formed batches, and the malformed kinds a client can send
(a base offset other than 0, the LogAppendTime flag, a max timestamp the records disagree
with, a bad CRC, magic 0 and 1 message sets, a control batch, two batches, a record count
the records disagree with, no records)."""

from __future__ import annotations

import struct
import zlib

from kipper.protocol import batch as b
from kipper.protocol import records
from tests.conformance.fuzz.values import TS

LOG_APPEND_TIME = 0x08


def record_tuples(spec: dict) -> list:
    out = []
    for i in range(spec["n"]):
        at = spec["start"] + i
        if spec["timestamps"] == "none":
            ts = -1
        elif spec["timestamps"] == "mixed":
            ts = TS + at if i % 2 == 0 else -1
        else:
            ts = TS + at
        key = f"k{at}".encode() if spec["keys"] else None
        out.append((key, f"v{at}".encode(), ts))
    return out


def build(spec: dict, pid: int, epoch: int, seq: int) -> bytes:
    """The bytes of one record set; ``pid`` -1 is a batch of no producer (epoch and sequence -1)."""
    if pid == -1:
        epoch = seq = -1
    mutation = spec.get("mutation")
    recs = record_tuples(spec)
    if mutation in ("magic0", "magic1"):
        return legacy(recs, 0 if mutation == "magic0" else 1, spec["codec"])
    fields = dict(producer_id=pid, producer_epoch=epoch, base_sequence=seq, transactional=spec["txn"],
                  compression_type=spec["codec"] if spec["codec"] in (0, 1, 2, 3, 4) else 0)
    base_ts, max_ts = recs[0][2], max(ts for _, _, ts in recs)
    payload = b"".join(records.encode_record(i, ts - base_ts, k, val) for i, (k, val, ts) in enumerate(recs))
    if mutation == "no_records":
        return records.assemble(b"", 0, base_ts, max_ts, last_offset_delta=-1, **fields)
    if mutation == "base_offset":
        fields["base_offset"] = 5
    elif mutation == "log_append_time":
        fields["extra_attributes"] = LOG_APPEND_TIME
    elif mutation == "max_timestamp":
        max_ts += 1000
    elif mutation == "control":
        fields["control"] = True
    elif mutation == "count":
        fields["last_offset_delta"] = len(recs)
    data = records.assemble(payload, len(recs), base_ts, max_ts, **fields)
    if mutation == "crc":
        data = data[:b.CRC_START - 4] + bytes(x ^ 0xFF for x in data[b.CRC_START - 4:b.CRC_START]) + data[b.CRC_START:]
    elif mutation == "two_batches":
        again = dict(spec, start=spec["start"] + len(recs), mutation=None)
        data += build(again, pid, epoch, next_sequence(seq, len(recs)) if seq >= 0 else seq)
    return data


def next_sequence(seq: int, n: int) -> int:
    """Sequences wrap past the largest int32 to 0, as Kafka's producers and brokers count."""
    return (seq + n) % (1 << 31)


def legacy(recs, magic: int, codec: int) -> bytes:
    """A magic 0 or 1 message set (the format before record batches), uncompressed."""
    out = b""
    for offset, (key, value, ts) in enumerate(recs):
        body = struct.pack(">bb", magic, 0)
        if magic == 1:
            body += struct.pack(">q", ts)
        body += _bytes(key) + _bytes(value)
        message = struct.pack(">I", zlib.crc32(body)) + body
        out += struct.pack(">qi", offset, len(message)) + message
    return out


def _bytes(data: bytes | None) -> bytes:
    return struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data
