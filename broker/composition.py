"""The composition root: one function builds a whole broker from its config and a clock.

``build_broker`` constructs every engine once and hands each its
collaborators through its constructor -- nothing is registered or rewired
afterwards. The result, ``Broker``, is what handlers see as ``ctx.broker``;
the asyncio server (broker/server.py), the embedded test broker, the unit
tests and the benchmarks all build it the same way, so an in-process broker
behaves exactly like ``kipper broker``.

``Broker`` also holds the few operations that span engines, such as deleting
a topic, so that each lives in one place.
"""

from __future__ import annotations

import time
from typing import Callable

import structlog

from kipper.broker.config import BrokerConfig, Listener
from kipper.broker.dispatcher import Dispatcher
from kipper.broker.groups.classic import ClassicGroupCoordinator, GroupSettings
from kipper.broker.groups.configs import GroupConfigs
from kipper.broker.groups.consumer import ConsumerGroupCoordinator, ConsumerGroupSettings
from kipper.broker.groups.coordinator import GroupCoordinator
from kipper.broker.groups.journal import GroupJournal
from kipper.broker.groups.offsets import OffsetStore
from kipper.broker.handlers import HANDLERS
from kipper.broker.log.partition import ProducerStateSettings
from kipper.broker.log.topics import InMemoryPartitions, Topic, TopicManager
from kipper.broker.metrics import Metrics
from kipper.broker.metrics_dump import share_partitions_provider
from kipper.broker.notify import AppendNotifier
from kipper.broker.producer_state import ProducerIdManager
from kipper.broker.producer_state.registry import ProducerStates
from kipper.broker.quota.service import ProducerIdQuotas
from kipper.broker.security.service import PRE_AUTH_APIS, Security
from kipper.broker.share.service import SHARE_API_KEYS, ShareGroups
from kipper.broker.share.settings import ShareSettings
from kipper.broker.storage.log_manager import LogManager
from kipper.broker.storage.metadata import MetadataStore
from kipper.broker.storage.partitions import DurablePartitions
from kipper.broker.storage.recovery import open_topics
from kipper.broker.txn.coordinator import TxnSettings
from kipper.broker.txn.journal import TransactionJournal
from kipper.broker.txn.service import Transactions
from kipper.protocol.messages import APIS

log = structlog.get_logger(__name__)

Clock = Callable[[], int]


def now_ms() -> int:
    return int(time.time() * 1000)


class Broker:
    """Every engine of one broker, by name. Built only by ``build_broker``."""

    def __init__(self, *, config: BrokerConfig, clock: Clock, topics: TopicManager,
                 producer_states: ProducerStates, producer_ids: ProducerIdManager,
                 offsets: OffsetStore, group_configs: GroupConfigs, groups: GroupCoordinator,
                 share: ShareGroups, txn: Transactions, security: Security,
                 quotas: ProducerIdQuotas, appends: AppendNotifier, metrics: Metrics,
                 handlers: dict, cluster_id: str, storage: LogManager | None):
        self.config = config
        self.node_id: int = config["node.id"]
        self.cluster_id = cluster_id
        self.storage = storage  # None: everything in memory
        self.clock = clock
        self.topics = topics
        self.producer_states = producer_states
        self.producer_ids = producer_ids
        self.offsets = offsets
        self.group_configs = group_configs
        self.groups = groups
        self.share = share
        self.txn = txn
        self.security = security
        self.quotas = quotas
        self.appends = appends
        self.metrics = metrics
        self.handlers = handlers
        self.dispatcher = Dispatcher(self, pre_auth_apis=PRE_AUTH_APIS)
        # listener name -> (host, port) given to clients; filled once bound
        self.advertised: dict[str, tuple[str, int]] = {}

    # --- what the broker serves -------------------------------------------------------------

    def advertised_apis(self) -> list[dict]:
        """ApiVersions' answer: every API this broker serves, from the registry."""
        out = []
        for key in sorted(self.handlers):
            api = APIS[key]
            if not api.advertise:
                continue
            # KAFKA-18659: librdkafka needs Produce to start at 0 in the answer,
            # though versions below 3 are refused like Kafka 4 refuses them.
            min_version = 0 if key == 0 else api.min_version
            out.append({"api_key": key, "min_version": min_version, "max_version": api.max_version})
        return out

    def advertised_address(self, listener_name: str) -> tuple[str, int]:
        return self.advertised[listener_name]

    def set_bound(self, bound: list[tuple[Listener, int]]) -> None:
        explicit = {a.name: (a.host, a.port) for a in self.config["advertised.listeners"]}
        for listener, port in bound:
            if listener.name in explicit:
                self.advertised[listener.name] = explicit[listener.name]
            else:
                host = listener.host if listener.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
                self.advertised[listener.name] = (host, port)

    # --- operations that span engines ------------------------------------------------------

    def delete_topic(self, topic: Topic) -> None:
        """The topic's Partitions go with everything they own (log, producer state,
        transaction index); committed offsets and share-group state for it go too."""
        self.topics.delete(topic.name)
        self.offsets.delete_topic(topic.name)
        self.share.topic_deleted(topic.name)

    def apply_retention(self, now: int) -> int:
        """Time and size retention over every partition (the shell's timer)."""
        dropped = 0
        for topic in self.topics.all():
            retention_ms = int(topic.configs.get("retention.ms", self.config["retention.ms"]))
            retention_bytes = int(topic.configs.get("retention.bytes", self.config["retention.bytes"]))
            if retention_ms < 0 and retention_bytes < 0:
                continue
            for partition in topic.partitions:
                n = partition.apply_retention(now, retention_ms, retention_bytes)
                if n:
                    dropped += n
                    log.info("retention_applied", topic=topic.name, partition=partition.partition,
                             batches=n, log_start_offset=partition.log_start_offset)
        return dropped

    def expire_offsets(self, now: int) -> int:
        return self.offsets.expire(now, self.groups.active_groups())

    def flush_logs(self, now: int) -> None:
        """flush.ms: fsync the partitions whose interval has passed (durable storage)."""
        if self.storage is not None:
            self.storage.flush_due(now)

    def checkpoint_logs(self) -> None:
        """Write the recovery points and log start offsets (durable storage)."""
        if self.storage is not None:
            self.storage.checkpoint()

    def close(self) -> None:
        """A clean stop: with log.dirs, every partition's producer state, indexes and
        checkpoints are written and the directories marked clean; the next start trusts them."""
        if self.storage is None:
            return
        started = time.perf_counter()
        self.share.store.close()
        for partition in self.topics.partitions():
            partition.close()
        self.storage.close()
        log.info("storage_closed", seconds=round(time.perf_counter() - started, 3))


