"""DescribeConfigs for topics and this broker."""

from __future__ import annotations

from kipper.broker.config import KEYS
from kipper.broker.handlers.topics import topic_config_row
from kipper.broker.log.topics import TOPIC_CONFIGS
from kipper.broker.groups.configs import GROUP_TYPES
from kipper.protocol.errors import ErrorCode

TOPIC, BROKER = 2, 4
STATIC_BROKER_CONFIG, DEFAULT_CONFIG, DYNAMIC_GROUP_CONFIG = 4, 5, 8


def _broker_rows(ctx) -> list[dict]:
    config = ctx.broker.config
    rows = []
    for name in sorted(KEYS):
        value = config[name]
        if isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, tuple):
            text = ",".join(str(v) for v in value)
        elif isinstance(value, dict):
            text = ",".join(f"{k}:{v}" for k, v in value.items())
        else:
            text = str(value)
        rows.append({"name": name, "value": text, "read_only": True, "is_sensitive": False,
                     "config_source": STATIC_BROKER_CONFIG if name in config.explicit else DEFAULT_CONFIG,
                     "documentation": KEYS[name].doc})
    return rows


def _filter(rows: list[dict], keys) -> list[dict]:
    if keys is None:
        return rows
    wanted = set(keys)
    return [r for r in rows if r["name"] in wanted]


def handle_describe_configs(req, ctx):
    broker = ctx.broker
    results = []
    for res in req.resources:
        row = {"resource_type": res.resource_type, "resource_name": res.resource_name,
               "error_code": 0, "error_message": None, "configs": []}
        if res.resource_type == TOPIC:
            topic = broker.topics.get(res.resource_name)
            if topic is None:
                row.update(error_code=int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
                           error_message=f"Topic '{res.resource_name}' does not exist.")
            else:
                rows = [topic_config_row(topic, k, broker.config) for k in sorted(TOPIC_CONFIGS)]
                row["configs"] = _filter(rows, res.configuration_keys)
        elif res.resource_type in GROUP_TYPES:
            rows = [{"name": k, "value": v, "read_only": False, "is_sensitive": False,
                     "config_source": DYNAMIC_GROUP_CONFIG if explicit else DEFAULT_CONFIG}
                    for k, (v, explicit) in broker.group_configs.describe(res.resource_name).items()]
            row["configs"] = _filter(rows, res.configuration_keys)
        elif res.resource_type == BROKER:
            if res.resource_name not in ("", str(broker.node_id)):
                row.update(error_code=int(ErrorCode.INVALID_REQUEST),
                           error_message=f"Broker {res.resource_name} is not this broker ({broker.node_id}).")
            else:
                row["configs"] = _filter(_broker_rows(ctx), res.configuration_keys)
        else:
            row.update(error_code=int(ErrorCode.INVALID_REQUEST),
                       error_message=f"Resource type {res.resource_type} is not supported.")
        results.append(row)
    return {"throttle_time_ms": 0, "results": results}
