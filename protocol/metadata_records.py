"""KRaft's metadata records: what the `__cluster_metadata` log holds, in Kafka's formats.

Each record type is declared once, the way the API messages are (upstream's
metadata/src/main/resources/common/metadata JSON, Kafka 4.4). A record's value in the log is
Kafka's frame (MetadataRecordSerde): unsigned varints for the frame version (1), the record
type and the record version, then the record itself (every record type is flexible: compact
strings and tagged fields). Keys are null. The controller writes them (broker/cluster/) and
brokers read them back with Fetch, as KRaft brokers do; Kafka's own tools
(kafka-dump-log --cluster-metadata-decoder) read the same bytes.
"""

from __future__ import annotations

import uuid
from typing import NamedTuple

from kipper.protocol import batch, records
from kipper.protocol.primitives import decode_uvarint, encode_uvarint
from kipper.protocol.schema import F, Schema, build_struct

FRAME_VERSION = 1  # Kafka's AbstractApiMessageSerde.DEFAULT_FRAME_VERSION
# Kafka's Topic.CLUSTER_METADATA_TOPIC_NAME and its fixed id (Uuid.METADATA_TOPIC_ID: 0, 1)
METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID_BYTES = (1).to_bytes(16, "big")
METADATA_TOPIC_ID = uuid.UUID(bytes=METADATA_TOPIC_ID_BYTES)

# ConfigRecord's resource types (ConfigResource.Type)
TOPIC_RESOURCE, BROKER_RESOURCE, GROUP_RESOURCE = 2, 4, 32

NO_LEADER, NO_LEADER_CHANGE = -1, -2
# the metadata.version kipper writes: 3.6-IV2 (level 14), whose record versions are the ones
# below (no JBOD directories, no eligible leader replicas) and which does not bump the leader
# epoch when the controller shrinks an ISR (KAFKA-15021)
METADATA_VERSION_LEVEL = 14  # PartitionChangeRecord's Leader: -2 leaves it as it is

_ENDPOINT = (F("name", "string"), F("host", "string"), F("port", "uint16"),
             F("security_protocol", "int16"))
_FEATURE = (F("name", "string"), F("min_supported_version", "int16"), F("max_supported_version", "int16"))


class RecordType(NamedTuple):
    key: int  # the record type written in the frame (the JSON's apiKey)
    name: str
    version: int  # the version kipper writes
    fields: tuple


TYPES: dict[int, RecordType] = {t.key: t for t in (
    RecordType(0, "RegisterBrokerRecord", 2, (
        F("broker_id", "int32"),
        F("is_migrating_zk_broker", "bool", "2+", default=False),
        F("incarnation_id", "uuid"),
        F("broker_epoch", "int64"),
        F("end_points", "[]", fields=_ENDPOINT),
        F("features", "[]", fields=_FEATURE),
        F("rack", "string", nullable="0+", default=None),
        F("fenced", "bool", default=True),
        F("in_controlled_shutdown", "bool", "1+", default=False),
        F("log_dirs", "[]uuid", "3+", tag=0, tagged="3+"),
        F("cordoned_log_dirs", "[]uuid", "4+", nullable="4+", tag=1, tagged="4+", default=None),
    )),
    RecordType(1, "UnregisterBrokerRecord", 0, (F("broker_id", "int32"), F("broker_epoch", "int64"))),
    RecordType(2, "TopicRecord", 0, (F("name", "string"), F("topic_id", "uuid"))),
    RecordType(3, "PartitionRecord", 0, (
        F("partition_id", "int32", default=-1),
        F("topic_id", "uuid"),
        F("replicas", "[]int32"),
        F("isr", "[]int32"),
        F("removing_replicas", "[]int32"),
        F("adding_replicas", "[]int32"),
        F("leader", "int32", default=-1),
        F("leader_recovery_state", "int8", tag=0, tagged="0+", default=0),
        F("leader_epoch", "int32", default=-1),
        F("partition_epoch", "int32", default=-1),
        F("directories", "[]uuid", "1+"),
        F("eligible_leader_replicas", "[]int32", "2+", nullable="2+", tag=1, tagged="2+", default=None),
        F("last_known_elr", "[]int32", "2+", nullable="2+", tag=2, tagged="2+", default=None),
    )),
    RecordType(4, "ConfigRecord", 0, (
        F("resource_type", "int8"), F("resource_name", "string"), F("name", "string"),
        F("value", "string", nullable="0+"),
    )),
    RecordType(5, "PartitionChangeRecord", 0, (
        F("partition_id", "int32", default=-1),
        F("topic_id", "uuid"),
        F("isr", "[]int32", nullable="0+", tag=0, tagged="0+", default=None),
        F("leader", "int32", tag=1, tagged="0+", default=NO_LEADER_CHANGE),
        F("replicas", "[]int32", nullable="0+", tag=2, tagged="0+", default=None),
        F("removing_replicas", "[]int32", nullable="0+", tag=3, tagged="0+", default=None),
        F("adding_replicas", "[]int32", nullable="0+", tag=4, tagged="0+", default=None),
        F("leader_recovery_state", "int8", tag=5, tagged="0+", default=-1),
        F("directories", "[]uuid", "1+", nullable="1+", tag=8, tagged="1+", default=None),
        F("eligible_leader_replicas", "[]int32", "2+", nullable="2+", tag=6, tagged="2+", default=None),
        F("last_known_elr", "[]int32", "2+", nullable="2+", tag=7, tagged="2+", default=None),
    )),
    RecordType(7, "FenceBrokerRecord", 0, (F("id", "int32"), F("epoch", "int64"))),
    RecordType(8, "UnfenceBrokerRecord", 0, (F("id", "int32"), F("epoch", "int64"))),
    RecordType(9, "RemoveTopicRecord", 0, (F("topic_id", "uuid"),)),
    RecordType(11, "UserScramCredentialRecord", 0, (
        F("name", "string"), F("mechanism", "int8"), F("salt", "bytes"), F("stored_key", "bytes"),
        F("server_key", "bytes"), F("iterations", "int32"),
    )),
    RecordType(12, "FeatureLevelRecord", 0, (F("name", "string"), F("feature_level", "int16"))),
    RecordType(14, "ClientQuotaRecord", 0, (
        F("entity", "[]", fields=(F("entity_type", "string"), F("entity_name", "string", nullable="0+"))),
        F("key", "string"), F("value", "float64"), F("remove", "bool"),
    )),
    RecordType(15, "ProducerIdsRecord", 0, (
        F("broker_id", "int32"), F("broker_epoch", "int64", default=-1), F("next_producer_id", "int64"),
    )),
    RecordType(17, "BrokerRegistrationChangeRecord", 1, (
        F("broker_id", "int32"),
        F("broker_epoch", "int64"),
        F("fenced", "int8", tag=0, tagged="0+", default=0),
        F("in_controlled_shutdown", "int8", "1+", tag=1, tagged="1+", default=0),
        F("log_dirs", "[]uuid", "2+", tag=2, tagged="2+"),
        F("cordoned_log_dirs", "[]uuid", "3+", nullable="3+", tag=3, tagged="3+", default=None),
    )),
    RecordType(18, "AccessControlEntryRecord", 0, (
        F("id", "uuid"), F("resource_type", "int8"), F("resource_name", "string"), F("pattern_type", "int8"),
        F("principal", "string"), F("host", "string"), F("operation", "int8"), F("permission_type", "int8"),
    )),
    RecordType(19, "RemoveAccessControlEntryRecord", 0, (F("id", "uuid"),)),
    RecordType(20, "NoOpRecord", 0, ()),
    RecordType(22, "RemoveUserScramCredentialRecord", 0, (F("name", "string"), F("mechanism", "int8"))),
)}
BY_NAME = {t.name: t for t in TYPES.values()}

