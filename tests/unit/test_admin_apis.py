"""The topic, config and cluster admin APIs in a whole broker, through real frames:
CreateTopics, CreatePartitions, AlterConfigs, IncrementalAlterConfigs (topics,
brokers, groups), DescribeConfigs, DescribeCluster, Metadata's authorized
operations and DescribeLogDirs, with Kafka's error codes and messages."""

from __future__ import annotations

from kipper.broker.handlers.cluster import IN_MEMORY_DIR
from kipper.broker.acl.model import NOT_PROVIDED
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

CREATE_TOPICS, CREATE_PARTITIONS, METADATA = 19, 37, 3
ALTER_CONFIGS, INCREMENTAL, DESCRIBE_CONFIGS = 33, 44, 32
DESCRIBE_CLUSTER, DESCRIBE_LOG_DIRS = 60, 35
TOPIC, BROKER, GROUP = 2, 4, 32
# KIP-430 bit fields without an authorizer: every operation Kafka supports (AclEntry.supportedOperations)
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))  # READ..DESCRIBE, *_CONFIGS: 3576
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))  # CREATE, ALTER, ..., IDEMPOTENT_WRITE


def create(b, name, partitions=-1, rf=-1, assignments=(), configs=None, validate_only=False):
    body = {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": rf,
                        "assignments": [{"partition_index": i, "broker_ids": ids}
                                        for i, ids in enumerate(assignments)],
                        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
            "timeout_ms": 1000, "validate_only": validate_only}
    return b.call(CREATE_TOPICS, 7, body).topics[0]


def grow(b, name, count, assignments=None, validate_only=False, duplicate=False):
    topic = {"name": name, "count": count,
             "assignments": None if assignments is None else [{"broker_ids": a} for a in assignments]}
    body = {"topics": [topic, topic] if duplicate else [topic], "timeout_ms": 1000,
            "validate_only": validate_only}
    return b.call(CREATE_PARTITIONS, 3, body).results


def describe(b, rtype, name, keys=None, synonyms=False):
    body = {"resources": [{"resource_type": rtype, "resource_name": name, "configuration_keys": keys}],
            "include_synonyms": synonyms, "include_documentation": True}
    return b.call(DESCRIBE_CONFIGS, 4, body).results[0]


def incremental(b, rtype, name, ops, validate_only=False):
    body = {"resources": [{"resource_type": rtype, "resource_name": name, "configs": [
        {"name": k, "config_operation": op, "value": v} for k, op, v in ops]}],
        "validate_only": validate_only}
    return b.call(INCREMENTAL, 1, body).responses[0]


def alter(b, rtype, name, configs, validate_only=False):
    body = {"resources": [{"resource_type": rtype, "resource_name": name, "configs": [
        {"name": k, "value": v} for k, v in configs.items()]}], "validate_only": validate_only}
    return b.call(ALTER_CONFIGS, 2, body).responses[0]


# --- CreateTopics ------------------------------------------------------------------------------

def test_an_assignment_naming_this_broker_creates_the_topic():
    b = InProcessBroker()
    result = create(b, "a", assignments=[[1], [1], [1]])
    assert (result.error_code, result.num_partitions) == (0, 3)
    assert len(b.state.topics.get("a").partitions) == 3


def test_assignments_kafka_refuses():
    b = InProcessBroker()
    r = create(b, "x", assignments=[[2]])
    assert r.error_code == E.INVALID_REPLICA_ASSIGNMENT and "no such broker is registered" in r.error_message
    assert create(b, "x", assignments=[[1, 1]]).error_code == E.INVALID_REPLICA_ASSIGNMENT
    r = create(b, "x", partitions=1, assignments=[[1]])
    assert r.error_code == E.INVALID_REQUEST and "numPartitions" in r.error_message
    assert "x" not in b.state.topics


