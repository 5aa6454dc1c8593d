"""The cluster as the metadata log says it is: brokers, topics, partitions, configs, and the
ACLs, SCRAM credentials and client quotas (``security``, broker/cluster/security_records.py).

``ClusterImage`` replays Kafka's metadata records (protocol/metadata_records.py) in log
order, the same code on the controller (whose state is the image of its own log) and on
every broker (which fetches the log). ``replay`` returns what changed, so that a broker
can act on it (broker/cluster/node.py): a topic that appeared or went, a partition whose
leader, ISR or replicas moved, a broker registered, fenced or unfenced.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from kipper.broker.cluster.security_records import SecurityImage
from kipper.protocol.metadata_records import (
    BROKER_RESOURCE, CHANGE_FENCE, GROUP_RESOURCE, CHANGE_UNFENCE, NO_LEADER_CHANGE, TOPIC_RESOURCE, MetadataRecord,
)


@dataclass(frozen=True)
class BrokerInfo:
    """One registration (RegisterBrokerRecord) and what changed it since."""

    broker_id: int
    epoch: int
    incarnation_id: uuid.UUID
    endpoints: dict  # listener name -> (host, port, security protocol)
    rack: str | None
    fenced: bool = True
    in_controlled_shutdown: bool = False


@dataclass(frozen=True)
class PartitionInfo:
    """One partition's registration (PartitionRecord, then PartitionChangeRecords)."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    removing: tuple[int, ...] = ()
    adding: tuple[int, ...] = ()
    leader_recovery_state: int = 0

    def with_change(self, rec) -> PartitionInfo:
        """This registration with a PartitionChangeRecord applied (Kafka's
        PartitionRegistration.merge): the leader epoch moves when the leader field is set,
        the partition epoch with every change."""
        leader, leader_epoch = self.leader, self.leader_epoch
        if rec.leader != NO_LEADER_CHANGE:
            leader, leader_epoch = rec.leader, self.leader_epoch + 1
        return PartitionInfo(
            replicas=tuple(rec.replicas) if rec.replicas is not None else self.replicas,
            isr=tuple(rec.isr) if rec.isr is not None else self.isr,
            leader=leader, leader_epoch=leader_epoch, partition_epoch=self.partition_epoch + 1,
            removing=tuple(rec.removing_replicas) if rec.removing_replicas is not None else self.removing,
            adding=tuple(rec.adding_replicas) if rec.adding_replicas is not None else self.adding,
            leader_recovery_state=rec.leader_recovery_state if rec.leader_recovery_state >= 0
            else self.leader_recovery_state)


@dataclass
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: dict[int, PartitionInfo] = field(default_factory=dict)


class Change(NamedTuple):
    """What one record changed: ``kind`` is "topic" (``topic`` appeared: its partitions come
    as "partition" changes), "topic_removed", "partition" (``old`` None for a new one),
    "broker", "config", "producer_ids", "feature", or "acl", "scram", "quota" (security_records.py)."""

    kind: str
    topic: TopicInfo | None = None
    partition: int = -1
    old: object = None
    new: object = None


