"""The client generator's grammar: Hypothesis strategies of steps, each one call of a Python
client (``{"client", "op", "args", "as", "reads"}``), over the sequence's own names (``<T>``
is its token): topics t0 (made by the setup, with records), t1 (made by a step), one that does
not exist and one whose name is invalid; groups g0 and g1; transactional id x0; its user u0.
Only what the sequence owns is changed; a broker's configs only with validate_only."""

from __future__ import annotations

from hypothesis import strategies as st

T0, T1, NONE, BAD = "<T>-t0", "<T>-t1", "<T>-none", "<T>-bad name"
G0, G1, X0, U0, S0 = "<T>-g0", "<T>-g1", "<T>-x0", "User:<T>-u0", "<T>-s0"
TOPIC_NAMES = st.sampled_from([T0, T1, NONE, BAD])
GROUPS = st.sampled_from([G0, G1, "<T>-g-none"])
BASE_TS = 1_700_000_000_000
TOPIC_CONFIGS = {
    "cleanup.policy": ["compact", "delete", "compact,delete", "bogus"],
    "retention.ms": ["-1", "86400000", "-2", "abc"],
    "max.message.bytes": ["1024", "0", "2000000"],
    "min.insync.replicas": ["1", "2", "0"],
    "message.timestamp.type": ["LogAppendTime", "CreateTime", "Neither"],
    "segment.bytes": ["1048576", "100"],
    "compression.type": ["gzip", "zstd", "producer", "brotli"],
    "no.such.config": ["1"],
}
GROUP_CONFIGS = {
    "consumer.session.timeout.ms": ["45000", "1", "60000"],
    "consumer.heartbeat.interval.ms": ["5000", "0"],
    "share.auto.offset.reset": ["earliest", "latest", "sometimes"],
    "share.record.lock.duration.ms": ["30000", "5"],
    "no.such.config": ["1"],
}
BROKER_CONFIGS = {"log.retention.ms": ["86400000", "x"], "message.max.bytes": ["1000000", "-5"],
                  "no.such.config": ["1"], "num.io.threads": ["4"], "log.cleaner.threads": ["2"],
                  "super.users": ["User:<T>-u0"], "allow.everyone.if.no.acl.found": ["true"]}
WHO = st.sampled_from([None, None, "user"])


def step(client: str, op: str, args: dict, reads: bool = False, who: str | None = None) -> dict:
    out = {"client": client, "op": op, "args": args}
    if reads:
        out["reads"] = True
    if who:
        out["as"] = who
    return out


def resolved(value, token: str):
    """``value`` with the sequence's token for ``<T>``."""
    if isinstance(value, str):
        return value.replace("<T>", token)
    if isinstance(value, list):
        return [resolved(v, token) for v in value]
    if isinstance(value, tuple):
        return tuple(resolved(v, token) for v in value)
    if isinstance(value, dict):
        return {resolved(k, token): resolved(v, token) for k, v in value.items()}
    return value


def setup(partitions: int) -> list[dict]:
    """Topic t0, five keyed records in it, the sequence's user's SCRAM credential (described
    until both brokers have it)."""
    return [
        step("confluent-admin", "create_topics", {"topics": [
            {"name": T0, "num_partitions": partitions, "replication_factor": 1}]}),
        step("confluent-producer", "produce", {"records": [
            {"topic": T0, "key": f"k{i}", "value": f"v{i}", "timestamp": BASE_TS + i} for i in range(5)]}),
        step("confluent-admin", "alter_user_scram_credentials", {"alterations": [
            ["<T>-u0", "SCRAM_SHA_256", 4096, "<T>-secret", None]]}),
        step("confluent-admin", "describe_user_scram_credentials", {"users": ["<T>-u0"]}, reads=True),
    ]


def _configs(table: dict, ops: bool) -> st.SearchStrategy:
    entry = st.sampled_from(sorted(table)).flatmap(lambda name: st.tuples(
        st.just(name), st.sampled_from(["SET", "SET", "DELETE", "APPEND", "SUBTRACT"] if ops else ["SET"]),
        st.sampled_from(table[name])))
    return st.lists(entry, min_size=1, max_size=3, unique_by=lambda e: e[0]).map(lambda es: [list(e) for e in es])


