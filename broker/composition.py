"""The composition root: one function builds every engine of a broker from its config and a clock.

``build_engines`` constructs each engine once and hands it its collaborators through
its constructor; the result, ``Engines``, is one frozen value, what handlers see as
``ctx.engines``. Nothing is registered or rewired afterwards: a dynamic broker config
reaches the engines through the live config view they read
(``dynamic_configs.view``), and ``reset`` builds a new ``Engines`` that the shell
swaps in whole. Building does no recovery: with log.dirs it opens and locks the
directories and reads the metadata store, and the shell then runs ``recover``
(broker/server.py). The asyncio server, the embedded test broker, the unit tests and
the benchmarks all build engines this way, so an in-process broker is the real one.

``Engines`` also holds the few operations that span engines (deleting a topic,
retention, offsets expiry, a dynamic broker config change, a clean stop), so that
each lives in one place.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import structlog

from kipper.broker import logging_setup
from kipper.broker.acl.service import Acls
from kipper.broker.broker_loggers import BrokerLoggers
from kipper.broker.cleaner.service import LogCleaner
from kipper.broker.cluster.controller import Controller, ControllerSettings
from kipper.broker.cluster.controller_quorum import ControllerQuorum
from kipper.broker.cluster.controller_topics import ControllerTopics
from kipper.broker.cluster.metadata_log import MetadataLog
from kipper.broker.cluster.node import ClusterNode, NodeSettings, ProducerIdBlocks
from kipper.broker.cluster.security_records import LogWriter
from kipper.broker.cluster.security_records import follow as follow_security
from kipper.broker.cluster.security_records import seed as seed_security
from kipper.broker.config import BrokerConfig
from kipper.broker.dynamic_configs import DynamicBrokerConfigs
from kipper.broker.features import CLUSTER_CEILINGS, TRANSACTION_VERSION, Features, parse_levels
from kipper.broker.groups.classic import ClassicGroupCoordinator, GroupSettings
from kipper.broker.groups.configs import GroupConfigs
from kipper.broker.groups.consumer import ConsumerGroupCoordinator, ConsumerGroupSettings
from kipper.broker.groups.coordinator import GroupCoordinator
from kipper.broker.groups.journal import OFFSETS_TOPIC, GroupJournal, partition_for
from kipper.broker.groups.offsets import OffsetStore
from kipper.broker.groups.streams import StreamsGroupCoordinator, StreamsGroupSettings
from kipper.broker.log.effective import TopicConfigView
from kipper.broker.log.partitions import DurablePartitions, InMemoryPartitions
from kipper.broker.log.refusals import RefusedBatches
from kipper.broker.log.recovery import open_topics
from kipper.broker.log.topics import Topic, TopicManager, validate_topic_name
from kipper.broker.metrics import Metrics
from kipper.broker.notify import AppendNotifier
from kipper.broker.outbox import Outbox
from kipper.broker.producer_state import ProducerIdManager
from kipper.broker.producer_state.registry import ProducerStates
from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.quorum import Quorum
from kipper.broker.quota.service import ProducerIdQuotas
from kipper.broker.security.service import Security
from kipper.broker.share.index_file import IndexFilesInLogDirs
from kipper.broker.share.service import SHARE_API_KEYS, ShareGroups
from kipper.broker.share.settings import ShareSettings
from kipper.broker.storage.log_config import LogConfig
from kipper.broker.storage.log_manager import LogManager
from kipper.broker.storage.metadata import MetadataStore
from kipper.broker.telemetry import ClientTelemetry, Subscriptions
from kipper.broker.txn.coordinator import TxnSettings
from kipper.broker.txn.journal import TXN_TOPIC, TransactionJournal
from kipper.broker.txn.service import Transactions
from kipper.protocol.messages import APIS
from kipper.protocol.metadata_records import METADATA_TOPIC, METADATA_TOPIC_ID

log = structlog.get_logger(__name__)

Clock = Callable[[], int]

# The APIs of a cluster's nodes (docs/CLUSTER.md): the controller alone serves the brokers'
# requests (BrokerRegistration, BrokerHeartbeat, AlterPartition, AllocateProducerIds, Envelope); brokers
# forward the cluster's admin requests to it (UnregisterBroker, reassignments; one node answers
# them itself); the controller answers those, ApiVersions, the metadata log's Fetch, the topic
# admin APIs and those of ACLs, client quotas and SCRAM credentials
CONTROLLER_ONLY_APIS = frozenset({62, 63, 56, 58, 67})
CONTROLLER_APIS = frozenset({18, 1, 19, 20, 29, 30, 31, 32, 33, 37, 43, 44, 45, 46, 48, 49, 50, 51, 55, 60, 64}) \
    | CONTROLLER_ONLY_APIS


def served_apis(config: BrokerConfig) -> frozenset[int]:
    """The APIs a node serves and advertises, by its role (process.roles), whether it
    serves share groups (group.share.enable) and client telemetry (exports_telemetry)."""
    role = config["process.roles"]
    if role == "controller":
        return CONTROLLER_APIS
    keys = frozenset(k for k in APIS if (config["group.share.enable"] or k not in SHARE_API_KEYS)
                     and (exports_telemetry(config) or k not in TELEMETRY_API_KEYS))
    return keys - CONTROLLER_ONLY_APIS


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, eq=False)
class Engines:
    """Every engine of one broker. Built by ``build_engines``; ``reset`` makes another."""

    config: BrokerConfig  # the static config; dynamic_configs.view has the live values
    clock: Clock
    node_id: int
    cluster_id: str
    api_keys: frozenset[int]  # the APIs served and advertised (group.share.enable)
    advertised: dict  # listener name -> (host, port) given to clients; filled once bound
    storage: LogManager | None  # None: everything in memory
    dynamic_configs: DynamicBrokerConfigs
    features: Features  # feature flags: supported and finalized levels (KIP-584)
    client_metrics: Subscriptions  # KIP-714 client-metrics subscriptions (CLIENT_METRICS resources)
    telemetry: ClientTelemetry  # KIP-714 GetTelemetrySubscriptions, PushTelemetry, what clients push
    topic_configs: TopicConfigView  # every topic's configs in effect
    metrics: Metrics
    refusals: RefusedBatches  # Produce batches the checks refused: counted, logged sparingly
    security: Security
    acls: Acls
    quotas: ProducerIdQuotas
    loggers: BrokerLoggers  # BROKER_LOGGER resources: the broker's log level at run time
    # the engines that hold data, built again by reset
    appends: AppendNotifier
    topics: TopicManager
    producer_states: ProducerStates
    producer_ids: ProducerIdManager
    offsets: OffsetStore
    group_configs: GroupConfigs
    groups: GroupCoordinator
    share: ShareGroups
    txn: Transactions
    cleaner: LogCleaner
    quorum: Quorum  # who leads the metadata log and the partitions (one node: this one; else the controller)
    # a cluster's node (docs/CLUSTER.md): a broker's view of the cluster and its replicas, or the
    # controller; both None on one node
    cluster: ClusterNode | None = None
    controller: Controller | None = None
    # the Schema Registry (broker/schema_registry/), with schema.registry.listeners; None otherwise
    schema_registry: object | None = None

    # --- what the broker serves -------------------------------------------------------------

    def advertised_apis(self) -> list[dict]:
        """ApiVersions' answer: every API this broker serves, from the registry."""
        out = []
        for key in sorted(self.api_keys):
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

    def providers(self) -> dict[str, Callable[[], dict]]:
        """The engines' own counters, which the metrics read (Metrics.provide) for the
        metrics dumps and /metrics."""
        ids, quotas, clock = self.producer_ids, self.quotas, self.clock
        return {
            "producer_state": self.producer_states.snapshot,
            "share_groups": self.share.snapshot,
            "share": self.share.partitions_snapshot,
            "security": self.security.snapshot,
            "quotas": lambda: quotas.snapshot(clock()),
            "transactions": self.txn.snapshot,
            "cleaner": self.cleaner.snapshot,
            "authorizer": self.acls.snapshot,
            "producer_ids": lambda: {"allocated": ids.allocated, "epoch_bumps": ids.bumps},
            "refused_batches": self.refusals.snapshot,
            "features": self.features.snapshot,
            "client_telemetry": self.telemetry.snapshot,
        }

    # --- operations that span engines ------------------------------------------------------

    def delete_topic(self, topic: Topic) -> None:
        """The topic's Partitions go with everything they own (log, producer state,
        transaction index); committed offsets and share-group state for it go too."""
        _topic_deleter(self.topics, self.offsets, self.share)(topic)

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
                             segments=n, log_start_offset=partition.log_start_offset)
        return dropped

    def alter_broker_configs(self, layer: str, configs: dict[str, str]) -> None:
        """Replace one layer of dynamic broker configs ("" or this node). The engines read
        them through the live view (producer.id.expiration.ms, log.cleaner.threads,
        transaction.partition.verification.enable, the topic defaults of Produce); the
        partitions' storage settings are derived again from it."""
        self.dynamic_configs.replace(layer, configs)
        self.topics.reconfigure_all()
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

    def recover(self) -> None:
        """With log.dirs, what the directories hold, in order: the topics and their
        partitions (log, producer state, transaction index), then what the internal topics
        say (committed offsets and classic groups, transactions), then share-group state.
        The shell runs it once after building (broker/server.py); nothing without log.dirs."""
        if self.storage is None:
            return
        if self.cluster is not None or self.controller is not None:
            return  # a cluster's topics come from the metadata log (docs/CLUSTER.md); their logs open then
        open_topics(self.topics, self.storage)
        now = self.clock()
        replayed = self.groups.recover(now)
        transactions = self.txn.recover(now)
        share_partitions = self.share.recover()
        registry = self.schema_registry.recover() if self.schema_registry is not None else 0
        log.info("coordinators_recovered", transactional_ids=transactions,
                 share_partitions=share_partitions, schema_registry_records=registry, **replayed)

    def reset(self) -> Engines:
        """A new set of engines in which every topic (internal ones too), group, committed
        offset, producer state, producer-id epoch and transaction is gone, as in a fresh
        broker; what configures the broker stays: listeners, dynamic broker configs, SCRAM
        credentials, ACLs, client quotas, the metrics' counters and the producer-id counter
        (an id is never handed out twice). The shell swaps it in whole (the embedded test
        broker calls it between tests: kipper.testing). Needs an in-memory broker: with
        log.dirs, delete the directories and start again instead."""
        if self.storage is not None:
            raise RuntimeError("reset() needs an in-memory broker (log.dirs is set)")
        if self.cluster is not None or self.controller is not None:
            raise RuntimeError("reset() is for a one-node broker, not a node of a cluster")
        self.quotas.forget_producers()
        engines = _engines(self.config, self.clock, kept=self, metadata=MetadataStore(),
                           producer_ids=ProducerIdManager(self.producer_ids.next_id))
        engines.metrics.provide(engines.providers())  # the counters stay; the new engines' are read
        log.info("broker_reset")
        return engines

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


