"""Admin, group and share-group edges an independent comparison with Kafka 4.4 found (issue 36,
items 9-15 and 19-23): null configs, the order and the words of CreateTopics' checks, a name
or a partition given twice, empty ids, static members leaving, groups described mid-rebalance,
acknowledgements below the share-partition start, the broker's configs as Kafka lists them,
refusals whose text Kafka's tools print (compared word for word: ``messages=True``), and the
one-node answers of DescribeQuorum and ElectLeaders."""

from __future__ import annotations

import uuid

from kipper.protocol.messages import APIS
from kipper.broker.log.topic_configs import TOPIC_CONFIGS
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario
from tests.conformance.scenarios.admin import APPEND, DELETE, SET, SUBTRACT, alter, describe
from tests.conformance.scenarios.share import ACCEPT, RELEASE, ack, join
from tests.conformance.scenarios.share_probes import share_fetch

BROKER_LOGGER = 8

ELECT_LEADERS, DESCRIBE_QUORUM = APIS[43], APIS[55]
ZERO = uuid.UUID(int=0)
METADATA_TOPIC = "__cluster_metadata"


def create(run, topics, *, validate=False, version=None, label="create topics", messages=True):
    """CreateTopics of (name, partitions, replication factor, {config: value or None})."""
    return run.call(k.CREATE_TOPICS, k.top(k.CREATE_TOPICS) if version is None else version, {
        "topics": [{"name": n, "num_partitions": p, "replication_factor": rf, "assignments": [],
                    "configs": [{"name": c, "value": v} for c, v in (configs or {}).items()]}
                   for n, p, rf, configs in topics],
        "timeout_ms": 30000, "validate_only": validate}, label=label, messages=messages)


def incremental(run, rtype, name, ops, *, validate=True, label="incremental alter", messages=True):
    return run.call(k.INCREMENTAL_ALTER_CONFIGS, k.top(k.INCREMENTAL_ALTER_CONFIGS), {
        "resources": [{"resource_type": rtype, "resource_name": name, "configs": [
            {"name": n, "config_operation": op, "value": v} for n, op, v in ops]}],
        "validate_only": validate}, label=label, messages=messages)


# --- CreateTopics (items 9 and 23) ---------------------------------------------------------------

@scenario("admin-edges/create-topics-null-config")
def _(run):
    create(run, [(run.name("a"), 1, 1, {"retention.ms": None})], label="a null value")
    create(run, [(run.name("a"), 1, 1, {"retention.ms": None})], validate=True, label="validate only")
    create(run, [(run.name("a"), 1, 1, {"no.such": None})], version=4, label="v4, a null value of an unknown name")
    create(run, [(run.name("a"), 0, 0, {"retention.ms": None, "no.such": "1", "segment.ms": None})],
           label="nulls before unknown names and counts")
    k.metadata(run, [run.name("a")], label="nothing was made")


@scenario("admin-edges/create-topics-checks-in-kafkas-order")
def _(run):
    for name in ("", ".", "..", "x" * 250, "bad name!", METADATA_TOPIC):
        create(run, [(name, 1, 1, None)], validate=True, label=f"the name {name[:12]!r}")
    t = run.name("a.b")
    create(run, [(t, 1, 1, None)], label="a topic with a dot")
    k.wait_for_leaders(run, t, 1)
    create(run, [(run.name("a_b"), 0, 1, {"x": None})], label="one that collides with it")
    create(run, [(t, 0, 0, None)], label="it exists")
    create(run, [(run.name("c"), 0, 0, None)], validate=True, label="replication factor first")
    create(run, [(run.name("c"), -3, 3, None)], validate=True, label="then the partitions")
    create(run, [(run.name("c"), 1, 2, None)], validate=True, label="more replicas than brokers")
    create(run, [(run.name("c"), 10001, 1, None)], validate=True, label="too many partitions")
    create(run, [(run.name("c"), 1, 1, {"no.such": "1"})], validate=True, label="an unknown config")
    create(run, [(run.name("c"), 1, 1, {"min.cleanable.dirty.ratio": "2"})], validate=True,
           label="a double out of range")
    # (the boundary itself, 10000 records, is tests/unit/test_admin_edges.py's: Kafka's controller
    # lays out every partition of a request it takes, a load the other scenarios would feel)
    create(run, [(run.name("c"), 5000, 1, None), (run.name("d"), 5000, 1, None)], validate=True,
           label="past one batch of records")


