"""Interesting values per field name: what the generator puts in a request's fields.

A field's strategy is chosen by its name (or its parent's and its own, where a name means
different things: a ``name`` under ``configs`` is a config's), else by its type. Values are
plain JSON data or symbols that symbols.py resolves on each broker (``<T>`` in a string is the
sequence's token; ``{"<pid>": "<T>-x0"}`` the producer id that broker gave that transactional
id; ``{"<seq>": 0}`` the next sequence of the request's producer on its partition...). Every
choice is drawn from Hypothesis, none from a broker's answer, so a sequence replays alike.
Values that would make an answer hang on wall time (session, lock and retention durations
short enough to expire within a sequence) are left out on purpose.
"""

from __future__ import annotations

import uuid

from hypothesis import strategies as st

TS = 1_700_000_000_000  # record timestamps are the generator's, never the clock's
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
UNKNOWN_UUID = str(uuid.UUID(int=0x6B1FF3F0_0000_4000_8000_0000DEADBEEF))


def pick(*values):
    """The first value about half the time (Hypothesis shrinks towards it), else any other."""
    n = len(values)
    if n == 1:
        return st.just(values[0])
    return st.integers(0, 2 * n - 3).map(lambda i: values[0] if i < n - 1 else values[i - n + 2])


def lists(element, *, nullable: bool = False, sizes=(1, 0, 2)):
    """Short lists, one element most often; elements drawn from small pools repeat, so
    duplicates come up (the same topic or partition twice in one request)."""
    sized = pick(*sizes).flatmap(lambda n: st.lists(element, min_size=n, max_size=n))
    made = st.one_of(sized, st.none()) if nullable else sized
    LISTS.add(id(made))
    return made


LISTS: set[int] = set()  # the strategies lists() made: a field's table entry must match its shape


def nullable(strategy, null: bool):
    return pick(0, 0, 0, 1).flatmap(lambda i: st.none() if i and null else strategy) if null else strategy


# --- the names of this sequence's resources and of others that do not exist ------------------

TOPIC = pick("<T>-t0", "<T>-t1", "<T>-t2", "", "bad name!", "..", {"<long>": 249}, {"<long>": 250})
TOPIC_ID = pick({"<topic_id>": "<T>-t0"}, {"<topic_id>": "<T>-t1"}, ZERO_UUID, UNKNOWN_UUID)
GROUP = pick("<T>-g0", "<T>-g1", "<T>-g2", "")
TXN = pick("<T>-x0", "<T>-x1", "")
INSTANCE = pick(None, "<T>-i0", "<T>-i1", "")
# a member id: the one the broker gave in this request's group (JoinGroup, KIP-848 v0), the
# one before it, one the client chose (KIP-848 v1+, share groups), none, one never given
MEMBER = pick({"<member>": 0}, "<T>-m0", {"<member>": 1}, "<T>-m1", "", "<T>-unknown-member")
USER = pick("<T>-u0", "<T>-u1", "")
PRINCIPAL = pick("User:<T>-u0", "User:<T>-u1", "User:*", "", "User", "Group:<T>-u0", "User:")
QUOTA_NAME = pick("<T>-q0", "<T>-q1", None, "")

# --- numbers: the broker's own (symbols) and the edges --------------------------------------

PRODUCER_ID = pick({"<pid>": "<T>-x0"}, "producer_id#1", {"<pid>": "<T>-x1"}, "producer_id#2", -1, 999_999_999_999)
PRODUCER_EPOCH = pick({"<epoch>": 0}, -1, 0, {"<epoch>": 1}, {"<epoch>": -1}, 32767)
GENERATION = pick({"<generation>": 0}, -1, 0, {"<generation>": 1}, {"<generation>": -1})
MEMBER_EPOCH = pick({"<member_epoch>": 0}, 0, -1, -2, {"<member_epoch>": 1}, {"<member_epoch>": -1}, 99)
GENERATION_OR_EPOCH = pick({"<generation>": 0}, {"<member_epoch>": 0}, -1, 0, 99)
SEQUENCE = pick({"<seq>": 0}, 0, {"<seq>": -1}, {"<seq>": 1}, {"<seq>": "dup"}, -1, 2147483647)
PARTITION = pick(0, 1, 2, -1, 7, 2147483647)
OFFSET = pick(0, 1, 2, 3, 5, -1, -2, 1 << 40)
TIMESTAMP = pick(-1, -2, -3, TS, TS + 1, TS + 100, -4, -5, 0)
LEADER_EPOCH = pick(-1, 0, 1, 5)
FETCH_SESSION = pick(0, {"<fetch_session>": 0}, 123456)
FETCH_EPOCH = pick(-1, 0, {"<fetch_epoch>": 0}, 1, 2)
SHARE_EPOCH = pick({"<share_epoch>": 0}, 0, -1, 1, {"<share_epoch>": 1}, 7)

