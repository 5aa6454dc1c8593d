"""The records of streams groups (KIP-1071) in ``__consumer_offsets``, in Kafka's formats.

As for every record of that topic, a key is an int16 version that names the record
type followed by its struct, and a value is an int16 version and its struct; a null
value is a tombstone. The types are Kafka 4.4's (group-coordinator's
StreamsGroup*Key/Value schemas): 17 group metadata (epochs), 19 member metadata,
20 target-assignment metadata, 21 a member's target assignment, 22 a member's current
assignment, 23 the topology. All values are version 0 and flexible; keys are not.
"""

from __future__ import annotations

import struct

from kipper.protocol.schema import F, Schema, build_struct

_VERSION = struct.Struct(">h")

METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT, TOPOLOGY = 17, 19, 20, 21, 22, 23
TYPES = (METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT, TOPOLOGY)

_GROUP_KEY = (F("group_id", "string"),)
_MEMBER_KEY = (F("group_id", "string"), F("member_id", "string"))
_KV = (F("key", "string"), F("value", "string"))
_TASK_IDS = (F("subtopology_id", "string"), F("partitions", "[]int32"))
_TASK_IDS_WITH_EPOCHS = (*_TASK_IDS, F("assignment_epochs", "[]int32", nullable="0+", tag=0, tagged="0+",
                                      default=None))
_TOPIC_INFO = (F("name", "string"), F("partitions", "int32"), F("replication_factor", "int16"),
               F("topic_configs", "[]", fields=_KV))

_VALUES = {
    METADATA: (
        F("epoch", "int32"),
        F("metadata_hash", "int64"),
        F("validated_topology_epoch", "int32", tag=0, tagged="0+", default=-1),
        F("last_assignment_configs", "[]", nullable="0+", tag=1, tagged="0+", default=None, fields=_KV),
        F("stored_description_topology_epoch", "int32", tag=2, tagged="0+", default=-1),
        F("failed_description_topology_epoch", "int32", tag=3, tagged="0+", default=-1),
    ),
    MEMBER_METADATA: (
        F("instance_id", "string", nullable="0+"),
        F("rack_id", "string", nullable="0+"),
        F("client_id", "string"),
        F("client_host", "string"),
        F("rebalance_timeout_ms", "int32", default=-1),
        F("topology_epoch", "int32"),
        F("process_id", "string"),
        F("user_endpoint", "{}", nullable="0+", default=None, fields=(F("host", "string"), F("port", "uint16"))),
        F("client_tags", "[]", fields=_KV),
    ),
    TARGET_METADATA: (
        F("assignment_epoch", "int32"),
        F("assignment_timestamp", "int64", tag=0, tagged="0+", default=0),
    ),
    TARGET_MEMBER: (
        F("active_tasks", "[]", fields=_TASK_IDS),
        F("standby_tasks", "[]", fields=_TASK_IDS),
        F("warmup_tasks", "[]", fields=_TASK_IDS),
    ),
    CURRENT_ASSIGNMENT: (
        F("member_epoch", "int32"),
        F("previous_member_epoch", "int32"),
        F("state", "int8"),
        F("active_tasks", "[]", fields=_TASK_IDS_WITH_EPOCHS),
        F("standby_tasks", "[]", fields=_TASK_IDS_WITH_EPOCHS),
        F("warmup_tasks", "[]", fields=_TASK_IDS_WITH_EPOCHS),
        F("active_tasks_pending_revocation", "[]", fields=_TASK_IDS_WITH_EPOCHS),
        F("standby_tasks_pending_revocation", "[]", fields=_TASK_IDS_WITH_EPOCHS),
        F("warmup_tasks_pending_revocation", "[]", fields=_TASK_IDS_WITH_EPOCHS),
    ),
    TOPOLOGY: (
        F("epoch", "int32"),
        F("subtopologies", "[]", fields=(
            F("subtopology_id", "string"),
            F("source_topics", "[]string"),
            F("source_topic_regex", "[]string"),
            F("state_changelog_topics", "[]", fields=_TOPIC_INFO),
            F("repartition_sink_topics", "[]string"),
            F("repartition_source_topics", "[]", fields=_TOPIC_INFO),
            F("copartition_groups", "[]", fields=(
                F("source_topics", "[]int16"),
                F("source_topic_regex", "[]int16"),
                F("repartition_source_topics", "[]int16"),
            )),
        )),
    ),
}
_KEYS = {t: (_GROUP_KEY if t in (METADATA, TARGET_METADATA, TOPOLOGY) else _MEMBER_KEY) for t in TYPES}
_KEY_SCHEMAS = {t: Schema(build_struct(fields, 0, False)) for t, fields in _KEYS.items()}
_VALUE_SCHEMAS = {t: Schema(build_struct(fields, 0, True)) for t, fields in _VALUES.items()}


def key(record_type: int, group_id: str, member_id: str | None = None) -> bytes:
    fields = {"group_id": group_id} if member_id is None else {"group_id": group_id, "member_id": member_id}
    return _VERSION.pack(record_type) + _KEY_SCHEMAS[record_type].build(fields)


def value(record_type: int, fields: dict) -> bytes:
    return _VERSION.pack(0) + _VALUE_SCHEMAS[record_type].build(fields)


def is_streams_key(data: bytes) -> bool:
    return len(data) >= 2 and _VERSION.unpack_from(data, 0)[0] in _KEY_SCHEMAS


def decode_key(data: bytes):
    """(record type, key struct)."""
    record_type = _VERSION.unpack_from(data, 0)[0]
    return record_type, _KEY_SCHEMAS[record_type].parse(data, 2)


def decode_value(record_type: int, data: bytes):
    version = _VERSION.unpack_from(data, 0)[0]
    if version != 0:
        raise ValueError(f"streams group record type {record_type} value version {version} is not known")
    return _VALUE_SCHEMAS[record_type].parse(data, 2)
