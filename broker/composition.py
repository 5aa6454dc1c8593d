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
from dataclasses import replace
from typing import Callable, NamedTuple

import structlog

from kipper.broker.acl.service import Acls
from kipper.broker.cleaner.service import LogCleaner
from kipper.broker.config import BrokerConfig, Listener
from kipper.broker.dispatcher import Dispatcher
from kipper.broker.dynamic_configs import DynamicBrokerConfigs
from kipper.broker.groups.classic import ClassicGroupCoordinator, GroupSettings
from kipper.broker.groups.configs import GroupConfigs
from kipper.broker.groups.consumer import ConsumerGroupCoordinator, ConsumerGroupSettings
from kipper.broker.groups.coordinator import GroupCoordinator
from kipper.broker.groups.journal import GroupJournal
from kipper.broker.groups.offsets import OffsetStore
from kipper.broker.handlers import HANDLERS
from kipper.broker.log.effective import TopicConfigView
from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.log.partitions import DurablePartitions, InMemoryPartitions
from kipper.broker.log.topics import Topic, TopicManager
from kipper.broker.metrics import Metrics
from kipper.broker.notify import AppendNotifier
from kipper.broker.producer_state import ProducerIdManager
from kipper.broker.producer_state.registry import ProducerStates
from kipper.broker.quota.manager import ProducerIdQuotaManager
from kipper.broker.quota.service import ProducerIdQuotas
from kipper.broker.security.service import PRE_AUTH_APIS, Security
from kipper.broker.share.index_file import IndexFilesInLogDirs
from kipper.broker.share.service import SHARE_API_KEYS, ShareGroups
from kipper.broker.share.settings import ShareSettings
from kipper.broker.storage.log_manager import LogManager
from kipper.broker.storage.metadata import MetadataStore
from kipper.broker.log.recovery import open_topics
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
                 handlers: dict, cluster_id: str, storage: LogManager | None, cleaner: LogCleaner,
                 acls: Acls, dynamic_configs: DynamicBrokerConfigs, topic_configs: TopicConfigView):
        self.config = config  # the static config; dynamic_configs.view has the live values
        self.dynamic_configs = dynamic_configs
        self.topic_configs = topic_configs  # every topic's configs in effect
        self.node_id: int = config["node.id"]
        self.cluster_id = cluster_id
        self.storage = storage  # None: everything in memory
        self.cleaner = cleaner
        self.acls = acls
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
        self.dispatcher = Dispatcher(self, handlers, pre_auth_apis=PRE_AUTH_APIS)
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
        """Time and size retention over every partition of a topic whose cleanup.policy
        deletes (the shell's timer)."""
        dropped = 0
        for topic in self.topics.all():
            limits = self.topic_configs.retention(topic)
            if limits is None:
                continue  # cleanup.policy=compact alone: the cleaner's, not retention's
            retention_ms, retention_bytes = limits
            if retention_ms < 0 and retention_bytes < 0:
                continue
            for partition in topic.partitions:
                n = partition.apply_retention(now, retention_ms, retention_bytes)
                if n:
                    dropped += n
                    log.info("retention_applied", topic=topic.name, partition=partition.partition,
                             batches=n, log_start_offset=partition.log_start_offset)
        return dropped

    def alter_broker_configs(self, layer: str, configs: dict[str, str]) -> None:
        """Replace one layer of dynamic broker configs ("" or this node) and let the
        engines that read them see the new values."""
        self.dynamic_configs.replace(layer, configs)
        live = self.dynamic_configs.view
        self.txn.settings = replace(self.txn.settings,
                                    verify_partitions=live["transaction.partition.verification.enable"])
        self.cleaner.threads = live["log.cleaner.threads"]
        for topic in self.topics.all():
            self.topics.factory.reconfigure(topic)
        log.info("broker_configs_altered", layer=layer or "<default>", configs=sorted(configs))

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

    def reset(self) -> None:
        """Every topic (internal ones too), group, committed offset, producer state,
        producer-id epoch and transaction gone, as in a fresh broker; what configures the
        broker stays: listeners, dynamic broker configs, SCRAM credentials, ACLs, client quotas,
        the metrics' counters and the producer-id counter (an id is never handed out twice). The embedded test
        broker calls it between tests (kipper.testing). Needs an in-memory broker: with
        log.dirs, delete the directories and start again instead."""
        if self.storage is not None:
            raise RuntimeError("reset() needs an in-memory broker (log.dirs is set)")
        producer_ids = ProducerIdManager(self.producer_ids.next_id)
        engines = _data_engines(self.config, self.clock, storage=None, metadata=MetadataStore(),
                                producer_ids=producer_ids, live=self.dynamic_configs.view)
        for name, engine in engines._asdict().items():
            setattr(self, name, engine)
        quotas = self.quotas
        quotas.producer_states = self.producer_states
        quotas.manager = ProducerIdQuotaManager(quotas.manager.settings)
        quotas.manager.set_quotas(*quotas.store.rates())
        self.metrics.providers.update(_providers(engines, self.security, self.acls, quotas, self.clock))
        log.info("broker_reset")

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