# --- configs -------------------------------------------------------------------------------

CONFIG_NAME = pick("retention.ms", "cleanup.policy", "max.message.bytes", "message.timestamp.type",
                   "min.insync.replicas", "compression.type", "segment.bytes", "share.auto.offset.reset",
                   "share.delivery.count.limit", "consumer.session.timeout.ms", "message.timestamp.before.max.ms",
                   "unclean.leader.election.enable", "no.such.config", "", "min.cleanable.dirty.ratio",
                   "retention.bytes", "delete.retention.ms", "max.compaction.lag.ms", "message.timestamp.after.max.ms",
                   "leader.replication.throttled.replicas", "preallocate", "segment.index.bytes",
                   "compression.gzip.level", "remote.storage.enable", "root")
# values as a user types them: Java's number grammar is Kafka's (no '1_000', a '0.5d' is a double)
CONFIG_VALUE = pick("1", None, "", "-1", "0", "abc", "compact", "delete", "LogAppendTime", "CreateTime", "earliest",
                    "latest", "gzip", "producer", "1048576", "3600000", "9999999999999", "true", "1_000", "+5", " 7 ",
                    "0.5", "0.5d", "1.5", "NaN", "1e3", "*", "0:1", "lz4", "TRUE", "9223372036854775807", "DEBUG")

# --- by field name, then by (parent, name) -----------------------------------------------------

_BYTES = pick({"<hex>": ""}, {"<hex>": "00"}, {"<hex>": "0001020304"})

