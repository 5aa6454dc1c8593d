"""Typed builders for the admin requests: topics, configs, records, groups,
client quotas and SCRAM credentials, over a BlockingConnection.

Each function picks the version through the connection's ApiVersions
negotiation (``version=`` pins one), builds the body with Kafka's field names
for that version and returns the parsed response. Per-topic, per-resource and
per-entry errors stay in the response for the caller to judge; a top-level
error becomes a KafkaError only where no caller can do anything else with it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Iterable, Mapping, NamedTuple

from kipper.client.blocking import BlockingConnection
from kipper.protocol.errors import KafkaError
from kipper.protocol.messages.alter_client_quotas import ALTER_CLIENT_QUOTAS
from kipper.protocol.messages.alter_configs import ALTER_CONFIGS
from kipper.protocol.messages.alter_user_scram_credentials import ALTER_USER_SCRAM_CREDENTIALS
from kipper.protocol.messages.consumer_group_describe import CONSUMER_GROUP_DESCRIBE
from kipper.protocol.messages.create_partitions import CREATE_PARTITIONS
from kipper.protocol.messages.create_topics import CREATE_TOPICS
from kipper.protocol.messages.delete_groups import DELETE_GROUPS
from kipper.protocol.messages.delete_records import DELETE_RECORDS
from kipper.protocol.messages.delete_topics import DELETE_TOPICS
from kipper.protocol.messages.describe_client_quotas import DESCRIBE_CLIENT_QUOTAS
from kipper.protocol.messages.describe_configs import DESCRIBE_CONFIGS
from kipper.protocol.messages.describe_groups import DESCRIBE_GROUPS
from kipper.protocol.messages.describe_user_scram_credentials import DESCRIBE_USER_SCRAM_CREDENTIALS
from kipper.protocol.messages.incremental_alter_configs import INCREMENTAL_ALTER_CONFIGS
from kipper.protocol.messages.list_groups import LIST_GROUPS
from kipper.protocol.messages.metadata import METADATA
from kipper.protocol.messages.offset_delete import OFFSET_DELETE
from kipper.protocol.messages.alter_share_group_offsets import ALTER_SHARE_GROUP_OFFSETS
from kipper.protocol.messages.delete_share_group_offsets import DELETE_SHARE_GROUP_OFFSETS
from kipper.protocol.messages.describe_share_group_offsets import DESCRIBE_SHARE_GROUP_OFFSETS
from kipper.protocol.messages.share_group_describe import SHARE_GROUP_DESCRIBE
from kipper.protocol.sasl import DEFAULT_ITERATIONS, HASHES, MECHANISM_CODES, salted_password

DEFAULT_TIMEOUT_MS = 30000

__all__ = [
    "AlterConfigOpType", "AlterConfigOp", "ClientQuotaAlteration", "ClientQuotaFilterComponent",
    "ConfigResource", "ConfigResourceType", "ConfigSource", "NewPartitions", "NewTopic",
    "ScramCredentialDeletion", "ScramCredentialUpsertion", "alter_client_quotas", "alter_configs",
    "alter_user_scram_credentials", "consumer_group_describe", "create_partitions", "create_topics",
    "delete_groups", "delete_offsets", "delete_records", "delete_topics", "describe_client_quotas",
    "describe_configs", "describe_groups", "describe_user_scram_credentials",
    "incremental_alter_configs", "list_groups", "metadata", "share_group_describe",
    "describe_share_group_offsets", "alter_share_group_offsets", "delete_share_group_offsets",
]


def send(conn: BlockingConnection, api, body, version: int | None = None, max_version: int | None = None):
    """Send ``body`` at ``version``, else at the highest both sides support up
    to ``max_version``. ``body`` is a dict, or a function of the version for
    the bodies whose shape changes with it."""
    if version is None:
        version = conn.pick_version(api.key, max_version)
    return conn.request(api.key, body(version) if callable(body) else body, version=version)


def by_topic(items: Iterable[tuple[tuple[str, int], object]]) -> dict[str, list[tuple[int, object]]]:
    """((topic, partition), value) pairs grouped by topic, in first-seen order."""
    out: dict[str, list[tuple[int, object]]] = {}
    for (topic, partition), value in items:
        out.setdefault(topic, []).append((partition, value))
    return out


# --- topics -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NewTopic:
    """Kafka's NewTopic: -1 partitions or replication factor means the broker's default;
    ``assignments``: each partition's replicas (broker ids), with -1 and -1 (Kafka's
    replicasAssignments)."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    configs: Mapping[str, str | None] = field(default_factory=dict)
    assignments: list[list[int]] | None = None