# --- broker configs (items 10, 20, 21, 23) --------------------------------------------------------

# (sasl.kerberos.min.time.before.relogin is the next scenario's, which changes it while this one may run)
KAFKA_ONLY = ["default.replication.factor", "delete.topic.enable", "log.retention.minutes", "connections.max.idle.ms",
              "sasl.kerberos.ticket.renew.jitter", "log.cleaner.io.max.bytes.per.second", "ssl.key.password",
              "broker.rack", "fetch.max.bytes", "broker.id", "log.retention.ms", "queued.max.requests"]


@scenario("admin-edges/broker-configs-as-kafka-lists-them")
def _(run):
    describe(run, k.CLUSTER, "1", KAFKA_ONLY, label="Kafka's configs kipper does not use")
    describe(run, k.CLUSTER, "1", KAFKA_ONLY, synonyms=False, label="without synonyms")
    k.find_coordinator(run, run.name("g"))
    describe(run, k.TOPIC, "__consumer_offsets", ["cleanup.policy", "compression.type", "segment.bytes"],
             label="the offsets topic's configs")


@scenario("admin-edges/authorizer-configs-kafka-does-not-know")
def _(run):
    """super.users and allow.everyone.if.no.acl.found are the authorizer's, not the broker's:
    set in the properties file, they are described as names Kafka does not know (sensitive,
    null); the cluster default resource lists neither (the client generator's first run)."""
    keys = ["super.users", "allow.everyone.if.no.acl.found"]
    describe(run, k.CLUSTER, "1", keys, label="the authorizer's configs")
    describe(run, k.CLUSTER, "1", keys, synonyms=False, label="without synonyms")
    describe(run, k.CLUSTER, "", keys, label="the cluster default")
    for name in ("1", ""):  # (validated only: the reference broker is shared)
        alter(run, k.CLUSTER, name, [("super.users", SET, "User:nobody"), ("allow.everyone.if.no.acl.found",
                                                                         SET, "true")], validate=True,
              label=f"set at run time on {name or 'the cluster default'}")


@scenario("admin-edges/streams-assignment-interval-changes-at-run-time")
def _(run):
    """group.streams.assignment.interval.ms is one Kafka changes at run time: described so, and
    an alter of it validated (the client generator's first run: kipper refused it as static)."""
    name = "group.streams.assignment.interval.ms"
    describe(run, k.CLUSTER, "1", [name], label="described")
    alter(run, k.CLUSTER, "1", [(name, SET, "2000")], validate=True, label="set it (validated only)")
    alter(run, k.CLUSTER, "", [(name, SET, "-1")], validate=True, label="out of range")


@scenario("admin-edges/broker-loggers")
def _(run):
    """A broker's loggers (kafka-configs --entity-type broker-loggers): described by name, and
    their levels set, validated only (the reference brokers are shared); every refusal of
    Kafka's RuntimeLoggerManager in its words (the client generator's reach: no generator had
    drawn the BROKER_LOGGER resource, which kipper did not know)."""
    for name, keys in (("1", ["root"]), ("1", ["no.such.logger"]), ("2", ["root"]), ("", ["root"]),
                       ("one", ["root"])):
        describe(run, BROKER_LOGGER, name, keys, label=f"describe {keys[0]} of broker {name!r}")
    for name, ops in (("1", [("root", SET, "DEBUG")]), ("1", [("root", SET, "TRACE"), ("root", SET, "INFO")]),
                      ("1", [("no.such.logger", SET, "DEBUG")]), ("1", [("root", SET, "LOUD")]),
                      ("1", [("root", SET, "debug")]), ("1", [("root", APPEND, "DEBUG")]),
                      ("1", [("root", SUBTRACT, "DEBUG")]), ("1", [("root", DELETE, None)]),
                      ("1", [("no.such.logger", DELETE, None)]), ("2", [("root", SET, "DEBUG")]),
                      ("", [("root", SET, "DEBUG")]), ("x", [("root", SET, "DEBUG")]),
                      ("1", [("root", SET, None)])):
        alter(run, BROKER_LOGGER, name, ops, validate=True, label=f"{ops} on broker {name!r}")
    run.call(k.ALTER_CONFIGS, k.top(k.ALTER_CONFIGS), {"resources": [{
        "resource_type": BROKER_LOGGER, "resource_name": "1", "configs": [{"name": "root", "value": "DEBUG"}]}],
        "validate_only": True}, label="the legacy AlterConfigs knows no broker logger")


