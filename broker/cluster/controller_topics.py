"""The controller's topic registry: topics made, grown, reconfigured and deleted through the log.

``ControllerTopics`` is the TopicManager of the controller process, so the CreateTopics,
CreatePartitions, DeleteTopics and config handlers run there unchanged; what they ask for
becomes records (TopicRecord, ConfigRecord, PartitionRecord, RemoveTopicRecord) committed by
the ``Controller`` it owns, and the registry then follows the image (broker/cluster/mirror.py)
like every broker's. Replicas are placed on the registered brokers, unfenced ones first
(Kafka's StripedReplicaPlacer prefers them, and falls back on fenced ones so that a topic can
be created with one broker down); the ISR is the active replicas, the leader the first of them.
Reassignments (AlterPartitionReassignments) are here too.
"""

from __future__ import annotations

import uuid

from kipper.broker.cluster.controller import Controller
from kipper.broker.cluster.mirror import sync_topic
from kipper.broker.cluster.placement import assign_replicas, partition_change
from kipper.broker.log.topics import Topic, TopicManager, unreachable_replication_factor
from kipper.protocol import metadata_records as mr
from kipper.protocol.errors import ErrorCode


class ControllerTopics(TopicManager):
    def __init__(self, settings, metadata_log, clock, **kwargs):
        super().__init__(node_id=settings.node_id, **kwargs)
        self.clock = clock
        self.controller = Controller(settings, metadata_log, on_commit=self._follow)
        self._follow_image()

    def _follow(self, changes) -> None:
        for name in {c.topic.name for c in changes if c.topic is not None}:
            sync_topic(self.controller.image, self, name)
        if any(c.kind == "partition" and c.new is not None and c.new.adding for c in changes):
            self.complete_reassignments()  # (an ISR that now holds every new replica)

    def _follow_image(self) -> None:
        for name in list(self.controller.image.topics):
            sync_topic(self.controller.image, self, name)

    # --- what the handlers ask ----------------------------------------------------------

    def registered_brokers(self) -> list[int]:
        return sorted(self.controller.image.brokers)

    def replication_factor(self, topic: Topic) -> int:
        """The topic's replica count; default.replication.factor for one not made (validate_only)."""
        info = self.controller.image.topics.get(topic.name)
        part = info.partitions.get(0) if info is not None else None
        return len(part.replicas) if part is not None else self.controller.settings.default_replication_factor

    def check_replication_factor(self, replication_factor: int) -> tuple[ErrorCode, str] | None:
        rf = self.controller.settings.default_replication_factor if replication_factor == -1 else replication_factor
        brokers = self.controller.image.brokers
        if not any(not b.fenced for b in brokers.values()):
            return ErrorCode.INVALID_REPLICATION_FACTOR, \
                f"Unable to replicate the partition {rf} time(s): All brokers are currently fenced."
        if rf > len(brokers):
            return unreachable_replication_factor(rf, len(brokers))
        return None

    def create(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
               configs: dict[str, str] | None = None, assignments=None):
        code, message, count = self.check_new(name, num_partitions if not assignments else 1,
                                              replication_factor if not assignments else -1, configs)
        if code != ErrorCode.NONE:
            return code, message, None
        if assignments:
            count = len(assignments)
        rf = self.controller.settings.default_replication_factor if replication_factor == -1 else replication_factor
        placed = assignments or self._place(count, rf, 0)
        topic_id = uuid.uuid4()
        records = [("TopicRecord", {"name": name, "topic_id": topic_id})]
        records += [("ConfigRecord", {"resource_type": mr.TOPIC_RESOURCE, "resource_name": name,
                                      "name": k, "value": v}) for k, v in (configs or {}).items() if v is not None]
        records += self._partition_records(topic_id, 0, placed)
        if any(r[1].get("leader", 0) == mr.NO_LEADER for r in records):
            return (ErrorCode.INVALID_REPLICA_ASSIGNMENT if assignments else ErrorCode.INVALID_REPLICATION_FACTOR,
                    "All brokers specified in the manual partition assignment are fenced or in controlled shutdown."
                    if assignments else f"Unable to replicate the partition {rf} time(s): All brokers are "
                    "currently fenced or in controlled shutdown.", None)
        self.controller.commit(records, self.clock())
        return ErrorCode.NONE, None, self.get(name)

    def _place(self, count: int, rf: int, first: int) -> list[list[int]]:
        """Replica lists on the live brokers, or on every registered one when too few are
        live, each list's live brokers first (the leader must be one)."""
        image = self.controller.image
        live = [b.broker_id for b in image.live_brokers() if not b.in_controlled_shutdown]
        pool = live if len(live) >= rf else sorted(image.brokers)
        placed = assign_replicas(count, rf, pool, first)
        return [sorted(r, key=lambda b: not image.is_active(b)) for r in placed]

    def _partition_records(self, topic_id, first: int, placed: list[list[int]]) -> list:
        image = self.controller.image
        out = []
        for i, replicas in enumerate(placed):
            isr = [r for r in replicas if image.is_active(r)]
            out.append(("PartitionRecord", {
                "partition_id": first + i, "topic_id": topic_id, "replicas": replicas, "isr": isr,
                "removing_replicas": [], "adding_replicas": [], "leader": isr[0] if isr else mr.NO_LEADER,
                "leader_epoch": 0, "partition_epoch": 0}))
        return out

    def add_partitions(self, topic: Topic, count: int, assignments=None):
        old = len(topic.partitions)
        placed = assignments or self._place(count - old, self.replication_factor(topic), old)
        self.controller.commit(self._partition_records(topic.topic_id, old, placed), self.clock())
        return topic.partitions[old:]

    def update_configs(self, topic: Topic, configs: dict[str, str]) -> None:
        records = [("ConfigRecord", {"resource_type": mr.TOPIC_RESOURCE, "resource_name": topic.name,
                                     "name": k, "value": v}) for k, v in configs.items() if topic.configs.get(k) != v]
        records += [("ConfigRecord", {"resource_type": mr.TOPIC_RESOURCE, "resource_name": topic.name,
                                      "name": k, "value": None}) for k in topic.configs if k not in configs]
        self.controller.commit(records, self.clock())

    def delete(self, name: str) -> ErrorCode:
        topic = self.get(name)
        if topic is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        self.controller.commit([("RemoveTopicRecord", {"topic_id": topic.topic_id})], self.clock())
        return ErrorCode.NONE

    def internal(self, name: str, num_partitions: int, configs: dict[str, str]) -> Topic:
        raise RuntimeError("the controller keeps no internal topic of its own")

    # --- reassignment (KIP-455) ---------------------------------------------------------

    def _cancel_move(self, name: str, index: int) -> tuple[ErrorCode, str | None]:
        """Put the partition back on the replicas it had before the move."""
        info = self.controller.image.topics[name]
        part = info.partitions[index]
        original = [r for r in part.replicas if r not in part.adding]
        change = partition_change(info.topic_id, index, part, acceptable=self.controller._acceptable(),
                                  target_replicas=original, target_isr=[r for r in part.isr if r in original],
                                  adding=[], removing=[])
        return self._commit_move(change)

    def _move(self, name: str, index: int, replicas: list[int]) -> tuple[ErrorCode, str | None]:
        """The new replicas join (adding), followers catch up, the leader proposes them for
        the ISR, and once they are all in it the change completes (``complete_reassignments``)."""
        info = self.controller.image.topics[name]
        part = info.partitions[index]
        base = [r for r in part.replicas if r not in part.adding] if part.adding or part.removing else list(part.replicas)
        adding = [r for r in replicas if r not in base]
        removing = [r for r in base if r not in replicas]
        target = list(replicas) + [r for r in base if r not in replicas]
        change = partition_change(info.topic_id, index, part, acceptable=self.controller._acceptable(),
                                  target_replicas=target, adding=adding, removing=removing)
        return self._commit_move(change)

    def _commit_move(self, change) -> tuple[ErrorCode, str | None]:
        if change is not None:
            self.controller.commit([("PartitionChangeRecord", change)], self.clock())
        self.complete_reassignments()
        return ErrorCode.NONE, None

    def complete_reassignments(self) -> None:
        """Reassignments whose new replicas are all in the ISR finish: the replicas become
        the target list, the removed ones leave (and the leader moves if it was one)."""
        image = self.controller.image
        records = []
        for info in image.topics.values():
            for index, part in info.partitions.items():
                if not part.adding and not part.removing:
                    continue
                if any(r not in part.isr for r in part.adding):
                    continue
                target = [r for r in part.replicas if r not in part.removing]
                isr = [r for r in part.isr if r in target]
                change = partition_change(info.topic_id, index, part, acceptable=self.controller._acceptable(),
                                          target_replicas=target, target_isr=isr or target[:1], adding=[], removing=[])
                if change is not None:
                    records.append(("PartitionChangeRecord", change))
        if records:
            self.controller.commit(records, self.clock())

    def reassignments(self, wanted=None) -> list[tuple[str, int, object]]:
        """(topic, partition, PartitionInfo) of the reassignments in progress."""
        out = []
        for info in self.controller.image.topics.values():
            for index, part in sorted(info.partitions.items()):
                if (part.adding or part.removing) and (wanted is None or (info.name, index) in wanted):
                    out.append((info.name, index, part))
        return out
