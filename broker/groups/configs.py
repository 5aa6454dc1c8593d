"""Dynamic per-group configs (Kafka's GROUP config resource, KIP-848/932/1071).

``GROUP_CONFIGS`` is a table in the shape of Kafka's GroupConfig: one entry per
key with its type, the broker key that supplies its default, its own check and
what kipper does with it; ``RULES`` are the checks across keys (a session
timeout within the broker's bounds and above the heartbeat interval). Kafka
validates the whole resulting set, unset keys at their defaults, and so does
``check_all``. Applied today: consumer.session.timeout.ms and
consumer.heartbeat.interval.ms (KIP-848 groups, broker/groups/consumer/), the
share.* keys (broker/share/group_settings.py) and the streams.* keys
(broker/groups/streams/settings.py). The consumer and share assignment-interval
keys, the streams assignor's (``sticky``, the one registered) and the dead-letter ones are
accepted and inert. Set with IncrementalAlterConfigs or AlterConfigs, read
with DescribeConfigs and by the engines through ``get``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kipper.broker.config import KEYS
from kipper.broker.config_values import java_hash_order, share_reset_problem
from kipper.broker.kafka_broker_configs import KAFKA_BROKER_CONFIGS
from kipper.broker.log.topic_configs import (
    APPLIED, INERT, ConfigValueError, at_least, checked, one_of, parse_value, render,
)
from kipper.broker.storage.metadata import MetadataStore

GROUP_TYPES = (3, 32)  # a GROUP resource: librdkafka's ResourceType 3, Kafka's ConfigResource.Type 32


@dataclass(frozen=True)
class GroupConfigDef:
    name: str
    type: str
    default: str  # Kafka's default, when no broker key gives one
    check: Callable | None
    effect: str
    doc: str
    broker_key: str | None = None  # kipper broker key whose value is the default

    def parse(self, text: str):
        return checked(self.check, self.type, self.name, text, parse_value(self.type, self.name, text))


def _g(name, type_, default, check, effect, doc, broker_key=None) -> GroupConfigDef:
    return GroupConfigDef(name, type_, default, check, effect, doc, broker_key)


# in the order of Kafka's GroupConfig definitions, which its ConfigDef checks values in (probed:
# every value invalid at once, Kafka names the first of them)
GROUP_CONFIGS: dict[str, GroupConfigDef] = {d.name: d for d in (
    _g("consumer.session.timeout.ms", "int", "45000", at_least(1), APPLIED,
       "Session timeout of this consumer group's members (KIP-848).",
       "group.consumer.session.timeout.ms"),
    _g("consumer.heartbeat.interval.ms", "int", "5000", at_least(1), APPLIED,
       "Heartbeat interval given to this consumer group's members (KIP-848).",
       "group.consumer.heartbeat.interval.ms"),
    _g("consumer.assignment.interval.ms", "int", "1000", at_least(0), INERT,
       "Minimum time between two target assignments (kipper assigns at once)."),
    _g("share.session.timeout.ms", "int", "45000", at_least(1), APPLIED,
       "Session timeout of this share group's members.", "group.share.session.timeout.ms"),
    _g("share.heartbeat.interval.ms", "int", "5000", at_least(1), APPLIED,
       "Heartbeat interval given to this share group's members.",
       "group.share.heartbeat.interval.ms"),
    _g("share.record.lock.duration.ms", "int", "30000", at_least(1000), APPLIED,
       "Acquisition lock of the records this share group's members acquire.",
       "group.share.record.lock.duration.ms"),
    _g("share.delivery.count.limit", "int", "5", at_least(2), APPLIED,
       "Delivery attempts of a record in this share group before it is archived (KIP-1240).",
       "group.share.delivery.count.limit"),
    _g("share.partition.max.record.locks", "int", "2000", at_least(100), APPLIED,
       "In-flight records of each of this share group's share-partitions (KIP-1240).",
       "group.share.partition.max.record.locks"),
    _g("share.auto.offset.reset", "string", "latest", share_reset_problem, APPLIED,
       "Where this share group's new share-partitions start (KIP-932).",
       "group.share.auto.offset.reset"),
    _g("share.isolation.level", "string", "read_uncommitted",
       one_of("read_committed", "read_uncommitted"), APPLIED,
       "read_committed: the share group stops at the last stable offset and never delivers "
       "records of aborted transactions."),
    _g("share.renew.acknowledge.enable", "boolean", "true", None, APPLIED,
       "Whether this share group's members may renew their locks (RENEW, KIP-1222)."),
    _g("share.assignment.interval.ms", "int", "1000", at_least(0), INERT,
       "Minimum time between two share-group assignments (kipper assigns at once)."),
    _g("streams.session.timeout.ms", "int", "45000", at_least(1), APPLIED,
       "Session timeout of this streams group's members (KIP-1071).", "group.streams.session.timeout.ms"),
    _g("streams.heartbeat.interval.ms", "int", "5000", at_least(1), APPLIED,
       "Heartbeat interval given to this streams group's members.", "group.streams.heartbeat.interval.ms"),
    _g("streams.num.standby.replicas", "int", "0", at_least(0), APPLIED,
       "Standby replicas of each of this streams group's stateful tasks.",
       "group.streams.num.standby.replicas"),
    _g("streams.initial.rebalance.delay.ms", "int", "3000", at_least(0), APPLIED,
       "How long this streams group, when new, waits for more members before assigning.",
       "group.streams.initial.rebalance.delay.ms"),
    _g("streams.assignment.interval.ms", "int", "1000", at_least(0), APPLIED,
       "Least time between two target assignments of this streams group (KIP-1263).",
       "group.streams.assignment.interval.ms"),
    _g("streams.assignor.name", "string", "sticky", None, INERT,
       "The task assignor of this streams group, one of group.streams.assignors (kipper's is sticky)."),
    _g("streams.rack.aware.assignment.tags", "list", "", None, INERT,
       "Client tags a rack-aware streams assignment spreads standby tasks over (kipper: none)."),
    _g("errors.deadletterqueue.topic.name", "string", "", None, INERT,
       "This share group's dead-letter topic (KIP-1191; kipper has no dead-letter queue)."),
    _g("errors.deadletterqueue.copy.record.enable", "boolean", "false", None, INERT,
       "Whether a dead-lettered record is copied whole (KIP-1191; kipper has no dead-letter queue)."),
)}


def _bound(broker, key: str) -> int:
    """A broker config bounding a group config: kipper's value, or Kafka's default for the
    bounds of what kipper does not serve (streams groups)."""
    return broker[key] if key in KEYS else int(KAFKA_BROKER_CONFIGS[key].default)


def _within(key: str, lo_key: str, hi_key: str):
    def rule(values: dict, broker) -> str | None:
        lo, hi = _bound(broker, lo_key), _bound(broker, hi_key)
        if not lo <= values[key] <= hi:
            return f"{key} must be in the range {lo} to {hi} inclusive."
        return None
    return rule


def _at_most(key: str, hi_key: str):
    def rule(values: dict, broker) -> str | None:
        hi = _bound(broker, hi_key)
        return f"{key} must be less than or equal to {hi}" if values[key] > hi else None
    return rule


def _registered_assignor(values: dict, broker) -> str | None:
    names = [n.strip() for n in KAFKA_BROKER_CONFIGS["group.streams.assignors"].default.split(",")]
    name = values["streams.assignor.name"]
    if name not in names:
        return (f"streams.assignor.name '{name}' is not a registered task assignor. "
                f"Registered assignors are: [{', '.join(names)}].")
    return None


def _above(key: str, other: str):
    return lambda values, broker: (f"{key} must be greater than {other}"
                                   if values[key] <= values[other] else None)


# Kafka's GroupConfig.validateValues, in its order, with its messages
RULES: list[Callable[[dict, object], str | None]] = [
    _within("consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms",
            "group.consumer.max.heartbeat.interval.ms"),
    _within("consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
            "group.consumer.max.session.timeout.ms"),
    _within("share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms",
            "group.share.max.heartbeat.interval.ms"),
    _within("share.session.timeout.ms", "group.share.min.session.timeout.ms",
            "group.share.max.session.timeout.ms"),
    _within("share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms",
            "group.share.record.lock.duration.max.ms"),
    _within("share.delivery.count.limit", "group.share.min.delivery.count.limit",
            "group.share.max.delivery.count.limit"),
    _within("share.partition.max.record.locks", "group.share.min.partition.max.record.locks",
            "group.share.max.partition.max.record.locks"),
    _within("streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms",
            "group.streams.max.heartbeat.interval.ms"),
    _within("streams.session.timeout.ms", "group.streams.min.session.timeout.ms",
            "group.streams.max.session.timeout.ms"),
    _at_most("streams.num.standby.replicas", "group.streams.max.standby.replicas"),
    _registered_assignor,
    _above("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
    _above("share.session.timeout.ms", "share.heartbeat.interval.ms"),
    _above("streams.session.timeout.ms", "streams.heartbeat.interval.ms"),
]


class GroupConfigs:
    def __init__(self, metadata: MetadataStore | None = None, broker=None, writer=None):
        """``metadata`` persists every change (with log.dirs) and holds the stored ones;
        ``broker`` (the broker config) gives defaults and bounds; ``writer(group, configs)``:
        a cluster's controller, which keeps group configs in the metadata log (as ConfigRecords
        that every broker's copy ``adopt``s, docs/CLUSTER.md)."""
        self.metadata = metadata or MetadataStore()
        self.broker = broker
        self.writer = writer
        self._by_group: dict[str, dict[str, str]] = {
            g: dict(c) for g, c in self.metadata.group_configs.items()}

    def default(self, key: str) -> str:
        d = GROUP_CONFIGS[key]
        if d.broker_key is not None and self.broker is not None:
            return render(d.type, self.broker[d.broker_key])
        return d.default

    def get(self, group_id: str, key: str) -> str | None:
        """The group's own value of ``key``, or None (the engine's default applies)."""
        return self._by_group.get(group_id, {}).get(key)

    def get_int(self, group_id: str, key: str, default: int) -> int:
        value = self.get(group_id, key)
        return default if value is None else int(value)

    def current(self, group_id: str) -> dict[str, str]:
        return dict(self._by_group.get(group_id, {}))

    def names(self) -> list[str]:
        """The groups that have configs of their own (ListConfigResources)."""
        return sorted(self._by_group)

    def describe(self, group_id: str) -> dict[str, tuple[str, bool]]:
        """key -> (value, set for this group)."""
        mine = self._by_group.get(group_id, {})
        return {k: (mine.get(k, self.default(k)), k in mine) for k in GROUP_CONFIGS}

    @staticmethod
    def check(key: str, value: str | None) -> str | None:
        """One key on its own: known, and a valid value (None: being removed)."""
        spec = GROUP_CONFIGS.get(key)
        if spec is None:
            return f"Unknown group config name: {key}"
        if value is not None:
            try:
                spec.parse(value)
            except ConfigValueError as exc:
                return str(exc)
        return None

    def check_all(self, configs: dict[str, str]) -> str | None:
        """A group's whole new set, as Kafka's GroupConfig.validate judges it: the names
        first, in the order of the Properties (a ConcurrentHashMap) it reads them from."""
        unknown = [k for k in java_hash_order(configs, concurrent=True) if k not in GROUP_CONFIGS]
        if unknown:
            return f"Unknown group config name: {unknown[0]}"
        for key in GROUP_CONFIGS:  # (Kafka's ConfigDef.parse: in its definitions' order)
            problem = self.check(key, configs[key]) if key in configs else None
            if problem:
                return problem
        values = {k: d.parse(configs.get(k, self.default(k))) for k, d in GROUP_CONFIGS.items()}
        for rule in RULES if self.broker is not None else ():
            problem = rule(values, self.broker)
            if problem:
                return problem
        return None

    def replace(self, group_id: str, configs: dict[str, str]) -> None:
        """The group's whole set (already checked); persisted."""
        if self.writer is not None:
            self.writer(group_id, self.current(group_id), configs)
        self.adopt(group_id, configs)

    def adopt(self, group_id: str, configs: dict[str, str]) -> None:
        if configs:
            self._by_group[group_id] = dict(configs)
        else:
            self._by_group.pop(group_id, None)
        self.metadata.put_group_configs(group_id, configs)

    def set(self, group_id: str, key: str, value: str) -> None:
        self.replace(group_id, {**self.current(group_id), key: value})

    def delete(self, group_id: str, key: str) -> None:
        mine = self.current(group_id)
        if mine.pop(key, None) is not None:
            self.replace(group_id, mine)