def _source_becomes(run, name: str, source: int) -> None:
    """Kafka applies a broker config from its metadata log a moment after answering the alter:
    wait (unrecorded) until the config's source is the one expected."""
    def ask():
        return run.call(k.DESCRIBE_CONFIGS, k.top(k.DESCRIBE_CONFIGS), {"resources": [
            {"resource_type": k.CLUSTER, "resource_name": "1", "configuration_keys": [name]}],
            "include_synonyms": False, "include_documentation": False}, record=False)

    def done(resp):
        try:
            return resp["results"][0]["configs"][0]["config_source"] == source
        except (KeyError, IndexError, TypeError):
            return False
    run.poll(ask, done, timeout=20)


@scenario("admin-edges/broker-config-kafka-changes-at-run-time")
def _(run):
    name = "sasl.kerberos.min.time.before.relogin"
    incremental(run, k.CLUSTER, "1", [(name, SET, "soon")], label="not a long")
    alter(run, k.CLUSTER, "1", [(name, SET, "60000")], label="set it")
    _source_becomes(run, name, 2)  # DYNAMIC_BROKER_CONFIG
    describe(run, k.CLUSTER, "1", [name], label="as set")
    alter(run, k.CLUSTER, "1", [(name, 1, None)], label="delete it")
    _source_becomes(run, name, 5)  # DEFAULT_CONFIG
    describe(run, k.CLUSTER, "1", [name], label="back to the default")


@scenario("admin-edges/broker-config-refusals")
def _(run):
    incremental(run, k.CLUSTER, "1", [("broker.id", SET, "7")], label="a static config")
    incremental(run, k.CLUSTER, "1", [("broker.id", SET, "7"), ("num.partitions", SET, "2")],
                label="two static configs, in a Java set's order")
    incremental(run, k.CLUSTER, "", [("broker.id", SET, "7")], label="at the cluster level")
    incremental(run, k.CLUSTER, "1", [("log.cleaner.threads", SET, "abc")], label="not an INT")
    incremental(run, k.CLUSTER, "1", [("log.cleaner.io.max.bytes.per.second", SET, "abc")], label="not a DOUBLE")
    incremental(run, k.CLUSTER, "1", [("num.io.threads", SET, "0")], label="below the minimum")


@scenario("admin-edges/group-and-topic-config-refusals")
def _(run):
    g = run.name("g")
    for key, value in (("consumer.session.timeout.ms", "1"), ("consumer.session.timeout.ms", "99999999"),
                       ("consumer.heartbeat.interval.ms", "1"), ("share.delivery.count.limit", "99"),
                       ("share.record.lock.duration.ms", "99999999"), ("share.partition.max.record.locks", "999999"),
                       ("streams.heartbeat.interval.ms", "1"), ("streams.session.timeout.ms", "1"),
                       ("streams.num.standby.replicas", "99"), ("consumer.session.timeout.ms", "abc"),
                       ("no.such", "1")):
        incremental(run, 32, g, [(key, SET, value)], label=f"{key}={value}")
    incremental(run, 32, "", [("consumer.session.timeout.ms", SET, "50000")], label="the default group")
    missing = run.name("missing")
    incremental(run, k.TOPIC, missing, [("retention.ms", SET, "1000")], label="a missing topic")
    run.call(k.ALTER_CONFIGS, k.top(k.ALTER_CONFIGS), {"resources": [{
        "resource_type": k.TOPIC, "resource_name": missing, "configs": [{"name": "retention.ms", "value": "1"}]}],
        "validate_only": True}, label="a missing topic, legacy AlterConfigs", messages=True)