FIELDS = {
    # names
    "name": TOPIC, "topic": TOPIC, "topic_name": TOPIC, "topic_names": lists(TOPIC), "topic_id": TOPIC_ID,
    "group_id": GROUP, "group_ids": lists(GROUP), "groups": lists(GROUP), "groups_names": lists(GROUP), "transactional_id": TXN,
    "v3_and_below_transactional_id": TXN, "transactional_ids": lists(TXN), "member_id": MEMBER,
    "group_instance_id": INSTANCE, "instance_id": INSTANCE, "key": pick("<T>-g0", "<T>-x0", "<T>-g1", "", "<T>-g0:bad"),
    "coordinator_keys": lists(pick("<T>-g0", "<T>-x0", "", "<T>-g1")), "principal": PRINCIPAL,
    "principal_filter": PRINCIPAL,
    # hosts: Kafka 4.4 reads one with a "/" as a CIDR network (broker/acl/cidr.py)
    "host": pick("*", "127.0.0.1", "", "127.0.0.0/8", "10.0.0.0/33", "fd00::/8", "::ffff:1.2.3.4/96", "a/b"),
    "host_filter": pick(None, "*", "", "127.0.0.0/8"),
    "resource_name": pick("<T>-t0", "<T>-g0", "1", "", "<T>-t9"), "resource_name_filter": pick("<T>-t0", None, "<T>"),
    "entity_name": QUOTA_NAME, "match": QUOTA_NAME,
    # a client instance of this sequence's own (Kafka throttles an instance that asks again too
    # soon, whichever connection it comes on): new, none, or the one a broker gave
    "client_instance_id": pick("<T>-instance", ZERO_UUID, "client_instance_id#1"),
    # numbers
    "producer_id": PRODUCER_ID, "v3_and_below_producer_id": PRODUCER_ID, "producer_epoch": PRODUCER_EPOCH,
    "v3_and_below_producer_epoch": PRODUCER_EPOCH, "producer_id_filters": lists(PRODUCER_ID),
    "generation_id": GENERATION, "member_epoch": MEMBER_EPOCH, "generation_id_or_member_epoch": GENERATION_OR_EPOCH,
    "partition_index": PARTITION, "partition": PARTITION, "index": PARTITION, "partitions": lists(PARTITION),
    "partition_indexes": lists(PARTITION), "offset": OFFSET, "fetch_offset": OFFSET, "committed_offset": OFFSET,
    "first_offset": OFFSET, "last_offset": OFFSET, "start_offset": OFFSET, "log_start_offset": pick(-1, 0, 1),
    "high_watermark": pick(-1, 0), "timestamp": TIMESTAMP, "current_leader_epoch": LEADER_EPOCH,
    "last_fetched_epoch": LEADER_EPOCH, "committed_leader_epoch": LEADER_EPOCH, "session_id": FETCH_SESSION,
    "session_epoch": FETCH_EPOCH, "share_session_epoch": SHARE_EPOCH, "coordinator_epoch": pick(0, -1, 5),
    "num_partitions": pick(1, 3, 2, -1, 0), "count": pick(2, 3, 5, 1, -1, 0), "replication_factor": pick(1, -1, 0, 3),
    "broker_ids": lists(pick(1, 0, 2)), "replica_id": pick(-1, 1, 0, -2), "node_id": pick(1, -1, 0),
    "acks": pick(-1, 1, 0, 2, -2), "isolation_level": pick(0, 1, 3), "key_type": pick(0, 1, 2, 5),
    "resource_type": pick(2, 32, 4, 0, 1, 99, 8), "resource_type_filter": pick(2, 1, 32, 4, 0, 99),
    "resource_pattern_type": pick(3, 4, 0, 1, 2, 9), "pattern_type_filter": pick(3, 1, 2, 4, 0, 9),
    "operation": pick(2, 3, 4, 1, 0, 13, 99), "permission_type": pick(3, 2, 1, 0, 9),
    "config_operation": pick(0, 1, 2, 3, 7), "mechanism": pick("PLAIN", "SCRAM-SHA-256", "GSSAPI", ""), "iterations": pick(4096, 0, 8192, 16385),
    "match_type": pick(0, 1, 2, 7), "endpoint_type": pick(1, 2, 0, 9), "acknowledge_types": lists(pick(1, 2, 3, 0, 4)),
    "share_acquire_mode": pick(0, 1, 9), "max_records": pick(100, 1, 0, -1), "batch_size": pick(100, 1, 0),
    "transaction_version": pick(0, 1, 2, 9), "response_partition_limit": pick(2000, 1, 0, -1),
    "duration_filter": pick(-1, 0, 3_600_000),
    # sizes and waits: small, so that a step never waits long; none that expires within a sequence
    "max_wait_ms": pick(0, 10, 200, -1), "min_bytes": pick(1, 0, 1 << 20), "max_bytes": pick(1 << 20, 0, 100),
    "partition_max_bytes": pick(1 << 20, 0, 100), "timeout_ms": pick(30000, 0, -1),
    "session_timeout_ms": pick(45000, 5999, 1800001, 0), "rebalance_timeout_ms": pick(1000, 3000, 0, -1),
    "transaction_timeout_ms": pick(60000, 0, -1, 900001), "retention_time_ms": pick(-1, 3_600_000),
    # group protocols
    "protocol_type": pick("consumer", "", "connect"), "protocol_name": pick("range", None, "", "roundrobin"),
    "server_assignor": pick(None, "range", "uniform", "bogus"),
    "subscribed_topic_names": lists(pick("<T>-t0", "<T>-t1", "<T>-t9"), nullable=True),
    "subscribed_topic_regex": pick(None, "<T>-t.*", "["), "rack_id": pick(None, "", "r1"),
    "reason": pick(None, "", "because"), "states_filter": lists(pick("Stable", "Empty", "bogus"), sizes=(0, 1)),
    "types_filter": lists(pick("classic", "consumer", "share", "bogus"), sizes=(0, 1)),
    "state_filters": lists(pick("Ongoing", "Empty", "CompleteCommit", "bogus"), sizes=(0, 1)),
    "transactional_id_pattern": pick(None, "<T>-x.*", "["),
    # clients, records, bytes
    "client_software_name": pick("conformance", "", "bad name!", "-lead"), "client_software_version": pick("1.0", "", "1 0"),
    "committed_metadata": pick("", None, "m", {"<long>": 5000}), "cluster_id": pick(None, "", "no-such-cluster"),
    "salt": _BYTES, "salted_password": _BYTES, "auth_bytes": _BYTES,
    "configuration_keys": lists(CONFIG_NAME, nullable=True),
}