def create_topics(conn: BlockingConnection, topics: Iterable[NewTopic], *, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                  validate_only: bool = False, version: int | None = None):
    return send(conn, CREATE_TOPICS, {
        "topics": [{"name": t.name, "num_partitions": t.num_partitions,
                    "replication_factor": t.replication_factor,
                    "assignments": [{"partition_index": i, "broker_ids": list(r)}
                                    for i, r in enumerate(t.assignments or ())],
                    "configs": [{"name": k, "value": v} for k, v in t.configs.items()]} for t in topics],
        "timeout_ms": timeout_ms, "validate_only": validate_only}, version)


@dataclass(frozen=True)
class NewPartitions:
    """Kafka's NewPartitions: the total count a topic grows to, and optionally the
    replicas (broker ids) of each new partition."""

    topic: str
    count: int
    assignments: list[list[int]] | None = None


def create_partitions(conn: BlockingConnection, topics: Iterable[NewPartitions], *,
                      timeout_ms: int = DEFAULT_TIMEOUT_MS, validate_only: bool = False,
                      version: int | None = None):
    return send(conn, CREATE_PARTITIONS, {
        "topics": [{"name": t.topic, "count": t.count,
                    "assignments": None if t.assignments is None
                    else [{"broker_ids": list(a)} for a in t.assignments]} for t in topics],
        "timeout_ms": timeout_ms, "validate_only": validate_only}, version)


def delete_topics(conn: BlockingConnection, names: Iterable[str], *, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                  version: int | None = None):
    names = list(names)

    def body(v: int) -> dict:
        if v >= 6:  # v6 names a topic by name or id
            return {"topics": [{"name": n, "topic_id": None} for n in names], "timeout_ms": timeout_ms}
        return {"topic_names": names, "timeout_ms": timeout_ms}

    return send(conn, DELETE_TOPICS, body, version)


def metadata(conn: BlockingConnection, topics: Iterable[str] | None = None, *, topic_ids: Iterable | None = None,
             allow_auto_topic_creation: bool = False, include_topic_authorized_operations: bool = False,
             version: int | None = None):
    """Metadata of ``topics`` by name and ``topic_ids`` by id (v10+); every
    topic when both are None (an empty list asks for none)."""
    wanted = None
    if topics is not None or topic_ids is not None:
        wanted = [{"name": n} for n in topics or ()] + [{"name": None, "topic_id": t} for t in topic_ids or ()]
    return send(conn, METADATA, {
        "topics": wanted, "allow_auto_topic_creation": allow_auto_topic_creation,
        "include_topic_authorized_operations": include_topic_authorized_operations}, version)


def delete_records(conn: BlockingConnection, offsets: Mapping[tuple[str, int], int], *,
                   timeout_ms: int = DEFAULT_TIMEOUT_MS, version: int | None = None):
    """Move each (topic, partition)'s log start up to its offset (-1: the high watermark)."""
    return send(conn, DELETE_RECORDS, {"topics": [
        {"name": topic, "partitions": [{"partition_index": p, "offset": o} for p, o in parts]}
        for topic, parts in by_topic(offsets.items()).items()], "timeout_ms": timeout_ms}, version)


# --- configs ------------------------------------------------------------------------------------