# --- a name or a partition twice (item 13), OffsetDelete (item 11) ---------------------------------

@scenario("admin-edges/named-twice")
def _(run):
    t = k.create_topic(run, partitions=2)
    run.call(k.LIST_OFFSETS, k.top(k.LIST_OFFSETS), {"replica_id": -1, "isolation_level": 0, "timeout_ms": 1000,
        "topics": [{"name": t, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1},
                                              {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}]},
                   {"name": t, "partitions": [{"partition_index": 1, "current_leader_epoch": -1, "timestamp": -1}]}]},
        label="ListOffsets: a partition twice, a topic twice")
    run.call(k.LIST_OFFSETS, 1, {"replica_id": -1, "topics": [{"name": t, "partitions": [
        {"partition_index": 1, "timestamp": -1}, {"partition_index": 1, "timestamp": -2}]}]}, label="ListOffsets v1")
    run.call(k.CREATE_PARTITIONS, k.top(k.CREATE_PARTITIONS), {"topics": [
        {"name": t, "count": 3, "assignments": None}, {"name": t, "count": 4, "assignments": None}],
        "timeout_ms": 1000, "validate_only": False}, label="CreatePartitions: a topic twice", messages=True)
    tid = k.topic_id(run, t)
    delete = k.top(k.DELETE_TOPICS)
    for label, topics in (("both a name and an id", [{"name": t, "topic_id": tid}]),
                          ("neither", [{"name": None, "topic_id": ZERO}]),
                          ("a name twice", [{"name": t, "topic_id": ZERO}, {"name": t, "topic_id": ZERO}]),
                          ("an id twice", [{"name": None, "topic_id": tid}, {"name": None, "topic_id": tid}]),
                          ("by id and by name", [{"name": None, "topic_id": tid}, {"name": t, "topic_id": ZERO}]),
                          ("an unknown id", [{"name": None, "topic_id": uuid.UUID(int=99)}])):
        run.call(k.DELETE_TOPICS, delete, {"topics": topics, "timeout_ms": 1000}, label=f"DeleteTopics: {label}",
                 messages=True)
    k.metadata(run, [t], label="the topic is still there")


@scenario("admin-edges/offset-delete-unknown-topic-or-partition")
def _(run):
    t = k.create_topic(run, partitions=2)
    g = run.name("g")
    k.commit(run, g, t, 5)
    offset_delete = k.top(k.OFFSET_DELETE)
    for label, topics in (("an unknown topic", [{"name": run.name("missing"), "partitions": [{"partition_index": 0}]}]),
                          ("an unknown partition", [{"name": t, "partitions": [{"partition_index": 7}]}]),
                          ("a partition twice", [{"name": t, "partitions": [{"partition_index": 0},
                                                                             {"partition_index": 0}]}])):
        run.call(k.OFFSET_DELETE, offset_delete, {"group_id": g, "topics": topics}, label=label)
    run.call(k.OFFSET_DELETE, offset_delete, {"group_id": run.name("nobody"), "topics": [
        {"name": run.name("missing"), "partitions": [{"partition_index": 0}]}]}, label="an unknown group")
    k.offset_fetch(run, g, t, (0, 1))


# --- empty ids (item 14) -------------------------------------------------------------------------

