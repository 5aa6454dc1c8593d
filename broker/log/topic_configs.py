"""Kafka's topic configs: names, types, defaults, validation, broker synonyms.

``TOPIC_CONFIGS`` is Kafka 4.x's LogConfig table (plus KIP-932's
share.auto.offset.reset), with the broker config that supplies each default
(Kafka's ServerTopicConfigSynonyms) and what the config does on this one-node
broker: ``applied`` (always), ``durable`` (with log.dirs) or ``inert``
(accepted and described, no effect; see docs/ADMIN.md). Values are validated
the way Kafka's ConfigDef does it, with Kafka's messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kipper.broker.config_values import (BROKER_CODECS, in_order, java_double, java_float, java_hash_order,
                                         java_long, ranked, share_reset_problem)

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
INT_MIN = -2**31
LONG_MIN = -2**63

APPLIED, DURABLE, INERT = "applied", "durable", "inert"

# DescribeConfigs ConfigType (KIP-569)
CONFIG_TYPES = {"boolean": 1, "string": 2, "int": 3, "short": 4, "long": 5, "double": 6,
                "list": 7, "class": 8, "password": 9}



class ConfigValueError(ValueError):
    """A config value Kafka's ConfigDef would refuse; the message is Kafka's."""


def parse_value(type_: str, name: str, text: str):
    """Kafka's ConfigDef.parseType for the types topic and group configs use."""
    value = text.strip()
    try:
        if type_ in ("short", "int", "long"):
            n = java_long(value)
            lo, hi = {"short": (-2**15, 2**15 - 1), "int": (INT_MIN, INT_MAX)}.get(type_, (LONG_MIN, LONG_MAX))
            if not lo <= n <= hi:
                raise ValueError
            return n
        if type_ == "double":
            return java_float(value)
    except ValueError:
        raise ConfigValueError(f"Invalid value {text} for configuration {name}: "
                               f"Not a number of type {type_.upper()}") from None
    if type_ == "boolean":
        if value.lower() not in ("true", "false"):
            raise ConfigValueError(f"Invalid value {text} for configuration {name}: "
                                   "Expected value to be either true or false")
        return value.lower() == "true"
    if type_ == "list":
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def canonical(type_: str, name: str, text: str) -> str:
    """``text`` as Kafka holds it once parsed, printed again ('+5' as 5, '0.5d' as 0.5); the text
    itself when it does not parse."""
    try:
        return render(type_, parse_value(type_, name, text))
    except ConfigValueError:
        return text


def render(type_: str, value) -> str:
    """Kafka's ConfigDef.convertToString."""
    if type_ == "boolean":
        return "true" if value else "false"
    if type_ == "list":
        return ",".join(value)
    if type_ == "double":
        return java_double(value)
    return str(value)


def at_least(lo):
    return lambda v: None if v >= lo else f"Value must be at least {lo}"


def between(lo, hi):
    def check(v):
        if v < lo:
            return f"Value must be at least {lo}"
        if v > hi:
            return f"Value must be no more than {hi}"
        return None
    return check


def one_of(*choices: str):
    return lambda v: None if v in choices else f"String must be one of: {', '.join(choices)}"


def each_of(*choices: str):
    """Kafka's ValidList of ValidStrings: the first element that is none of them is the value
    its refusal shows."""
    def check(items):
        bad = [i for i in items if i not in choices]
        return (bad[0], f"String must be one of: {', '.join(choices)}") if bad else None
    return check


def _level(lo: int, hi: int, default: int):
    """CompressionType.levelValidator: [lo,...,hi] or the codec's default."""
    return lambda v: None if v == default or lo <= v <= hi else f"[{lo},...,{hi}] or {default}"


