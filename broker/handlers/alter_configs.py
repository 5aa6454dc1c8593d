"""IncrementalAlterConfigs for topics and groups.

Topic configs are validated like CreateTopics'; group configs are the keys
kipper acts on (share.auto.offset.reset). Broker configs are static here:
they come from the properties file and --override at start.
"""

from __future__ import annotations

from kipper.broker.log.topics import validate_topic_configs
from kipper.broker.groups.configs import GROUP_TYPES
from kipper.protocol.errors import ErrorCode

TOPIC, BROKER = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _apply(current: dict, ops) -> tuple[dict, str | None]:
    new = dict(current)
    for op in ops:
        if op.config_operation == SET:
            new[op.name] = op.value
        elif op.config_operation == DELETE:
            new.pop(op.name, None)
        elif op.config_operation in (APPEND, SUBTRACT):
            items = [v for v in (new.get(op.name) or "").split(",") if v]
            values = [v for v in (op.value or "").split(",") if v]
            if op.config_operation == APPEND:
                items += [v for v in values if v not in items]
            else:
                items = [v for v in items if v not in values]
            new[op.name] = ",".join(items)
        else:
            return current, f"unknown config operation {op.config_operation}"
    return new, None


def _alter_topic(broker, res, validate_only: bool) -> tuple[ErrorCode, str | None]:
    topic = broker.topics.get(res.resource_name)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic '{res.resource_name}' does not exist."
    new, problem = _apply(topic.configs, res.configs)
    problem = problem or validate_topic_configs(new)
    if problem:
        return ErrorCode.INVALID_CONFIG, problem
    if not validate_only:
        broker.topics.update_configs(topic, new)
    return ErrorCode.NONE, None


def _alter_group(broker, res, validate_only: bool) -> tuple[ErrorCode, str | None]:
    store = broker.group_configs
    for op in res.configs:
        if op.config_operation not in (SET, DELETE):
            return ErrorCode.INVALID_CONFIG, f"{op.name}: only SET and DELETE apply to group configs"
        problem = store.check(op.name, op.value if op.config_operation == SET else None)
        if problem:
            return ErrorCode.INVALID_CONFIG, problem
    if not validate_only:
        for op in res.configs:
            if op.config_operation == SET:
                store.set(res.resource_name, op.name, op.value)
            else:
                store.delete(res.resource_name, op.name)
    return ErrorCode.NONE, None


def handle_incremental_alter_configs(req, ctx):
    out = []
    for res in req.resources:
        if res.resource_type == TOPIC:
            code, message = _alter_topic(ctx.broker, res, req.validate_only)
        elif res.resource_type in GROUP_TYPES:
            code, message = _alter_group(ctx.broker, res, req.validate_only)
        elif res.resource_type == BROKER:
            code, message = (ErrorCode.INVALID_CONFIG,
                             "broker configs are static: set them in the properties file or with --override")
        else:
            code, message = ErrorCode.INVALID_REQUEST, f"resource type {res.resource_type} is not supported"
        out.append({"error_code": int(code), "error_message": message,
                    "resource_type": res.resource_type, "resource_name": res.resource_name})
    return {"throttle_time_ms": 0, "responses": out}