def test_any_valid_config_null_values_and_defaults_of_minus_one():
    b = InProcessBroker(**{"num.partitions": "4"})
    r = create(b, "c", configs={"delete.retention.ms": "1000", "retention.ms": None})
    assert (r.error_code, r.error_message) == (E.INVALID_CONFIG, "Null value not supported for topic configs: retention.ms")
    assert "c" not in b.state.topics
    r = create(b, "c", configs={"delete.retention.ms": "1000", "flush.ms": "5"})
    assert (r.error_code, r.num_partitions, r.replication_factor) == (0, 4, 1)
    assert b.state.topics.get("c").configs == {"delete.retention.ms": "1000", "flush.ms": "5"}
    assert {c.name for c in r.configs} >= {"delete.retention.ms", "segment.jitter.ms"}


def test_validate_only_creates_nothing_and_an_existing_topic_gets_its_message():
    b = InProcessBroker()
    assert create(b, "v", partitions=2, validate_only=True).error_code == 0
    assert "v" not in b.state.topics
    create(b, "v", partitions=2)
    r = create(b, "v", partitions=2)
    assert (r.error_code, r.error_message) == (E.TOPIC_ALREADY_EXISTS, "Topic 'v' already exists.")


# --- CreatePartitions --------------------------------------------------------------------------

def test_partitions_grow_and_show_in_metadata_at_once():
    b = InProcessBroker()
    create(b, "g", partitions=2)
    assert grow(b, "g", 5)[0].error_code == 0
    meta = b.call(METADATA, 12, {"topics": [{"name": "g", "topic_id": None}],
                                 "allow_auto_topic_creation": False,
                                 "include_topic_authorized_operations": False})
    assert sorted(p.partition_index for p in meta.topics[0].partitions) == [0, 1, 2, 3, 4]


def test_a_count_that_is_not_an_increase_gets_invalid_partitions():
    b = InProcessBroker()
    create(b, "g", partitions=3)
    same, lower = grow(b, "g", 3)[0], grow(b, "g", 2)[0]
    assert (same.error_code, same.error_message) == (E.INVALID_PARTITIONS, "Topic already has 3 partition(s).")
    assert lower.error_code == E.INVALID_PARTITIONS and "would not be an increase" in lower.error_message


def test_assignments_for_other_brokers_or_of_the_wrong_size_are_refused():
    b = InProcessBroker()
    create(b, "g", partitions=1)
    assert grow(b, "g", 2, assignments=[[5]])[0].error_code == E.INVALID_REPLICA_ASSIGNMENT
    assert grow(b, "g", 3, assignments=[[1]])[0].error_code == E.INVALID_REPLICA_ASSIGNMENT
    assert grow(b, "g", 2, assignments=[[1]])[0].error_code == 0


