"""kafka-python's admin calls, as the client generator's steps name them: each takes the
client settings for one broker and the step's arguments and returns what the client returned."""

from __future__ import annotations

import json

from kafka import IsolationLevel, TopicPartition
from kafka.admin import (ACLFilter, AlterConfigOp, ConfigFilterType, ConfigResource, ConfigResourceType,
                         KafkaAdminClient, NewPartitions, NewTopic, OffsetSpec, ResourcePatternFilter)
from kafka.admin import ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourceType

from tests.conformance.client_fuzz.plain import plain

TIMEOUT_MS = 10000


def _resource(r: dict) -> ConfigResource:
    configs = r.get("set")
    if r.get("ops"):
        configs = {name: (AlterConfigOp[op], value) for name, op, value in r["ops"]}
    return ConfigResource(ConfigResourceType[r["type"]], r["name"], configs)


def _spec(spec):
    return spec if isinstance(spec, int) else OffsetSpec[spec.upper()]


def _acl_filter(a: dict) -> ACLFilter:
    pattern = ResourcePatternFilter(ResourceType[a["resource"]], a["name"], ACLResourcePatternType[a["pattern"]])
    return ACLFilter(a["principal"], a["host"], ACLOperation[a["operation"]], ACLPermissionType[a["permission"]],
                     pattern)


def admin(settings: dict, op: str, args: dict):
    client = KafkaAdminClient(**settings, request_timeout_ms=TIMEOUT_MS)
    try:
        found = plain(_call(client, op, args))
    finally:
        client.close()
    if op == "describe_log_dirs" and isinstance(found, list):
        for log_dir in (d for broker in found for d in broker["log_dirs"]):
            _sort_log_dir(log_dir)
    return sorted_topics(found) if op in UNORDERED else found


def _sort_log_dir(log_dir: dict) -> None:
    """A log directory's topics and partitions sorted: each broker's hash maps' order."""
    log_dir["topics"].sort(key=lambda t: t["name"])
    for topic in log_dir["topics"]:
        topic["partitions"].sort(key=lambda p: p["partition_index"])


UNORDERED = frozenset({"create_topics", "delete_topics", "create_partitions", "describe_topics",
                       "describe_topic_partitions"})
TOPIC_LISTS = frozenset({"results", "topics", "topic_errors", "topic_results", "responses", "topic_error_codes"})


def sorted_topics(found):
    """A result's list of topics (itself, or a response's field) sorted: the order of the
    broker's answer, a hash map's on Kafka."""
    if isinstance(found, list):
        return sorted(found, key=lambda r: json.dumps(r, sort_keys=True))
    if isinstance(found, dict):
        return {k: sorted_topics(v) if k in TOPIC_LISTS else v for k, v in found.items()}
    return found


def _call(client: KafkaAdminClient, op: str, args: dict):
    if op == "create_topics":
        topics = [NewTopic(t["name"], t.get("num_partitions", -1), t.get("replication_factor", -1),
                           t.get("replica_assignment"), t.get("config")) for t in args["topics"]]
        return client.create_topics(topics, timeout_ms=TIMEOUT_MS, validate_only=args.get("validate_only", False),
                                    raise_errors=False)
    if op == "delete_topics":
        return client.delete_topics(args["topics"], timeout_ms=TIMEOUT_MS, raise_errors=False)
    if op == "create_partitions":
        return client.create_partitions({t: NewPartitions(n) for t, n in args["topics"]}, timeout_ms=TIMEOUT_MS,
                                        validate_only=args.get("validate_only", False), raise_errors=False)
    if op == "describe_topics":
        return client.describe_topics(args["topics"])
    if op == "describe_topic_partitions":
        return client.describe_topic_partitions(args["topics"], response_partition_limit=args.get("limit", 2000))
    if op == "describe_configs":
        return client.describe_configs([_resource(r) for r in args["resources"]],
                                       include_synonyms=args.get("synonyms", False),
                                       config_filter=ConfigFilterType[args.get("filter", "MODIFIED")])
    if op == "alter_configs":
        return client.alter_configs([_resource(r) for r in args["resources"]],
                                    validate_only=args.get("validate_only", False), raise_on_unknown=False,
                                    incremental=args.get("incremental"))
    if op == "list_partition_offsets":
        return client.list_partition_offsets({TopicPartition(t, p): _spec(s) for t, p, s in args["partitions"]},
                                             isolation_level=IsolationLevel[args["isolation"]], timeout_ms=TIMEOUT_MS)
    if op == "delete_records":
        return client.delete_records({TopicPartition(t, p): o for t, p, o in args["partitions"]}, timeout_ms=TIMEOUT_MS)
    if op == "list_groups":
        return sorted((g for g in client.list_groups() if _group_id(g) in args["own"]), key=repr)
    if op == "describe_groups":
        return client.describe_groups(args["groups"], include_authorized_operations=args.get("authorized", False))
    if op == "list_group_offsets":
        return client.list_group_offsets({args["group"]: [TopicPartition(t, p) for t, p, _ in args["partitions"]]
                                          if args.get("partitions") is not None else None})
    if op == "delete_groups":
        return client.delete_groups(args["groups"])
    if op == "describe_acls":
        return client.describe_acls(_acl_filter(args["filter"]))
    if op == "describe_log_dirs":  # (by topic: every partition of each)
        return client.describe_log_dirs({t: [p for t2, p, _ in args["partitions"] if t2 == t]
                                         for t in dict.fromkeys(t for t, _, _ in args["partitions"])})
    if op == "describe_producers":
        return client.describe_producers([TopicPartition(t, p) for t, p, _ in args["partitions"]])
    if op == "describe_transactions":
        return client.describe_transactions(args["ids"])
    if op == "list_transactions":  # (each broker's listing: the sequence's own)
        return sorted((t for listings in client.list_transactions().values() for t in listings
                       if args["own"] in repr(t)), key=repr)
    if op == "describe_features":
        return client.describe_features()
    if op == "describe_cluster":
        return client.describe_cluster()
    raise ValueError(f"no kafka-python admin call {op}")


def _group_id(group) -> str:
    return getattr(group, "group_id", None) or (group[0] if isinstance(group, tuple) else repr(group))
