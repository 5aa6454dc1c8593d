"""IncrementalAlterConfigs and AlterConfigs for topics, groups, this broker and client-metrics
subscriptions.

Both compute a resource's whole new config set and validate it the way Kafka's
controller does (LogConfig for topics, GroupConfig for groups, DynamicBrokerConfig
for brokers), then replace the old set. IncrementalAlterConfigs starts from the
current set and applies SET/DELETE/APPEND/SUBTRACT; the legacy AlterConfigs
replaces everything, so a key it leaves out goes back to its default. Request
shapes Kafka refuses before that (a resource twice, a key twice, a null value)
get INVALID_REQUEST, as in Kafka's ConfigAdminManager.preprocess.
"""

from __future__ import annotations

import structlog

from kipper.broker.acl.model import ALTER_CONFIGS
from kipper.broker.config_values import java_hash_order
from kipper.broker.groups.configs import GROUP_CONFIGS, GROUP_TYPES
from kipper.broker.handlers.describe_configs import BROKER, BROKER_LOGGER, TOPIC, config_resource_denied
from kipper.broker.kafka_broker_configs import KAFKA_BROKER_CONFIGS
from kipper.broker.log.topic_configs import TOPIC_CONFIGS, validate_topic_configs
from kipper.broker.log.topics import validate_topic_name
from kipper.broker.telemetry import Invalid, validate
from kipper.broker.telemetry.subscriptions import CONFIGS as CLIENT_METRICS_CONFIGS
from kipper.broker.telemetry.subscriptions import RESOURCE_TYPE as CLIENT_METRICS
from kipper.protocol.errors import ErrorCode, kafka_text

log = structlog.get_logger(__name__)

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OPERATIONS = (SET, DELETE, APPEND, SUBTRACT)  # the operation types Kafka knows (AlterConfigOp.OpType)
MIN_INSYNC = "min.insync.replicas"


class Refused(Exception):
    def __init__(self, code: ErrorCode, message: str | None):
        super().__init__(message)
        self.code = code
        self.message = message


class UnknownOperation(Refused):
    """An operation type Kafka does not know: the broker refuses a BROKER resource that has
    one; met by the controller in any other resource, it fails the whole request."""


def _list_typed(name: str, types) -> bool:
    spec = types.get(name)
    return spec is not None and spec.type == "list"


def apply_ops(current: dict, ops, types: dict, effective=None, unknown_text=None) -> dict:
    """The new set after incremental ops (Kafka's prepareIncrementalConfigs). APPEND
    and SUBTRACT start from the value in effect, the default included
    (``effective(name)``): APPEND compact to a topic on the default policy gives
    delete,compact, and SUBTRACT delete from it leaves an empty list. They are refused for a
    key that is no LIST, an unknown one included (``unknown_text(name)``: a broker's words).
    The keys are gone through in the order of the controller's Java HashMap of them (each key
    once: _preprocess refuses a key named twice), so the first refusal is Kafka's."""
    new = dict(current)
    by_name = {op.name: op for op in ops}
    for name in java_hash_order(by_name):
        op = by_name[name]
        if op.config_operation == SET:
            new[op.name] = op.value
        elif op.config_operation == DELETE:
            new.pop(op.name, None)
        elif op.config_operation in (APPEND, SUBTRACT):
            if op.name not in types and unknown_text is not None:
                raise Refused(ErrorCode.INVALID_CONFIG, unknown_text(op.name))
            if not _list_typed(op.name, types):
                verb = "APPEND" if op.config_operation == APPEND else "SUBTRACT"
                raise Refused(ErrorCode.INVALID_CONFIG, f"Can't {verb} to key {op.name} because its type is not LIST.")
            now = new.get(op.name)
            if now is None and effective is not None and op.name in types:
                now = effective(op.name)
            items = [v.strip() for v in (now or "").split(",") if v.strip()]
            values = [v.strip() for v in (op.value or "").split(",") if v.strip()]
            if op.config_operation == APPEND:
                items += [v for v in values if v not in items]
            else:
                items = [v for v in items if v not in values]
            new[op.name] = ",".join(items)
        else:  # (a broker's own words: it refuses a BROKER resource's so before the controller)
            raise UnknownOperation(ErrorCode.INVALID_REQUEST, f"Unknown operations type {op.config_operation}")
    return new


