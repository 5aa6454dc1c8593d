"""``kipper configs`` for topics, brokers and groups, as kafka-configs.sh shows
and changes them: DescribeConfigs (dynamic configs, or --all with their
synonyms) and IncrementalAlterConfigs (--add-config, --delete-config)."""

from __future__ import annotations

from kipper.cli.common import ToolError, UsageError, split_config
from kipper.client import admin
from kipper.client.admin import AlterConfigOp, AlterConfigOpType, ConfigResource, ConfigResourceType, ConfigSource
from kipper.protocol.errors import KafkaError

TYPES = {"topics": ConfigResourceType.TOPIC, "brokers": ConfigResourceType.BROKER,
         "groups": ConfigResourceType.GROUP}
DYNAMIC = {ConfigSource.DYNAMIC_TOPIC_CONFIG, ConfigSource.DYNAMIC_BROKER_CONFIG,
           ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, ConfigSource.GROUP_CONFIG}


def _resource(args) -> tuple[ConfigResource, str]:
    kind = TYPES[args.entity_type]
    if kind == ConfigResourceType.BROKER:
        if args.entity_default:
            return ConfigResource(kind, ""), "brokers in the cluster (default)"
        if not args.entity_name:
            raise UsageError("--entity-type brokers needs --entity-name (a broker id) or --entity-default")
        return ConfigResource(kind, args.entity_name), f"broker {args.entity_name}"
    if not args.entity_name:
        raise UsageError(f"--entity-type {args.entity_type} needs --entity-name")
    noun = "topic" if kind == ConfigResourceType.TOPIC else "group"
    return ConfigResource(kind, args.entity_name), f"{noun} '{args.entity_name}'"


def _pairs(text: str) -> dict[str, str]:
    out = {}
    for item in split_config(text):
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--add-config '{item}' is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def describe(conn, args) -> int:
    resource, who = _resource(args)
    body = admin.describe_configs(conn, [resource], include_synonyms=True)
    result = body.results[0]
    if result.error_code:
        raise ToolError(f"{who}: {KafkaError(result.error_code, result.error_message or '')}")
    shown = [c for c in result.configs if args.all or c.config_source in DYNAMIC]
    print(f"{'All' if args.all else 'Dynamic'} configs for {who} are:")
    for c in sorted(shown, key=lambda c: c.name):
        value = c.value if not c.is_sensitive else None
        synonyms = ", ".join(f"{ConfigSource(s.source).name}:{s.name}={s.value}" for s in c.synonyms)
        print(f"  {c.name}={value} sensitive={str(c.is_sensitive).lower()} synonyms={{{synonyms}}}")
    return 0


def alter(conn, args) -> int:
    resource, who = _resource(args)
    adds = _pairs(args.add_config)
    deletes = [k.strip() for k in args.delete_config.split(",") if k.strip()]
    if not adds and not deletes:
        raise UsageError("--alter needs --add-config or --delete-config")
    ops = [AlterConfigOp(k, v) for k, v in adds.items()]
    ops += [AlterConfigOp(k, None, AlterConfigOpType.DELETE) for k in deletes]
    result = admin.incremental_alter_configs(conn, {resource: ops}).responses[0]
    if result.error_code:
        raise ToolError(f"{who}: {KafkaError(result.error_code, result.error_message or '')}")
    print(f"Completed updating config for {who}.")
    return 0