class ConfigResourceType(IntEnum):
    """Kafka's ConfigResource.Type."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(IntEnum):
    """DescribeConfigs' config_source (Kafka's DescribeConfigsResponse.ConfigSource)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class AlterConfigOpType(IntEnum):
    """Kafka's AlterConfigOp.OpType."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ConfigResource(NamedTuple):
    type: ConfigResourceType
    name: str


class AlterConfigOp(NamedTuple):
    name: str
    value: str | None
    op_type: AlterConfigOpType = AlterConfigOpType.SET


def describe_configs(conn: BlockingConnection, resources: Iterable[ConfigResource], *,
                     configuration_keys: Iterable[str] | None = None, include_synonyms: bool = False,
                     include_documentation: bool = False, version: int | None = None):
    """Configs of each resource: all of them, or only ``configuration_keys``."""
    keys = None if configuration_keys is None else list(configuration_keys)
    return send(conn, DESCRIBE_CONFIGS, {
        "resources": [{"resource_type": r.type, "resource_name": r.name, "configuration_keys": keys}
                      for r in resources],
        "include_synonyms": include_synonyms, "include_documentation": include_documentation}, version)


def incremental_alter_configs(conn: BlockingConnection, alterations: Mapping[ConfigResource, Iterable[AlterConfigOp]],
                              *, validate_only: bool = False, version: int | None = None):
    return send(conn, INCREMENTAL_ALTER_CONFIGS, {
        "resources": [{"resource_type": r.type, "resource_name": r.name, "configs": [
            {"name": op.name, "config_operation": op.op_type, "value": op.value} for op in ops]}
            for r, ops in alterations.items()],
        "validate_only": validate_only}, version)


def alter_configs(conn: BlockingConnection, configs: Mapping[ConfigResource, Mapping[str, str]], *,
                  validate_only: bool = False, version: int | None = None):
    """The non-incremental AlterConfigs: each resource's whole dynamic config set is
    replaced by ``configs[resource]`` (a key left out returns to its default)."""
    return send(conn, ALTER_CONFIGS, {
        "resources": [{"resource_type": r.type, "resource_name": r.name,
                       "configs": [{"name": k, "value": v} for k, v in values.items()]}
                      for r, values in configs.items()],
        "validate_only": validate_only}, version)


# --- groups -------------------------------------------------------------------------------------

def list_groups(conn: BlockingConnection, *, states_filter: Iterable[str] = (), types_filter: Iterable[str] = (),
                version: int | None = None):
    return send(conn, LIST_GROUPS, {"states_filter": list(states_filter),
                                    "types_filter": list(types_filter)}, version)


def describe_groups(conn: BlockingConnection, group_ids: Iterable[str], *,
                    include_authorized_operations: bool = False, version: int | None = None):
    """Classic groups (DescribeGroups)."""
    return send(conn, DESCRIBE_GROUPS, {"groups": list(group_ids),
                                        "include_authorized_operations": include_authorized_operations}, version)


def share_group_describe(conn: BlockingConnection, group_ids: Iterable[str], *,
                         include_authorized_operations: bool = False, version: int | None = None):
    """Share groups (KIP-932). UnsupportedByBroker when the broker has none."""
    return send(conn, SHARE_GROUP_DESCRIBE, {
        "group_ids": list(group_ids), "include_authorized_operations": include_authorized_operations}, version)


def describe_share_group_offsets(conn: BlockingConnection,
                                 groups: Mapping[str, Mapping[str, Iterable[int]] | None], *,
                                 version: int | None = None):
    """Share groups' start offsets and lag (v1): ``groups`` maps a group id to {topic:
    partitions}, or to None for every share-partition the group has state for."""
    return send(conn, DESCRIBE_SHARE_GROUP_OFFSETS, {"groups": [
        {"group_id": g, "topics": None if topics is None else [
            {"topic_name": t, "partitions": list(parts)} for t, parts in topics.items()]}
        for g, topics in groups.items()]}, version)


def alter_share_group_offsets(conn: BlockingConnection, group_id: str,
                              offsets: Mapping[tuple[str, int], int], *, version: int | None = None):
    """Start a share group's share-partitions again at the given offsets (the group must
    have no members)."""
    return send(conn, ALTER_SHARE_GROUP_OFFSETS, {"group_id": group_id, "topics": [
        {"topic_name": t, "partitions": [{"partition_index": p, "start_offset": o} for p, o in parts]}
        for t, parts in by_topic(offsets.items()).items()]}, version)


def delete_share_group_offsets(conn: BlockingConnection, group_id: str, topics: Iterable[str], *,
                               version: int | None = None):
    """Drop a share group's state for whole topics (the group must have no members)."""
    return send(conn, DELETE_SHARE_GROUP_OFFSETS, {
        "group_id": group_id, "topics": [{"topic_name": t} for t in topics]}, version)


def consumer_group_describe(conn: BlockingConnection, group_ids: Iterable[str], *,
                            include_authorized_operations: bool = False, version: int | None = None):
    """KIP-848 consumer groups (ConsumerGroupDescribe)."""
    return send(conn, CONSUMER_GROUP_DESCRIBE, {
        "group_ids": list(group_ids), "include_authorized_operations": include_authorized_operations}, version)


def delete_groups(conn: BlockingConnection, group_ids: Iterable[str], *, version: int | None = None):
    """Delete groups without members, with their committed offsets."""
    return send(conn, DELETE_GROUPS, {"groups_names": list(group_ids)}, version)