@scenario("admin-edges/empty-ids")
def _(run):
    k.init_producer_id(run, "", label="an empty transactional id")
    k.init_producer_id(run, "", version=0, label="v0")
    k.find_coordinator(run, "", 0, label="an empty group id")
    k.find_coordinator(run, "", 0, version=2, label="an empty group id, v2")
    k.find_coordinator(run, "", 1, label="an empty transactional id")
    for key in ("", "g", "g:t", "g:t:", "g:abc:0", ":AAAAAAAAAAAAAAAAAAAAAA:0", "  :AAAAAAAAAAAAAAAAAAAAAA:0",
                "g:AAAAAAAAAAAAAAAAAAAAAA:x", "g:AAAAAAAAAAAAAAAAAAAAAA: 1", "a:b:c:d"):
        k.find_coordinator(run, key, 2, label=f"the share key {key!r}")


@scenario("admin-edges/the-empty-group-id")
def _(run):
    t = k.create_topic(run)
    k.commit(run, "", t, 3)
    run.call(k.DELETE_GROUPS, k.top(k.DELETE_GROUPS), {"groups_names": [""]}, label="DeleteGroups of ''")
    run.call(k.DELETE_GROUPS, k.top(k.DELETE_GROUPS), {"groups_names": [""]}, label="again: gone")
    run.call(k.DELETE_GROUPS, 0, {"groups_names": [""]}, label="v0")


# --- classic groups (item 15) ---------------------------------------------------------------------

@scenario("admin-edges/static-member-removed-and-describe-mid-rebalance")
def _(run):
    t = k.create_topic(run)
    g = run.name("g")
    k.join_and_sync(run, g, t, instance_id="inst-1")
    run.call(k.LEAVE_GROUP, k.top(k.LEAVE_GROUP), {"group_id": g, "members": [
        {"member_id": "", "group_instance_id": "inst-1", "reason": None},
        {"member_id": "", "group_instance_id": "inst-unknown", "reason": None}]}, label="leave by instance id")
    g2 = run.name("g2")
    first, _ = k.join_and_sync(run, g2, t)
    second = run.send(k.JOIN_GROUP, k.top(k.JOIN_GROUP), {
        "group_id": g2, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": "",
        "group_instance_id": "inst-2", "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": k.subscription([t])}], "reason": None},
        conn="second", label="a second member joins")
    run.wait(1.0)
    describe_groups = k.top(k.DESCRIBE_GROUPS)
    run.call(k.DESCRIBE_GROUPS, describe_groups, {"groups": [g2], "include_authorized_operations": False},
             label="describe while preparing the rebalance")
    run.call(k.DESCRIBE_GROUPS, 0, {"groups": [g2]}, label="v0")
    k.join(run, g2, [t], member_id=first, label="the first joins again")
    run.receive(second)
    run.call(k.DESCRIBE_GROUPS, describe_groups, {"groups": [g2], "include_authorized_operations": False},
             label="describe while completing it")


# --- share groups (item 12) -----------------------------------------------------------------------

@scenario("admin-edges/share-acknowledge-below-the-start", timed=True)
def _(run):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(3))
    k.produce(run, t, k.batch(3, start=3))
    g = run.name("sg")
    k.group_config(run, g, {"share.auto.offset.reset": "earliest"})
    join(run, g, [t])
    share_fetch(run, g, t, max_wait_ms=5000, max_records=3, label="the first batch")
    ack(run, g, t, 1, [(0, 2, ACCEPT)], label="accepted")
    ack(run, g, t, 2, [(0, 2, ACCEPT)], label="accepted again: below the start")
    ack(run, g, t, 3, [(0, 0, RELEASE), (1, 2, ACCEPT)], label="released and accepted: below the start")
    # (Kafka hands the next batch out once the acknowledgements are written to its share
    # coordinator: a loaded machine takes a while)
    share_fetch(run, g, t, epoch=4, max_wait_ms=10000, max_records=3, label="the second batch")
    ack(run, g, t, 5, [(1, 4, ACCEPT)], label="from below the start into the second batch: ignored")
    ack(run, g, t, 6, [(3, 5, ACCEPT)], label="the second batch, still held")


# --- one node's quorum and leaders (item 22) ------------------------------------------------------