class ClusterImage:
    def __init__(self):
        self.brokers: dict[int, BrokerInfo] = {}
        self.topics: dict[str, TopicInfo] = {}
        self.by_id: dict[uuid.UUID, TopicInfo] = {}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}  # (resource type, name) -> configs
        self.features: dict[str, int] = {}
        self.next_producer_id = 0
        self.security = SecurityImage()  # ACLs, SCRAM credentials, client quotas
        self.offset = -1  # the last record applied

    # --- questions ----------------------------------------------------------------------

    def live_brokers(self) -> list[BrokerInfo]:
        """Registered and unfenced, by id: the brokers Metadata lists."""
        return [b for _, b in sorted(self.brokers.items()) if not b.fenced]

    def is_active(self, broker_id: int) -> bool:
        b = self.brokers.get(broker_id)
        return b is not None and not b.fenced and not b.in_controlled_shutdown

    def partition(self, topic: str, index: int) -> PartitionInfo | None:
        t = self.topics.get(topic)
        return t.partitions.get(index) if t is not None else None

    def topic_configs(self, name: str) -> dict[str, str]:
        return self.configs.get((TOPIC_RESOURCE, name), {})

    def broker_configs(self, name: str = "") -> dict[str, str]:
        return self.configs.get((BROKER_RESOURCE, name), {})

    def group_configs(self, name: str) -> dict[str, str]:
        return self.configs.get((GROUP_RESOURCE, name), {})

    # --- replay -------------------------------------------------------------------------

    def replay(self, offset: int, record: MetadataRecord) -> Change | None:
        self.offset = offset
        apply = _REPLAY.get(record.name)
        return apply(self, record.data) if apply is not None else None

    def _register_broker(self, r) -> Change:
        old = self.brokers.get(r.broker_id)
        new = self.brokers[r.broker_id] = BrokerInfo(
            r.broker_id, r.broker_epoch, r.incarnation_id,
            {e.name: (e.host, e.port, e.security_protocol) for e in r.end_points}, r.rack,
            fenced=r.fenced, in_controlled_shutdown=r.get("in_controlled_shutdown", False))
        return Change("broker", old=old, new=new)

    def _unregister_broker(self, r) -> Change | None:
        old = self.brokers.get(r.broker_id)
        if old is None or old.epoch != r.broker_epoch:
            return None
        del self.brokers[r.broker_id]
        return Change("broker", old=old, new=None)

    def _fencing(self, broker_id: int, epoch: int, fenced: bool | None, shutdown: bool | None = None):
        old = self.brokers.get(broker_id)
        if old is None or old.epoch != epoch:
            return None
        new = replace(old, fenced=old.fenced if fenced is None else fenced,
                      in_controlled_shutdown=old.in_controlled_shutdown if shutdown is None else shutdown)
        self.brokers[broker_id] = new
        return Change("broker", old=old, new=new)

    def _fence(self, r) -> Change | None:
        return self._fencing(r.id, r.epoch, True)

    def _unfence(self, r) -> Change | None:
        return self._fencing(r.id, r.epoch, False)

    def _registration_change(self, r) -> Change | None:
        fenced = {CHANGE_FENCE: True, CHANGE_UNFENCE: False}.get(r.fenced)
        shutdown = {1: True}.get(r.get("in_controlled_shutdown", 0))
        return self._fencing(r.broker_id, r.broker_epoch, fenced, shutdown)

    def _topic(self, r) -> Change:
        topic = TopicInfo(r.name, r.topic_id)
        self.topics[r.name] = topic
        self.by_id[r.topic_id] = topic
        return Change("topic", topic)

    def _remove_topic(self, r) -> Change | None:
        topic = self.by_id.pop(r.topic_id, None)
        if topic is None:
            return None
        self.topics.pop(topic.name, None)
        self.configs.pop((TOPIC_RESOURCE, topic.name), None)
        return Change("topic_removed", topic)

    def _partition(self, r) -> Change | None:
        topic = self.by_id.get(r.topic_id)
        if topic is None:
            return None
        old = topic.partitions.get(r.partition_id)
        new = topic.partitions[r.partition_id] = PartitionInfo(
            tuple(r.replicas), tuple(r.isr), r.leader, r.leader_epoch, r.partition_epoch,
            tuple(r.removing_replicas), tuple(r.adding_replicas), r.get("leader_recovery_state", 0))
        return Change("partition", topic, r.partition_id, old, new)

    def _partition_change(self, r) -> Change | None:
        topic = self.by_id.get(r.topic_id)
        old = topic.partitions.get(r.partition_id) if topic is not None else None
        if old is None:
            return None
        new = topic.partitions[r.partition_id] = old.with_change(r)
        return Change("partition", topic, r.partition_id, old, new)

    def _config(self, r) -> Change:
        configs = self.configs.setdefault((r.resource_type, r.resource_name), {})
        if r.value is None:
            configs.pop(r.name, None)
        else:
            configs[r.name] = r.value
        return Change("config", partition=r.resource_type, new=r.resource_name)

    def _producer_ids(self, r) -> Change:
        self.next_producer_id = r.next_producer_id
        return Change("producer_ids", new=r.broker_id)

    def _feature(self, r) -> Change:
        if r.feature_level == 0:
            self.features.pop(r.name, None)
        else:
            self.features[r.name] = r.feature_level
        return Change("feature", new=r.name)


def _security(replay):
    """A record of ACLs, credentials or quotas: the image's ``security`` replays it."""
    def apply(image: ClusterImage, r) -> Change | None:
        kind = replay(image.security, r)
        return Change(kind) if kind is not None else None
    return apply


_REPLAY = {
    "RegisterBrokerRecord": ClusterImage._register_broker,
    "UnregisterBrokerRecord": ClusterImage._unregister_broker,
    "FenceBrokerRecord": ClusterImage._fence,
    "UnfenceBrokerRecord": ClusterImage._unfence,
    "BrokerRegistrationChangeRecord": ClusterImage._registration_change,
    "TopicRecord": ClusterImage._topic,
    "RemoveTopicRecord": ClusterImage._remove_topic,
    "PartitionRecord": ClusterImage._partition,
    "PartitionChangeRecord": ClusterImage._partition_change,
    "ConfigRecord": ClusterImage._config,
    "ProducerIdsRecord": ClusterImage._producer_ids,
    "FeatureLevelRecord": ClusterImage._feature,
    "AccessControlEntryRecord": _security(SecurityImage.acl),
    "RemoveAccessControlEntryRecord": _security(SecurityImage.remove_acl),
    "UserScramCredentialRecord": _security(SecurityImage.credential),
    "RemoveUserScramCredentialRecord": _security(SecurityImage.remove_credential),
    "ClientQuotaRecord": _security(SecurityImage.quota),
}