TELEMETRY_API_KEYS = (71, 72)  # GetTelemetrySubscriptions, PushTelemetry


def exports_telemetry(config: BrokerConfig) -> bool:
    """Client telemetry is served when it has somewhere to go (Kafka: a configured exporter
    plugin; kipper: its own /metrics and metrics dumps)."""
    return bool(config["metrics.http.listener"] or config["metrics.dump.dir"] or config["metrics.dump.topic"])


def log_dirs(config: BrokerConfig) -> list[str]:
    """log.dirs, or its synonym log.dir; empty: in memory."""
    text = config["log.dirs"] or config["log.dir"]
    return [d.strip() for d in text.split(",") if d.strip()]


def build_engines(config: BrokerConfig, clock: Clock = now_ms) -> Engines:
    """Every engine of a broker. With log.dirs it opens (and locks) the directories and
    reads the metadata store (a directory that cannot be used raises StorageError); what
    the logs hold is recovered by ``Engines.recover``, which the shell runs."""
    dirs = log_dirs(config)
    cluster_id, storage, metadata = config["cluster.id"], None, MetadataStore()
    if dirs:
        storage = LogManager(dirs, node_id=config["node.id"], cluster_id=cluster_id,
                             cluster_id_given="cluster.id" in config.explicit)
        cluster_id = storage.start()
        metadata = MetadataStore(storage.first_dir).load()
    config_dir = config["config.dir"] or (str(storage.first_dir) if storage is not None else None)
    # a cluster's ACLs, SCRAM credentials and client quotas are its metadata log's, not files
    store_dir = None if config["process.roles"] else config_dir
    subscriptions = Subscriptions(metadata)  # client-metrics resources, kept with log.dirs
    kept = _Kept(cluster_id=cluster_id, advertised={}, storage=storage,
                 dynamic_configs=DynamicBrokerConfigs(config, metadata),
                 features=Features(parse_levels(config["initial.feature.levels"]),
                                   metadata if metadata.durable else None, node_id=config["node.id"],
                                   ceilings=CLUSTER_CEILINGS if config["process.roles"] else None),
                 client_metrics=subscriptions,
                 telemetry=ClientTelemetry(subscriptions, max_bytes=config["telemetry.max.bytes"],
                                           max_series=config["client.telemetry.max.series"]),
                 metrics=Metrics(),
                 refusals=RefusedBatches(),
                 security=Security(config, store_dir), acls=Acls(config, store_dir),
                 quotas=ProducerIdQuotas(config, store_dir))
    blocks = ProducerIdBlocks() if config["process.roles"] == "broker" else None  # from the controller
    producer_ids = ProducerIdManager(metadata.producer_id_block_end, reserve=metadata.reserve_producer_ids) \
        if blocks is None else ProducerIdManager(0, reserve=blocks.take)
    engines = _engines(config, clock, kept=kept, metadata=metadata, producer_ids=producer_ids, id_blocks=blocks)
    engines.metrics.provide(engines.providers())
    return engines


