"""The topic registry: names, topic ids, partitions and per-topic configs.

Sans-I/O and synchronous; the handlers for Metadata, CreateTopics,
DeleteTopics and Produce all go through here. Partitions are made by the
factory the composition root passes in (broker/log/partitions.py), so the
registry does not know how a partition stores its data. Errors are Kafka error codes.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from kipper.broker.log.partition import Partition
from kipper.broker.log.partitions import InMemoryPartitions, PartitionFactory
from kipper.broker.log.topic_configs import TOPIC_CONFIGS, validate_topic_configs  # noqa: F401
from kipper.broker.storage.metadata import MetadataStore
from kipper.protocol.errors import ErrorCode

_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_NAME_LENGTH = 249
METADATA_TOPIC = "__cluster_metadata"  # Kafka's KRaft log: never a user's topic
# Kafka's controller writes a topic's records in one batch: a topic record, one per
# partition and one per config; more than this in one CreateTopics is refused (POLICY_VIOLATION)
MAX_RECORDS_PER_REQUEST = 10000


def validate_topic_name(name: str) -> str | None:
    """Kafka's controller's reason (its words) a name is not a legal topic name, or None."""
    if not name:
        return "Topic name is invalid: the empty string is not allowed"
    if name in (".", ".."):
        return f"Topic name is invalid: '{name}' is not allowed"
    if len(name) > MAX_NAME_LENGTH:
        return f"Topic name is invalid: the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    if not _LEGAL.match(name):
        return (f"Topic name is invalid: '{name}' contains one or more characters other than "
                "ASCII alphanumerics, '.', '_' and '-'")
    return None


def _collision_key(name: str) -> str:
    """Kafka refuses a topic whose name differs from an existing one only by '.' and '_'
    (both become '_' in metric names)."""
    return name.replace(".", "_")


def partitions_problem(num_partitions: int, replication_factor: int) -> tuple[ErrorCode, str] | None:
    """Kafka's checks of a new topic's counts, in its order (ReplicationControlManager);
    whether the replicas can be placed is asked after these (``check_replication_factor``)."""
    if replication_factor == 0 or replication_factor < -1:
        return (ErrorCode.INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0, or -1 to use the default value.")
    if num_partitions == 0 or num_partitions < -1:
        return ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
    if num_partitions > MAX_RECORDS_PER_REQUEST:
        return ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request."
    return None


def unreachable_replication_factor(replication_factor: int, brokers: int) -> tuple[ErrorCode, str]:
    """Kafka's refusal (its replica placer's words) of more replicas than registered brokers."""
    return (ErrorCode.INVALID_REPLICATION_FACTOR,
            f"Unable to replicate the partition {replication_factor} time(s): The target replication "
            f"factor of {replication_factor} cannot be reached because only {brokers} broker(s) are registered "
            "or some brokers have all their log directories cordoned.")


def assignment_problem(broker_ids, registered, replication_factor: int | None = None) -> tuple[ErrorCode, str] | None:
    """Kafka's validateManualPartitionAssignment against the ``registered`` broker ids: the
    refusal, or None."""
    prefix = "The manual partition assignment includes"
    if not broker_ids:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"{prefix} an empty replica list."
    previous = None
    for broker_id in sorted(broker_ids):
        if broker_id not in registered:
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT, \
                f"{prefix} broker {broker_id}, but no such broker is registered."
        if broker_id == previous:
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"{prefix} the broker {broker_id} more than once."
        previous = broker_id
    if replication_factor is not None and len(broker_ids) != replication_factor:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, (
            f"{prefix} a partition with {len(broker_ids)} replica(s), but this is not consistent "
            f"with previous partitions, which have {replication_factor} replica(s).")
    return None


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False
    config_epoch: int = 0  # moves when the configs change (cached views compare it)
    # what handlers derive from the topic and keep while it lives (the encoded partitions
    # of a Metadata answer); each entry records what it depends on (the partition count)
    derived: dict = field(default_factory=dict, repr=False, compare=False)


class TopicManager:
    """The registry of one node. On one node it makes topics itself; in a cluster the
    controller's subclass (broker/cluster/controller_topics.py) makes them through the
    metadata log, and every node's registry follows the log (``adopt``,
    broker/cluster/mirror.py)."""

    def __init__(self, *, num_partitions: int, auto_create: bool,
                 partitions: PartitionFactory | None = None, metadata: MetadataStore | None = None,
                 node_id: int = 1):
        self.node_id = node_id
        self.num_partitions = num_partitions
        self.factory = partitions or InMemoryPartitions()
        self.metadata = metadata or MetadataStore()
        self.auto_create = auto_create
        self._topics: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self._collisions: dict[str, str] = {}  # name with '.' as '_' -> the topic's name

    def __contains__(self, name: str) -> bool:
        return name in self._topics

    def get(self, name: str) -> Topic | None:
        return self._topics.get(name)

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return self._by_id.get(topic_id)

    def all(self) -> list[Topic]:
        return list(self._topics.values())

    def partition(self, name: str, index: int) -> Partition | None:
        topic = self._topics.get(name)
        if topic is None or not 0 <= index < len(topic.partitions):
            return None
        return topic.partitions[index]

    def registered_brokers(self) -> list[int]:
        """The brokers a manual replica assignment may name: this one."""
        return [self.node_id]

    def replication_factor(self, topic: Topic) -> int:
        return 1

    # --- reassignment (KIP-455): Kafka's controller checks; moving is a cluster's ----------

    def reassign(self, name: str, index: int, replicas: list[int] | None) -> tuple[ErrorCode, str | None]:
        """Start moving a partition to ``replicas`` (None: cancel its move), as Kafka's
        alterPartitionReassignment checks it. One node holds every partition already, so the
        only target that passes is where it is, and nothing moves."""
        if name not in self._topics:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {name}."
        if self.partition(name, index) is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {name}:{index}."
        if replicas is None:
            if not self.reassignments({(name, index)}):
                return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None
            return self._cancel_move(name, index)
        problem = assignment_problem(replicas, self.registered_brokers())
        return problem if problem is not None else self._move(name, index, replicas)

    def reassignments(self, wanted=None) -> list[tuple[str, int, object]]:
        """(topic, partition, its replicas' state) of the moves in progress: none on one node."""
        return []

    def _move(self, name: str, index: int, replicas: list[int]) -> tuple[ErrorCode, str | None]:
        return ErrorCode.NONE, None

    def _cancel_move(self, name: str, index: int) -> tuple[ErrorCode, str | None]:
        return ErrorCode.NONE, None

    def check_replication_factor(self, replication_factor: int) -> tuple[ErrorCode, str] | None:
        """Can ``replication_factor`` replicas (-1: the default) be placed? The refusal, or None."""
        if replication_factor > 1:
            return unreachable_replication_factor(replication_factor, 1)
        return None

    def check_new(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
                  configs: dict[str, str | None] | None = None) -> tuple[ErrorCode, str | None, int]:
        """May this topic be created? (error, message, partition count with the default
        applied), checked in the order of Kafka's controller: the name, then whether it
        exists or collides, the configs (null values first), then the counts."""
        problem = validate_topic_name(name)
        if problem:
            return ErrorCode.INVALID_TOPIC_EXCEPTION, problem, 0
        if name == METADATA_TOPIC:
            return ErrorCode.INVALID_REQUEST, f"Creation of internal topic {name} is prohibited.", 0
        if name in self._topics:
            return ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.", 0
        other = self._collisions.get(_collision_key(name))
        if other is not None:
            return ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic '{name}' collides with existing topic: {other}", 0
        configs = dict(configs or {})
        nulls = [k for k, v in configs.items() if v is None]
        if nulls:
            return ErrorCode.INVALID_CONFIG, f"Null value not supported for topic configs: {','.join(nulls)}", 0
        problem = validate_topic_configs(configs)
        if problem:
            return ErrorCode.INVALID_CONFIG, problem, 0
        refused = partitions_problem(num_partitions, replication_factor) or \
            self.check_replication_factor(replication_factor)
        if refused:
            return *refused, 0
        return ErrorCode.NONE, None, self.num_partitions if num_partitions == -1 else num_partitions

    def create(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
               configs: dict[str, str] | None = None,
               assignments: list[list[int]] | None = None) -> tuple[ErrorCode, str | None, Topic | None]:
        """A new topic (``assignments``: its replica lists, all this node's here)."""
        code, message, num_partitions = self.check_new(name, num_partitions, replication_factor, configs)
        if code != ErrorCode.NONE:
            return code, message, None
        return ErrorCode.NONE, None, self._add(name, uuid.uuid4(), num_partitions, dict(configs or {}))

    def _add(self, name: str, topic_id: uuid.UUID, num_partitions: int, configs: dict[str, str],
             internal: bool = False, *, persist: bool = True) -> Topic:
        topic = Topic(name, topic_id, [], configs, internal)
        if persist:  # the metadata first: a crash then leaves no partition without a topic
            topic.partitions = [None] * num_partitions
            self.metadata.put_topic(topic)
        topic.partitions = [self.factory.new(topic, i) for i in range(num_partitions)]
        self._topics[name] = topic
        self._by_id[topic.topic_id] = topic
        self._collisions[_collision_key(name)] = name
        return topic

    def restore(self) -> list[Topic]:
        """The topics the metadata store holds, with their partitions (durable storage)."""
        for name, t in self.metadata.topics.items():
            self._add(name, uuid.UUID(t["id"]), int(t["partitions"]), dict(t.get("configs", {})),
                      bool(t.get("internal")), persist=False)
        return self.all()

    def adopt(self, name: str, topic_id: uuid.UUID, num_partitions: int, configs: dict[str, str],
              internal: bool = False) -> Topic:
        """A topic the cluster's metadata log created (broker/cluster/mirror.py): made here
        as the log says, the log being what keeps it."""
        return self._add(name, topic_id, num_partitions, dict(configs), internal, persist=False)

    def internal(self, name: str, num_partitions: int, configs: dict[str, str]) -> Topic:
        """An internal topic (__consumer_offsets, __transaction_state), made on first use."""
        topic = self._topics.get(name)
        if topic is None:
            topic = self._add(name, uuid.uuid4(), num_partitions, dict(configs), internal=True)
        return topic

    def update_configs(self, topic: Topic, configs: dict[str, str]) -> None:
        """Replace a topic's configs (already validated); persisted, and given to its storage."""
        self.adopt_configs(topic, configs)

    def adopt_configs(self, topic: Topic, configs: dict[str, str]) -> None:
        topic.configs.clear()
        topic.configs.update(configs)
        topic.config_epoch += 1
        self.metadata.put_topic(topic)
        self.factory.reconfigure(topic)

    def reconfigure_all(self) -> None:
        """The broker's defaults of the topic configs changed (a dynamic broker config):
        every partition's storage settings are derived again."""
        for topic in self._topics.values():
            self.factory.reconfigure(topic)

    def add_partitions(self, topic: Topic, count: int,
                       assignments: list[list[int]] | None = None) -> list[Partition]:
        """Grow ``topic`` to ``count`` partitions (already validated); persisted first."""
        return self.adopt_partitions(topic, count)

    def adopt_partitions(self, topic: Topic, count: int) -> list[Partition]:
        old = len(topic.partitions)
        topic.partitions.extend([None] * (count - old))
        self.metadata.put_topic(topic)
        added = [self.factory.new(topic, i) for i in range(old, count)]
        topic.partitions[old:] = added
        return added

    def get_or_create(self, name: str) -> tuple[ErrorCode, Topic | None]:
        """For Metadata and Produce: the topic, auto-created when allowed."""
        topic = self._topics.get(name)
        if topic is not None:
            return ErrorCode.NONE, topic
        if not self.auto_create:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        code, _, topic = self.create(name)
        if topic is None and code != ErrorCode.TOPIC_ALREADY_EXISTS:
            return code, None  # a name Kafka refuses (invalid, colliding, its metadata log's)
        return ErrorCode.NONE, topic or self._topics.get(name)

    def partitions(self):
        """Every partition of every topic."""
        for topic in self._topics.values():
            yield from topic.partitions

    def delete(self, name: str) -> ErrorCode:
        """Remove a topic; its Partitions go with everything they own."""
        return self.forget(name)

    def forget(self, name: str) -> ErrorCode:
        topic = self._topics.pop(name, None)
        if topic is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        self._by_id.pop(topic.topic_id, None)
        self._collisions.pop(_collision_key(name), None)
        self.metadata.remove_topic(name)
        for partition in topic.partitions:
            partition.delete()
        return ErrorCode.NONE