class DataEngines(NamedTuple):
    topics: TopicManager
    producer_states: ProducerStates
    producer_ids: ProducerIdManager
    offsets: OffsetStore
    group_configs: GroupConfigs
    groups: GroupCoordinator
    share: ShareGroups
    txn: Transactions
    appends: AppendNotifier
    cleaner: LogCleaner


def log_dirs(config: BrokerConfig) -> list[str]:
    """log.dirs, or its synonym log.dir; empty: in memory."""
    text = config["log.dirs"] or config["log.dir"]
    return [d.strip() for d in text.split(",") if d.strip()]


def build_broker(config: BrokerConfig, clock: Clock = now_ms) -> Broker:
    """The whole broker. With log.dirs it opens (and locks) the directories and recovers
    what they hold; a directory that cannot be used raises StorageError."""
    dirs = log_dirs(config)
    cluster_id, storage, metadata = config["cluster.id"], None, MetadataStore()
    if dirs:
        storage = LogManager(dirs, node_id=config["node.id"], cluster_id=cluster_id,
                             cluster_id_given="cluster.id" in config.explicit)
        cluster_id = storage.start()
        metadata = MetadataStore(storage.first_dir).load()
    config_dir = config["config.dir"] or (str(storage.first_dir) if storage is not None else None)
    producer_ids = ProducerIdManager(metadata.producer_id_block_end, reserve=metadata.reserve_producer_ids)
    security = Security(config, config_dir)
    acls = Acls(config, config_dir)
    dynamic_configs = DynamicBrokerConfigs(config, metadata)
    engines = _data_engines(config, clock, storage=storage, metadata=metadata, producer_ids=producer_ids,
                            live=dynamic_configs.view)
    quotas = ProducerIdQuotas(config, engines.producer_states, config_dir)
    metrics = Metrics(providers=_providers(engines, security, acls, quotas, clock))
    handlers = dict(HANDLERS)
    if not engines.share.settings.enable:  # group.share.enable=false: neither served nor advertised
        for key in SHARE_API_KEYS:
            handlers.pop(key, None)
    return Broker(config=config, clock=clock, security=security, acls=acls, quotas=quotas,
                  metrics=metrics, handlers=handlers, cluster_id=cluster_id, storage=storage,
                  dynamic_configs=dynamic_configs, topic_configs=TopicConfigView(dynamic_configs),
                  topics=engines.topics, producer_states=engines.producer_states,
                  producer_ids=engines.producer_ids, offsets=engines.offsets,
                  group_configs=engines.group_configs, groups=engines.groups, share=engines.share,
                  txn=engines.txn, appends=engines.appends, cleaner=engines.cleaner)