@dataclass(frozen=True)
class _Kept:
    """What a reset keeps: what configures the broker and what it has counted."""

    cluster_id: str
    advertised: dict
    storage: LogManager | None
    dynamic_configs: DynamicBrokerConfigs
    features: Features
    client_metrics: Subscriptions
    telemetry: ClientTelemetry
    metrics: Metrics
    refusals: RefusedBatches
    security: Security
    acls: Acls
    quotas: ProducerIdQuotas


def _engines(config: BrokerConfig, clock: Clock, *, kept: _Kept | Engines, metadata: MetadataStore,
             producer_ids: ProducerIdManager, id_blocks: ProducerIdBlocks | None = None) -> Engines:
    """``kept``'s engines with new ones that hold topics, groups, producer state and
    transactions: what ``build_engines`` builds once and ``Engines.reset`` builds again.
    The new engines read the broker config with the dynamic broker configs over it (``live``)."""
    storage, live = kept.storage, kept.dynamic_configs.view
    appends = AppendNotifier()
    producer_settings = ProducerStateSettings(
        mode=config["producer.state.mode"],
        window=config["max.in.flight.sequence.number.per.connection"], live=live)
    partitions = InMemoryPartitions(producer_settings, appends.notify, live)
    if storage is not None:
        partitions = DurablePartitions(storage, live, producer_settings, appends.notify, clock)
    role = config["process.roles"]
    if role == "controller":
        topics = ControllerTopics(ControllerSettings.from_config(config),
                                  MetadataLog(metadata_storage(storage, clock), notify=appends.notify),
                                  clock, num_partitions=config["num.partitions"],
                                  auto_create=config["auto.create.topics.enable"], partitions=partitions,
                                  metadata=metadata)
    else:
        topics = TopicManager(node_id=config["node.id"], num_partitions=config["num.partitions"],
                              auto_create=config["auto.create.topics.enable"], partitions=partitions,
                              metadata=metadata)
    group_journal = GroupJournal(topics, num_partitions=config["offsets.topic.num.partitions"],
                                 segment_bytes=config["offsets.topic.segment.bytes"])
    offsets = OffsetStore(config["offsets.retention.minutes"] * 60_000, journal=group_journal)
    group_configs = GroupConfigs(metadata, config, writer=(
        lambda group, old, new: topics.controller.write_group_configs(group, old, new, clock()))
        if role == "controller" else None)
    share = ShareGroups(ShareSettings.from_config(config), topics, notify=appends.notify,
                        group_config=group_configs.get,
                        index_files=IndexFilesInLogDirs(storage.partition_dir) if storage is not None else None,
                        coordinated_here=lambda group_id: cluster is None or cluster.coordinates(group_id))
    classic = ClassicGroupCoordinator(GroupSettings(
        initial_rebalance_delay_ms=config["group.initial.rebalance.delay.ms"],
        min_session_timeout_ms=config["group.min.session.timeout.ms"],
        max_session_timeout_ms=config["group.max.session.timeout.ms"],
        max_size=config["group.max.size"]), journal=group_journal)
    consumer = ConsumerGroupCoordinator(ConsumerGroupSettings.from_config(config), topics, group_configs)
    streams = StreamsGroupCoordinator(StreamsGroupSettings.from_config(config), topics, group_configs,
                                      journal=group_journal.streams_records)
    groups = GroupCoordinator(classic, consumer, share, offsets, journal=group_journal,
                              migration_policy=config["group.consumer.migration.policy"], streams=streams)
    txn_journal = TransactionJournal(topics, num_partitions=config["transaction.state.log.num.partitions"],
                                     segment_bytes=config["transaction.state.log.segment.bytes"])
    cluster = ClusterNode(NodeSettings.from_config(config), topics, clock,
                          on_delete=_topic_deleter(topics, offsets, share), id_blocks=id_blocks,
                          on_role=_coordinators_follow(topics, groups, lambda: txn, clock),
                          group_configs=group_configs,
                          on_security=lambda kinds: follow_security(cluster.image.security, kept.acls,
                                                                    kept.security, kept.quotas, kinds)
                          ) if role == "broker" else None
    if role == "controller":
        _stores_in_log(topics.controller, kept, clock, config)
    txn = Transactions(TxnSettings.from_config(config), topics=topics, producer_ids=producer_ids,
                       offsets=offsets, groups=groups, journal=txn_journal, live=live, cluster=cluster,
                       markers=Outbox() if cluster is not None else None,
                       verifications=Outbox() if cluster is not None else None,
                       server_tv=lambda: kept.features.finalized_level(TRANSACTION_VERSION))
    registry = _schema_registry(config, topics, clock) if config["schema.registry.listeners"] else None
    return Engines(
        config=config, clock=clock, node_id=config["node.id"], cluster_id=kept.cluster_id,
        api_keys=served_apis(config),
        cluster=cluster, controller=topics.controller if role == "controller" else None,
        advertised=kept.advertised, storage=storage, dynamic_configs=kept.dynamic_configs,
        features=kept.features, client_metrics=kept.client_metrics, telemetry=kept.telemetry,
        topic_configs=TopicConfigView(kept.dynamic_configs), metrics=kept.metrics, refusals=kept.refusals,
        security=kept.security, acls=kept.acls, quotas=kept.quotas,
        loggers=BrokerLoggers(config["node.id"], config["log.level"], logging_setup.set_level),
        appends=appends, topics=topics, producer_states=ProducerStates(producer_settings, topics),
        producer_ids=producer_ids, offsets=offsets, group_configs=group_configs, groups=groups,
        share=share, cleaner=LogCleaner(topics, enabled=config["log.cleaner.enable"], live=live),
        quorum=ControllerQuorum(topics.controller, topics, lambda: kept.advertised, clock) if role == "controller"
        else Quorum(config["node.id"], kept.cluster_id, topics, lambda: kept.advertised),
        txn=txn, schema_registry=registry)