def describe_quorum_at(run, v):
    run.call(DESCRIBE_QUORUM, v, {"topics": [{"topic_name": METADATA_TOPIC, "partitions": [{"partition_index": 0}]}]})
    run.call(DESCRIBE_QUORUM, v, {"topics": [{"topic_name": METADATA_TOPIC, "partitions": [{"partition_index": 1}]},
                                             {"topic_name": run.name("t"), "partitions": [{"partition_index": 0}]}]},
             label="what is no quorum")


def elect_leaders_at(run, v):
    t = k.create_topic(run, partitions=2)
    run.call(ELECT_LEADERS, v, {"election_type": 0, "timeout_ms": 30000, "topic_partitions": [
        {"topic": t, "partitions": [0, 1, 5]}, {"topic": run.name("missing"), "partitions": [0]}]})
    if v >= 1:
        run.call(ELECT_LEADERS, v, {"election_type": 1, "timeout_ms": 30000, "topic_partitions": [
            {"topic": t, "partitions": [0]}]}, label="unclean")
        run.call(ELECT_LEADERS, v, {"election_type": 2, "timeout_ms": 30000, "topic_partitions": [
            {"topic": t, "partitions": [0]}]}, label="an unknown election type")
    run.call(ELECT_LEADERS, v, {"election_type": 0, "timeout_ms": 30000, "topic_partitions": []},
             label="no partitions")


@scenario("admin-edges/describe-quorum-of-one-node")
def _(run):
    describe_quorum_at(run, DESCRIBE_QUORUM.max_version)


@scenario("admin-edges/elect-leaders-needs-no-election")
def _(run):
    elect_leaders_at(run, ELECT_LEADERS.max_version)


# every group config invalid at once, then one fewer each time: Kafka names the first in its
# GroupConfig's definition order (its ConfigDef parses in that order), then its cross-key
# checks in theirs (the client generator's fifth run: two invalid, kipper named the other)
_INVALID_GROUP_VALUES = {
    "consumer.session.timeout.ms": "-1", "consumer.heartbeat.interval.ms": "-1",
    "consumer.assignment.interval.ms": "-1", "share.session.timeout.ms": "-1", "share.heartbeat.interval.ms": "-1",
    "share.record.lock.duration.ms": "-1", "share.delivery.count.limit": "-1",
    "share.partition.max.record.locks": "-1", "share.auto.offset.reset": "bogus", "share.isolation.level": "bogus",
    "share.renew.acknowledge.enable": "maybe", "share.assignment.interval.ms": "-1",
    "streams.session.timeout.ms": "-1", "streams.heartbeat.interval.ms": "-1", "streams.num.standby.replicas": "-1",
    "streams.initial.rebalance.delay.ms": "-1", "streams.assignment.interval.ms": "-1",
    "errors.deadletterqueue.copy.record.enable": "maybe", "streams.assignor.name": "bogus"}
_OUT_OF_BOUNDS_GROUP_VALUES = {
    "consumer.heartbeat.interval.ms": "1", "consumer.session.timeout.ms": "1", "share.heartbeat.interval.ms": "1",
    "share.session.timeout.ms": "1", "share.delivery.count.limit": "100", "share.partition.max.record.locks": "1000000",
    "streams.heartbeat.interval.ms": "1", "streams.session.timeout.ms": "1", "streams.num.standby.replicas": "100",
    "streams.assignor.name": "bogus"}


def _one_fewer_each_time(table: dict[str, str]):
    """``table`` (in Kafka's order) whole, then without its first, and so on: each time in the
    reverse order, so that a broker checking them in the request's order names another."""
    names = list(table)
    for i in range(len(names)):
        yield [(n, table[n]) for n in reversed(names[i:])]


@scenario("admin-edges/group-configs-checked-in-kafkas-order")
def _(run):
    g = run.name("g")
    for table in (_INVALID_GROUP_VALUES, _OUT_OF_BOUNDS_GROUP_VALUES):
        for pairs in _one_fewer_each_time(table):
            run.call(k.INCREMENTAL_ALTER_CONFIGS, k.top(k.INCREMENTAL_ALTER_CONFIGS), {
                "resources": [{"resource_type": 32, "resource_name": g, "configs": [
                    {"name": n, "config_operation": 0, "value": v} for n, v in pairs]}],
                "validate_only": False}, label=f"from {pairs[-1][0]}", messages=True)


