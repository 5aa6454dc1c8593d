"""DescribeConfigs for topics, groups and this broker, as Kafka's ConfigHelper
answers: every config with its value, source and (when asked) synonyms in order
of precedence, type and documentation."""

from __future__ import annotations

from kipper.broker.acl.model import CLUSTER, CLUSTER_NAME, DESCRIBE_CONFIGS, GROUP
from kipper.broker.acl.model import TOPIC as ACL_TOPIC
from kipper.broker.config import KEYS, defaults_text
from kipper.broker.dynamic_configs import ALIASES, DYNAMIC_KEYS, SET_ONLY_KEYS, dynamic_key
from kipper.broker.groups.configs import GROUP_CONFIGS, GROUP_TYPES
from kipper.broker.kafka_broker_configs import AUTHORIZER_CONFIGS, KAFKA_BROKER_CONFIGS
from kipper.broker.log.effective import NULL_DEFAULTS
from kipper.broker.log.topic_configs import CONFIG_TYPES, canonical, describable
from kipper.broker.log.topics import validate_topic_name
from kipper.broker.telemetry.subscriptions import RESOURCE_TYPE as CLIENT_METRICS
from kipper.protocol.errors import ErrorCode, kafka_text

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
STATIC_BROKER_CONFIG, DEFAULT_CONFIG, DYNAMIC_BROKER_LOGGER_CONFIG = 4, 5, 6
CLIENT_METRICS_CONFIG, DYNAMIC_GROUP_CONFIG = 7, 8
UNKNOWN_TYPE = 0  # DescribeConfigs config_type of a name that is no config
KAFKA_RESOURCE_TYPES = frozenset({2, 4, 8, 16, 32})  # Kafka's ConfigResource.Type: topic, broker, broker logger...
SENSITIVE = {"ssl.key.password"}  # Kafka's PASSWORD type: never sent back
# Kafka 4.4's GroupConfig.ALL_GROUP_CONFIG_SYNONYMS: the broker config a group config overrides
GROUP_BROKER_SYNONYMS = {
    "consumer.session.timeout.ms": "group.consumer.session.timeout.ms",
    "consumer.heartbeat.interval.ms": "group.consumer.heartbeat.interval.ms",
    "consumer.assignment.interval.ms": "group.consumer.assignment.interval.ms",
    "share.session.timeout.ms": "group.share.session.timeout.ms",
    "share.heartbeat.interval.ms": "group.share.heartbeat.interval.ms",
    "share.record.lock.duration.ms": "group.share.record.lock.duration.ms",
    "share.delivery.count.limit": "group.share.delivery.count.limit",
    "share.partition.max.record.locks": "group.share.partition.max.record.locks",
    "share.assignment.interval.ms": "group.share.assignment.interval.ms",
    "streams.session.timeout.ms": "group.streams.session.timeout.ms",
    "streams.heartbeat.interval.ms": "group.streams.heartbeat.interval.ms",
    "streams.num.standby.replicas": "group.streams.num.standby.replicas",
    "streams.initial.rebalance.delay.ms": "group.streams.initial.rebalance.delay.ms",
    "streams.assignment.interval.ms": "group.streams.assignment.interval.ms",
    "streams.assignor.name": "group.streams.assignors",
    "streams.rack.aware.assignment.tags": "group.streams.rack.aware.assignment.tags",
}


