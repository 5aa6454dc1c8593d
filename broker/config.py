"""Broker configuration: Kafka property names, one table, validated once.

Values come from a .properties file, then repeatable ``--override key=value`` flags, exactly as
Kafka's start script layers them. Every key is declared in ``KEYS`` with its type, default, allowed
range and a line of documentation; the README's configuration reference is generated from the
same table. An unknown key or a bad value raises ``ConfigError`` with a readable message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from kipper.broker.config_values import (  # noqa: F401  (ConfigError, Listener, parse_listeners: public here too)
    BROKER_CODECS, SECURITY_PROTOCOLS, ConfigError, Listener, assignors, boolean, choice,
    cleanup_policy, float_in, http_listener, int_in, java_double, mechanisms, parse_listeners, protocol_map,
    registry_listeners, share_reset, string,
)
from kipper.broker.config_checks import check_consistency
from kipper.broker.config_cluster import CLUSTER_KEYS
from kipper.broker.features import parse_levels
from kipper.protocol import properties

# authorizer.class.name values that turn on ACLs (broker/acl/): Kafka's two class names
# (KRaft's and ZooKeeper's), so a Kafka properties file works as it is, and two short ones
AUTHORIZER_CLASS_NAMES = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                          "kafka.security.authorizer.AclAuthorizer", "standard", "acl")


@dataclass(frozen=True)
class Key:
    name: str
    parse: Callable[[str], Any]
    default: Any
    doc: str
    section: str = "server"


def feature_levels(text: str) -> str:
    """initial.feature.levels: checked here, read by broker/features.py."""
    try:
        parse_levels(text)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return str(text).strip()


_INT32 = 2**31 - 1
_INT64 = 2**63 - 1

KEYS: dict[str, Key] = {k.name: k for k in (
    # --- server
    Key("listeners", lambda s: parse_listeners(s), "PLAINTEXT://127.0.0.1:9092",
        "Comma-separated NAME://host:port to listen on. Port 0 picks a free port."),
    Key("advertised.listeners", lambda s: parse_listeners(s, "advertised.listeners"), "",
        "Addresses given to clients in Metadata, per listener name. Empty: the bound addresses."),
    Key("listener.security.protocol.map", protocol_map,  # in the order Kafka describes its default
        "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "Security protocol of each listener name."),
    Key("node.id", int_in(0, _INT32), 1, "This broker's id in Metadata and FindCoordinator."),
    Key("cluster.id", string, "a2lwcGVyLWNsdXN0ZXIAAA", "Cluster id reported in Metadata: Kafka's form (16 "
        "bytes in URL-safe base64, here \"kipper-cluster\"); a directory already formatted keeps its own."),
    Key("initial.feature.levels", feature_levels, "",
        "Feature levels a new broker finalizes, name=level comma-separated (as kafka-storage format "
        "--feature sets them); the others take Kafka 4.4's defaults (docs/ADMIN.md, Feature flags). "
        "With log.dirs only the first start reads it: kafka-features changes the stored levels."),
    Key("socket.request.max.bytes", int_in(1024, _INT32), 104857600,
        "Largest request frame accepted; a larger frame closes the connection."),
    # Kafka's SocketServer: the send size on each accepted connection, the receive size on each
    # listening socket (accepted connections inherit it); -1: the OS's own (autotuned) sizes.
    # Kafka's receive default (102400) cost kipper's ingest 15% more CPU (docs/PERFORMANCE.md).
    Key("socket.send.buffer.bytes", int_in(-1, _INT32), 102400,
        "SO_SNDBUF of each client connection (-1: the OS default)."),
    Key("socket.receive.buffer.bytes", int_in(-1, _INT32), -1,
        "SO_RCVBUF of the listening sockets, which connections inherit (-1: the OS default; "
        "Kafka's default is 102400)."),
    Key("log.level", choice("DEBUG", "INFO", "WARNING", "ERROR"), "INFO", "Log level."),
    Key("log.format", choice("console", "json"), "console", "Log rendering."),
    # --- log
    Key("num.partitions", int_in(1, 100000), 1, "Partitions of an auto-created topic.", "log"),
    Key("auto.create.topics.enable", boolean, True,
        "Create a topic when a client asks for its metadata (Produce never creates one). As in Kafka, "
        "that Metadata answer says UNKNOWN_TOPIC_OR_PARTITION; the next one shows the topic.", "log"),
    Key("message.max.bytes", int_in(0, _INT32), 1048588,
        "Largest record batch accepted, as in Kafka.", "log"),
    Key("retention.ms", int_in(-1, _INT64), 604800000,
        "Default time retention of topics (-1: keep forever).", "log"),
    Key("log.retention.hours", int_in(-1, _INT32), 168,
        "retention.ms in hours, when that (or log.retention.ms) is not set (Kafka's).", "log"),
    Key("retention.bytes", int_in(-1, _INT64), -1,
        "Default size retention per partition (-1: unlimited).", "log"),
    Key("log.retention.check.interval.ms", int_in(1, _INT64), 300000,
        "How often retention is applied.", "log"),
    # topic defaults kipper applies (topic configs of the same meaning, docs/ADMIN.md)
    Key("log.cleanup.policy", cleanup_policy, "delete",
        "Default cleanup.policy: delete, compact, both (comma-separated) or empty.", "log"),
    Key("compression.type", choice(*BROKER_CODECS), "producer",
        "Default compression.type: producer keeps the producer's codec, any other recompresses.", "log"),
    Key("log.message.timestamp.type", choice("CreateTime", "LogAppendTime"), "CreateTime",
        "Default message.timestamp.type.", "log"),
    Key("log.message.timestamp.before.max.ms", int_in(0, _INT64), _INT64,
        "Default message.timestamp.before.max.ms: how far behind the broker's clock a CreateTime "
        "record may be.", "log"),
    Key("log.message.timestamp.after.max.ms", int_in(0, _INT64), 3600000,
        "Default message.timestamp.after.max.ms: how far ahead of the broker's clock a CreateTime "
        "record may be (Kafka 4's default, one hour).", "log"),
    # --- durable storage (docs/STORAGE.md); Kafka's names and defaults
    Key("log.dirs", string, "",
        "Comma-separated directories for the logs, internal topics and metadata. Empty (and "
        "log.dir empty): everything in memory, as for development and CI.", "storage"),
    Key("log.dir", string, "", "A single log directory; log.dirs wins when both are set.", "storage"),
    Key("log.segment.bytes", int_in(14, _INT32), 1073741824,
        "A segment rolls when the next batch would take it past this size (topic: segment.bytes).",
        "storage"),
    Key("log.roll.ms", int_in(-1, _INT64), -1,
        "A segment rolls when a batch's timestamp is this far past its first batch's (topic: "
        "segment.ms, as Kafka). -1: log.roll.hours.",
        "storage"),
    Key("log.roll.hours", int_in(1, _INT32), 168, "log.roll.ms in hours, when that is not set.",
        "storage"),
    Key("log.index.interval.bytes", int_in(0, _INT32), 4096,
        "Bytes of batches between two entries of the sparse offset index (topic: "
        "index.interval.bytes).", "storage"),
    Key("log.flush.interval.messages", int_in(1, _INT64), 2**63 - 1,
        "fsync a partition after this many records (topic: flush.messages). Kafka's default: "
        "rely on the page cache.", "storage"),
    Key("log.flush.interval.ms", int_in(-1, _INT64), -1,
        "fsync a partition this long after its last flush (topic: flush.ms). -1: never on a "
        "timer.", "storage"),
    Key("log.flush.offset.checkpoint.interval.ms", int_in(0, _INT32), 60000,
        "How often the recovery points (what was fsynced) are written.", "storage"),
    Key("log.cleaner.enable", boolean, True,
        "Compact topics with cleanup.policy=compact (docs/STORAGE.md).", "storage"),
    Key("log.cleaner.threads", int_in(1, 64), 1,
        "Partitions cleaned at the same time (in small steps on the event loop).", "storage"),
    Key("log.cleaner.backoff.ms", int_in(1, _INT64), 15000,
        "How often the cleaner looks for a partition to clean.", "storage"),
    Key("log.cleaner.delete.retention.ms", int_in(0, _INT64), 86400000,
        "How long tombstones and transaction markers are kept after the first cleaning "
        "(topic: delete.retention.ms).", "storage"),
    Key("log.cleaner.min.cleanable.ratio", float_in(0.0, 1.0), 0.5,
        "Dirty share of a log before it is cleaned (topic: min.cleanable.dirty.ratio).", "storage"),
    Key("log.cleaner.min.compaction.lag.ms", int_in(0, _INT64), 0,
        "Records younger than this are not compacted (topic: min.compaction.lag.ms).", "storage"),
    Key("log.cleaner.max.compaction.lag.ms", int_in(1, _INT64), 2**63 - 1,
        "Dirty records older than this are compacted whatever the ratio "
        "(topic: max.compaction.lag.ms).", "storage"),
    Key("offsets.topic.num.partitions", int_in(1, 1000), 50,
        "Partitions of __consumer_offsets (committed offsets and group metadata).", "storage"),
    Key("offsets.topic.segment.bytes", int_in(14, _INT32), 104857600,
        "segment.bytes of __consumer_offsets.", "storage"),
    Key("transaction.state.log.num.partitions", int_in(1, 1000), 50,
        "Partitions of __transaction_state (transaction coordinator state).", "storage"),
    Key("transaction.state.log.segment.bytes", int_in(14, _INT32), 104857600,
        "segment.bytes of __transaction_state.", "storage"),
    # --- a cluster (docs/CLUSTER.md)
    *(Key(*k, section="cluster") for k in CLUSTER_KEYS),
    # --- idempotent producers (seed 000, KIP-360)
    Key("producer.state.mode", choice("latest", "window5"), "latest",
        "latest: keep only the latest batch per producer id (seed 000); window5: Kafka's last five.",
        "producer"),
    Key("max.in.flight.sequence.number.per.connection", int_in(1, 2**30 - 1), 10_000_000,
        "Sequences behind the last appended one that count as duplicates (seed 000).", "producer"),
    Key("producer.id.expiration.ms", int_in(1, _INT32), 86400000,
        "Producer state is dropped this long after its last batch's timestamp, unless a transaction "
        "is open (KIP-360 keeps it otherwise).",
        "producer"),
    Key("producer.id.expiration.check.interval.ms", int_in(1, _INT32), 600000,
        "How often expired producer state is swept.", "producer"),
    # --- transactions (KIP-98, KIP-360, KIP-890 part 1); defaults are Kafka's
    Key("transaction.max.timeout.ms", int_in(1, _INT32), 900000,
        "Largest transaction.timeout.ms a producer may ask for (else INVALID_TRANSACTION_TIMEOUT).",
        "transactions"),
    Key("transaction.abort.timed.out.transaction.cleanup.interval.ms", int_in(1, _INT32), 10000,
        "How often transactions open past their timeout are aborted (with an epoch bump).",
        "transactions"),
    Key("transactional.id.expiration.ms", int_in(1, _INT32), 604800000,
        "A transactional id with no open transaction and no request for this long is forgotten.",
        "transactions"),
    Key("transaction.partition.verification.enable", boolean, True,
        "Refuse transactional batches for partitions not added to the producer's open transaction "
        "(KIP-890 part 1; INVALID_TXN_STATE).", "transactions"),
    # --- groups
    Key("group.initial.rebalance.delay.ms", int_in(0, _INT32), 0,
        "Delay before the first rebalance of an empty group. 0 here: see docs.", "group"),
    Key("group.min.session.timeout.ms", int_in(1, _INT32), 6000,
        "Smallest session timeout a consumer may ask for.", "group"),
    Key("group.max.session.timeout.ms", int_in(1, _INT32), 1800000,
        "Largest session timeout a consumer may ask for.", "group"),
    Key("group.max.size", int_in(1, _INT32), _INT32, "Largest classic consumer group.", "group"),
    Key("offsets.retention.minutes", int_in(1, _INT32), 10080,
        "Committed offsets of an empty group are kept this long.", "group"),
    # --- consumer groups of the next-generation protocol (KIP-848); Kafka's defaults and ranges
    Key("group.consumer.session.timeout.ms", int_in(1, _INT32), 45000,
        "A consumer-group member (group.protocol=consumer) without a heartbeat for this long is "
        "removed and its partitions are reassigned.", "group"),
    Key("group.consumer.min.session.timeout.ms", int_in(1, _INT32), 45000,
        "Lowest allowed group.consumer.session.timeout.ms.", "group"),
    Key("group.consumer.max.session.timeout.ms", int_in(1, _INT32), 60000,
        "Highest allowed group.consumer.session.timeout.ms.", "group"),
    Key("group.consumer.heartbeat.interval.ms", int_in(1, _INT32), 5000,
        "Heartbeat interval given to consumer-group members; below the session timeout.", "group"),
    Key("group.consumer.min.heartbeat.interval.ms", int_in(1, _INT32), 5000,
        "Lowest allowed group.consumer.heartbeat.interval.ms.", "group"),
    Key("group.consumer.max.heartbeat.interval.ms", int_in(1, _INT32), 15000,
        "Highest allowed group.consumer.heartbeat.interval.ms.", "group"),
    Key("group.consumer.max.size", int_in(1, _INT32), _INT32,
        "Largest consumer group (group.max.size limits classic groups).", "group"),
    Key("group.consumer.assignors", assignors, "uniform,range",
        "Server-side assignors, comma-separated (Kafka's class names are accepted too); the first "
        "is used when a member asks for none.", "group"),
    Key("group.consumer.migration.policy",
        choice("bidirectional", "upgrade", "downgrade", "disabled"), "bidirectional",
        "Online conversion between classic and consumer groups: upgrade when a KIP-848 member "
        "joins a classic group, downgrade when the last one leaves (Kafka's default: both).",
        "group"),
    # --- streams groups (KIP-1071); Kafka 4.4's defaults and ranges
    Key("group.streams.session.timeout.ms", int_in(1, _INT32), 45000,
        "A streams-group member (group.protocol=streams) without a heartbeat for this long is "
        "removed and its tasks are reassigned.", "group"),
    Key("group.streams.min.session.timeout.ms", int_in(1, _INT32), 45000,
        "Lowest allowed group.streams.session.timeout.ms.", "group"),
    Key("group.streams.max.session.timeout.ms", int_in(1, _INT32), 60000,
        "Highest allowed group.streams.session.timeout.ms.", "group"),
    Key("group.streams.heartbeat.interval.ms", int_in(1, _INT32), 5000,
        "Heartbeat interval given to streams-group members; below the session timeout.", "group"),
    Key("group.streams.min.heartbeat.interval.ms", int_in(1, _INT32), 5000,
        "Lowest allowed group.streams.heartbeat.interval.ms.", "group"),
    Key("group.streams.max.heartbeat.interval.ms", int_in(1, _INT32), 15000,
        "Highest allowed group.streams.heartbeat.interval.ms.", "group"),
    Key("group.streams.max.size", int_in(1, _INT32), _INT32, "Largest streams group.", "group"),
    Key("group.streams.num.standby.replicas", int_in(0, _INT32), 0,
        "Standby replicas of each stateful task.", "group"),
    Key("group.streams.max.standby.replicas", int_in(0, _INT32), 2,
        "Highest allowed group.streams.num.standby.replicas (and streams.num.standby.replicas).", "group"),
    Key("group.streams.initial.rebalance.delay.ms", int_in(0, _INT32), 3000,
        "How long a new streams group waits for more members before its first assignment.", "group"),
    Key("group.streams.assignment.interval.ms", int_in(0, _INT32), 1000,
        "Least time between two target assignments of a streams group (KIP-1263).", "group"),
    Key("group.streams.task.offset.interval.ms", int_in(1, _INT32), 60000,
        "How often members report their tasks' changelog offsets (sent to them).", "group"),
    Key("group.streams.acceptable.recovery.lag", int_in(0, 2**63 - 1), 10000,
        "Lag under which a member counts as caught up on a task (sent to members).", "group"),
    # --- share groups (seed 004, KIP-932); ranges from the KIP table where it gives them
    Key("group.share.enable", boolean, True,
        "Serve share groups (ShareGroupHeartbeat/Describe, ShareFetch, ShareAcknowledge). "
        "true here: share groups are what kipper ships; false hides the APIs.", "share"),
    Key("group.share.delivery.count.limit", int_in(2, 10), 5,
        "Delivery attempts of a record before it is archived.", "share"),
    Key("group.share.record.lock.duration.ms", int_in(1000, 60000), 30000,
        "Acquisition lock of a delivered record.", "share"),
    Key("group.share.record.lock.duration.max.ms", int_in(1000, 3600000), 60000,
        "Largest acquisition lock; group.share.record.lock.duration.ms may not exceed it.", "share"),
    Key("group.share.partition.max.record.locks", int_in(100, 10000), 2000,
        "Records in flight per share-partition (Kafka 4.2+'s default; the seed's draft named "
        "it group.share.record.lock.partition.limit, default 200): once a share-partition's "
        "window holds this many, it grows no further until records are acknowledged, "
        "released or their locks expire.", "share"),
    # Kafka's bounds of the group configs share.* (KIP-1240; GroupConfig); the minimum
    # lock duration keeps the seed's 1000 (Kafka: 15000) so the seed's range still holds
    Key("group.share.min.record.lock.duration.ms", int_in(1000, 30000), 1000,
        "Lowest share.record.lock.duration.ms a group may set (and the broker key's floor).", "share"),
    Key("group.share.min.delivery.count.limit", int_in(2, 10), 2,
        "Lowest share.delivery.count.limit a group may set.", "share"),
    Key("group.share.max.delivery.count.limit", int_in(2, 10), 10,
        "Highest share.delivery.count.limit a group may set.", "share"),
    Key("group.share.min.partition.max.record.locks", int_in(100, 2000), 100,
        "Lowest share.partition.max.record.locks a group may set.", "share"),
    Key("group.share.max.partition.max.record.locks", int_in(2000, 10000), 4000,
        "Highest share.partition.max.record.locks a group may set.", "share"),
    Key("group.share.session.timeout.ms", int_in(1, _INT32), 45000,
        "A share-group member without a heartbeat for this long is removed.", "share"),
    Key("group.share.min.session.timeout.ms", int_in(1, _INT32), 45000,
        "Lowest allowed group.share.session.timeout.ms.", "share"),
    Key("group.share.max.session.timeout.ms", int_in(1, _INT32), 60000,
        "Highest allowed group.share.session.timeout.ms.", "share"),
    Key("group.share.heartbeat.interval.ms", int_in(1, _INT32), 5000,
        "Heartbeat interval given to share-group members.", "share"),
    Key("group.share.min.heartbeat.interval.ms", int_in(1, _INT32), 5000,
        "Lowest allowed group.share.heartbeat.interval.ms.", "share"),
    Key("group.share.max.heartbeat.interval.ms", int_in(1, _INT32), 15000,
        "Highest allowed group.share.heartbeat.interval.ms.", "share"),
    Key("group.share.max.groups", int_in(1, 100), 10,
        "Share groups with members at one time.", "share"),
    Key("group.share.max.size", int_in(10, 1000), 200, "Members of one share group.", "share"),
    Key("group.share.auto.offset.reset", share_reset, "latest",
        "Where a new share-partition starts when neither the group nor the topic says "
        "(topic config share.auto.offset.reset).", "share"),
    Key("group.share.auto.offset.reset.groups", string, "",
        "Per-group share.auto.offset.reset, comma-separated GROUP:earliest or GROUP:latest; "
        "wins over the topic config and group.share.auto.offset.reset.", "share"),
    Key("group.share.checkpoint.max.deltas", int_in(1, 100000), 50,
        "SHARE_DELTA records after a SHARE_CHECKPOINT before the next checkpoint.", "share"),
    Key("group.share.checkpoint.interval.ms", int_in(100, _INT32), 30000,
        "A share-partition whose log moved past its checkpoint checkpoints again after this "
        "long, so the log start it holds back keeps moving.", "share"),
    Key("group.share.state.unload.ms", int_in(1000, _INT32), 300000,
        "Share-partition state of a group without members is checkpointed and dropped from "
        "memory after this long; it is recovered from the log when needed.", "share"),
    # --- metrics dumps (issue #7): one JSON line per interval, read by spark_jobs/
    Key("metrics.dump.dir", string, "",
        "Directory the broker appends metrics-<node.id>-<n>.jsonl to (docs/METRICS.md). "
        "Empty: no dumps.", "metrics"),
    Key("metrics.dump.topic", string, "",
        "Topic each metrics dump line is also appended to (JSON value, key node.id), made on first "
        "use with one partition, as Confluent's metrics reporter does (docs/METRICS.md). Empty: none.",
        "metrics"),
    Key("metrics.dump.interval.ms", int_in(100, _INT32), 1000,
        "Length of one metrics interval, one dump line each.", "metrics"),
    Key("metrics.dump.max.bytes", int_in(4096, _INT64), 104857600,
        "A dump file is rotated when the next line would take it past this size.", "metrics"),
    Key("metrics.dump.max.files", int_in(1, 100000), 10,
        "Dump files kept per broker; the oldest is deleted on rotation.", "metrics"),
    Key("telemetry.max.bytes", int_in(1, _INT32), 1048576,
        "Largest PushTelemetry payload a client may send (KIP-714, Kafka's default). Client telemetry "
        "is served when the broker exports it: with metrics.http.listener, metrics.dump.dir or "
        "metrics.dump.topic set (docs/METRICS.md).", "metrics"),
    Key("client.telemetry.max.series", int_in(0, _INT32), 10000,
        "Series of pushed client metrics kept for /metrics and the dumps, over all clients; "
        "what comes past it is dropped and counted.", "metrics"),
    Key("metrics.http.listener", http_listener, "",
        "http://host:port serving /metrics (Prometheus text format), /healthz and /readyz "
        "(docs/METRICS.md). Port 0 picks a free port. Empty: no HTTP listener.", "metrics"),
    # --- the Schema Registry (docs/SCHEMA_REGISTRY.md); Confluent's names in its comment
    Key("schema.registry.listeners", registry_listeners, "",
        "http://host:port (or https://, with the broker's ssl.* files) serving Confluent's Schema "
        "Registry API, comma-separated; port 0 picks a free port. Empty: no registry. Needs the "
        "kipper[schema-registry] extra (Confluent: listeners).", "schema_registry"),
    Key("schema.registry.topic", string, "_schemas",
        "Compacted topic the registry keeps its schemas, configs and deletes in (Confluent: kafkastore.topic).",
        "schema_registry"),
    Key("schema.registry.compatibility.level",
        choice("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
               "FULL_TRANSITIVE"), "BACKWARD",
        "Compatibility level when neither the subject nor the global config sets one "
        "(Confluent: schema.compatibility.level).", "schema_registry"),
    Key("schema.registry.authentication.method", choice("", "NONE", "BASIC"), "",
        "BASIC: every request authenticates with HTTP Basic as one of the broker's SCRAM users. "
        "Empty: BASIC when a listener is SASL_PLAINTEXT or SASL_SSL, NONE otherwise "
        "(Confluent: authentication.method).", "schema_registry"),
    # --- security (issue #6): SASL, TLS, the credential and quota store
    Key("config.dir", string, "",
        "Directory of the broker's config store: SCRAM credentials (users.json) and client "
        "quotas (quotas.json), written atomically and reloaded when changed. Empty: in memory only.",
        "security"),
    Key("sasl.enabled.mechanisms", mechanisms, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "SASL mechanisms offered on SASL_PLAINTEXT and SASL_SSL listeners.", "security"),
    Key("sasl.server.max.receive.size", int_in(1024, _INT32), 524288,
        "Largest frame accepted before authentication completes (Kafka's default, 512 KiB).",
        "security"),
    Key("super.users", string, "",
        "Semicolon-separated principals (User:admin) allowed to alter and describe quotas and "
        "SCRAM credentials. Empty: every authenticated principal may (Kafka without an authorizer).",
        "security"),
    Key("authorizer.class.name", choice("", *AUTHORIZER_CLASS_NAMES), "",
        "Turns authorization on: org.apache.kafka.metadata.authorizer.StandardAuthorizer (or "
        "kipper's short name, standard). Empty: every request is allowed.", "security"),
    Key("allow.everyone.if.no.acl.found", boolean, False,
        "With an authorizer: allow a request on a resource no ACL names (Kafka's default: false).",
        "security"),
    Key("ssl.keystore.type", choice("PEM"), "PEM",
        "Format of ssl.keystore.location; only PEM (Python's ssl module).", "security"),
    Key("ssl.keystore.location", string, "",
        "PEM file with the broker's certificate chain and, unless ssl.key.location is set, "
        "its private key. Needed by SSL and SASL_SSL listeners.", "security"),
    Key("ssl.key.location", string, "",
        "PEM file with the private key, when it is not in ssl.keystore.location.", "security"),
    Key("ssl.key.password", string, "", "Password of an encrypted private key.", "security"),
    Key("ssl.truststore.location", string, "",
        "PEM CA bundle used to verify client certificates (ssl.client.auth).", "security"),
    Key("ssl.client.auth", choice("none", "requested", "required"), "none",
        "Ask SSL clients for a certificate; on SSL listeners its subject becomes the principal.",
        "security"),
    # --- client quotas (Kafka's ClientQuotaManager): byte rates per user / client id
    Key("quota.window.num", int_in(1, 1000), 11,
        "Samples of the client byte-rate quotas' rate (Kafka's default 11).", "quota"),
    Key("quota.window.size.seconds", int_in(1, _INT32), 1,
        "Time span of one sample of the client byte-rate quotas' rate (Kafka's default 1 s).", "quota"),
    # --- quotas (seed 002, KIP-936): producer-id rate per user
    Key("producer.id.quota.window.num", int_in(1, 1000), 11,
        "Samples kept for producer-id quotas (KIP-936); the bucket holds rate x num x size.",
        "quota"),
    Key("producer.id.quota.window.size.seconds", int_in(1, _INT32), 3600,
        "Time span of one sample and of one writable bloom filter (KIP-936; default 1 h).",
        "quota"),
    Key("producer.id.quota.cache.cleanup.scheduler.interval.ms", int_in(1, _INT32), 10000,
        "How often bloom filters older than 1.5 x the window are disposed and idle users dropped.",
        "quota"),
    Key("producer.id.quota.bloom.filter.expected.items", int_in(1, 100_000_000), 10000,
        "Producer ids one bloom filter is sized for; it grows (scalable filter) past that.",
        "quota"),
    Key("producer.id.quota.bloom.filter.false.positive.rate", float_in(0.0, 0.5, open_lo=True), 0.001,
        "False-positive rate of each bloom filter (a false positive admits a new id for free).",
        "quota"),
)}


def defaults_text(key: str) -> str:
    d = KEYS[key].default
    if isinstance(d, float):
        return java_double(d)
    return str(d).lower() if isinstance(d, bool) else str(d)


def read_properties(path: str | Path) -> dict[str, str]:
    try:
        return properties.read_properties(path)
    except properties.PropertiesError as exc:
        raise ConfigError(str(exc)) from None


def parse_overrides(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items or ():
        if "=" not in item:
            raise ConfigError(f"--override '{item}' is not key=value")
        key, value = item.split("=", 1)
        out[key.strip()] = value
    return out


class BrokerConfig(Mapping):
    """Validated broker settings, read-only. ``config["num.partitions"]``."""

    def __init__(self, values: dict[str, Any], explicit: frozenset[str]):
        self._values = values
        self.explicit = explicit  # keys the operator set, for DescribeConfigs sources

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __setattr__(self, name, value):
        if name in ("_values", "explicit") and name not in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            raise AttributeError("BrokerConfig is read-only")


ENV_PREFIX = "KIPPER_"
# The project's own tools' variables (scripts/, the conformance and cluster suites): not broker
# settings, so a shell that exports them must still start a broker.
TOOL_VARIABLES = frozenset({"KIPPER_CACHE", "KIPPER_KAFKA_VERSION", "KIPPER_KAFKA_HEAP",
                            "KIPPER_CONFORMANCE_REPORT", "KIPPER_KAFKA_CLUSTER", "KIPPER_FRANZ_FULL",
                            "KIPPER_CONFLUENT_KAFKA_PYTHON_TAG", "KIPPER_CONFLUENT_KAFKA_PYTHON_GIT"})

# Other names of share keys (seed 004's draft and Kafka 4.x named some differently); either
# name is accepted, the value maps to the key on the right
ALIASES = {"group.share.max.record.lock.duration.ms": "group.share.record.lock.duration.max.ms",
           "group.share.record.lock.partition.limit": "group.share.partition.max.record.locks"}


def env_name(key: str) -> str:
    """The environment variable for a key: KIPPER_ + upper case, dots and
    dashes as underscores (num.partitions -> KIPPER_NUM_PARTITIONS)."""
    return ENV_PREFIX + key.upper().replace(".", "_").replace("-", "_")


def from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    by_env = {env_name(k): k for k in (*KEYS, *ALIASES)}
    out = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in TOOL_VARIABLES:
            continue
        if name not in by_env:
            raise ConfigError(f"unknown configuration variable {name}")
        out[by_env[name]] = value
    return out


def load(file: str | Path | None = None, overrides: Mapping[str, str] | None = None,
         environ: Mapping[str, str] | None = None) -> BrokerConfig:
    """file, then KIPPER_* environment variables, then --override flags."""
    raw: dict[str, str] = {}
    if file:
        raw.update(read_properties(file))
    raw.update(from_environment(environ or {}))
    raw.update(overrides or {})
    for alias, name in ALIASES.items():  # the other name of a key
        if alias in raw:
            raw[name] = raw.pop(alias)
    unknown = sorted(k for k in raw if k not in KEYS)
    if unknown:
        raise ConfigError(f"unknown configuration key(s): {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name, key in KEYS.items():
        text = raw[name] if name in raw else defaults_text(name)
        try:
            values[name] = key.parse(text)
        except ConfigError as exc:
            message = str(exc)  # parse_listeners already names its key
            raise ConfigError(message if message.startswith(f"{name}:") else f"{name}: {message}") from None
    check_consistency(values)
    return BrokerConfig(values, frozenset(raw))