def _schema_registry(config: BrokerConfig, topics: TopicManager, clock: Clock):
    """The registry engine over its topic; imported only when configured, so a broker
    without it loads none of it (nor the schema libraries, which its formats import on
    first use). Without the extra's libraries the broker does not start."""
    from kipper.broker.schema_registry.formats import EXTRA, missing_libraries
    from kipper.broker.schema_registry.service import RegistryService

    missing = missing_libraries()
    if missing:
        raise ValueError(f"schema.registry.listeners is set but the Schema Registry's libraries are missing "
                         f"({', '.join(missing)}): pip install '{EXTRA}'")
    problem = validate_topic_name(config["schema.registry.topic"])
    if problem:
        raise ValueError(f"schema.registry.topic: {problem}")
    return RegistryService(topics, topic=config["schema.registry.topic"],
                           default_level=config["schema.registry.compatibility.level"], clock=clock)


def metadata_storage(storage: LogManager | None, clock):
    """The controller's `__cluster_metadata-0`: in log.dirs when there are any, else in memory."""
    if storage is None:
        return None
    return storage.open_log(METADATA_TOPIC, 0, METADATA_TOPIC_ID, LogConfig(), clock())


def _coordinators_follow(topics, groups, transactions: Callable, clock) -> Callable:
    """A cluster's broker that becomes the leader of a `__consumer_offsets` or
    `__transaction_state` partition coordinates the groups or transactional ids it holds
    from then on (loaded from it); one that stops leading it lets them go."""
    def follow(partition, leads: bool) -> None:
        name = partition.topic
        if name not in (OFFSETS_TOPIC, TXN_TOPIC):
            return
        index, count = partition.partition, len(topics.get(name).partitions)

        def owned(key: str) -> bool:
            return partition_for(key, count) == index
        if name == OFFSETS_TOPIC:
            counts = groups.load(partition, clock()) if leads else {"unloaded": groups.unload(owned)}
        else:
            txn = transactions()
            counts = {"transactional_ids": txn.recover(clock(), [partition])} if leads else \
                {"unloaded": txn.unload(owned)}
        log.info("coordinator_partition_loaded" if leads else "coordinator_partition_unloaded",
                 topic=name, partition=index, **counts)
    return follow


def _stores_in_log(controller: Controller, kept: _Kept, clock: Clock, config) -> None:
    """The controller's ACLs, SCRAM credentials and client quotas: the handlers change them as
    on one node, and the stores write metadata records instead of files, then follow the image;
    a new cluster's log starts with those of its config.dir."""
    image = controller.image.security
    writer = LogWriter(image, lambda records: controller.commit(records, clock()))
    if config["config.dir"]:
        controller.seeds.append(lambda: seed_security(writer, config, config["config.dir"]))
    kept.acls.writer = kept.security.credentials.writer = kept.quotas.store.writer = writer
    controller.watchers.append(lambda changes: follow_security(
        image, kept.acls, kept.security, kept.quotas, {c.kind for c in changes}))
    follow_security(image, kept.acls, kept.security, kept.quotas)  # (what its log already held)


def _topic_deleter(topics, offsets, share) -> Callable[[Topic], None]:
    """Deleting a topic: its partitions, and the committed offsets and share-group state for it."""
    def delete(topic: Topic) -> None:
        topics.delete(topic.name)
        offsets.delete_topic(topic.name)
        share.topic_deleted(topic.name)
    return delete


__all__ = ["Engines", "build_engines", "log_dirs", "now_ms", "served_apis"]