_NOT_OF_ITS_TYPE = {"int": "x", "long": "x", "double": "x", "boolean": "maybe", "string": "bogus", "list": "bogus"}


@scenario("admin-edges/topic-configs-checked-in-kafkas-order")
def _(run):
    """The same for a new topic's configs (validated only): LogConfig's definition order, the
    configs Kafka 4.4 added among them (max.decompressed.message.bytes after max.message.bytes)."""
    names = sorted(n for n, d in TOPIC_CONFIGS.items() if not d.internal and n != "share.auto.offset.reset")
    refused = []
    for _ in range(len(names)):
        left = [n for n in names if n not in refused]
        topic = {"name": run.name("t"), "num_partitions": 1, "replication_factor": 1, "assignments": [],
                 "configs": [{"name": n, "value": _NOT_OF_ITS_TYPE[TOPIC_CONFIGS[n].type]} for n in left]}
        resp = run.call(k.CREATE_TOPICS, k.top(k.CREATE_TOPICS), {"timeout_ms": 30000, "validate_only": True,
                                                                  "topics": [topic]},
                        label=f"{len(left)} invalid", messages=True)
        text = (resp.get("topics") or [{}])[0].get("error_message") or ""
        named = [n for n in left if f"configuration {n}:" in text]
        if not named:
            break
        refused.append(named[0])  # (the one each broker named: where they differ, the texts do)


_BROKER_VALUES_NOT_OF_THEIR_TYPE = {  # (in the order Kafka checks them)
    "leader.replication.throttled.rate": "x", "follower.replication.throttled.rate": "x",
    "log.local.retention.ms": "x", "log.remote.copy.lag.ms": "x", "message.max.bytes": "x", "num.io.threads": "x",
    "compression.type": "bogus", "compression.zstd.level": "x", "max.connections": "x",
    "unclean.leader.election.enable": "maybe", "group.streams.assignment.interval.ms": "x",
    "log.cleaner.threads": "x", "log.cleaner.backoff.ms": "x", "log.cleaner.min.cleanable.ratio": "x",
    "log.segment.bytes": "x", "log.roll.ms": "x", "log.retention.ms": "x", "log.cleanup.policy": "bogus",
    "log.index.interval.bytes": "x", "log.flush.interval.ms": "x", "log.preallocate": "maybe",
    "min.insync.replicas": "x", "log.message.timestamp.after.max.ms": "x",
    "transaction.partition.verification.enable": "x", "producer.id.expiration.ms": "x"}


@scenario("admin-edges/broker-configs-checked-in-kafkas-order")
def _(run):
    """A broker's new values (validated only), every one invalid, then one fewer each time:
    Kafka checks its per-broker throttles first, then KafkaConfig's definitions in order, then
    what it reads of a value after parsing (the per-IP connection limits, the metrics
    reporters' classes), each refusal in its words."""
    for pairs in _one_fewer_each_time(_BROKER_VALUES_NOT_OF_THEIR_TYPE):
        alter(run, k.CLUSTER, "1", [(n, SET, v) for n, v in pairs], validate=True, label=f"{len(pairs)} invalid",
              messages=True)
    for overrides in ("bogus", ",a:1", "a:1,", "127.0.0.1:5,x:y", "a:99999999999", "not a host!:5", "a:+5, b : 6",
                      "127.0.0.1:-1"):
        alter(run, k.CLUSTER, "1", [("max.connections.per.ip.overrides", SET, overrides)], validate=True,
              label=f"overrides {overrides!r}", messages=True)
    for reporters in ("bogus", "org.apache.kafka.common.metrics.JmxReporter", ""):
        alter(run, k.CLUSTER, "1", [("metric.reporters", SET, reporters)], validate=True,
              label=f"reporters {reporters!r}", messages=True)