def _admin(op: str, args: st.SearchStrategy, reads: bool = False, clients=("confluent-admin",),
           who: st.SearchStrategy = WHO) -> st.SearchStrategy:
    return st.builds(lambda c, a, w: step(c, op, a, reads, w), st.sampled_from(clients), args, who)


NEW_TOPIC = st.fixed_dictionaries({"name": TOPIC_NAMES}, optional={
    "num_partitions": st.sampled_from([1, 2, 3, 0, -1]), "replication_factor": st.sampled_from([1, -1, 2, 0]),
    "config": st.dictionaries(st.sampled_from(sorted(TOPIC_CONFIGS)), st.just(""), max_size=3).flatmap(
        lambda keys: st.fixed_dictionaries({k: st.sampled_from(TOPIC_CONFIGS[k]) for k in keys}))})
PARTITIONS = st.lists(st.tuples(st.sampled_from([T0, T1, NONE]), st.sampled_from([0, 1, 2, 5])), min_size=1,
                      max_size=3, unique=True)


def topics() -> st.SearchStrategy:
    both = ("confluent-admin", "kafka-python-admin", "aiokafka-admin")
    return st.one_of(
        _admin("create_topics", st.fixed_dictionaries({"topics": st.lists(NEW_TOPIC, min_size=1, max_size=2)},
                                                      optional={"validate_only": st.booleans()}), clients=both),
        _admin("delete_topics", st.fixed_dictionaries({"topics": st.lists(TOPIC_NAMES, min_size=1, max_size=2,
                                                                          unique=True)}), clients=both),
        _admin("create_partitions", st.fixed_dictionaries({"topics": st.lists(st.tuples(
            TOPIC_NAMES, st.sampled_from([1, 2, 4, 0])), min_size=1, max_size=2, unique_by=lambda e: e[0])},
            optional={"validate_only": st.booleans()}), clients=both),
        _admin("describe_topics", st.fixed_dictionaries({"topics": st.lists(TOPIC_NAMES, min_size=1, max_size=3,
                                                                            unique=True)},
                                                        optional={"authorized": st.booleans()}), True, both),
        _admin("describe_topic_partitions", st.fixed_dictionaries({"topics": st.lists(
            TOPIC_NAMES, min_size=1, max_size=2, unique=True)}, optional={"limit": st.sampled_from([1, 2000])}),
            True, ("kafka-python-admin",)),
        _admin("list_topics", st.fixed_dictionaries({"own": st.just([T0, T1])},
                                                    optional={"topic": TOPIC_NAMES}), True),
        _admin("describe_cluster", st.fixed_dictionaries({}, optional={"authorized": st.booleans()}), True,
               ("confluent-admin", "aiokafka-admin")),
        _admin("elect_leaders", st.fixed_dictionaries({"type": st.sampled_from(["PREFERRED", "UNCLEAN"]),
                                                       "partitions": PARTITIONS.map(
                                                           lambda ps: [[t, p, None] for t, p in ps])})),
    )


RESOURCES = st.one_of(
    st.fixed_dictionaries({"type": st.just("TOPIC"), "name": TOPIC_NAMES}),
    # (no broker 2: a client sends a broker's resource to that broker, and waits for it)
    st.fixed_dictionaries({"type": st.just("BROKER"), "name": st.sampled_from(["1", ""])}),
    st.fixed_dictionaries({"type": st.just("GROUP"), "name": GROUPS}),
)


