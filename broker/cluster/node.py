"""A broker's side of the cluster: the image it learns from the controller, and its replicas.

``ClusterNode`` applies the batches of the metadata log the shell fetches (broker/
lifecycle.py): the image replays them, the TopicManager follows (broker/cluster/mirror.py),
and each partition whose registration changed gets its role on this broker (leader, follower,
not a replica: ``ReplicaState.become_*``). It answers the questions the handlers ask of the
cluster: who leads a partition, where a broker listens, who coordinates a group or a
transactional id (Kafka's hashing onto `__consumer_offsets` / `__transaction_state`). What it
has to tell the controller (AlterPartition, AllocateProducerIds, forwarded admin requests)
goes through its outbox; the follower fetch plan is ``followed()``.
"""

from __future__ import annotations

import uuid
from collections import deque
from dataclasses import dataclass

import structlog

from kipper.broker.cluster.image import ClusterImage
from kipper.broker.cluster.mirror import sync_topic
from kipper.broker.cluster.replica import FOLLOWER, LEADER, ReplicaState
from kipper.broker.cluster.rack_selector import RACK_AWARE, preferred_read_replica
from kipper.broker.cluster.security_records import SECURITY_KINDS
from kipper.broker.groups.journal import partition_for
from kipper.broker.outbox import Outbox
from kipper.broker.producer_state.ids import ProducerIdsUnavailable
from kipper.protocol import metadata_records as mr
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages.allocate_producer_ids import ALLOCATE_PRODUCER_IDS
from kipper.protocol.messages.alter_partition import ALTER_PARTITION
from kipper.protocol.messages.create_topics import CREATE_TOPICS
from kipper.protocol.uuid_text import uuid_text

log = structlog.get_logger(__name__)

GROUP_TOPIC, TXN_TOPIC = "__consumer_offsets", "__transaction_state"


@dataclass(frozen=True)
class NodeSettings:
    node_id: int
    replica_lag_time_max_ms: int = 30000  # replica.lag.time.max.ms
    # the internal topics, made through the controller when a coordinator is first looked for:
    # (partitions, replication factor, segment.bytes) of __consumer_offsets and __transaction_state
    offsets_topic: tuple[int, int, int] = (50, 3, 104857600)
    txn_topic: tuple[int, int, int] = (50, 3, 104857600)
    rack_aware: bool = False  # replica.selector.class is Kafka's RackAwareReplicaSelector

    @classmethod
    def from_config(cls, config) -> NodeSettings:
        return cls(node_id=config["node.id"], replica_lag_time_max_ms=config["replica.lag.time.max.ms"],
                   offsets_topic=(config["offsets.topic.num.partitions"], config["offsets.topic.replication.factor"],
                                  config["offsets.topic.segment.bytes"]),
                   txn_topic=(config["transaction.state.log.num.partitions"],
                              config["transaction.state.log.replication.factor"],
                              config["transaction.state.log.segment.bytes"]),
                   rack_aware=config["replica.selector.class"] == RACK_AWARE)


class ProducerIdBlocks:
    """The blocks of producer ids the controller gave this broker (AllocateProducerIds), for
    its ProducerIdManager; one is kept in hand ahead of need."""

    def __init__(self):
        self.blocks: deque[tuple[int, int]] = deque()
        self.asking = False
        self.wanted = None  # () -> None: ask the controller for one more (set by ClusterNode)

    def take(self, first_unused: int) -> tuple[int, int]:
        if not self.blocks:
            self._ask()
            raise ProducerIdsUnavailable("no producer id block from the controller yet")
        block = self.blocks.popleft()
        if not self.blocks:
            self._ask()
        return block

    def _ask(self) -> None:
        if not self.asking and self.wanted is not None:
            self.asking = True
            self.wanted()

    def given(self, start: int, length: int) -> None:
        self.asking = False
        if length > 0:
            self.blocks.append((start, start + length))