def _data_engines(config: BrokerConfig, clock: Clock, *, storage: LogManager | None,
                  metadata: MetadataStore, producer_ids: ProducerIdManager, live) -> DataEngines:
    """The engines that hold topics, groups, producer state and transactions: what
    ``build_broker`` wires up once and ``Broker.reset`` builds again. ``live`` is the
    broker config with the dynamic broker configs over it, what these engines read."""
    appends = AppendNotifier()
    producer_settings = ProducerStateSettings(
        mode=config["producer.state.mode"],
        window=config["max.in.flight.sequence.number.per.connection"], live=live)
    partitions = InMemoryPartitions(producer_settings, appends.notify, live)
    if storage is not None:
        partitions = DurablePartitions(storage, live, producer_settings, appends.notify, clock)
    topics = TopicManager(num_partitions=config["num.partitions"],
                          auto_create=config["auto.create.topics.enable"],
                          partitions=partitions, metadata=metadata)
    if storage is not None:
        open_topics(topics, storage)
    producer_states = ProducerStates(producer_settings, topics)
    group_journal = GroupJournal(topics, num_partitions=config["offsets.topic.num.partitions"],
                                 segment_bytes=config["offsets.topic.segment.bytes"])
    offsets = OffsetStore(config["offsets.retention.minutes"] * 60_000, journal=group_journal)
    group_configs = GroupConfigs(metadata, config)
    share_settings = ShareSettings.from_config(config)
    share = ShareGroups(share_settings, topics, notify=appends.notify, group_config=group_configs.get,
                        index_files=IndexFilesInLogDirs(storage.partition_dir) if storage is not None else None)
    classic = ClassicGroupCoordinator(GroupSettings(
        initial_rebalance_delay_ms=config["group.initial.rebalance.delay.ms"],
        min_session_timeout_ms=config["group.min.session.timeout.ms"],
        max_session_timeout_ms=config["group.max.session.timeout.ms"],
        max_size=config["group.max.size"]), journal=group_journal)
    consumer = ConsumerGroupCoordinator(ConsumerGroupSettings.from_config(config), topics, group_configs)
    groups = GroupCoordinator(classic, consumer, share, offsets,
                              migration_policy=config["group.consumer.migration.policy"])
    txn_journal = TransactionJournal(topics, num_partitions=config["transaction.state.log.num.partitions"],
                                     segment_bytes=config["transaction.state.log.segment.bytes"])
    txn = Transactions(TxnSettings.from_config(live), topics=topics, producer_ids=producer_ids,
                       offsets=offsets, groups=groups, journal=txn_journal)
    if storage is not None:  # what the internal topics and share records say, in that order
        now = clock()
        replayed = group_journal.replay(offsets, classic, now)
        transactions = txn.recover(now)
        share_partitions = share.store.load()
        log.info("coordinators_recovered", transactional_ids=transactions,
                 share_partitions=share_partitions, **replayed)
    cleaner = LogCleaner(topics, enabled=config["log.cleaner.enable"],
                         threads=live["log.cleaner.threads"])
    return DataEngines(topics, producer_states, producer_ids, offsets, group_configs, groups, share,
                       txn, appends, cleaner)


def _providers(engines: DataEngines, security: Security, acls: Acls, quotas: ProducerIdQuotas,
               clock: Clock) -> dict:
    share, ids = engines.share, engines.producer_ids
    return {
        "producer_state": engines.producer_states.snapshot,
        "share_groups": share.snapshot,
        "share": share.partitions_snapshot,
        "security": security.snapshot,
        "quotas": lambda: quotas.manager.snapshot(clock()),
        "transactions": engines.txn.snapshot,
        "cleaner": engines.cleaner.snapshot,
        "authorizer": acls.snapshot,
        "producer_ids": lambda: {"allocated": ids.allocated, "epoch_bumps": ids.bumps},
    }