def configs() -> st.SearchStrategy:
    alter = st.one_of(
        st.fixed_dictionaries({"type": st.just("TOPIC"), "name": TOPIC_NAMES, "ops": _configs(TOPIC_CONFIGS, True)}),
        st.fixed_dictionaries({"type": st.just("GROUP"), "name": GROUPS, "ops": _configs(GROUP_CONFIGS, True)}),
        st.fixed_dictionaries({"type": st.just("BROKER"), "name": st.sampled_from(["1", ""]),
                               "ops": _configs(BROKER_CONFIGS, False)}))
    legacy = st.fixed_dictionaries({"type": st.just("TOPIC"), "name": TOPIC_NAMES, "set": _configs(
        TOPIC_CONFIGS, False).map(lambda es: {n: v for n, _, v in es})})

    def validated(args: dict) -> dict:  # a broker's own configs are changed only with validate_only
        if any(r["type"] == "BROKER" for r in args["resources"]):
            args["validate_only"] = True
        return args
    return st.one_of(
        _admin("describe_configs", st.fixed_dictionaries({"resources": st.lists(RESOURCES, min_size=1, max_size=2)}),
               True),
        _admin("describe_configs", st.fixed_dictionaries({"resources": st.lists(RESOURCES, min_size=1, max_size=2)},
                                                         optional={"synonyms": st.booleans(),
                                                                   "filter": st.sampled_from(["ALL", "MODIFIED"])}),
               True, ("kafka-python-admin", "aiokafka-admin")),
        _admin("incremental_alter_configs", st.fixed_dictionaries({"resources": st.lists(
            alter, min_size=1, max_size=2)}, optional={"validate_only": st.booleans()}).map(validated)),
        _admin("alter_configs", st.fixed_dictionaries({"resources": st.lists(legacy, min_size=1, max_size=1)},
                                                      optional={"validate_only": st.booleans()})),
        _admin("alter_configs", st.fixed_dictionaries({"resources": st.lists(alter, min_size=1, max_size=1),
                                                       "incremental": st.just(True)},
                                                      optional={"validate_only": st.booleans()}).map(validated),
               clients=("kafka-python-admin",)),
    )


SPECS = st.sampled_from(["earliest", "latest", "max_timestamp", BASE_TS, BASE_TS + 2, BASE_TS + 99, 0])
# (always a key: librdkafka puts a record without one, and no partition, on a random partition)
RECORD = st.fixed_dictionaries({"topic": st.sampled_from([T0, T0, T1]), "key": st.sampled_from(["k1", "k2", "", "kx"])},
                               optional={"value": st.sampled_from(["v", "", "x" * 300]),
    "timestamp": st.sampled_from([BASE_TS + 10, BASE_TS - 5, 1]),
    "headers": st.sampled_from([[["h", "1"]], [["h", "1"], ["h", None]], []]),
    "partition": st.sampled_from([0, 1, 7])})
PRODUCER_CONFIG = st.fixed_dictionaries({}, optional={
    "acks": st.sampled_from(["all", "1", "0"]), "compression.type": st.sampled_from(["gzip", "lz4", "zstd", "snappy"]),
    "enable.idempotence": st.booleans(), "linger.ms": st.just(0)})
OFFSETS = st.lists(st.tuples(st.sampled_from([T0, T1]), st.sampled_from([0, 1]), st.sampled_from(
    [0, 2, -2, -1, 100, None])), min_size=1, max_size=2, unique_by=lambda e: e[:2])


OWN_OFFSETS = st.lists(st.tuples(st.just(T0), st.sampled_from([0, 1]), st.none()), min_size=1, max_size=2,
                       unique_by=lambda e: e[:2])


def _known_partition(record: dict) -> dict:
    """A transaction's record on no partition that does not exist: whether librdkafka fails it
    (unknown partition) before the abort purges it is timing."""
    return {k: v for k, v in record.items() if k != "partition" or v != 7}