def delete_offsets(conn: BlockingConnection, group_id: str, partitions: Iterable[tuple[str, int]], *,
                   version: int | None = None):
    """OffsetDelete: a group's committed offsets of (topic, partition)s it no longer consumes."""
    return send(conn, OFFSET_DELETE, {"group_id": group_id, "topics": [
        {"name": topic, "partitions": [{"partition_index": p} for p, _ in parts]}
        for topic, parts in by_topic(((tp, None) for tp in partitions)).items()]}, version)


# --- client quotas ------------------------------------------------------------------------------

class ClientQuotaAlteration(NamedTuple):
    """Kafka's ClientQuotaAlteration. ``entity`` maps an entity type ("user",
    "client-id") to a name, None for the default entity. ``ops`` maps a quota
    key to its value, or is a list of (key, value) pairs (a key twice is the
    broker's to refuse); a value of None removes that quota."""

    entity: Mapping[str, str | None]
    ops: Mapping[str, float | None] | Iterable[tuple[str, float | None]]


class ClientQuotaFilterComponent(NamedTuple):
    """Kafka's ClientQuotaFilterComponent; match_type is EXACT, DEFAULT or ANY."""

    entity_type: str
    match_type: int
    match: str | None = None

    EXACT, DEFAULT, ANY = 0, 1, 2

    @classmethod
    def of_entity(cls, entity_type: str, name: str) -> "ClientQuotaFilterComponent":
        return cls(entity_type, cls.EXACT, name)

    @classmethod
    def of_default_entity(cls, entity_type: str) -> "ClientQuotaFilterComponent":
        return cls(entity_type, cls.DEFAULT, None)

    @classmethod
    def of_entity_type(cls, entity_type: str) -> "ClientQuotaFilterComponent":
        return cls(entity_type, cls.ANY, None)


def describe_client_quotas(conn: BlockingConnection, components: Iterable[ClientQuotaFilterComponent] = (), *,
                           strict: bool = False, version: int | None = None):
    """Quotas of the entities that match every component (no component: all
    of them). A top-level error is raised as a KafkaError."""
    body = send(conn, DESCRIBE_CLIENT_QUOTAS, {"components": [c._asdict() for c in components],
                                               "strict": strict}, version)
    if body.error_code:
        raise KafkaError(body.error_code, body.error_message or "")
    return body


def alter_client_quotas(conn: BlockingConnection, alterations: Iterable[ClientQuotaAlteration], *,
                        validate_only: bool = False, version: int | None = None):
    return send(conn, ALTER_CLIENT_QUOTAS, {"entries": [{
        "entity": [{"entity_type": t, "entity_name": n} for t, n in a.entity.items()],
        "ops": [{"key": k, "value": 0.0 if v is None else float(v), "remove": v is None}
                for k, v in (a.ops.items() if isinstance(a.ops, Mapping) else a.ops)]}
        for a in alterations], "validate_only": validate_only}, version)


# --- SCRAM credentials --------------------------------------------------------------------------

class ScramCredentialDeletion(NamedTuple):
    name: str
    mechanism: int  # ScramMechanism: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512


class ScramCredentialUpsertion(NamedTuple):
    """What goes on the wire: the salted password, never the password."""

    name: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes

    @classmethod
    def from_password(cls, name: str, mechanism: str, password: str,
                      iterations: int = DEFAULT_ITERATIONS) -> "ScramCredentialUpsertion":
        """Salted as Kafka's admin client does it: a random 32-byte salt (RFC 5802)."""
        salt = secrets.token_bytes(32)
        return cls(name, MECHANISM_CODES[mechanism], iterations, salt,
                   salted_password(HASHES[mechanism], password, salt, iterations))


def describe_user_scram_credentials(conn: BlockingConnection, users: Iterable[str] | None = None, *,
                                    version: int | None = None):
    """Credential infos of ``users`` (None: every user). A top-level error is
    raised as a KafkaError; per-user errors are in ``results``."""
    wanted = None if users is None else [{"name": u} for u in users]
    body = send(conn, DESCRIBE_USER_SCRAM_CREDENTIALS, {"users": wanted}, version)
    if body.error_code:
        raise KafkaError(body.error_code, body.error_message or "")
    return body


def alter_user_scram_credentials(conn: BlockingConnection, *, upsertions: Iterable[ScramCredentialUpsertion] = (),
                                 deletions: Iterable[ScramCredentialDeletion] = (), version: int | None = None):
    return send(conn, ALTER_USER_SCRAM_CREDENTIALS, {
        "deletions": [d._asdict() for d in deletions], "upsertions": [u._asdict() for u in upsertions]}, version)