def _throttled_replicas(name: str):
    """ThrottledReplicaListValidator: '*' or partitionId:brokerId entries; its refusal shows
    the whole list as Java prints one and names the config again."""
    def check(items):
        if items == ["*"]:
            return None
        for item in items:
            left, sep, right = item.partition(":")
            if not (sep and left.strip().isdigit() and right.strip().isdigit()):
                return ("[" + ", ".join(items) + "]", f"{name} must be the literal '*' or a list of replicas in "
                        "the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
        return None
    return check


def checked(check: Callable | None, type_: str, name: str, text: str, value):
    """``value`` (parsed from ``text``) if ``check`` takes it, else ConfigValueError with Kafka's
    ConfigException text, which quotes the parsed value (a double as Java prints it) or what the
    check says its validator shows: ``check`` returns None, a problem, or (shown, problem)."""
    problem = check(value) if check is not None else None
    if not problem:
        return value
    shown = text if type_ in ("list", "string") else render(type_, value)
    if isinstance(problem, tuple):
        shown, problem = problem
    raise ConfigValueError(f"Invalid value {shown} for configuration {name}: {problem}")


@dataclass(frozen=True)
class TopicConfigDef:
    name: str
    type: str
    default: str  # Kafka's default, used when no broker key supplies one
    check: Callable | None
    effect: str
    doc: str
    synonym: str | None = None  # Kafka's broker config (ServerTopicConfigSynonyms)
    static_key: str | None = None  # kipper's broker key giving the default, when it has one
    internal: bool = False  # accepted, never described (Kafka's defineInternal)

    def parse(self, text: str):
        """The typed value of ``text``, or ConfigValueError with Kafka's message."""
        value = parse_value(self.type, self.name, text)
        return checked(self.check, self.type, self.name, text, value)

    def canonical(self, text: str) -> str:
        return canonical(self.type, self.name, text)


def _d(name, type_, default, check, effect, doc, synonym=None, static_key=None, internal=False):
    return TopicConfigDef(name, type_, default, check, effect, doc, synonym, static_key, internal)


_L = str(LONG_MAX)

TOPIC_CONFIGS: dict[str, TopicConfigDef] = {d.name: d for d in (
    _d("cleanup.policy", "list", "delete", each_of("compact", "delete"), APPLIED,
       "delete: retention removes old data; compact: the log cleaner keeps the latest record "
       "per key (and retention applies only with delete too); empty: keep everything.", "log.cleanup.policy",
       "log.cleanup.policy"),
    _d("compression.gzip.level", "int", "-1", _level(1, 9, -1), APPLIED,
       "Level used when compression.type=gzip recompresses.", "compression.gzip.level"),
    _d("compression.lz4.level", "int", "9", _level(1, 17, 9), APPLIED,
       "Level used when compression.type=lz4 recompresses.", "compression.lz4.level"),
    _d("compression.type", "string", "producer", one_of(*BROKER_CODECS), APPLIED,
       "producer keeps the producer's codec; any other value recompresses batches to it.",
       "compression.type", "compression.type"),
    _d("compression.zstd.level", "int", "3", _level(-131072, 22, 3), APPLIED,
       "Level used when compression.type=zstd recompresses.", "compression.zstd.level"),
    _d("errors.deadletterqueue.group.enable", "boolean", "false", None, INERT,
       "Lets share groups use the topic as a dead-letter queue (Kafka 4.4; kipper has no DLQ)."),
    _d("delete.retention.ms", "long", "86400000", at_least(0), APPLIED,
       "How long the log cleaner keeps tombstones and transaction markers.",
       "log.cleaner.delete.retention.ms", "log.cleaner.delete.retention.ms"),
    _d("file.delete.delay.ms", "long", "60000", at_least(0), INERT,
       "Delay before a deleted segment's file is removed (kipper removes it at once).",
       "log.segment.delete.delay.ms"),
    _d("flush.messages", "long", _L, at_least(1), DURABLE,
       "fsync a partition after this many records.", "log.flush.interval.messages",
       "log.flush.interval.messages"),
    _d("flush.ms", "long", _L, at_least(0), DURABLE,
       "fsync a partition this long after its last flush.", "log.flush.interval.ms",
       "log.flush.interval.ms"),
    _d("follower.replication.throttled.replicas", "list", "",
       _throttled_replicas("follower.replication.throttled.replicas"), INERT,
       "Replicas throttled on followers (one node: no replication)."),
    _d("index.interval.bytes", "int", "4096", at_least(0), DURABLE,
       "Bytes between two entries of the offset index.", "log.index.interval.bytes",
       "log.index.interval.bytes"),
    _d("leader.replication.throttled.replicas", "list", "",
       _throttled_replicas("leader.replication.throttled.replicas"), INERT,
       "Replicas throttled on the leader (one node: no replication)."),
    _d("local.retention.bytes", "long", "-2", at_least(-2), INERT,
       "Local retention with tiered storage (not supported).", "log.local.retention.bytes"),
    _d("local.retention.ms", "long", "-2", at_least(-2), INERT,
       "Local retention with tiered storage (not supported).", "log.local.retention.ms"),
    _d("max.compaction.lag.ms", "long", _L, at_least(1), APPLIED,
       "Dirty records older than this are compacted whatever the dirty ratio.",
       "log.cleaner.max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms"),
    _d("max.message.bytes", "int", "1048588", at_least(0), APPLIED,
       "Largest record batch accepted (MESSAGE_TOO_LARGE above it).", "message.max.bytes",
       "message.max.bytes"),
    _d("message.timestamp.after.max.ms", "long", "3600000", at_least(0), APPLIED,
       "CreateTime records more than this far ahead of the broker's clock get INVALID_TIMESTAMP "
       "(Kafka 4's default, KIP-1030: one hour).", "log.message.timestamp.after.max.ms",
       "log.message.timestamp.after.max.ms"),
    _d("message.timestamp.before.max.ms", "long", _L, at_least(0), APPLIED,
       "CreateTime records more than this far behind the broker's clock get INVALID_TIMESTAMP.",
       "log.message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms"),
    _d("message.timestamp.type", "string", "CreateTime", one_of("CreateTime", "LogAppendTime"),
       APPLIED, "LogAppendTime: the broker stamps every batch with its append time.",
       "log.message.timestamp.type", "log.message.timestamp.type"),
    _d("max.decompressed.message.bytes", "int", "2147483639", at_least(0), INERT,
       "Largest decompressed record the broker accepts (Kafka 4.4).", "max.decompressed.message.bytes"),
    _d("min.cleanable.dirty.ratio", "double", "0.5", between(0, 1), APPLIED,
       "Dirty share of the log before the log cleaner compacts it.",
       "log.cleaner.min.cleanable.ratio", "log.cleaner.min.cleanable.ratio"),
    _d("min.compaction.lag.ms", "long", "0", at_least(0), APPLIED,
       "Records younger than this are not compacted.",
       "log.cleaner.min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms"),
    _d("min.insync.replicas", "int", "1", at_least(1), APPLIED,
       "In a cluster, the ISR an acks=all Produce needs (NOT_ENOUGH_REPLICAS below it); one node is "
       "always its own ISR.", "min.insync.replicas"),
    _d("preallocate", "boolean", "false", None, INERT,
       "Preallocate segment files (kipper's segments grow as written).", "log.preallocate"),
    _d("remote.copy.lag.bytes", "long", "-1", None, INERT,
       "Tiered storage upload lag by size (not supported).", "log.remote.copy.lag.bytes"),
    _d("remote.copy.lag.ms", "long", "0", None, INERT,
       "Tiered storage upload lag by time (not supported).", "log.remote.copy.lag.ms"),
    _d("remote.log.copy.disable", "boolean", "false", None, INERT,
       "Tiered storage (not supported)."),
    _d("remote.log.delete.on.disable", "boolean", "false", None, INERT,
       "Tiered storage (not supported)."),
    _d("remote.storage.enable", "boolean", "false", None, INERT,
       "Tiered storage; true is refused, as by a Kafka broker without it."),
    _d("retention.bytes", "long", "-1", None, APPLIED,
       "Size retention per partition (-1: unlimited).", "log.retention.bytes", "retention.bytes"),
    _d("retention.ms", "long", "604800000", at_least(-1), APPLIED,
       "Time retention (-1: keep forever).", "log.retention.ms", "retention.ms"),
    _d("segment.bytes", "int", "1073741824", at_least(1024 * 1024), DURABLE,
       "A segment rolls past this size (Kafka 4's minimum: 1 MiB).", "log.segment.bytes",
       "log.segment.bytes"),
    _d("segment.index.bytes", "int", "10485760", at_least(4), INERT,
       "Size of a segment's preallocated index (kipper's indexes grow as written).",
       "log.index.size.max.bytes"),
    _d("segment.jitter.ms", "long", "0", at_least(0), INERT,
       "Random jitter subtracted from segment.ms.", "log.roll.jitter.ms"),
    _d("segment.ms", "long", "604800000", at_least(1), DURABLE,
       "A segment rolls this long after its first batch.", "log.roll.ms", "log.roll.ms"),
    _d("share.auto.offset.reset", "string", "latest", share_reset_problem, APPLIED,
       "Where a new share-partition starts (kipper, seed 004)."),
    _d("unclean.leader.election.enable", "boolean", "false", None, APPLIED,
       "In a cluster, elect an out-of-sync replica when no in-sync one is left (one node: no "
       "election).", "unclean.leader.election.enable"),
    _d("internal.segment.bytes", "int", "", at_least(14), DURABLE,
       "segment.bytes below Kafka's 1 MiB minimum, for tests (Kafka's internal config).",
       internal=True),
)}


def describable() -> list[str]:
    """Every topic config DescribeConfigs reports, in name order."""
    return sorted(n for n, d in TOPIC_CONFIGS.items() if not d.internal)


# LogConfig's ConfigDef in Kafka 4.4's definition order: ConfigDef.parse checks values in this
# order (probed: every value invalid at once, Kafka names the first; kipper's own come last)
DEFINITION_ORDER = ranked((
    "segment.bytes", "segment.ms", "segment.jitter.ms", "segment.index.bytes", "flush.messages", "flush.ms",
    "retention.bytes", "retention.ms", "max.message.bytes", "max.decompressed.message.bytes", "index.interval.bytes",
    "delete.retention.ms",
    "min.compaction.lag.ms", "max.compaction.lag.ms", "file.delete.delay.ms", "min.cleanable.dirty.ratio",
    "cleanup.policy", "unclean.leader.election.enable", "min.insync.replicas", "compression.type",
    "compression.gzip.level", "compression.lz4.level", "compression.zstd.level", "preallocate",
    "message.timestamp.type", "message.timestamp.before.max.ms", "message.timestamp.after.max.ms",
    "leader.replication.throttled.replicas", "follower.replication.throttled.replicas", "remote.storage.enable",
    "local.retention.ms", "local.retention.bytes", "remote.log.copy.disable", "remote.copy.lag.ms",
    "remote.copy.lag.bytes", "remote.log.delete.on.disable", "errors.deadletterqueue.group.enable"))


def validate_topic_configs(configs: dict[str, str | None]) -> str | None:
    """Kafka's LogConfig.validate: names first (the first unknown one in its Properties' hash
    order), then values in LogConfig's definition order, then the rules between them."""
    if any(key not in TOPIC_CONFIGS for key in configs):
        unknown = next(k for k in java_hash_order(configs, concurrent=True) if k not in TOPIC_CONFIGS)
        return f"Unknown topic config name: {unknown}"
    parsed = {}
    for key in in_order(configs, DEFINITION_ORDER):
        value = configs[key]
        if value is None:
            return f"Null value not supported for topic config: {key}"
        try:
            parsed[key] = TOPIC_CONFIGS[key].parse(value)
        except ConfigValueError as exc:
            return str(exc)
    low = parsed.get("min.compaction.lag.ms", 0)
    high = parsed.get("max.compaction.lag.ms", LONG_MAX)
    if low > high:
        return (f"conflict topic config setting min.compaction.lag.ms ({low}) > "
                f"max.compaction.lag.ms ({high})")
    if parsed.get("remote.storage.enable"):
        return ("Tiered Storage functionality is disabled in the broker. "
                "Topic cannot be configured with remote log storage.")
    return None