def data() -> st.SearchStrategy:
    produce = st.builds(lambda records, config, txn, offsets, who: step("confluent-producer", "produce", {
        "records": [_known_partition(r) for r in records] if txn else records,
        "config": {**config, **({"transactional.id": X0} if txn else {})},
        **({"transaction": txn} if txn else {}), **({"offsets": offsets} if txn and offsets else {})}, who=who),
        st.lists(RECORD, min_size=1, max_size=5), PRODUCER_CONFIG, st.sampled_from([None, None, "commit", "abort"]),
        st.one_of(st.none(), st.fixed_dictionaries({"group": GROUPS, "partitions": st.lists(st.tuples(
            st.sampled_from([T0, T1]), st.sampled_from([0, 1]), st.sampled_from([0, 3, 99])), min_size=1, max_size=2,
            unique_by=lambda e: e[:2])})), WHO)
    pure_produce = st.builds(lambda client, records, config, who: step(client, "produce", {
        "records": records, "config": config}, who=who),
        st.sampled_from(["kafka-python-producer", "aiokafka-producer"]), st.lists(RECORD, min_size=1, max_size=5),
        PRODUCER_CONFIG, WHO)
    lookups = st.fixed_dictionaries({}, optional={"watermarks": OWN_OFFSETS, "times": OWN_OFFSETS.map(
        lambda ps: [[t, p, BASE_TS + 1] for t, p, _ in ps])})
    pure_consume = st.builds(lambda client, parts, count, iso, extra, who: step(client, "consume", {
        "partitions": parts, "count": count, "config": {"isolation.level": iso}, **extra}, who=who),
        st.sampled_from(["kafka-python-consumer", "aiokafka-consumer"]), OFFSETS, st.sampled_from([1, 3, 20]),
        st.sampled_from(["read_committed", "read_uncommitted"]), lookups, WHO)
    consume = st.builds(lambda parts, count, iso, extra, who: step("confluent-consumer", "consume", {
        "partitions": parts, "count": count, "config": {"isolation.level": iso}, **extra}, who=who),
        OFFSETS, st.sampled_from([1, 3, 20]), st.sampled_from(["read_committed", "read_uncommitted"]),
        # (of t0 only: a client asking a topic that does not exist waits for it, and when it
        # gives up is timing)
        st.fixed_dictionaries({}, optional={"watermarks": OWN_OFFSETS, "times": OWN_OFFSETS.map(
            lambda ps: [[t, p, BASE_TS + 1] for t, p, _ in ps])}), WHO)
    listing = st.fixed_dictionaries({"partitions": st.lists(st.tuples(
        st.sampled_from([T0, T1, NONE]), st.sampled_from([0, 1, 4]), SPECS), min_size=1, max_size=3,
        unique_by=lambda e: e[:2]), "isolation": st.sampled_from(["READ_COMMITTED", "READ_UNCOMMITTED"])})
    return st.one_of(
        produce, consume, pure_produce, pure_consume,
        _admin("list_offsets", listing, True),
        _admin("list_partition_offsets", listing, True, ("kafka-python-admin",)),
        _admin("delete_records", st.fixed_dictionaries({"partitions": st.lists(st.tuples(
            st.sampled_from([T0, T1, NONE]), st.sampled_from([0, 1]), st.sampled_from([0, 1, 3, -1, 50])),
            min_size=1, max_size=2, unique_by=lambda e: e[:2])}),
            clients=("confluent-admin", "kafka-python-admin", "aiokafka-admin")),
        _admin("describe_producers", st.fixed_dictionaries({"partitions": OFFSETS}), True, ("kafka-python-admin",)),
        _admin("describe_transactions", st.fixed_dictionaries({"ids": st.lists(st.sampled_from(
            [X0, "<T>-x-none"]), min_size=1, max_size=2, unique=True)}), True, ("kafka-python-admin",)),
        _admin("list_transactions", st.just({"own": X0}), True, ("kafka-python-admin",)),
        _admin("describe_log_dirs", st.fixed_dictionaries({"partitions": OFFSETS}), True, ("kafka-python-admin",)),
    )


def groups() -> st.SearchStrategy:
    committed = st.lists(st.tuples(st.sampled_from([T0, T1, NONE]), st.sampled_from([0, 1]), st.sampled_from(
        [0, 3, 5, 99])), min_size=1, max_size=2, unique_by=lambda e: e[:2])
    commit = st.builds(lambda group, parts, who: step("confluent-consumer", "consume", {
        "group": group, "partitions": [[t, p, None] for t, p, _ in parts], "count": 0, "commit": parts,
        "committed": parts}, who=who), GROUPS, committed, WHO)
    subscribe = st.builds(lambda group, protocol, count: step("confluent-consumer", "consume", {
        "group": group, "subscribe": [T0], "count": count, "idle_s": 8.0,
        "config": {"group.protocol": protocol}}), st.sampled_from([G0, G1]), st.sampled_from(["classic", "consumer"]),
        st.just(50))  # (every record: which come first from a group's partitions is timing)
    group_list = st.lists(GROUPS, min_size=1, max_size=2, unique=True)
    return st.one_of(
        commit, subscribe,
        _admin("list_consumer_groups", st.just({"own": [G0, G1]}), True, ("confluent-admin", "aiokafka-admin")),
        _admin("list_groups", st.just({"own": [G0, G1]}), True, ("kafka-python-admin",)),
        _admin("describe_consumer_groups", st.fixed_dictionaries({"groups": group_list},
                                                                 optional={"authorized": st.booleans()}), True,
               ("confluent-admin", "aiokafka-admin")),
        _admin("describe_groups", st.fixed_dictionaries({"groups": group_list},
                                                        optional={"authorized": st.booleans()}), True,
               ("kafka-python-admin",)),
        _admin("list_consumer_group_offsets", st.fixed_dictionaries({"group": GROUPS}, optional={
            "partitions": committed.map(lambda ps: [[t, p, None] for t, p, _ in ps]), "stable": st.booleans()}), True,
               ("confluent-admin", "aiokafka-admin")),
        _admin("list_group_offsets", st.fixed_dictionaries({"group": GROUPS}, optional={"partitions": committed}),
               True, ("kafka-python-admin",)),
        _admin("alter_consumer_group_offsets", st.fixed_dictionaries({"group": GROUPS, "partitions": committed})),
        _admin("delete_consumer_groups", st.fixed_dictionaries({"groups": group_list})),
        _admin("delete_groups", st.fixed_dictionaries({"groups": group_list}), clients=("kafka-python-admin",)),
    )