def log_dirs(config: BrokerConfig) -> list[str]:
    """log.dirs, or its synonym log.dir; empty: in memory."""
    text = config["log.dirs"] or config["log.dir"]
    return [d.strip() for d in text.split(",") if d.strip()]


def build_broker(config: BrokerConfig, clock: Clock = now_ms) -> Broker:
    """The whole broker. With log.dirs it opens (and locks) the directories and recovers
    what they hold; a directory that cannot be used raises StorageError."""
    appends = AppendNotifier()
    producer_settings = ProducerStateSettings(
        mode=config["producer.state.mode"],
        window=config["max.in.flight.sequence.number.per.connection"],
        expiration_ms=config["producer.id.expiration.ms"])
    dirs = log_dirs(config)
    cluster_id, storage, metadata = config["cluster.id"], None, MetadataStore()
    partitions = InMemoryPartitions(producer_settings, appends.notify)
    if dirs:
        storage = LogManager(dirs, node_id=config["node.id"], cluster_id=cluster_id,
                             cluster_id_given="cluster.id" in config.explicit)
        cluster_id = storage.start()
        metadata = MetadataStore(storage.first_dir).load()
        partitions = DurablePartitions(storage, config, producer_settings, appends.notify, clock)
    topics = TopicManager(num_partitions=config["num.partitions"],
                          auto_create=config["auto.create.topics.enable"],
                          partitions=partitions, metadata=metadata)
    if storage is not None:
        open_topics(topics, storage)
    config_dir = config["config.dir"] or (str(storage.first_dir) if storage is not None else None)
    producer_states = ProducerStates(producer_settings, topics)
    producer_ids = ProducerIdManager(metadata.producer_id_block_end, reserve=metadata.reserve_producer_ids)
    group_journal = GroupJournal(topics, num_partitions=config["offsets.topic.num.partitions"],
                                 segment_bytes=config["offsets.topic.segment.bytes"])
    offsets = OffsetStore(config["offsets.retention.minutes"] * 60_000, journal=group_journal)
    group_configs = GroupConfigs(metadata)
    share_settings = ShareSettings.from_config(config)
    share = ShareGroups(share_settings, topics, notify=appends.notify, group_config=group_configs.get)
    classic = ClassicGroupCoordinator(GroupSettings(
        initial_rebalance_delay_ms=config["group.initial.rebalance.delay.ms"],
        min_session_timeout_ms=config["group.min.session.timeout.ms"],
        max_session_timeout_ms=config["group.max.session.timeout.ms"],
        max_size=config["group.max.size"]), journal=group_journal)
    consumer = ConsumerGroupCoordinator(ConsumerGroupSettings.from_config(config), topics)
    groups = GroupCoordinator(classic, consumer, share, offsets)
    txn_journal = TransactionJournal(topics, num_partitions=config["transaction.state.log.num.partitions"],
                                     segment_bytes=config["transaction.state.log.segment.bytes"])
    txn = Transactions(TxnSettings.from_config(config), topics=topics, producer_ids=producer_ids,
                       offsets=offsets, groups=groups, journal=txn_journal)
    if storage is not None:  # what the internal topics and share records say, in that order
        now = clock()
        replayed = group_journal.replay(offsets, classic, now)
        transactions = txn.recover(now)
        share_partitions = share.store.load()
        log.info("coordinators_recovered", transactional_ids=transactions,
                 share_partitions=share_partitions, **replayed)
    security = Security(config, config_dir)
    quotas = ProducerIdQuotas(config, producer_states, config_dir)
    metrics = Metrics(providers={
        "producer_state": producer_states.snapshot,
        "share_groups": share.snapshot,
        "share": share_partitions_provider(share),
        "security": security.snapshot,
        "quotas": lambda: quotas.manager.snapshot(clock()),
        "transactions": txn.snapshot,
        "producer_ids": lambda: {"allocated": producer_ids.allocated, "epoch_bumps": producer_ids.bumps},
    })
    handlers = dict(HANDLERS)
    if not share_settings.enable:  # group.share.enable=false: neither served nor advertised
        for key in SHARE_API_KEYS:
            handlers.pop(key, None)
    return Broker(config=config, clock=clock, topics=topics, producer_states=producer_states,
                  producer_ids=producer_ids, offsets=offsets, group_configs=group_configs,
                  groups=groups, share=share, txn=txn, security=security, quotas=quotas,
                  appends=appends, metrics=metrics, handlers=handlers, cluster_id=cluster_id,
                  storage=storage)