class ClusterNode:
    def __init__(self, settings: NodeSettings, topics, clock, on_delete=None,
                 id_blocks: ProducerIdBlocks | None = None, on_role=None, group_configs=None, on_security=None):
        self.settings = settings
        self.node_id = settings.node_id
        self.topics = topics
        self.clock = clock
        self.on_delete = on_delete  # (Topic) -> None: Engines.delete_topic
        self.image = ClusterImage()
        self.to_controller = Outbox()
        self.broker_epoch = -1  # given by BrokerRegistration
        self.fenced = True
        self.caught_up = False  # the image has reached the log's end once (``apply``)
        self.followed_changed = True  # the fetchers look at ``followed()`` again
        self._creating: set[str] = set()  # topics asked of the controller, not answered yet
        # (partition, replica, was leader) after a role change: the coordinators load or unload
        self.on_role = on_role
        self.group_configs = group_configs  # the groups' configs follow the metadata log's
        # (kinds) -> None: the ACLs, credentials or quotas changed (security_records.follow)
        self.on_security = on_security
        self.id_blocks = id_blocks if id_blocks is not None else ProducerIdBlocks()
        self.id_blocks.wanted = self._ask_producer_ids

    def _ask_producer_ids(self) -> None:
        def answered(answer) -> None:
            if answer is None or answer.error_code != 0:
                self.id_blocks.asking = False  # asked again at the next need
                return
            self.id_blocks.given(answer.producer_id_start, answer.producer_id_len)
            if len(self.id_blocks.blocks) < 1:
                self._ask_producer_ids()
        self.to_controller.send(ALLOCATE_PRODUCER_IDS, {"broker_id": self.node_id,
                                                        "broker_epoch": self.broker_epoch}, answered)

    def registered(self, broker_epoch: int) -> None:
        """BrokerRegistration answered: this incarnation's epoch; a block of producer ids."""
        self.broker_epoch = broker_epoch
        if not self.id_blocks.blocks:
            self.id_blocks.asking = True
            self._ask_producer_ids()

    @property
    def metadata_offset(self) -> int:
        return self.image.offset

    # --- the metadata log ---------------------------------------------------------------

    def apply(self, data, now: int, high_watermark: int = -1) -> int:
        """Apply the metadata batches in ``data`` (the controller's log ends at
        ``high_watermark``); how many records. Until the image has caught up with the log
        the broker acts on nothing (a restarted broker replaying its old leaderships must
        not take them): then on everything at once, and on each change after that."""
        decoded = mr.decode_batches(data)
        changes = []
        for offset, _, record in decoded:
            change = self.image.replay(offset, record)
            if change is not None:
                changes.append(change)
        if self.caught_up:
            self._act(changes, now)
        elif self.image.offset + 1 >= high_watermark:
            self.caught_up = True
            self._act_on_everything(now)
        return len(decoded)

    def _act_on_everything(self, now: int) -> None:
        """Caught up: every topic made as the log says (a durable broker opens the logs it
        kept and rebuilds their producer state), every partition's role taken."""
        if self.group_configs is not None:
            for (rtype, name), configs in self.image.configs.items():
                if rtype == mr.GROUP_RESOURCE:
                    self.group_configs.adopt(name, dict(configs))
        if self.on_security is not None:
            self.on_security(SECURITY_KINDS)
        for name in list(self.image.topics) + [t.name for t in self.topics.all() if t.name not in self.image.topics]:
            _recover(sync_topic(self.image, self.topics, name, self.on_delete)[1])
        mine = self.image.brokers.get(self.node_id)
        if mine is not None and mine.epoch == self.broker_epoch:
            self.fenced = mine.fenced
        self.followed_changed = True
        for name, info in sorted(self.image.topics.items()):
            for index in sorted(info.partitions):
                self._take_role(name, index, now)

    def _act(self, changes, now: int) -> None:
        touched = {c.topic.name for c in changes if c.topic is not None}
        new_partitions = set()
        for name in touched:
            topic, added = sync_topic(self.image, self.topics, name, self.on_delete)
            if topic is not None:
                new_partitions.update((name, p.partition) for p in added)
                _recover(added)
        roles = {(c.topic.name, c.partition) for c in changes if c.kind == "partition"} | new_partitions
        if any(c.kind == "broker" for c in changes):  # a fenced broker's partitions may have no fetcher now
            self.followed_changed = True
            mine = self.image.brokers.get(self.node_id)
            if mine is not None and mine.epoch == self.broker_epoch:
                self.fenced = mine.fenced
        for name, index in sorted(roles):
            self._take_role(name, index, now)
        kinds = {c.kind for c in changes}.intersection(SECURITY_KINDS)
        if kinds and self.on_security is not None:
            self.on_security(kinds)
        for c in changes:
            if c.kind == "config" and c.partition == mr.GROUP_RESOURCE and self.group_configs is not None:
                self.group_configs.adopt(c.new, self.image.group_configs(c.new))

    def _take_role(self, name: str, index: int, now: int) -> None:
        topic = self.topics.get(name)
        info = self.image.partition(name, index)
        if topic is None or info is None or index >= len(topic.partitions):
            return
        partition = topic.partitions[index]
        replica = partition.replica
        if replica is None:
            replica = partition.replica = ReplicaState(partition, self.node_id, topic.topic_id)
            replica.alive = self._alive
        was = (replica.role, replica.leader_id, replica.leader_epoch)
        if info.leader == self.node_id:
            replica.become_leader(info, now)
        elif self.node_id in info.replicas:
            replica.become_follower(info)
        else:
            replica.become_not_a_replica(info)
        if was != (replica.role, replica.leader_id, replica.leader_epoch):
            self.followed_changed = True
            log.info("partition_role", topic=name, partition=index, role=replica.role, leader=info.leader,
                     leader_epoch=info.leader_epoch, isr=list(info.isr))
            if self.on_role is not None and replica.is_leader != (was[0] == LEADER):
                self.on_role(partition, replica.is_leader)

    # --- questions the handlers ask -----------------------------------------------------

    def forward(self, api, body, version: int):
        """A client's request sent on to the controller: a future of its answer (None when
        the controller could not be reached)."""
        return self.to_controller.request(api, body, version)

    def leader_of(self, topic: str, index: int) -> int:
        part = self.image.partition(topic, index)
        return part.leader if part is not None else -1

    def broker(self, broker_id: int):
        """The registration of a broker (broker/cluster/image.py's BrokerInfo), or None."""
        return self.image.brokers.get(broker_id)

    def registration(self, topic: str, index: int):
        """A partition's registration in the metadata log (PartitionInfo), or None."""
        return self.image.partition(topic, index)

    def endpoint(self, broker_id: int, listener: str) -> tuple[str, int] | None:
        b = self.image.brokers.get(broker_id)
        if b is None or b.fenced or listener not in b.endpoints:
            return None
        host, port, _ = b.endpoints[listener]
        return host, port

    def described_brokers(self, listener: str, include_fenced: bool) -> list[dict]:
        """DescribeCluster's brokers: the unfenced ones (and the fenced, when asked)."""
        return [{"broker_id": b.broker_id, "host": b.endpoints[listener][0], "port": b.endpoints[listener][1],
                 "rack": b.rack, "is_fenced": b.fenced} for _, b in sorted(self.image.brokers.items())
                if listener in b.endpoints and (include_fenced or not b.fenced)]

    def live_brokers(self, listener: str) -> list[tuple[int, str, int, str | None]]:
        """(id, host, port, rack) of each unfenced broker with ``listener``."""
        return [(b.broker_id, *b.endpoints[listener][:2], b.rack)
                for b in self.image.live_brokers() if listener in b.endpoints]

    def coordinator(self, key: str, transaction: bool) -> tuple[int, bool]:
        """(the broker that coordinates ``key``, whether its internal topic exists): the
        leader of its `__consumer_offsets` / `__transaction_state` partition."""
        name = TXN_TOPIC if transaction else GROUP_TOPIC
        topic = self.image.topics.get(name)
        if topic is None or not topic.partitions:
            return -1, False
        part = topic.partitions.get(partition_for(key, len(topic.partitions)))
        return (part.leader if part is not None else -1), True

    def coordinates(self, key: str, transaction: bool = False) -> bool:
        return self.coordinator(key, transaction)[0] == self.node_id

    def unreplicated(self, keys, transaction: bool) -> list:
        """(replica, log end) of the internal partitions of ``keys`` this broker leads whose
        high watermark is behind their log end: what a coordinator's answer waits for."""
        topic = self.topics.get(TXN_TOPIC if transaction else GROUP_TOPIC)
        if topic is None or not topic.partitions:
            return []
        out = {}
        for key in keys:
            p = topic.partitions[partition_for(key, len(topic.partitions))]
            replica = p.replica
            if replica is not None and replica.is_leader and replica.high_watermark < p.log_end_offset:
                out[id(p)] = (replica, p.log_end_offset)
        return list(out.values())

    def find_coordinator(self, key: str, transaction: bool) -> int:
        """FindCoordinator: the coordinator of ``key``, or -1 while there is none (its internal
        topic is asked of the controller the first time)."""
        leader, exists = self.coordinator(key, transaction)
        if not exists:
            partitions, rf, segment_bytes = self.settings.txn_topic if transaction else self.settings.offsets_topic
            self.create_topic(TXN_TOPIC if transaction else GROUP_TOPIC, partitions, rf,
                              {"cleanup.policy": "compact", "compression.type": "uncompressed",
                               "segment.bytes": str(segment_bytes)})
        return leader

    def share_coordinator(self, key: str) -> int:
        """A share key ``group:topicId:partition``: its data partition's leader (kipper keeps
        share-partition state in the partition itself, seed 004)."""
        try:
            _, topic_id, index = key.rsplit(":", 2)
            topic = self.image.by_id.get(uuid.UUID(topic_id)) or next(
                (t for t in self.image.topics.values() if uuid_text(t.topic_id) == topic_id), None)
            part = topic.partitions.get(int(index)) if topic is not None else None
        except ValueError:
            return -1
        return part.leader if part is not None else -1

    def create_topic(self, name: str, partitions: int = -1, replication_factor: int = -1,
                     configs: dict[str, str] | None = None) -> None:
        """Ask the controller for a topic (auto-creation, an internal topic on first use),
        once at a time; the metadata log brings it."""
        if name in self._creating:
            return
        self._creating.add(name)
        body = {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": replication_factor,
                            "assignments": [], "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
                "timeout_ms": 30000, "validate_only": False}
        self.to_controller.send(CREATE_TOPICS, body, lambda answer: self._creating.discard(name))

    # --- replication --------------------------------------------------------------------

    def followed(self) -> dict[int, list]:
        """Leader id -> the partitions this broker follows from it (the fetch plan)."""
        plan: dict[int, list] = {}
        for topic in self.topics.all():
            for partition in topic.partitions:
                replica = partition.replica
                if replica is not None and replica.role == FOLLOWER and self._alive(replica.leader_id):
                    plan.setdefault(replica.leader_id, []).append(partition)
        self.followed_changed = False
        return plan

    def _alive(self, broker_id: int) -> bool:
        b = self.image.brokers.get(broker_id)
        return b is not None and not b.fenced

    def preferred_read_replica(self, partition, client_rack: str | None, fetch_offset: int, now: int) -> int | None:
        """Where a consumer of ``client_rack`` should read this leader's partition (KIP-392),
        when replica.selector.class asks for it; None: here."""
        if not self.settings.rack_aware:
            return None
        return preferred_read_replica(partition.replica, client_rack, fetch_offset, now, self._rack_of)

    def _rack_of(self, broker_id: int) -> str | None:
        b = self.image.brokers.get(broker_id)
        return b.rack if b is not None and not b.fenced else None

    def propose_isr(self, partition, isr) -> None:
        """Ask the controller for ``isr`` (AlterPartition v3: each member with its epoch)."""
        replica = partition.replica
        body = {"broker_id": self.node_id, "broker_epoch": self.broker_epoch, "topics": [{
            "topic_id": replica.topic_id, "partitions": [{
                "partition_index": partition.partition, "leader_epoch": replica.leader_epoch,
                "new_isr_with_epochs": [{"broker_id": r, "broker_epoch": self._epoch_of(r)} for r in isr],
                "new_isr": list(isr), "leader_recovery_state": 0, "partition_epoch": replica.partition_epoch}]}]}
        log.info("isr_proposed", topic=partition.topic, partition=partition.partition, isr=list(isr),
                 was=list(replica.isr))

        def answered(answer) -> None:
            if answer is None:
                replica.alter_partition_answered(ErrorCode.REQUEST_TIMED_OUT)
                return
            code = answer.error_code
            rows = [p for t in answer.topics for p in t.partitions]
            if code == 0 and rows:
                row = rows[0]
                replica.alter_partition_answered(row.error_code, row.isr, row.partition_epoch)
            else:
                replica.alter_partition_answered(code or ErrorCode.UNKNOWN_SERVER_ERROR)
        self.to_controller.send(ALTER_PARTITION, body, answered)

    def _epoch_of(self, broker_id: int) -> int:
        b = self.image.brokers.get(broker_id)
        return b.epoch if b is not None else -1

    def tick(self, now: int) -> None:
        """ISR shrinks: followers that have not caught up for replica.lag.time.max.ms."""
        lag = self.settings.replica_lag_time_max_ms
        for topic in self.topics.all():
            for partition in topic.partitions:
                replica = partition.replica
                if replica is not None and replica.is_leader:
                    shrunk = replica.isr_to_shrink(now, lag)
                    if shrunk is not None:
                        self.propose_isr(partition, shrunk)

    def follower_fetched(self, partition, replica_id: int, fetch_offset: int, now: int, log_start: int = -1) -> None:
        """The leader's side of a follower's Fetch (the Fetch handler calls it)."""
        expanded = partition.replica.follower_fetched(replica_id, fetch_offset, now, log_start)
        if expanded is not None:
            self.propose_isr(partition, expanded)




def _recover(partitions) -> None:
    """Partitions just made: a durable log opened with what it kept gets its producer state
    and transaction index back (an empty or in-memory one has nothing to replay)."""
    for partition in partitions:
        if partition.log_end_offset > partition.log_start_offset:
            partition.recover()