PARENT_FIELDS = {
    ("configs", "name"): CONFIG_NAME, ("configs", "value"): CONFIG_VALUE,
    ("users", "name"): USER, ("deletions", "name"): USER, ("upsertions", "name"): USER,
    ("deletions", "mechanism"): pick(1, 2, 0, 3), ("upsertions", "mechanism"): pick(1, 2, 0, 3),
    ("entity", "entity_type"): pick("user", "client-id", "ip", "bogus"),
    ("components", "entity_type"): pick("user", "client-id", "ip", "bogus"),
    ("ops", "key"): pick("producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate",
                         "connection_creation_rate", "bogus"),
    ("ops", "value"): pick(1024.0, 0.0, -1.0, 1e308),
    ("protocols", "name"): pick("range", "roundrobin", ""),
    ("protocols", "metadata"): pick({"<subscription>": ["<T>-t0"]}, {"<subscription>": ["<T>-t0", "<T>-t1"]},
                                    {"<hex>": "00"}, {"<subscription>": []}),
    ("assignments", "assignment"): pick({"<assignment>": ["<T>-t0", [0]]}, {"<assignment>": ["<T>-t0", [0, 1]]},
                                        {"<hex>": ""}, {"<assignment>": ["<T>-t9", [0]]}),
    ("assignments", "member_id"): MEMBER, ("markers", "producer_id"): PRODUCER_ID,
    ("cursor", "topic_name"): TOPIC, ("cursor", "partition_index"): PARTITION,
    ("partition_data", "records"): None,  # records: see batch_spec
}

# --- by type ---------------------------------------------------------------------------------

BY_TYPE = {
    "int8": pick(0, 1, -1, 127, -128), "int16": pick(0, 1, -1, 32767, -32768),
    "int32": pick(0, 1, -1, 2147483647, -2147483648), "int64": pick(0, 1, -1, (1 << 63) - 1, -(1 << 63)),
    "uint16": pick(0, 1, 65535), "uint32": pick(0, 1, (1 << 32) - 1), "float64": pick(0.0, 1.0, -1.0),
    "bool": pick(False, True), "uuid": pick(ZERO_UUID, UNKNOWN_UUID), "string": pick("", "<T>-s", "x"),
    "bytes": _BYTES,
}

# --- record batches ----------------------------------------------------------------------------

MUTATIONS = (None, None, None, None, "base_offset", "log_append_time", "max_timestamp", "crc", "magic0",
             "magic1", "control", "two_batches", "count", "no_records")

batch_spec = st.fixed_dictionaries({
    "n": pick(1, 2, 3), "start": pick(0, 1, 3), "pid": pick(-1, {"<pid>": "<T>-x0"}, "producer_id#1",
                                                             {"<pid>": "<T>-x1"}, 999_999_999_999),
    "epoch": PRODUCER_EPOCH, "seq": SEQUENCE, "txn": pick(False, True), "codec": pick(0, 1, 2, 3, 4),
    "timestamps": pick("create", "none", "mixed"), "keys": pick(True, False),
    "mutation": pick(*MUTATIONS),
})
RECORDS = pick(0, 0, 0, 1, 2).flatmap(lambda i: batch_spec.map(lambda s: {"<batch>": s}) if i == 0 else
                                     st.just(None) if i == 1 else st.just({"<hex>": ""}))


def for_field(path: tuple[str, ...], type_: str):
    """The strategy for a field at ``path`` (names from the message's top), or None when its
    type decides."""
    name = path[-1]
    if name == "records":
        return RECORDS
    if len(path) > 1 and (path[-2], name) in PARENT_FIELDS:
        return PARENT_FIELDS[(path[-2], name)]
    chosen = FIELDS.get(name)
    if chosen is not None and (id(chosen) in LISTS) != type_.startswith("[]"):
        return None  # another API's field of this name (streams' TopicInfo.partitions is a count)
    return chosen
