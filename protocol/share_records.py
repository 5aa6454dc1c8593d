"""SHARE_CHECKPOINT (control type 5) and SHARE_DELTA (control type 6) values, seed 004.

A share-partition's durable state lives in control batches on its own
topic-partition. The record key is the usual control key (version, type); the
value is an int16 version (0) followed by the seed's schema, declared once here
with the same field DSL as the wire messages (non-flexible, version 0).
``to_seed_json`` renders a decoded value with the seed's JSON field names.
"""

from __future__ import annotations

import struct

from kipper.protocol import records
from kipper.protocol.schema import F, Schema, build_struct

VERSION = 0

# Record states as the seed numbers them ("0:Available,2:Acked,4:Archived");
# ACQUIRED (1) is transient and never written.
AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = 0, 1, 2, 4

_STATE_FIELDS = (
    F("base_offset", "int64"),
    F("last_offset", "int64"),
    F("state", "int8"),
    F("delivery_count", "int16"),
)

SHARE_CHECKPOINT_VALUE = Schema(build_struct((
    F("group_id", "string"),
    F("checkpoint_epoch", "uint16"),
    F("start_offset", "int64"),
    F("end_offset", "int64"),
    F("states", "[]", fields=_STATE_FIELDS),
), VERSION, False))

SHARE_DELTA_VALUE = Schema(build_struct((
    F("group_id", "string"),
    F("checkpoint_epoch", "uint16"),
    F("back_offset", "int64"),
    F("states", "[]", fields=_STATE_FIELDS),
), VERSION, False))

_SCHEMAS = {records.SHARE_CHECKPOINT: SHARE_CHECKPOINT_VALUE, records.SHARE_DELTA: SHARE_DELTA_VALUE}
_VERSION = struct.Struct(">h")


class UnknownShareRecord(ValueError):
    pass


def encode_value(record_type: int, value: dict) -> bytes:
    return _VERSION.pack(VERSION) + _SCHEMAS[record_type].build(value)


def decode_value(record_type: int, data: bytes):
    schema = _SCHEMAS.get(record_type)
    if schema is None:
        raise UnknownShareRecord(f"control type {record_type} is not a share record")
    version = _VERSION.unpack_from(data, 0)[0]
    if version != VERSION:
        raise UnknownShareRecord(f"share record version {version} is not supported")
    return schema.parse(data, 2)


def checkpoint_batch(value: dict, *, timestamp: int | None = None) -> bytes:
    """A control batch holding one SHARE_CHECKPOINT record."""
    return records.build_control_batch(records.SHARE_CHECKPOINT,
                                       encode_value(records.SHARE_CHECKPOINT, value),
                                       timestamp=timestamp)


def delta_batch(value: dict, *, timestamp: int | None = None) -> bytes:
    """A control batch holding one SHARE_DELTA record."""
    return records.build_control_batch(records.SHARE_DELTA,
                                       encode_value(records.SHARE_DELTA, value),
                                       timestamp=timestamp)


def decode_batch(data: bytes):
    """(control type, value) of a share control batch, or None for any other batch."""
    batch = records.decode_batch(data, verify_crc=False)
    if not batch.header.is_control or not batch.records:
        return None
    rec = batch.records[0]
    kind = records.control_type(rec.key)
    if kind not in _SCHEMAS:
        return None
    return kind, decode_value(kind, rec.value)


def to_seed_json(record_type: int, value) -> dict:
    """The value with the seed's JSON field names, for tests and tools."""
    out = {"GroupId": value["group_id"], "CheckpointEpoch": value["checkpoint_epoch"]}
    if record_type == records.SHARE_CHECKPOINT:
        out["StartOffset"] = value["start_offset"]
        out["EndOffset"] = value["end_offset"]
    else:
        out["BackOffset"] = value["back_offset"]
    out["States"] = [{"BaseOffset": s["base_offset"], "LastOffset": s["last_offset"],
                      "State": s["state"], "DeliveryCount": s["delivery_count"]}
                     for s in value["states"]]
    return out