def shares() -> st.SearchStrategy:
    """A share consumer in share group s0 (which ends the sequence: seed 004 writes share state
    into the partition, so the log's offsets differ after it). Records are accepted or rejected,
    never released: how often a released record comes back before the poll ends is timing."""
    return st.builds(lambda acks, who: {**step("confluent-share-consumer", "share_consume", {
        "group": S0, "topics": [T0], "acks": acks}, who=who),
        "ends": "after a share consumer (share-state-in-the-partition)"},
        st.lists(st.sampled_from(["ACCEPT", "REJECT"]), min_size=1, max_size=3), WHO)


ACL = st.fixed_dictionaries({
    "resource": st.sampled_from(["TOPIC", "GROUP", "TRANSACTIONAL_ID", "BROKER"]),
    "name": st.sampled_from([T0, "<T>-", G0, X0, "kafka-cluster", "*"]),
    "pattern": st.sampled_from(["LITERAL", "PREFIXED"]), "principal": st.just(U0), "host": st.sampled_from(["*"]),
    "operation": st.sampled_from(["READ", "WRITE", "DESCRIBE", "ALL", "CREATE", "ALTER", "DESCRIBE_CONFIGS",
                                  "ALTER_CONFIGS", "DELETE", "IDEMPOTENT_WRITE"]),
    "permission": st.sampled_from(["ALLOW", "ALLOW", "DENY"])})
ACL_FILTER = st.fixed_dictionaries({
    "resource": st.sampled_from(["ANY", "TOPIC", "GROUP"]), "name": st.sampled_from([None, T0, "<T>-"]),
    "pattern": st.sampled_from(["ANY", "MATCH", "LITERAL", "PREFIXED"]), "principal": st.just(U0), "host": st.none(),
    "operation": st.sampled_from(["ANY", "READ"]), "permission": st.sampled_from(["ANY", "ALLOW"])})


def acls() -> st.SearchStrategy:
    scram = st.lists(st.tuples(st.sampled_from(["<T>-u0", "<T>-u1", ""]), st.sampled_from(
        ["SCRAM_SHA_256", "SCRAM_SHA_512"]), st.sampled_from([4096, 1024, 20000]), st.sampled_from(
        ["<T>-secret", None, ""]), st.sampled_from([None, "salt"])).map(list), min_size=1, max_size=2)
    return st.one_of(
        _admin("create_acls", st.fixed_dictionaries({"acls": st.lists(ACL, min_size=1, max_size=3)})),
        _admin("describe_acls", st.fixed_dictionaries({"filter": ACL_FILTER}), True),
        _admin("describe_acls", st.fixed_dictionaries({"filter": ACL_FILTER}), True, ("kafka-python-admin",)),
        _admin("delete_acls", st.fixed_dictionaries({"filters": st.lists(ACL_FILTER, min_size=1, max_size=2)})),
        # (as a super user only: confluent-kafka 2.16 aborts the process, on either broker, when
        # the whole request is refused)
        _admin("describe_user_scram_credentials", st.fixed_dictionaries({"users": st.lists(st.sampled_from(
            ["<T>-u0", "<T>-u1"]), min_size=1, max_size=2, unique=True)}), True, who=st.none()),
        _admin("alter_user_scram_credentials", st.fixed_dictionaries({"alterations": scram})),
    )