def test_validate_only_unknown_topics_and_duplicates():
    b = InProcessBroker()
    create(b, "g", partitions=1)
    assert grow(b, "g", 4, validate_only=True)[0].error_code == 0
    assert len(b.state.topics.get("g").partitions) == 1
    assert grow(b, "nope", 4)[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert [r.error_code for r in grow(b, "g", 4, duplicate=True)] == [E.INVALID_REQUEST]  # one answer per name, as Kafka


# --- AlterConfigs and IncrementalAlterConfigs ------------------------------------------------------

def test_alter_configs_replaces_the_whole_set():
    b = InProcessBroker()
    create(b, "t", configs={"retention.ms": "1000", "flush.ms": "10"})
    assert alter(b, TOPIC, "t", {"segment.ms": "5000"}).error_code == 0
    assert b.state.topics.get("t").configs == {"segment.ms": "5000"}
    assert alter(b, TOPIC, "t", {"segment.ms": None}).error_code == E.INVALID_REQUEST
    assert alter(b, TOPIC, "t", {"segment.ms": "0"}).error_code == E.INVALID_CONFIG
    assert alter(b, TOPIC, "t", {}, validate_only=True).error_code == 0
    assert b.state.topics.get("t").configs == {"segment.ms": "5000"}


def test_incremental_append_applies_to_lists_only():
    b = InProcessBroker()
    create(b, "t")
    # APPEND starts from the value in effect, the default included (Kafka)
    assert incremental(b, TOPIC, "t", [("cleanup.policy", 2, "compact")]).error_code == 0
    assert b.state.topics.get("t").configs["cleanup.policy"] == "delete,compact"
    r = incremental(b, TOPIC, "t", [("retention.ms", 2, "5")])
    assert (r.error_code, r.error_message) == (
        E.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")


def test_broker_resources_take_kafkas_dynamic_configs_and_refuse_static_ones():
    b = InProcessBroker()
    assert incremental(b, BROKER, "1", [("log.retention.ms", 0, "1234")]).error_code == 0
    assert incremental(b, BROKER, "", [("log.cleanup.policy", 0, "compact")]).error_code == 0
    create(b, "t")
    row = {c.name: c for c in describe(b, TOPIC, "t").configs}
    assert (row["retention.ms"].value, row["retention.ms"].config_source) == ("1234", 2)
    assert (row["cleanup.policy"].value, row["cleanup.policy"].config_source) == ("compact", 3)
    r = incremental(b, BROKER, "1", [("num.partitions", 0, "3")])
    assert (r.error_code, r.error_message) == (
        E.INVALID_REQUEST, "Cannot update these configs dynamically: [num.partitions]")  # a Java set
    r = incremental(b, BROKER, "1", [("broker.id", 0, "7"), ("num.partitions", 0, "3")])
    assert r.error_message == "Cannot update these configs dynamically: [num.partitions, broker.id]"  # its order
    assert incremental(b, BROKER, "7", [("log.retention.ms", 0, "1")]).error_code == E.INVALID_REQUEST
    r = incremental(b, BROKER, "1", [("log.retention.ms", 0, "x")])
    assert (r.error_code, r.error_message) == (
        E.INVALID_REQUEST, "Invalid value x for configuration log.retention.ms: Not a number of type LONG")
    r = incremental(b, BROKER, "1", [("log.cleaner.threads", 0, "abc")])
    assert r.error_message == "Invalid value abc for configuration log.cleaner.threads: Not a number of type INT"
    r = incremental(b, BROKER, "1", [("num.io.threads", 0, "0")])
    assert r.error_message == "Invalid value 0 for configuration num.io.threads: Value must be at least 1"
    assert incremental(b, BROKER, "1", [("log.retention.ms", 1, None)]).error_code == 0
    assert describe(b, TOPIC, "t", ["retention.ms"]).configs[0].config_source == 5


def test_a_name_that_is_no_broker_config_is_stored_and_described_as_kafka_does():
    # Kafka 4.4 refuses only known static names; an unknown name is kept (validate-only
    # passes too) and described read-only, sensitive, of unknown type
    b = InProcessBroker()
    assert incremental(b, BROKER, "1", [("no.such.broker.config", 0, "3")], validate_only=True).error_code == 0
    assert describe(b, BROKER, "1", ["no.such.broker.config"]).configs == []
    assert incremental(b, BROKER, "1", [("no.such.broker.config", 0, "3")]).error_code == 0
    assert incremental(b, BROKER, "", [("no.such.cluster.config", 0, "4")]).error_code == 0
    rows = {c.name: c for c in describe(b, BROKER, "1", synonyms=True).configs}
    row = rows["no.such.broker.config"]
    assert (row.value, row.read_only, row.is_sensitive, row.config_source, row.config_type) == (None, True, True, 2, 0)
    assert [(s.name, s.value, s.source) for s in row.synonyms] == [("no.such.broker.config", None, 2)]
    assert rows["no.such.cluster.config"].config_source == 3
    assert [c.name for c in describe(b, BROKER, "").configs] == ["no.such.cluster.config"]
    assert incremental(b, BROKER, "1", [("no.such.broker.config", 1, None)]).error_code == 0
    assert describe(b, BROKER, "1", ["no.such.broker.config"]).configs == []
    assert incremental(b, BROKER, "1", [("num.partitions", 0, "3")]).error_code == E.INVALID_REQUEST


def test_a_static_kafka_broker_config_kipper_does_not_use_is_refused_as_kafka_does():
    # broker.id is Kafka's, not kipper's (node.id), yet Kafka's kafka-configs --add-config
    # broker.id=7 is refused: it is a known static name, not an unknown one
    b = InProcessBroker()
    r = incremental(b, BROKER, "1", [("broker.id", 0, "7")])
    assert (r.error_code, r.error_message) == (E.INVALID_REQUEST, "Cannot update these configs dynamically: [broker.id]")
    assert incremental(b, BROKER, "1", [("controller.quorum.voters", 0, "x")], validate_only=True).error_code == \
        E.INVALID_REQUEST
    # a name Kafka reconfigures at run time (a listener's TLS settings) is not refused as static
    assert incremental(b, BROKER, "1", [("ssl.cipher.suites", 0, "x")], validate_only=True).error_code == 0


def test_a_run_time_kafka_broker_config_kipper_does_not_use_is_stored_and_described_as_set():
    # librdkafka's test 0081 and kafka-configs: Kafka shows the value set, not sensitive,
    # with its DYNAMIC_BROKER_CONFIG and DEFAULT_CONFIG synonyms (not an unknown name's null)
    b = InProcessBroker()
    name = "sasl.kerberos.min.time.before.relogin"
    assert incremental(b, BROKER, "1", [(name, 0, "60001")]).error_code == 0
    row = describe(b, BROKER, "1", [name], synonyms=True).configs[0]
    assert (row.value, row.is_sensitive, row.read_only, row.config_source, row.config_type) == ("60001", False, False, 2, 5)
    assert [(s.value, s.source) for s in row.synonyms] == [("60001", 2), ("60000", 5)]
    r = incremental(b, BROKER, "1", [(name, 0, "soon")])
    assert r.error_message == f"Invalid value soon for configuration {name}: Not a number of type LONG"


def test_the_broker_lists_kafkas_configs_with_kafkas_defaults_and_doubles_as_java_prints_them():
    b = InProcessBroker()
    rows = {c.name: c for c in describe(b, BROKER, "1", synonyms=True).configs}
    for name, value in (("default.replication.factor", "1"), ("delete.topic.enable", "true"),
                        ("connections.max.idle.ms", "600000"), ("sasl.kerberos.min.time.before.relogin", "60000"),
                        ("log.cleaner.io.max.bytes.per.second", "1.7976931348623157E308")):
        assert (rows[name].value, rows[name].config_source) == (value, 5), name
    # Kafka has no default for these: null, without synonyms
    assert (rows["log.retention.minutes"].value, list(rows["log.retention.minutes"].synonyms)) == (None, [])
    assert (rows["ssl.keystore.location"].value, list(rows["ssl.keystore.location"].synonyms)) == (None, [])
    assert rows["broker.id"].value == "1"


def test_describing_the_broker_marks_dynamic_configs_and_hides_passwords():
    b = InProcessBroker(**{"num.partitions": "3"})
    incremental(b, BROKER, "", [("log.retention.ms", 0, "99")])
    rows = {c.name: c for c in describe(b, BROKER, "1", synonyms=True).configs}
    assert (rows["num.partitions"].read_only, rows["num.partitions"].config_source) == (True, 4)
    assert (rows["log.retention.ms"].read_only, rows["log.retention.ms"].config_source) == (False, 3)
    assert rows["ssl.key.password"].value is None and rows["ssl.key.password"].is_sensitive
    default_layer = describe(b, BROKER, "").configs
    assert [(c.name, c.value) for c in default_layer] == [("log.retention.ms", "99")]


def test_group_configs_of_kafka_4_with_their_cross_checks():
    b = InProcessBroker()
    ok = incremental(b, GROUP, "g", [("consumer.session.timeout.ms", 0, "50000"),
                                     ("consumer.heartbeat.interval.ms", 0, "6000")])
    assert ok.error_code == 0
    r = incremental(b, GROUP, "g", [("consumer.session.timeout.ms", 0, "1000")])
    assert (r.error_code, r.error_message) == (  # Kafka 4.4's words
        E.INVALID_CONFIG, "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.")
    r = incremental(b, GROUP, "g", [("consumer.heartbeat.interval.ms", 0, "15000"),
                                    ("consumer.session.timeout.ms", 0, "45000")])
    assert r.error_code == 0
    r = incremental(b, GROUP, "h", [("streams.heartbeat.interval.ms", 0, "50000")])
    assert r.error_message == "streams.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."
    r = incremental(b, GROUP, "h", [("streams.num.standby.replicas", 0, "3")])
    assert r.error_message == "streams.num.standby.replicas must be less than or equal to 2"
    r = incremental(b, GROUP, "h", [("no.such", 0, "1")])
    assert r.error_message == "Unknown group config name: no.such"
    rows = {c.name: c for c in describe(b, GROUP, "g").configs}
    assert (rows["consumer.session.timeout.ms"].value, rows["consumer.session.timeout.ms"].config_source) \
        == ("45000", 8)
    assert rows["consumer.heartbeat.interval.ms"].value == "15000"


def test_a_group_heartbeat_interval_reaches_its_consumer_group_members():
    from tests.unit.test_consumer_group_coordinator import request
    b = InProcessBroker(**{"group.consumer.min.heartbeat.interval.ms": "1000"})
    incremental(b, GROUP, "g", [("consumer.heartbeat.interval.ms", 0, "2000")])
    answer = b.state.groups.consumer_heartbeat(request(group="g", member="m"), version=1, client_id="c",
                                               client_host="/h", now=b.now)
    assert answer["heartbeat_interval_ms"] == 2000
    other = b.state.groups.consumer_heartbeat(request(group="other", member="m"), version=1,
                                              client_id="c", client_host="/h", now=b.now)
    assert other["heartbeat_interval_ms"] == 5000


# --- DescribeCluster, Metadata's authorized operations, DescribeLogDirs ------------------------------

def test_describe_cluster_lists_this_broker_and_its_operations_when_asked():
    b = InProcessBroker()
    body = {"include_cluster_authorized_operations": True, "endpoint_type": 1, "include_fenced_brokers": False}
    r = b.call(DESCRIBE_CLUSTER, 2, body)
    assert (r.error_code, r.controller_id, r.cluster_id) == (0, 1, b.state.cluster_id)
    assert [(x.broker_id, x.host, x.port, x.is_fenced) for x in r.brokers] == [(1, "127.0.0.1", 9092, False)]
    assert r.cluster_authorized_operations == CLUSTER_OPERATIONS
    body["include_cluster_authorized_operations"] = False
    assert b.call(DESCRIBE_CLUSTER, 2, body).cluster_authorized_operations == NOT_PROVIDED
    body["endpoint_type"] = 2
    assert b.call(DESCRIBE_CLUSTER, 2, body).error_code == E.MISMATCHED_ENDPOINT_TYPE


def test_metadata_answers_every_supported_operation_when_asked():
    b = InProcessBroker()
    create(b, "t", partitions=1)
    body = {"topics": [{"name": "t"}], "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": True, "include_topic_authorized_operations": True}
    meta = b.call(METADATA, 10, body)
    assert meta.topics[0].topic_authorized_operations == TOPIC_OPERATIONS
    assert meta.cluster_authorized_operations == CLUSTER_OPERATIONS
    body.update(include_cluster_authorized_operations=False, include_topic_authorized_operations=False)
    meta = b.call(METADATA, 10, body)
    assert meta.topics[0].topic_authorized_operations == NOT_PROVIDED
    assert meta.cluster_authorized_operations == NOT_PROVIDED


def test_describe_log_dirs_in_memory_is_one_directory_with_partition_sizes():
    b = InProcessBroker()
    create(b, "t", partitions=2)
    b.produce("t", 1, [(None, b"x" * 100, b.now)])
    r = b.call(DESCRIBE_LOG_DIRS, 4, {"topics": [{"topic": "t", "partitions": [0, 1]}]})
    [d] = r.results
    assert (d.log_dir, d.total_bytes, d.usable_bytes) == (IN_MEMORY_DIR, -1, -1)
    sizes = {p.partition_index: p.partition_size for p in d.topics[0].partitions}
    assert sizes[0] == 0 and sizes[1] > 100


def test_describe_log_dirs_names_the_log_dirs_that_hold_each_partition(tmp_path):
    b = InProcessBroker(**{"log.dirs": f"{tmp_path / 'a'},{tmp_path / 'b'}"})
    create(b, "t", partitions=2)
    b.produce("t", 0, [(None, b"x" * 100, b.now)])
    r = b.call(DESCRIBE_LOG_DIRS, 4, {"topics": None})
    by_dir = {d.log_dir: d for d in r.results}
    assert set(by_dir) == {str(tmp_path / "a"), str(tmp_path / "b")}
    held = {(t.name, p.partition_index): (d.log_dir, p.partition_size)
            for d in r.results for t in d.topics for p in t.partitions}
    assert {k for k in held if k[0] == "t"} == {("t", 0), ("t", 1)}
    assert held[("t", 0)][1] > 100
    assert all(d.total_bytes > 0 and d.usable_bytes > 0 for d in r.results)
    b.state.close()


def test_subtract_from_the_default_policy_leaves_an_empty_list_that_keeps_everything():
    b = InProcessBroker()
    create(b, "t")
    assert incremental(b, TOPIC, "t", [("cleanup.policy", 3, "delete")]).error_code == 0
    assert b.state.topics.get("t").configs["cleanup.policy"] == ""
    row = {c.name: c for c in describe(b, TOPIC, "t").configs}["cleanup.policy"]
    assert (row.value, row.config_source) == ("", 1)
    policy = b.state.topic_configs.policy(b.state.topics.get("t"))
    assert not policy.delete and not policy.compact  # Kafka 4.x: no retention, no compaction
    assert b.state.topic_configs.retention(b.state.topics.get("t")) is None
    assert incremental(b, TOPIC, "t", [("cleanup.policy", 2, "compact")]).error_code == 0
    assert b.state.topics.get("t").configs["cleanup.policy"] == "compact"


def test_the_replication_throttles_are_known_described_only_once_set_and_checked():
    """kafka-reassign-partitions --throttle sets Kafka's per-broker replication quotas: LONG,
    not sensitive, listed only while set (no KafkaConfig of Kafka's: no default synonym)."""
    b = InProcessBroker()
    names = ["leader.replication.throttled.rate", "follower.replication.throttled.rate",
             "replica.alter.log.dirs.io.max.bytes.per.second"]
    assert not [c for c in describe(b, BROKER, "1").configs if c.name in names]
    assert incremental(b, BROKER, "1", [(names[0], 0, "1000")]).error_code == 0
    assert incremental(b, BROKER, "", [(names[2], 0, "500")]).error_code == 0
    rows = {c.name: c for c in describe(b, BROKER, "1", synonyms=True).configs if c.name in names}
    assert sorted(rows) == sorted([names[0], names[2]])
    assert (rows[names[0]].value, rows[names[0]].is_sensitive, rows[names[0]].read_only,
            rows[names[0]].config_type, rows[names[0]].config_source) == ("1000", False, False, 5, 2)
    assert [s.source for s in rows[names[2]].synonyms] == [3]
    r = incremental(b, BROKER, "1", [(names[1], 0, "-5")])
    assert r.error_message == f"Invalid value -5 for configuration {names[1]}: Value must be at least 0"