# BrokerRegistrationChangeRecord's Fenced and InControlledShutdown (BrokerRegistrationFencingChange...)
CHANGE_NONE, CHANGE_FENCE, CHANGE_UNFENCE = 0, 1, -1

_SCHEMAS: dict[tuple[int, int], Schema] = {}


class UnknownRecordType(ValueError):
    """A record type or version this node does not read."""


def _schema(key: int, version: int) -> Schema:
    schema = _SCHEMAS.get((key, version))
    if schema is None:
        rtype = TYPES.get(key)
        if rtype is None:
            raise UnknownRecordType(f"metadata record type {key} is not known")
        schema = _SCHEMAS[(key, version)] = Schema(build_struct(rtype.fields, version, True))
    return schema


class MetadataRecord(NamedTuple):
    """One decoded record: its type's name, the version it was written in, its fields."""

    name: str
    version: int
    data: object  # a construct Container (attribute and item access)


def encode(name: str, data: dict, version: int | None = None) -> bytes:
    """A record's value: the frame, then the record."""
    rtype = BY_NAME[name]
    version = rtype.version if version is None else version
    return (encode_uvarint(FRAME_VERSION) + encode_uvarint(rtype.key) + encode_uvarint(version)
            + _schema(rtype.key, version).build(data))


def decode(value) -> MetadataRecord:
    frame, pos = decode_uvarint(value, 0)
    if frame != FRAME_VERSION:
        raise UnknownRecordType(f"metadata record frame version {frame} is not known")
    key, pos = decode_uvarint(value, pos)
    version, pos = decode_uvarint(value, pos)
    rtype = TYPES.get(key)
    if rtype is None:
        raise UnknownRecordType(f"metadata record type {key} is not known")
    return MetadataRecord(rtype.name, version, _schema(key, version).parse(bytes(value), pos))


def build_batch(values: list[bytes], *, base_offset: int, epoch: int, timestamp: int) -> bytes:
    """Record values as one batch of the metadata log (keys null, the quorum's epoch as the
    partition leader epoch, as KRaft writes them)."""
    return records.build_batch([(None, v, timestamp) for v in values], base_offset=base_offset,
                               partition_leader_epoch=epoch)


def last_batch_epoch(buf) -> int:
    """The partition leader epoch of the last batch in ``buf`` (KRaft's last fetched epoch)."""
    spans = batch.split_batches(buf)
    return spans[-1][2].partition_leader_epoch if spans else -1


def decode_batches(buf) -> list[tuple[int, int, MetadataRecord]]:
    """(offset, batch epoch, record) of every record in ``buf``'s batches; control batches
    (KRaft's LeaderChangeMessage, snapshot headers) are skipped."""
    out = []
    for batch in records.decode_all(buf, verify_crc=False):
        if batch.header.is_control:
            continue
        epoch = batch.header.partition_leader_epoch
        for rec in batch.records:
            out.append((rec.offset, epoch, decode(rec.value)))
    return out
