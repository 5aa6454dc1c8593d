"""Dynamic broker configs (Kafka's KIP-226): what IncrementalAlterConfigs and
AlterConfigs may change on a BROKER resource while the broker runs.

Values live in two layers, this broker's (resource name = node.id) over the
cluster default (resource name ""), and both win over the properties file, as
in Kafka's DynamicBrokerConfig. ``DYNAMIC_KEYS`` holds the configs Kafka treats
as dynamic: the topic defaults (log.retention.ms, log.cleanup.policy, ...; they
reach every topic without an override of its own), the producer-state pair, and
thread, connection and cleaner settings that mean nothing on kipper (accepted,
described, inert). Every other broker config gets Kafka's answer for a static one.
A name that is no broker config at all is stored and described as Kafka does (its
DynamicBrokerConfig checks only known static names): a sensitive value of unknown
type, read by nothing. Changes persist in the metadata store with log.dirs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

from kipper.broker.config import KEYS, BrokerConfig, ConfigError, defaults_text
from kipper.broker.config_values import in_order, java_double, java_float, java_set_text, ranked
from kipper.broker.kafka_broker_configs import AUTHORIZER_CONFIGS, KAFKA_BROKER_CONFIGS
from kipper.broker.log.topic_configs import (
    APPLIED, INERT, TOPIC_CONFIGS, ConfigValueError, TopicConfigDef, checked, parse_value,
)
from kipper.broker.storage.metadata import MetadataStore
from kipper.protocol.errors import ErrorCode

DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 2, 3  # DescribeConfigs ConfigSource

# Kafka's name -> kipper's broker key of the same meaning, where they differ
ALIASES = {"log.retention.ms": "retention.ms", "log.retention.bytes": "retention.bytes"}


@dataclass(frozen=True)
class DynamicKey:
    name: str
    type: str
    parse: Callable[[str], Any]  # raises ConfigValueError or ConfigError
    default: str
    effect: str
    doc: str


def _from_topic(d: TopicConfigDef) -> DynamicKey:
    def parse(text: str):
        return checked(d.check, d.type, d.synonym, text, parse_value(d.type, d.synonym, text))
    key = ALIASES.get(d.synonym, d.static_key)
    default = defaults_text(key) if key in KEYS else d.default
    return DynamicKey(d.synonym, d.type, parse, default, d.effect,
                      f"Default of topic config {d.name}. {d.doc}")


def _from_static(name: str, effect: str) -> DynamicKey:
    key = KEYS[name]
    return DynamicKey(name, "long", key.parse, defaults_text(name), effect, key.doc)


def _inert(name: str, type_: str, default: str, doc: str, at_least: int | None = None) -> DynamicKey:
    def parse(text: str):
        value = parse_value(type_, name, text)
        if at_least is not None and value < at_least:
            raise ConfigValueError(f"Invalid value {value} for configuration {name}: Value must be at least {at_least}")
        return value
    return DynamicKey(name, type_, parse, default, INERT, doc)


DYNAMIC_KEYS: dict[str, DynamicKey] = {k.name: k for k in (
    *(_from_topic(d) for d in TOPIC_CONFIGS.values() if d.synonym),
    _from_static("producer.id.expiration.ms", APPLIED),
    _from_static("transaction.partition.verification.enable", APPLIED),
    _inert("num.io.threads", "int", "8", "Request handler threads (kipper: one event loop).", at_least=1),
    _inert("num.network.threads", "int", "3", "Network threads (kipper: one event loop).", at_least=1),
    _inert("num.replica.fetchers", "int", "1", "Replica fetchers (one node: no replication).", at_least=1),
    _inert("num.recovery.threads.per.data.dir", "int", "2", "Log recovery threads per directory.", at_least=1),
    _inert("background.threads", "int", "10", "Background task threads.", at_least=1),
    _from_static("log.cleaner.threads", APPLIED),
    _inert("log.cleaner.io.max.bytes.per.second", "double", java_double(1.7976931348623157e308),
           "Log cleaner I/O limit (not enforced)."),
    _inert("log.cleaner.dedupe.buffer.size", "long", "134217728", "Log cleaner buffer (kipper sizes its own)."),
    _inert("log.cleaner.io.buffer.size", "int", "524288", "Log cleaner buffer (kipper sizes its own)."),
    _inert("log.cleaner.io.buffer.load.factor", "double", "0.9", "Log cleaner load factor (kipper sizes its own)."),
    _from_static("log.cleaner.backoff.ms", INERT),  # read when the broker starts
    _from_static("group.streams.assignment.interval.ms", INERT),  # (likewise: Kafka changes it at run time)
    _inert("max.connections", "int", str(2**31 - 1), "Connection limit (not enforced)."),
    _inert("max.connections.per.ip", "int", str(2**31 - 1), "Connection limit per IP (not enforced)."),
    _inert("max.connection.creation.rate", "int", str(2**31 - 1), "Connection rate limit (not enforced)."),
    _inert("max.connections.per.ip.overrides", "string", "", "Per-IP limits (not enforced)."),
    _inert("metric.reporters", "list", "", "Metric reporter classes (kipper: metrics dumps)."),
)}
# Kafka's per-broker replication quotas (DynamicConfig.Broker: kafka-reassign-partitions --throttle
# sets them): no KafkaConfig of Kafka's, so described only once set, with no default; inert on one node
SET_ONLY_KEYS: dict[str, DynamicKey] = {k.name: k for k in (
    _inert(name, "long", str(2**63 - 1), doc, at_least=0) for name, doc in (
        ("leader.replication.throttled.rate", "Replication rate limit of the throttled leader replicas (B/s)."),
        ("follower.replication.throttled.rate", "Replication rate limit of the throttled follower replicas (B/s)."),
        ("replica.alter.log.dirs.io.max.bytes.per.second", "Log directory move rate limit (B/s)."))
)}


def dynamic_key(name: str) -> DynamicKey | None:
    """The dynamic broker config of that name, listed always or only once set."""
    return DYNAMIC_KEYS.get(name) or SET_ONLY_KEYS.get(name)


def _value_problem(name: str, value: str) -> str | None:
    """Why Kafka would refuse ``value`` for broker config ``name``, in its words: the type
    it declares first, then the range."""
    kafka = KAFKA_BROKER_CONFIGS.get(name)
    dynamic = dynamic_key(name)
    if dynamic is None and kafka is None:
        return None  # unknown: stored, read by nothing
    try:
        if kafka is not None:
            parse_value(kafka.type, name, value)
        if dynamic is not None:
            dynamic.parse(value)
    except (ConfigValueError, ConfigError) as exc:
        message = str(exc)
        rng = getattr(KEYS[name].parse, "range", None) if name in KEYS else None
        if rng is not None and not message.startswith("Invalid value"):
            lo, hi = rng
            message = (f"Value must be at least {lo}" if lo is not None and java_float(value) < lo
                       else f"Value must be no more than {hi}")
        if not message.startswith("Invalid value"):
            message = f"Invalid value {value} for configuration {name}: {message}"
        return message
    return AFTER_PARSING[name](value) if name in AFTER_PARSING else None


# the order Kafka checks a broker's new values in (probed: every value invalid at once, Kafka
# names the first): DynamicConfig.Broker's own ConfigDef, then KafkaConfig's in its definition
# order; a name not here comes after, in the request's order
KAFKA_CHECK_ORDER = ranked((
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second", "log.local.retention.ms", "log.local.retention.bytes",
    "log.remote.copy.lag.ms", "log.remote.copy.lag.bytes", "message.max.bytes", "max.decompressed.message.bytes",
    "num.io.threads", "background.threads", "compression.type", "compression.gzip.level", "compression.lz4.level",
    "compression.zstd.level", "max.connections.per.ip", "max.connections", "max.connection.creation.rate",
    "num.network.threads", "num.replica.fetchers", "unclean.leader.election.enable",
    "group.streams.assignment.interval.ms", "log.cleaner.threads", "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.size", "log.cleaner.io.buffer.load.factor",
    "log.cleaner.backoff.ms", "log.cleaner.min.cleanable.ratio", "log.cleaner.delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", "log.segment.bytes", "log.roll.ms",
    "log.roll.jitter.ms", "log.retention.ms", "log.retention.bytes", "log.cleanup.policy", "log.index.size.max.bytes",
    "log.index.interval.bytes", "log.flush.interval.messages", "log.segment.delete.delay.ms", "log.flush.interval.ms",
    "log.preallocate", "num.recovery.threads.per.data.dir", "min.insync.replicas", "log.message.timestamp.type",
    "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms",
    "transaction.partition.verification.enable", "producer.id.expiration.ms", "max.connections.per.ip.overrides",
    "metric.reporters"))


def _ip_overrides_problem(text: str) -> str | None:
    """Kafka's reading of max.connections.per.ip.overrides (CoreUtils.parseCsvMap, then each
    limit an int, then each host of valid characters), with the texts of the Java exceptions
    it passes on."""
    if text == "":
        return None
    entries = re.split(r"\s*,\s*", text)
    while len(entries) > 1 and entries[-1] == "":  # (Java's split drops trailing empty strings)
        entries.pop()
    pairs = {}
    for entry in entries:
        colon = entry.rfind(":")
        if colon < 0:  # substring(0, -1)
            return (f"Error parsing configuration property 'max.connections.per.ip.overrides': "
                    f"begin 0, end -1, length {len(entry)}")
        pairs[entry[:colon].strip()] = entry[colon + 1:].strip()
    for limit in pairs.values():
        if not re.fullmatch(r"[+-]?[0-9]+", limit) or not -2**31 <= int(limit) < 2**31:
            return f'For input string: "{limit}"'
    invalid = [host for host in pairs if not re.fullmatch(r"[0-9a-zA-Z\-%._:]*", host)]
    return f"max.connections.per.ip.overrides contains invalid addresses : {','.join(invalid)}" if invalid else None


REPORTERS = frozenset({"org.apache.kafka.common.metrics.JmxReporter"})  # the one Kafka ships for brokers


def _reporters_problem(text: str) -> str | None:
    """A metrics reporter class Kafka cannot load is refused in its words (kipper knows only
    Kafka's own JmxReporter, which it does not run either: its metrics are dumps)."""
    if all(name.strip() in REPORTERS for name in text.split(",") if name.strip()):
        return None
    return ("Invalid value org.apache.kafka.common.config.ConfigException: Validation of dynamic config update "
            "of Set(metric.reporters) failed with class class kafka.server.DynamicMetricsReporters for "
            "configuration Invalid dynamic configuration")


# what Kafka checks of a value after its ConfigDef has parsed it
AFTER_PARSING = {"max.connections.per.ip.overrides": _ip_overrides_problem, "metric.reporters": _reporters_problem}


class DynamicBrokerConfigs:
    def __init__(self, static: BrokerConfig, metadata: MetadataStore | None = None):
        self.static = static
        self.node = str(static["node.id"])
        self.metadata = metadata or MetadataStore()
        stored = self.metadata.broker_configs
        self.layers: dict[str, dict[str, str]] = {"": dict(stored.get("", {})),
                                                  self.node: dict(stored.get(self.node, {}))}
        self.generation = 0  # moves on every change; views cache by it
        self.view = BrokerConfigView(self)

    # --- reading ----------------------------------------------------------------------------

    def dynamic(self, name: str) -> tuple[str, int] | None:
        """(value, DescribeConfigs source) of ``name`` if set dynamically."""
        if name in self.layers[self.node]:
            return self.layers[self.node][name], DYNAMIC_BROKER_CONFIG
        if name in self.layers[""]:
            return self.layers[""][name], DYNAMIC_DEFAULT_BROKER_CONFIG
        return None

    def typed(self, key: str):
        """A kipper broker key's value, a dynamic one (under Kafka's name) first."""
        for name, alias in ALIASES.items():
            if alias == key:
                key_name = name
                break
        else:
            key_name = key
        found = self.dynamic(key_name)
        return self.static[key] if found is None else KEYS[key].parse(found[0])

    # --- changing ---------------------------------------------------------------------------

    def layer_for(self, resource_name: str, noun: str = "Node") -> tuple[ErrorCode, str | None]:
        """Which layer a BROKER resource names: "" (cluster default) or this node. ``noun``:
        Kafka's text for a name that is no integer says "Node id" when altering
        (ConfigAdminManager), "Broker id" when describing (ConfigHelper)."""
        if resource_name == "":
            return ErrorCode.NONE, None
        try:
            node = int(resource_name)
        except ValueError:
            return ErrorCode.INVALID_REQUEST, f"{noun} id must be an integer, but it is: {resource_name}"
        if str(node) != self.node:
            return (ErrorCode.INVALID_REQUEST,
                    f"Unexpected broker id, expected {self.node}, but received {resource_name}")
        return ErrorCode.NONE, None

    def check(self, configs: dict[str, str]) -> tuple[ErrorCode, str | None]:
        """Kafka's DynamicBrokerConfig.validate: static names, then values, with Kafka's
        messages. A name that is no broker config (kipper's or Kafka's) passes, as in
        Kafka; one that Kafka reconfigures at run time and kipper does not use is checked
        against its type and stored, inert."""
        # (kipper's retention.ms and retention.bytes are topic configs' names, no broker
        # config of Kafka's: there they pass as any unknown name)
        static = [k for k in configs if k not in DYNAMIC_KEYS and k not in AUTHORIZER_CONFIGS and (
            k in KEYS and not (k in TOPIC_CONFIGS and k not in KAFKA_BROKER_CONFIGS)
            or (k in KAFKA_BROKER_CONFIGS and not KAFKA_BROKER_CONFIGS[k].dynamic))]
        if static:
            return ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: {java_set_text(static)}"
        for name in in_order(configs, KAFKA_CHECK_ORDER):
            problem = _value_problem(name, configs[name])
            if problem:
                return ErrorCode.INVALID_REQUEST, problem
        return ErrorCode.NONE, None

    def unknown_names(self) -> set[str]:
        """Names set dynamically that are no broker config, kipper's or Kafka's (described
        as Kafka does), and the ``SET_ONLY_KEYS`` that are set."""
        return {n for layer in self.layers.values() for n in layer
                if (n not in KEYS or n in AUTHORIZER_CONFIGS) and n not in DYNAMIC_KEYS
                and n not in KAFKA_BROKER_CONFIGS}

    def current(self, resource_name: str) -> dict[str, str]:
        return dict(self.layers["" if resource_name == "" else self.node])

    def replace(self, resource_name: str, configs: dict[str, str]) -> None:
        """The whole dynamic set of one layer (already checked); persisted."""
        layer = "" if resource_name == "" else self.node
        self.layers[layer] = dict(configs)
        self.metadata.put_broker_configs(layer, self.layers[layer])
        self.generation += 1


class BrokerConfigView(Mapping):
    """The broker config as engines should read it: dynamic values over static ones."""

    def __init__(self, dynamic: DynamicBrokerConfigs):
        self._dynamic = dynamic

    @property
    def explicit(self):
        return self._dynamic.static.explicit

    def __getitem__(self, key: str):
        return self._dynamic.typed(key)

    def __iter__(self):
        return iter(self._dynamic.static)

    def __len__(self) -> int:
        return len(self._dynamic.static)
