"""``kipper topics create|list|describe|delete``: like kafka-topics.sh."""

from __future__ import annotations

import argparse

from kipper.client import admin
from kipper.client.admin import ConfigResource, ConfigResourceType, ConfigSource, NewTopic
from kipper.client.blocking import connect_any
from kipper.protocol.errors import ErrorCode, KafkaError


def add_parser(sub) -> None:
    p = sub.add_parser("topics", help="create, list, describe or delete topics")
    p.add_argument("action", choices=("create", "list", "describe", "delete"))
    p.add_argument("--bootstrap-server", required=True, help="HOST:PORT[,HOST:PORT...]")
    p.add_argument("--topic", help="topic name (create, delete; optional for describe)")
    p.add_argument("--partitions", type=int, default=-1, help="partitions (create)")
    p.add_argument("--replication-factor", type=int, default=-1, help="replication factor (create)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="topic config (create), repeatable")
    p.add_argument("--if-not-exists", action="store_true", help="create: no error if it exists")
    p.set_defaults(func=run)


def _configs(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise SystemExit(f"error: --config '{item}' is not KEY=VALUE")
        k, v = item.split("=", 1)
        out[k] = v
    return out


def run(args: argparse.Namespace) -> int:
    if args.action in ("create", "delete") and not args.topic:
        raise SystemExit(f"error: topics {args.action} needs --topic")
    with connect_any(args.bootstrap_server) as conn:
        return {"create": _create, "list": _list, "describe": _describe,
                "delete": _delete}[args.action](conn, args)


def _create(conn, args) -> int:
    body = admin.create_topics(conn, [NewTopic(args.topic, args.partitions, args.replication_factor,
                                               _configs(args.config))])
    result = body.topics[0]
    if result.error_code == ErrorCode.TOPIC_ALREADY_EXISTS and args.if_not_exists:
        print(f"Topic {args.topic} already exists.")
        return 0
    if result.error_code:
        raise KafkaError(result.error_code, result.error_message or "")
    print(f"Created topic {args.topic}.")
    return 0


def _list(conn, args) -> int:
    for topic in sorted(t.name for t in admin.metadata(conn).topics):
        print(topic)
    return 0


def _describe(conn, args) -> int:
    meta = admin.metadata(conn, [args.topic] if args.topic else None)
    status = 0
    for t in sorted(meta.topics, key=lambda t: t.name or ""):
        if t.error_code:
            print(f"Topic: {t.name}\tError: {ErrorCode(t.error_code).name}")
            status = 1
            continue
        configs = admin.describe_configs(conn, [ConfigResource(ConfigResourceType.TOPIC, t.name)])
        overrides = ",".join(f"{c.name}={c.value}" for c in configs.results[0].configs
                             if c.config_source == ConfigSource.DYNAMIC_TOPIC_CONFIG)
        policy = next((c.value for c in configs.results[0].configs if c.name == "cleanup.policy"), "delete")
        print(f"Topic: {t.name}\tTopicId: {t.topic_id}\tPartitionCount: {len(t.partitions)}\t"
              f"ReplicationFactor: 1\tCleanupPolicy: {policy}\tConfigs: {overrides}")
        for p in sorted(t.partitions, key=lambda p: p.partition_index):
            print(f"\tTopic: {t.name}\tPartition: {p.partition_index}\tLeader: {p.leader_id}\t"
                  f"Replicas: {','.join(map(str, p.replica_nodes))}\tIsr: {','.join(map(str, p.isr_nodes))}")
    return status


def _delete(conn, args) -> int:
    result = admin.delete_topics(conn, [args.topic]).responses[0]
    if result.error_code:
        raise KafkaError(result.error_code, result.get("error_message") or "")
    print(f"Deleted topic {args.topic}.")
    return 0
