"""Records of the internal topics and the producer snapshot file, in Kafka's formats.

``__consumer_offsets`` holds OffsetCommitKey/Value (committed offsets) and
GroupMetadataKey/Value (classic groups); ``__transaction_state`` holds
TransactionLogKey/Value. A key is an int16 version (which names the record
type) followed by its struct; a value is an int16 version and its struct. A
null value (a tombstone) deletes the key. The schemas are the upstream ones
(apache/kafka 4.4, ../shared/kafka-protocol); ``TransactionLogValue`` v1 also
carries seed 003's last epoch as a kipper tagged field (docs/PROTOCOL_EXTENSIONS.md),
next to upstream's PreviousProducerId, which is seed 003's LastProducerId.

``ProducerSnapshot`` v1 is the body of Kafka's ``<offset>.snapshot`` files:
an int16 version, a CRC-32C of what follows it, and one entry per producer.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import crc32c

from kipper.protocol.schema import F, Schema, build_struct

_VERSION = struct.Struct(">h")

# --- __consumer_offsets ----------------------------------------------------------------------

OFFSET_COMMIT_KEY_VERSION = 1  # the key's version is the record type
GROUP_METADATA_KEY_VERSION = 2

_OFFSET_COMMIT_KEY = (F("group", "string"), F("topic", "string"), F("partition", "int32"))
_GROUP_METADATA_KEY = (F("group", "string"),)
_OFFSET_COMMIT_VALUE = (
    F("offset", "int64"),
    F("leader_epoch", "int32", "3+", default=-1),
    F("metadata", "string"),
    F("commit_timestamp", "int64"),
    F("expire_timestamp", "int64", "1", default=-1),
    F("topic_id", "uuid", "4+", tag=0, tagged="4+"),
)
_MEMBER = (
    F("member_id", "string"),
    F("group_instance_id", "string", "3+", nullable="3+", default=None),
    F("client_id", "string"),
    F("client_host", "string"),
    F("rebalance_timeout", "int32", "1+", default=-1),
    F("session_timeout", "int32"),
    F("subscription", "bytes"),
    F("assignment", "bytes"),
)
_GROUP_METADATA_VALUE = (
    F("protocol_type", "string"),
    F("generation", "int32"),
    F("protocol", "string", nullable="0+"),
    F("leader", "string", nullable="0+"),
    F("current_state_timestamp", "int64", "2+", default=-1),
    F("members", "[]", fields=_MEMBER),
)

# --- __transaction_state ---------------------------------------------------------------------

TRANSACTION_LOG_KEY_VERSION = 0
LAST_PRODUCER_EPOCH_TAG = 10000  # kipper: seed 003's LastEpoch (Kafka readers skip the tag)

_TRANSACTION_LOG_KEY = (F("transactional_id", "string"),)
_TRANSACTION_LOG_VALUE = (
    F("producer_id", "int64"),
    F("previous_producer_id", "int64", tag=0, tagged="1+", default=-1),
    F("next_producer_id", "int64", tag=1, tagged="1+", default=-1),
    F("producer_epoch", "int16"),
    F("next_producer_epoch", "int16", tag=3, tagged="1+", default=-1),
    F("transaction_timeout_ms", "int32"),
    F("transaction_status", "int8"),
    F("transaction_partitions", "[]", nullable="0+", fields=(
        F("topic", "string"), F("partition_ids", "[]int32"))),
    F("transaction_last_update_timestamp_ms", "int64"),
    F("transaction_start_timestamp_ms", "int64"),
    F("client_transaction_version", "int16", tag=2, tagged="1+", default=0),
    F("last_producer_epoch", "int16", tag=LAST_PRODUCER_EPOCH_TAG, tagged="1+", default=-1),
)

# (key version or record name, version) -> fields, flexible versions
_DECLARED = {
    ("offset_commit_key", 1): (_OFFSET_COMMIT_KEY, False),
    ("group_metadata_key", 2): (_GROUP_METADATA_KEY, False),
    ("transaction_log_key", 0): (_TRANSACTION_LOG_KEY, False),
    **{("offset_commit_value", v): (_OFFSET_COMMIT_VALUE, v >= 4) for v in range(5)},
    **{("group_metadata_value", v): (_GROUP_METADATA_VALUE, v >= 4) for v in range(5)},
    **{("transaction_log_value", v): (_TRANSACTION_LOG_VALUE, v >= 1) for v in range(2)},
}
_SCHEMAS: dict[tuple[str, int], Schema] = {}

# the versions kipper writes (readers accept every declared one)
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_TOPIC_ID_VERSION = 4
GROUP_METADATA_VALUE_VERSION = 3
TRANSACTION_LOG_VALUE_VERSION = 1


class UnknownRecord(ValueError):
    """A key or value version this broker does not know."""


def _schema(name: str, version: int) -> Schema:
    schema = _SCHEMAS.get((name, version))
    if schema is None:
        declared = _DECLARED.get((name, version))
        if declared is None:
            raise UnknownRecord(f"{name} version {version} is not known")
        fields, flexible = declared
        schema = _SCHEMAS[(name, version)] = Schema(build_struct(fields, version, flexible))
    return schema


def encode(name: str, version: int, obj: dict) -> bytes:
    return _VERSION.pack(version) + _schema(name, version).build(obj)


def decode(name: str, data: bytes):
    """(version, struct) of a key or value."""
    version = _VERSION.unpack_from(data, 0)[0]
    return version, _schema(name, version).parse(data, 2)


_KEY_NAMES = {OFFSET_COMMIT_KEY_VERSION: "offset_commit_key", 0: "offset_commit_key",
              GROUP_METADATA_KEY_VERSION: "group_metadata_key"}
_VALUE_NAMES = {OFFSET_COMMIT_KEY_VERSION: "offset_commit_value", 0: "offset_commit_value",
                GROUP_METADATA_KEY_VERSION: "group_metadata_value"}


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return encode("offset_commit_key", OFFSET_COMMIT_KEY_VERSION,
                  {"group": group, "topic": topic, "partition": partition})


def offset_commit_value(offset: int, leader_epoch: int, metadata: str | None,
                        commit_timestamp: int, topic_id=None) -> bytes:
    """Version 4 with the topic's id (KIP-848's offsets keep it, as Kafka 4.4 writes them), else 3."""
    value = {"offset": offset, "leader_epoch": leader_epoch, "metadata": metadata or "",
             "commit_timestamp": commit_timestamp}
    if topic_id is None:
        return encode("offset_commit_value", OFFSET_COMMIT_VALUE_VERSION, value)
    return encode("offset_commit_value", OFFSET_COMMIT_VALUE_TOPIC_ID_VERSION, value | {"topic_id": topic_id})


def group_metadata_key(group: str) -> bytes:
    return encode("group_metadata_key", GROUP_METADATA_KEY_VERSION, {"group": group})


def group_metadata_value(obj: dict) -> bytes:
    return encode("group_metadata_value", GROUP_METADATA_VALUE_VERSION, obj)


def decode_group_key(data: bytes):
    """(record type, key struct) of a __consumer_offsets key; the type is the key version."""
    version = _VERSION.unpack_from(data, 0)[0]
    name = _KEY_NAMES.get(version)
    if name is None:
        raise UnknownRecord(f"__consumer_offsets key version {version} is not known")
    # offset commit keys of version 0 and 1 have the same fields
    return version, _schema(name, 1 if name == "offset_commit_key" else version).parse(data, 2)


def decode_group_value(record_type: int, data: bytes):
    name = _VALUE_NAMES.get(record_type)
    if name is None:
        raise UnknownRecord(f"__consumer_offsets record type {record_type} is not known")
    return decode(name, data)[1]


def transaction_log_key(transactional_id: str) -> bytes:
    return encode("transaction_log_key", TRANSACTION_LOG_KEY_VERSION,
                  {"transactional_id": transactional_id})


def transaction_log_value(obj: dict) -> bytes:
    return encode("transaction_log_value", TRANSACTION_LOG_VALUE_VERSION, obj)


# --- producer snapshots ----------------------------------------------------------------------

SNAPSHOT_VERSION = 1
_SNAPSHOT_HEAD = struct.Struct(">hI")  # version, CRC-32C of the entries that follow
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")


class SnapshotEntry(NamedTuple):
    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int  # -1: no open transaction


class CorruptSnapshot(ValueError):
    pass


def encode_snapshot(entries) -> bytes:
    body = bytearray(struct.pack(">i", len(entries)))
    for e in entries:
        body += _SNAPSHOT_ENTRY.pack(*e)
    return _SNAPSHOT_HEAD.pack(SNAPSHOT_VERSION, crc32c.crc32c(bytes(body))) + bytes(body)


def decode_snapshot(data: bytes) -> list[SnapshotEntry]:
    if len(data) < _SNAPSHOT_HEAD.size + 4:
        raise CorruptSnapshot("producer snapshot is truncated")
    version, crc = _SNAPSHOT_HEAD.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshot(f"producer snapshot version {version} is not supported")
    body = data[_SNAPSHOT_HEAD.size:]
    if crc32c.crc32c(body) != crc:
        raise CorruptSnapshot("producer snapshot CRC-32C mismatch")
    count = struct.unpack_from(">i", body, 0)[0]
    if count < 0 or len(body) != 4 + count * _SNAPSHOT_ENTRY.size:
        raise CorruptSnapshot("producer snapshot entry count does not match its size")
    return [SnapshotEntry(*_SNAPSHOT_ENTRY.unpack_from(body, 4 + i * _SNAPSHOT_ENTRY.size))
            for i in range(count)]
