"""``kipper topics create|list|describe|alter|delete``: like kafka-topics.sh."""

from __future__ import annotations

import argparse

from kipper.cli.common import ToolError, UsageError, add_bootstrap, add_command, connect, key_values
from kipper.client import admin
from kipper.client.admin import (
    AlterConfigOp, AlterConfigOpType, ConfigResource, ConfigResourceType, ConfigSource, NewPartitions,
    NewTopic,
)
from kipper.protocol.errors import ErrorCode, KafkaError


def add_parser(sub) -> None:
    p = add_command(sub, "topics", "create, list, describe, alter or delete topics",
                    "Create, list, describe, alter or delete topics, like kafka-topics.sh.\n\n"
                    "  kipper topics create --bootstrap-server H:P --topic t --partitions 3 "
                    "--config retention.ms=60000\n"
                    "  kipper topics alter --bootstrap-server H:P --topic t --partitions 6 "
                    "--config cleanup.policy=compact")
    p.add_argument("action", choices=("create", "list", "describe", "alter", "delete"),
                   help="what to do")
    add_bootstrap(p, command_config=True)
    p.add_argument("--topic", help="topic name (create, alter, delete; optional for describe)")
    p.add_argument("--partitions", type=int, default=None,
                   help="partition count (create: -1 or absent is the broker's num.partitions; "
                        "alter: the new, larger count)")
    p.add_argument("--replication-factor", type=int, default=-1,
                   help="replication factor (create; -1: the broker's default, and 1 is all one "
                        "broker has)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="topic config to set (create, alter), repeatable")
    p.add_argument("--delete-config", action="append", default=[], metavar="KEY",
                   help="topic config to remove, back to its default (alter), repeatable")
    p.add_argument("--if-not-exists", action="store_true", help="create: no error if it exists")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action in ("create", "delete", "alter") and not args.topic:
        raise UsageError(f"topics {args.action} needs --topic")
    configs = key_values(args.config, "--config")
    with connect(args.bootstrap_server, args.command_config) as conn:
        return {"create": _create, "list": _list, "describe": _describe, "alter": _alter,
                "delete": _delete}[args.action](conn, args, configs)


def _failed(topic: str, code: int, message: str | None) -> ToolError:
    return ToolError(f"topic '{topic}': {KafkaError(code, message or '')}")


def _create(conn, args, configs) -> int:
    partitions = -1 if args.partitions is None else args.partitions
    body = admin.create_topics(conn, [NewTopic(args.topic, partitions, args.replication_factor, configs)])
    result = body.topics[0]
    if result.error_code == ErrorCode.TOPIC_ALREADY_EXISTS and args.if_not_exists:
        print(f"Topic {args.topic} already exists.")
        return 0
    if result.error_code:
        raise _failed(args.topic, result.error_code, result.error_message)
    print(f"Created topic {args.topic}.")
    return 0


def _list(conn, args, configs) -> int:
    for topic in sorted(t.name for t in admin.metadata(conn).topics):
        print(topic)
    return 0


def _describe(conn, args, configs) -> int:
    meta = admin.metadata(conn, [args.topic] if args.topic else None)
    status = 0
    for t in sorted(meta.topics, key=lambda t: t.name or ""):
        if t.error_code:
            print(f"Topic: {t.name}\tError: {ErrorCode(t.error_code).name}")
            raise _failed(t.name, t.error_code, None)
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


def _alter(conn, args, configs) -> int:
    if args.partitions is None and not configs and not args.delete_config:
        raise UsageError("topics alter needs --partitions, --config or --delete-config")
    if args.partitions is not None:
        result = admin.create_partitions(conn, [NewPartitions(args.topic, args.partitions)]).results[0]
        if result.error_code:
            raise _failed(args.topic, result.error_code, result.error_message)
        print(f"Topic {args.topic} now has {args.partitions} partitions.")
    if configs or args.delete_config:
        ops = [AlterConfigOp(k, v) for k, v in configs.items()]
        ops += [AlterConfigOp(k, None, AlterConfigOpType.DELETE) for k in args.delete_config]
        resource = ConfigResource(ConfigResourceType.TOPIC, args.topic)
        result = admin.incremental_alter_configs(conn, {resource: ops}).responses[0]
        if result.error_code:
            raise _failed(args.topic, result.error_code, result.error_message)
        print(f"Completed updating config for topic {args.topic}.")
    return 0


def _delete(conn, args, configs) -> int:
    result = admin.delete_topics(conn, [args.topic]).responses[0]
    if result.error_code:
        raise _failed(args.topic, result.error_code, result.get("error_message"))
    print(f"Deleted topic {args.topic}.")
    return 0