def _text(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    return str(value)


# Kafka's configs for the replicas of its internal topics, which a one-node Kafka must set
# to 1 and which are 1 on kipper, a broker of one node
ONE_NODE_DEFAULTS = {"offsets.topic.replication.factor": "1", "transaction.state.log.replication.factor": "1",
                     "transaction.state.log.min.isr": "1", "share.coordinator.state.topic.replication.factor": "1",
                     "share.coordinator.state.topic.min.isr": "1", "default.replication.factor": "1"}


def _type_of(name: str) -> int:
    kafka = KAFKA_BROKER_CONFIGS.get(name)
    if kafka is not None:  # the type Kafka declares
        return CONFIG_TYPES[kafka.type]
    if name in DYNAMIC_KEYS and (name not in KEYS or DYNAMIC_KEYS[name].type == "list"):
        return CONFIG_TYPES[DYNAMIC_KEYS[name].type]
    if name in SET_ONLY_KEYS:
        return CONFIG_TYPES[SET_ONLY_KEYS[name].type]
    parse = KEYS[name].parse
    if parse.__name__ == "boolean":
        return CONFIG_TYPES["boolean"]
    rng = getattr(parse, "range", None)
    if rng and isinstance(KEYS[name].default, float):
        return CONFIG_TYPES["double"]
    if rng:
        return CONFIG_TYPES["long" if rng[1] is None or rng[1] > 2**31 - 1 else "int"]
    return CONFIG_TYPES["string"]


def _static_layers(engines, name: str) -> list[tuple[str, str, int]]:
    """The properties file's value and the default of a broker config, as Kafka lists
    them: kipper's for what kipper implements, Kafka's default for the rest; nothing for
    a config Kafka has no default for and nobody set (Kafka describes it as null)."""
    kafka = KAFKA_BROKER_CONFIGS.get(name)
    if name == "broker.id":  # Kafka's broker.id is its node.id
        return [(name, str(engines.node_id), STATIC_BROKER_CONFIG), (name, kafka.default, DEFAULT_CONFIG)]
    if name in KEYS:
        explicit = name in engines.config.explicit
        found = [(name, _text(engines.config[name]), STATIC_BROKER_CONFIG)] if explicit else []
        default = defaults_text(name)
        # Kafka has no default for it (node.id, log.dirs, ssl.keystore.location...): none
        # is listed once it is set, and kipper's "" (not set) is Kafka's null
        if not (kafka is not None and kafka.default is None and (explicit or default == "")):
            found.append((name, default, DEFAULT_CONFIG))
        return found
    if name in DYNAMIC_KEYS:
        return [(name, DYNAMIC_KEYS[name].default, DEFAULT_CONFIG)]
    if name in ONE_NODE_DEFAULTS:
        return [(name, ONE_NODE_DEFAULTS[name], DEFAULT_CONFIG)]
    if kafka is not None and kafka.default is not None:
        return [(name, kafka.default, DEFAULT_CONFIG)]
    return []


def _broker_row(engines, name: str, synonyms: bool, docs: bool, default_layer_only: bool) -> dict | None:
    dynamic = engines.dynamic_configs
    if name in AUTHORIZER_CONFIGS:  # described only where set: dynamically, in the properties file
        layers = [(dynamic.node, 2), ("", 3)] if not default_layer_only else [("", 3)]
        found = [(name, None, source) for layer, source in layers if name in dynamic.layers[layer]]
        if not default_layer_only and name in engines.config.explicit:
            found.append((name, None, STATIC_BROKER_CONFIG))
        return _row(name, None, found[0][2], found, synonyms, docs, True) if found else None
    found = []
    for layer, source in ((dynamic.node, 2), ("", 3)):
        value = dynamic.layers[layer].get(name)
        if value is not None:
            found.append((name, value, source))
    known = name in KEYS or name in DYNAMIC_KEYS or name in KAFKA_BROKER_CONFIGS or name in SET_ONLY_KEYS
    found += _static_layers(engines, name)
    if name in NULL_DEFAULTS:
        # Kafka's has no default: null until set, and then its longer unit's default follows
        found = [f for f in found if f[2] != DEFAULT_CONFIG]
        if found:
            found.append((*NULL_DEFAULTS[name], DEFAULT_CONFIG))
    if default_layer_only:
        found = [f for f in found if f[2] == 3]
        if not found:
            return None
    if not found:  # a config with no value anywhere: null
        return _row(name, None, DEFAULT_CONFIG, [], synonyms, docs, not known) if known else None
    value = found[0][1]
    if not default_layer_only and found[0][2] in (2, 3):
        value = _as_held(name, value)
    return _row(name, value, found[0][2], found, synonyms, docs, not known)


def _as_held(name: str, text: str) -> str:
    """A broker's dynamic value as its KafkaConfig holds it: parsed, then printed (Kafka's
    ConfigDef.convertToString): '+1' is described as 1 and '0.5d' as 0.5; its synonyms and
    the cluster default's resource keep the text as it was given."""
    kafka = KAFKA_BROKER_CONFIGS.get(name)
    return text if kafka is None else canonical(kafka.type, name, text)


def _read_only(name: str) -> bool:
    """What kipper changes at run time; of Kafka's configs kipper does not use, what Kafka
    changes at run time (stored and described, inert)."""
    if dynamic_key(name) is not None:
        return False
    if name in KEYS:
        return True
    kafka = KAFKA_BROKER_CONFIGS.get(name)
    return kafka is None or not kafka.dynamic


def _doc(name: str) -> str | None:
    if name in KEYS:
        return KEYS[name].doc
    if (key := dynamic_key(name)) is not None:
        return key.doc
    if name in KAFKA_BROKER_CONFIGS:
        return "Apache Kafka's broker config: kipper describes it with Kafka's default and does not use it."
    return None


def _row(name: str, value, source: int, found, synonyms: bool, docs: bool, unknown: bool) -> dict:
    # a name set dynamically that is no broker config: Kafka describes it read-only, of
    # unknown type and, not knowing what it holds, sensitive
    kafka = KAFKA_BROKER_CONFIGS.get(name)
    sensitive = name in SENSITIVE or unknown or (kafka is not None and kafka.sensitive)
    return {"name": name, "value": None if sensitive else value,
            "read_only": _read_only(name), "is_sensitive": sensitive,
            "config_source": source,
            "synonyms": [{"name": n, "value": None if sensitive else v, "source": s}
                         for n, v, s in found] if synonyms else [],
            "config_type": UNKNOWN_TYPE if unknown else _type_of(name),
            "documentation": _doc(name) if docs and not unknown else None}


def _broker_synonyms(engines, name: str, default: str) -> list[tuple[str, str, int]]:
    """A broker config's values from the highest precedence down, Kafka's
    ConfigHelper.configSynonyms for a name without longer-unit synonyms."""
    found = []
    dynamic = engines.dynamic_configs
    for layer, source in ((dynamic.node, 2), ("", 3)):
        value = dynamic.layers[layer].get(name)
        if value is not None:
            found.append((name, value, source))
    if name in KEYS:
        if name in engines.config.explicit:
            found.append((name, _text(engines.config[name]), STATIC_BROKER_CONFIG))
        default = defaults_text(name)
    found.append((name, default, DEFAULT_CONFIG))
    return found


def _group_row(engines, group_id: str, name: str, synonyms: bool, docs: bool) -> dict:
    """Kafka's ConfigHelper.createGroupConfigEntry: the group's own value when set, then its
    broker config's values (GroupConfig.brokerSynonym), or the group config's default."""
    value, explicit = engines.group_configs.describe(group_id)[name]
    d = GROUP_CONFIGS[name]
    found = [(name, value, DYNAMIC_GROUP_CONFIG)] if explicit else []
    broker = GROUP_BROKER_SYNONYMS.get(name)
    found += [(name, d.default, DEFAULT_CONFIG)] if broker is None else _broker_synonyms(engines, broker, d.default)
    return {"name": name, "value": value, "read_only": False, "is_sensitive": False,
            "config_source": found[0][2],
            "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in found] if synonyms else [],
            "config_type": CONFIG_TYPES[d.type], "documentation": d.doc if docs else None}


def _client_metrics_row(name, value, own, kind, doc, synonyms: bool, docs: bool) -> dict:
    """Kafka's ConfigHelper.createClientMetricsConfigEntry: the subscription's value, or the default."""
    found = [{"name": name, "value": value, "source": CLIENT_METRICS_CONFIG}] if own else []
    return {"name": name, "value": value, "read_only": False, "is_sensitive": False,
            "config_source": CLIENT_METRICS_CONFIG if own else DEFAULT_CONFIG, "synonyms": found if synonyms else [],
            "config_type": CONFIG_TYPES[kind], "documentation": doc if docs else None}


def _logger_row(name: str, level: str) -> dict:
    """A logger as Kafka's ConfigHelper describes one: its level, never read-only, of no type."""
    return {"name": name, "value": level, "read_only": False, "is_sensitive": False,
            "config_source": DYNAMIC_BROKER_LOGGER_CONFIG, "synonyms": [], "config_type": UNKNOWN_TYPE,
            "documentation": ""}


def _filter(rows: list[dict], keys) -> list[dict]:
    if not keys:
        return rows
    wanted = set(keys)
    return [r for r in rows if r["name"] in wanted]


def config_resource_denied(ctx, res, operation: int) -> ErrorCode | None:
    """``operation`` (DESCRIBE_CONFIGS or ALTER_CONFIGS) on a config resource, checked as
    Kafka's ConfigHelper and ConfigAdminManager do when an authorizer is configured."""
    if res.resource_type == TOPIC and not ctx.authorize(operation, ACL_TOPIC, res.resource_name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if res.resource_type in GROUP_TYPES and not ctx.authorize(operation, GROUP, res.resource_name):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    cluster_wide = (BROKER, BROKER_LOGGER, CLIENT_METRICS)
    if res.resource_type in cluster_wide and not ctx.authorize(operation, CLUSTER, CLUSTER_NAME):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None


def handle_describe_configs(req, ctx):
    engines = ctx.engines
    synonyms = req.get("include_synonyms", False)
    docs = req.get("include_documentation", False)
    results = []
    unknown = [r.resource_type for r in req.resources if r.resource_type not in KAFKA_RESOURCE_TYPES]
    if unknown:  # Kafka fails the whole request: every resource is answered INVALID_REQUEST, its default text
        return {"throttle_time_ms": 0, "results": [
            {"resource_type": r.resource_type, "resource_name": r.resource_name, "configs": [],
             "error_code": int(ErrorCode.INVALID_REQUEST), "error_message": kafka_text(ErrorCode.INVALID_REQUEST)}
            for r in req.resources]}
    for res in req.resources:
        # (Kafka's answer for a resource described: error_message "", not null)
        row = {"resource_type": res.resource_type, "resource_name": res.resource_name,
               "error_code": 0, "error_message": "", "configs": []}
        keys = res.configuration_keys
        denied = config_resource_denied(ctx, res, DESCRIBE_CONFIGS)
        if denied is not None:
            row.update(error_code=int(denied), error_message=kafka_text(denied))
        elif res.resource_type == TOPIC:
            topic = engines.topics.get(res.resource_name)
            if topic is None and validate_topic_name(res.resource_name):
                row.update(error_code=int(ErrorCode.INVALID_TOPIC_EXCEPTION),
                           error_message=validate_topic_name(res.resource_name))
            elif topic is None:
                row.update(error_code=int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))  # (message "", as Kafka)
            else:
                view = engines.topic_configs
                row["configs"] = [view.row(topic.configs, k, include_synonyms=synonyms,
                                           include_documentation=docs)
                                  for k in describable() if not keys or k in keys]
        elif res.resource_type in GROUP_TYPES:
            if not res.resource_name:
                row.update(error_code=int(ErrorCode.INVALID_REQUEST),
                           error_message="Group name must not be empty")
            else:
                row["configs"] = _filter([_group_row(engines, res.resource_name, k,
                                                     synonyms, docs) for k in GROUP_CONFIGS], keys)
        elif res.resource_type == BROKER:
            code, message = engines.dynamic_configs.layer_for(res.resource_name, noun="Broker")
            if code != ErrorCode.NONE:
                row.update(error_code=int(code), error_message=message)
            else:
                # (kipper's retention.ms and retention.bytes are its log.retention.* under a topic
                # config's name: no broker config of Kafka's, described as those)
                names = sorted((set(KEYS) - set(ALIASES.values())) | set(DYNAMIC_KEYS) | set(KAFKA_BROKER_CONFIGS)
                               | engines.dynamic_configs.unknown_names())
                rows = [_broker_row(engines, n, synonyms, docs, res.resource_name == "")
                        for n in names if not keys or n in keys]
                row["configs"] = [r for r in rows if r is not None]
        elif res.resource_type == BROKER_LOGGER:
            problem = engines.loggers.describe_problem(res.resource_name)
            if problem is not None:
                row.update(error_code=int(ErrorCode.INVALID_REQUEST), error_message=problem)
            else:
                loggers = engines.loggers.loggers().items()
                row["configs"] = _filter([_logger_row(n, level) for n, level in loggers], keys)
        elif res.resource_type == CLIENT_METRICS:
            if not res.resource_name:
                row.update(error_code=int(ErrorCode.INVALID_REQUEST),
                           error_message="Client metrics subscription name must not be empty")
            else:
                row["configs"] = _filter([_client_metrics_row(n, v, own, kind, doc, synonyms, docs) for n, v, own, kind, doc
                                          in engines.client_metrics.describe(res.resource_name)], keys)
        else:
            row.update(error_code=int(ErrorCode.INVALID_REQUEST),
                       error_message=f"Unsupported resource type: {res.resource_type}")
        results.append(row)
    return {"throttle_time_ms": 0, "results": results}