def _preprocess(resources, incremental: bool) -> dict[int, Refused]:
    """Refusals by resource index, for request shapes Kafka refuses up front."""
    refused = {}
    seen: dict[tuple, int] = {}
    for i, res in enumerate(resources):
        key = (res.resource_type, res.resource_name)
        if key in seen:
            for j in (seen[key], i):
                refused[j] = Refused(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
        seen[key] = i
    for i, res in enumerate(resources):
        if i in refused:
            continue
        names = [c.name for c in res.configs]
        if len(set(names)) != len(names):
            refused[i] = Refused(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
            continue
        nulls = [c.name for c in res.configs if c.value is None
                 and not (incremental and c.config_operation == DELETE)]
        if nulls:
            refused[i] = Refused(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {', '.join(nulls)}")
    return refused


# --- one resource, given its whole new set -------------------------------------------------

def _topic(engines, name: str, build, validate_only: bool) -> None:
    topic = engines.topics.get(name)
    # Kafka's controller applies the ops first (an APPEND or SUBTRACT of a key that is no list is
    # refused there), then looks at the resource, the values, the topic
    built = build({}, TOPIC_CONFIGS) if topic is None else None
    if not name:
        raise Refused(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    if topic is None and validate_topic_name(name):
        raise Refused(ErrorCode.INVALID_TOPIC_EXCEPTION, validate_topic_name(name))
    if topic is None:  # Kafka's controller checks the values before it looks for the topic
        problem = validate_topic_configs(built)
        if problem:
            raise Refused(ErrorCode.INVALID_CONFIG, problem)
        raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
    view = engines.topic_configs
    new = build(topic.configs, TOPIC_CONFIGS, lambda key: view.value(topic.configs, key))
    problem = validate_topic_configs(new)
    if problem:
        raise Refused(ErrorCode.INVALID_CONFIG, problem)
    if not validate_only:
        engines.topics.update_configs(topic, new)


def _group(engines, name: str, build, validate_only: bool) -> None:
    store = engines.group_configs
    # as for a topic: the ops first (an APPEND or SUBTRACT of a key that is no list), then the name
    new = build(store.current(name) if name else {}, GROUP_CONFIGS)
    if not name:
        raise Refused(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
    problem = store.check_all(new)
    if problem:
        raise Refused(ErrorCode.INVALID_CONFIG, problem)
    if not validate_only:
        store.replace(name, new)


def _loggers(engines, res, validate_only: bool) -> None:
    """A broker's loggers (Kafka's RuntimeLoggerManager, which the broker runs itself)."""
    problem = engines.loggers.check(res.resource_name, res.configs)
    if problem is not None:
        raise Refused(*problem)
    if not validate_only:
        engines.loggers.apply(res.configs)
        log.warning("broker_log_level_altered", loggers=engines.loggers.loggers())


def _removes_min_insync(res, incremental: bool) -> bool:
    """A change of the cluster-level set without min.insync.replicas: AlterConfigs that
    leaves it out (it replaces the whole set), or a DELETE of it."""
    if not incremental:
        return all(c.name != MIN_INSYNC for c in res.configs)
    return any(c.name == MIN_INSYNC and c.config_operation == DELETE for c in res.configs)


def _broker(engines, name: str, build, validate_only: bool, removes_min_insync: bool = False,
            unknown_operation: int | None = None) -> None:
    dynamic = engines.dynamic_configs
    code, message = dynamic.layer_for(name)
    if code != ErrorCode.NONE:
        raise Refused(code, message)
    if unknown_operation is not None:  # the broker reads every operation type before it applies one
        raise UnknownOperation(ErrorCode.INVALID_REQUEST, f"Unknown operations type {unknown_operation}")
    # APPEND/SUBTRACT: list configs only, and a name no broker knows is refused by name
    new = build(dynamic.current(name), KAFKA_BROKER_CONFIGS, unknown_text=lambda key: f"Unknown config name: {key}")
    code, message = dynamic.check(new)  # the broker's own checks (the values' types too), before its controller's
    if code != ErrorCode.NONE:
        raise Refused(code, message)
    if name == "" and removes_min_insync:
        # Kafka 4.4 enables eligible leader replicas (KIP-966), and with them its controller keeps
        # a cluster-level min.insync.replicas that no change may take away
        raise Refused(ErrorCode.INVALID_CONFIG, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
    if not validate_only:
        engines.alter_broker_configs(name, new)


class _Typed:
    def __init__(self, kind: str):
        self.type = kind


# Kafka's controller knows no LIST type for client-metrics configs: APPEND and SUBTRACT are
# INVALID_CONFIG there ("Can't APPEND to key metrics because its type is not LIST.")
CLIENT_METRICS_TYPES = {name: _Typed("string") for name in CLIENT_METRICS_CONFIGS}


def _client_metrics(engines, name: str, build, validate_only: bool) -> None:
    """A client-metrics subscription (KIP-714), validated as Kafka's ClientMetricsConfigs;
    an empty set removes it."""
    subscriptions = engines.client_metrics
    new = build(subscriptions.current(name), CLIENT_METRICS_TYPES)
    try:
        validate(name, new)
    except Invalid as exc:
        raise Refused(exc.code, str(exc)) from None
    if not validate_only:
        subscriptions.replace(name, new)


def _refused_by_the_broker(engines, res, incremental: bool) -> bool:
    """A resource the broker refuses itself before it passes the rest to the controller: one of
    a type it does not know, or a BROKER resource with no node id or another node's, or an
    operation type it does not know."""
    if res.resource_type not in (TOPIC, BROKER, CLIENT_METRICS) and res.resource_type not in GROUP_TYPES:
        return True  # a resource type it does not know
    return res.resource_type == BROKER and (
        engines.dynamic_configs.layer_for(res.resource_name)[0] != ErrorCode.NONE
        or incremental and _unknown_operation(res) is not None)


def _unknown_operation(res) -> int | None:
    """The first operation type of the resource Kafka does not know, in the request's order."""
    return next((c.config_operation for c in res.configs if c.config_operation not in OPERATIONS), None)


def _meets_unknown_operation(res) -> bool:
    """Whether Kafka's controller, going through the resource's keys, meets an operation type
    it does not know before an APPEND or SUBTRACT it refuses (which ends the resource first)."""
    types = {TOPIC: TOPIC_CONFIGS, BROKER: KAFKA_BROKER_CONFIGS, CLIENT_METRICS: CLIENT_METRICS_TYPES}.get(
        res.resource_type, GROUP_CONFIGS if res.resource_type in GROUP_TYPES else {})
    try:
        apply_ops({}, res.configs, types)
    except UnknownOperation:
        return True
    except Refused:
        return False
    return False


FORWARDED_DENIALS = frozenset({ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED})


def _alter(ctx, resources, validate_only: bool, incremental: bool) -> list[dict]:
    refused = _preprocess(resources, incremental)
    # (AlterConfigs knows no broker logger: Kafka refuses the type before any authorization)
    denied = {i: None if not incremental and res.resource_type == BROKER_LOGGER
              else config_resource_denied(ctx, res, ALTER_CONFIGS)
              for i, res in enumerate(resources) if i not in refused}
    # the resources the broker passes to Kafka's controller: an operation it does not know in
    # any of them fails the controller's whole request (UNKNOWN_SERVER_ERROR for each, nothing
    # changed)
    passed = [i for i, why in denied.items() if why is None and not _refused_by_the_broker(ctx.engines, resources[i],
                                                                                         incremental)]
    unknown_op = incremental and any(_meets_unknown_operation(resources[i]) for i in passed)
    if unknown_op:
        log.info("alter_configs_refused", reason="an unknown operation type fails the whole request, as on Kafka",
                 operations=sorted({op.config_operation for i in passed for op in resources[i].configs}))
    out = []
    for i, res in enumerate(resources):
        code, message = ErrorCode.NONE, None
        if unknown_op and i in passed:
            out.append({"error_code": int(ErrorCode.UNKNOWN_SERVER_ERROR), "error_message": None,
                        "resource_type": res.resource_type, "resource_name": res.resource_name})
            continue
        if incremental:
            def build(current, types, effective=None, unknown_text=None, res=res):
                return apply_ops(current, res.configs, types, effective, unknown_text)
        else:
            def build(current, types, effective=None, unknown_text=None, res=res):
                return {c.name: c.value for c in res.configs}
        try:
            if i in refused:
                raise refused[i]
            if denied[i] is not None:  # (a topic's and a group's with the controller's words, as Kafka's)
                raise Refused(denied[i], kafka_text(denied[i]) if denied[i] in FORWARDED_DENIALS else None)
            if res.resource_type == TOPIC:
                _topic(ctx.engines, res.resource_name, build, validate_only)
            elif res.resource_type in GROUP_TYPES:
                _group(ctx.engines, res.resource_name, build, validate_only)
            elif res.resource_type == BROKER:
                _broker(ctx.engines, res.resource_name, build, validate_only, _removes_min_insync(res, incremental),
                        _unknown_operation(res) if incremental else None)
            elif res.resource_type == CLIENT_METRICS:
                _client_metrics(ctx.engines, res.resource_name, build, validate_only)
            elif res.resource_type == BROKER_LOGGER and incremental:
                _loggers(ctx.engines, res, validate_only)
            else:
                raise Refused(ErrorCode.INVALID_REQUEST, f"Unknown resource type {res.resource_type}")
        except Refused as exc:
            code, message = exc.code, exc.message
        out.append({"error_code": int(code), "error_message": message,
                    "resource_type": res.resource_type, "resource_name": res.resource_name})
    return out


def handle_incremental_alter_configs(req, ctx):
    return {"throttle_time_ms": 0, "responses": _alter(ctx, req.resources, req.validate_only, True)}


def handle_alter_configs(req, ctx):
    return {"throttle_time_ms": 0, "responses": _alter(ctx, req.resources, req.validate_only, False)}
