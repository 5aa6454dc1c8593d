"""Parsed messages as plain data (dicts, lists, ints, strings) that can be normalised,
compared and written to JSON. Record sets become a list of decoded batches, so two brokers
that store the same batches compare equal however they lay out the bytes."""

from __future__ import annotations

import uuid
from typing import Any

from kipper.protocol import batch as b
from kipper.protocol import records

RECORD_FIELDS = ("records",)


def plain(obj: Any, key: str = "") -> Any:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, uuid.UUID):
        return str(obj)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        data = bytes(obj)
        if key in RECORD_FIELDS:
            return decode_records(data)
        try:
            text = data.decode("utf-8")
            return {"<bytes>": text} if text.isprintable() else {"<hex>": data.hex()}
        except UnicodeDecodeError:
            return {"<hex>": data.hex()}
    if isinstance(obj, list) and obj and isinstance(obj[0], (bytes, memoryview)) and key in RECORD_FIELDS:
        return decode_records(b"".join(bytes(c) for c in obj))
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k.startswith("_") and k != "_unknown_tags":
                continue
            out[str(k)] = plain(v, str(k))
        return out
    if isinstance(obj, (list, tuple)):
        return [plain(v, key) for v in obj]
    return repr(obj)


def decode_records(data: bytes) -> Any:
    if not data:
        return []
    try:
        batches = records.decode_all(data, verify_crc=True)
    except b.InvalidBatch as exc:
        return {"<invalid records>": str(exc), "<bytes>": len(data)}
    out = []
    whole = 0
    for batch in batches:
        whole += batch.header.batch_length + b.LOG_OVERHEAD
        h = batch.header
        control = bool(h.attributes & 0x20)
        out.append({
            "base_offset": h.base_offset,
            "partition_leader_epoch": h.partition_leader_epoch,
            "compression": h.attributes & 0x07,
            "timestamp_type": (h.attributes >> 3) & 1,
            "transactional": bool(h.attributes & 0x10),
            "control": control,
            "last_offset_delta": h.last_offset_delta,
            "base_timestamp": h.base_timestamp,
            "max_timestamp": h.max_timestamp,
            "producer_id": h.producer_id,
            "producer_epoch": h.producer_epoch,
            "base_sequence": h.base_sequence,
            "records": [{"offset": r.offset, "timestamp": r.timestamp,
                         "key": _text(r.key), "value": _text(r.value),
                         "headers": [[_text(k), _text(v)] for k, v in r.headers]}
                        for r in batch.records],
        })
    if whole < len(data):  # a batch cut at max_bytes (Kafka sends its first bytes): compared byte for byte
        out.append({"<partial batch>": data[whole:].hex()})
    return out


def _text(v):
    if v is None:
        return None
    data = bytes(v) if not isinstance(v, str) else v.encode()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"<hex>": data.hex()}
