"""Configs (describe with synonyms, incremental alter and its list operations, validation
failures), ACL refusals under SASL, client quotas and SCRAM credentials."""

from __future__ import annotations

from kipper.client.blocking import BlockingConnection
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
BROKER_KEYS = ["num.partitions", "auto.create.topics.enable", "group.initial.rebalance.delay.ms",
               "log.retention.hours", "log.retention.ms", "message.max.bytes", "log.cleanup.policy",
               "offsets.topic.num.partitions", "transaction.max.timeout.ms", "compression.type",
               "socket.receive.buffer.bytes"]


def describe(run, rtype, name, keys=None, *, synonyms=True, label="describe configs", version=None):
    return run.call(k.DESCRIBE_CONFIGS, k.top(k.DESCRIBE_CONFIGS) if version is None else version, {
        "resources": [{"resource_type": rtype, "resource_name": name, "configuration_keys": keys}],
        "include_synonyms": synonyms, "include_documentation": False}, label=label)


def settled(run) -> None:
    """A KRaft broker applies a config change from the metadata log, a moment after it answered
    the alter: describing at once may still show the old value."""
    run.wait(0.5)


def alter(run, rtype, name, ops, *, validate=False, label="incremental alter", messages=False):
    try:
        return run.call(k.INCREMENTAL_ALTER_CONFIGS, k.top(k.INCREMENTAL_ALTER_CONFIGS), {
        "resources": [{"resource_type": rtype, "resource_name": name, "configs": [
            {"name": n, "config_operation": op, "value": v} for n, op, v in ops]}], "validate_only": validate},
            label=label, messages=messages)
    finally:
        if not validate:
            settled(run)


@scenario("configs/broker-with-synonyms")
def _(run):
    describe(run, k.CLUSTER, "1", BROKER_KEYS)


@scenario("configs/broker-errors")
def _(run):
    describe(run, k.CLUSTER, "7", ["num.partitions"], label="another broker id")
    describe(run, k.CLUSTER, "not-a-number", ["num.partitions"], label="a broker name that is not a number")
    describe(run, 99, "x", None, label="unknown resource type")


@scenario("configs/topic-unknown")
def _(run):
    describe(run, k.TOPIC, run.name("missing"), ["retention.ms"])


@scenario("configs/topic-synonyms")
def _(run):
    t = k.create_topic(run, configs={"retention.ms": "3600000", "cleanup.policy": "compact,delete"})
    describe(run, k.TOPIC, t, ["retention.ms", "cleanup.policy", "segment.bytes", "max.message.bytes",
                               "message.timestamp.type", "min.insync.replicas", "compression.type"])
    describe(run, k.TOPIC, t, ["retention.ms"], synonyms=False, label="without synonyms")
    describe(run, k.TOPIC, t, ["retention.ms", "no.such.config"], label="an unknown key among them")


@scenario("configs/incremental-list-operations")
def _(run):
    t = k.create_topic(run)
    alter(run, k.TOPIC, t, [("cleanup.policy", APPEND, "compact")], label="append to a list")
    describe(run, k.TOPIC, t, ["cleanup.policy"])
    alter(run, k.TOPIC, t, [("cleanup.policy", SUBTRACT, "delete")], label="subtract from a list")
    describe(run, k.TOPIC, t, ["cleanup.policy"])
    alter(run, k.TOPIC, t, [("retention.ms", APPEND, "5")], label="append to a non-list")
    alter(run, k.TOPIC, t, [("retention.ms", SET, "100000"), ("retention.ms", DELETE, None)],
          label="the same key twice")


@scenario("configs/incremental-set-and-delete")
def _(run):
    t = k.create_topic(run)
    alter(run, k.TOPIC, t, [("retention.ms", SET, "120000"), ("max.message.bytes", SET, "2000")])
    describe(run, k.TOPIC, t, ["retention.ms", "max.message.bytes"])
    alter(run, k.TOPIC, t, [("retention.ms", DELETE, None)], label="delete back to the default")
    describe(run, k.TOPIC, t, ["retention.ms", "max.message.bytes"])


@scenario("configs/validation-failures")
def _(run):
    t = k.create_topic(run)
    alter(run, k.TOPIC, t, [("retention.ms", SET, "soon")], label="not a number")
    alter(run, k.TOPIC, t, [("no.such.config", SET, "1")], label="unknown key")
    alter(run, k.TOPIC, t, [("cleanup.policy", SET, "sometimes")], label="not in the choices")
    alter(run, k.TOPIC, t, [("min.cleanable.dirty.ratio", SET, "2.5")], label="out of range")
    alter(run, k.TOPIC, t, [("retention.ms", SET, "1000")], validate=True, label="validate only")
    alter(run, k.TOPIC, run.name("missing"), [("retention.ms", SET, "1000")], label="unknown topic")
    describe(run, k.TOPIC, t, ["retention.ms"])


@scenario("configs/legacy-alter-replaces-all")
def _(run):
    t = k.create_topic(run, configs={"retention.ms": "3600000"})
    run.call(k.ALTER_CONFIGS, k.top(k.ALTER_CONFIGS), {"resources": [{"resource_type": k.TOPIC, "resource_name": t,
                                                                      "configs": [{"name": "segment.ms", "value": "600000"}]}],
                                                       "validate_only": False})
    settled(run)
    describe(run, k.TOPIC, t, ["retention.ms", "segment.ms"])


@scenario("configs/broker-dynamic")
def _(run):
    alter(run, k.CLUSTER, "", [("log.cleaner.backoff.ms", SET, "200")], validate=True,
          label="cluster default, validate only")
    alter(run, k.CLUSTER, "1", [("num.partitions", SET, "3")], validate=True, label="a read-only broker config")
    alter(run, k.CLUSTER, "1", [("no.such.broker.config", SET, "3")], validate=True, label="unknown broker config")


@scenario("configs/group")
def _(run):
    g = run.name("g")
    alter(run, 32, g, [("consumer.session.timeout.ms", SET, "50000"), ("share.auto.offset.reset", SET, "earliest")])
    describe(run, 32, g, ["consumer.session.timeout.ms", "share.auto.offset.reset", "share.record.lock.duration.ms"])
    alter(run, 32, g, [("consumer.session.timeout.ms", SET, "1")], label="out of range")
    alter(run, 32, g, [("no.such.group.config", SET, "1")], label="unknown group config")


@scenario("quotas/errors-and-filters")
def _(run):
    user = [{"entity_type": "user", "entity_name": run.name("user")}]
    run.call(k.ALTER_CLIENT_QUOTAS, k.top(k.ALTER_CLIENT_QUOTAS), {"entries": [
        {"entity": user, "ops": [{"key": "no_such_quota", "value": 1.0, "remove": False}]}], "validate_only": False},
        label="unknown quota key")
    run.call(k.ALTER_CLIENT_QUOTAS, k.top(k.ALTER_CLIENT_QUOTAS), {"entries": [
        {"entity": [{"entity_type": "planet", "entity_name": "x"}],
         "ops": [{"key": "producer_byte_rate", "value": 1.0, "remove": False}]}], "validate_only": False},
        label="unknown entity type")
    run.call(k.DESCRIBE_CLIENT_QUOTAS, k.top(k.DESCRIBE_CLIENT_QUOTAS), {"components": [
        {"entity_type": "user", "match_type": 0, "match": run.name("nobody")}], "strict": True}, label="no match")


@scenario("scram/errors")
def _(run):
    run.call(k.ALTER_SCRAM, k.top(k.ALTER_SCRAM), {"deletions": [{"name": run.name("nobody"), "mechanism": 1}],
                                                   "upsertions": []}, label="delete a credential that does not exist")
    run.call(k.ALTER_SCRAM, k.top(k.ALTER_SCRAM), {"deletions": [], "upsertions": [{
        "name": run.name("u"), "mechanism": 1, "iterations": 10, "salt": b"salt", "salted_password": b"x" * 32}]},
        label="too few iterations")
    run.call(k.ALTER_SCRAM, k.top(k.ALTER_SCRAM), {"deletions": [], "upsertions": [{
        "name": run.name("u"), "mechanism": 9, "iterations": 4096, "salt": b"salt", "salted_password": b"x" * 32}]},
        label="unknown mechanism")
    run.call(k.DESCRIBE_SCRAM, k.top(k.DESCRIBE_SCRAM), {"users": [{"name": "alice"}, {"name": "alice"}]},
             label="the same user twice")


# --- ACLs under SASL -----------------------------------------------------------------------

def as_user(run, api, body, user="alice", label=None, version=None):
    return run.call(api, k.top(api) if version is None else version, body, conn=f"sasl-{user}", user=user,
                    label=label or f"{api.name} as {user}")


def grant(run, rtype, name, op, principal="User:alice", pattern=3):
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), {"creations": [{
        "resource_type": rtype, "resource_name": name, "resource_pattern_type": pattern, "principal": principal,
        "host": "*", "operation": op, "permission_type": 3}]}, label=f"grant {op} on {name}")
    flt = {"resource_type_filter": rtype, "resource_name_filter": name, "pattern_type_filter": pattern,
           "principal_filter": principal, "host_filter": None, "operation": op, "permission_type": 3}
    run.poll(lambda: run.call(k.DESCRIBE_ACLS, k.top(k.DESCRIBE_ACLS), flt, record=False),
             lambda r: bool(r.get("resources")))
    run.wait(0.3)  # the authorizer of a KRaft broker applies ACLs from the metadata log


@scenario("acl/refusals-without-acls")
def _(run):
    t = k.create_topic(run)
    as_user(run, k.METADATA, {"topics": [{"name": t, "topic_id": None}], "allow_auto_topic_creation": True,
                              "include_topic_authorized_operations": True}, label="metadata")
    as_user(run, k.PRODUCE, {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": t, "topic_id": k.NO_TOPIC_ID, "partition_data": [{"index": 0, "records": k.batch(1)}]}]},
        label="produce")
    as_user(run, k.CREATE_TOPICS, {"topics": [{"name": run.name("new"), "num_partitions": 1, "replication_factor": 1,
                                               "assignments": [], "configs": []}], "timeout_ms": 30000,
                                   "validate_only": False}, label="create topics")
    as_user(run, k.DESCRIBE_CONFIGS, {"resources": [{"resource_type": k.TOPIC, "resource_name": t,
                                                     "configuration_keys": ["retention.ms"]}],
                                      "include_synonyms": False, "include_documentation": False},
            label="describe configs")
    as_user(run, k.FIND_COORDINATOR, {"key": run.name("g"), "key_type": 0, "coordinator_keys": [run.name("g")]},
            label="find coordinator")
    as_user(run, k.INIT_PRODUCER_ID, {"transactional_id": run.name("txn"), "transaction_timeout_ms": 60000,
                                      "producer_id": -1, "producer_epoch": -1}, label="transactional init")
    as_user(run, k.INIT_PRODUCER_ID, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                      "producer_id": -1, "producer_epoch": -1}, label="idempotent init")
    as_user(run, k.CREATE_ACLS, {"creations": [{"resource_type": k.TOPIC, "resource_name": t,
                                                "resource_pattern_type": 3, "principal": "User:alice", "host": "*",
                                                "operation": 2, "permission_type": 3}]}, label="create acls")
    as_user(run, k.DESCRIBE_CLUSTER, {"include_cluster_authorized_operations": True, "endpoint_type": 1,
                                      "include_fenced_brokers": False}, label="describe cluster")
    as_user(run, k.LIST_GROUPS, {"states_filter": [], "types_filter": []}, label="list groups")
    as_user(run, k.DELETE_TOPICS, {"topics": [{"name": t, "topic_id": k.NO_TOPIC_ID}], "timeout_ms": 30000},
            label="delete topics")


@scenario("acl/read-granted-write-refused")
def _(run):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(2))
    grant(run, k.TOPIC, t, 3)  # READ
    as_user(run, k.METADATA, {"topics": [{"name": t, "topic_id": None}], "allow_auto_topic_creation": False,
                              "include_topic_authorized_operations": True}, label="metadata")
    as_user(run, k.LIST_OFFSETS, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": t, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}],
        "timeout_ms": 30000}, label="list offsets")
    as_user(run, k.PRODUCE, {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": t, "topic_id": k.NO_TOPIC_ID, "partition_data": [{"index": 0, "records": k.batch(1)}]}]},
        label="produce")
    as_user(run, k.OFFSET_COMMIT, {"group_id": run.name("g"), "generation_id_or_member_epoch": -1, "member_id": "",
                                   "group_instance_id": None, "retention_time_ms": -1, "topics": [
                                       {"name": t, "topic_id": k.NO_TOPIC_ID, "partitions": [
                                           {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                                            "committed_metadata": ""}]}]}, label="commit without group ACL")


@scenario("acl/group-granted")
def _(run):
    t = k.create_topic(run)
    grant(run, k.TOPIC, t, 3)
    grant(run, k.GROUP, run.name("g"), 3)
    as_user(run, k.OFFSET_COMMIT, {"group_id": run.name("g"), "generation_id_or_member_epoch": -1, "member_id": "",
                                   "group_instance_id": None, "retention_time_ms": -1, "topics": [
                                       {"name": t, "topic_id": k.NO_TOPIC_ID, "partitions": [
                                           {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                                            "committed_metadata": ""}]}]}, label="commit")
    as_user(run, k.OFFSET_FETCH, {"group_id": run.name("g"), "topics": None, "require_stable": False, "groups": [
        {"group_id": run.name("g"), "member_id": None, "member_epoch": -1, "topics": None}]}, label="fetch offsets")
    as_user(run, k.LIST_GROUPS, {"states_filter": [], "types_filter": []}, label="list groups")
    as_user(run, k.DESCRIBE_GROUPS, {"groups": [run.name("g"), run.name("other")],
                                     "include_authorized_operations": True}, label="describe groups")


@scenario("acl/prefixed-and-deny")
def _(run):
    t = k.create_topic(run, "orders")
    k.create_topic(run, "orders-secret")
    grant(run, k.TOPIC, run.name("orders"), 2, pattern=4)  # WRITE, PREFIXED
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), {"creations": [{
        "resource_type": k.TOPIC, "resource_name": run.name("orders-secret"), "resource_pattern_type": 3,
        "principal": "User:alice", "host": "*", "operation": 2, "permission_type": 2}]}, label="deny one topic")
    run.wait(0.5)
    for name in (t, run.name("orders-secret")):
        as_user(run, k.PRODUCE, {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": name, "topic_id": k.NO_TOPIC_ID, "partition_data": [{"index": 0, "records": k.batch(1)}]}]},
            label=f"produce to {name[6:]}")
    run.call(k.DESCRIBE_ACLS, k.top(k.DESCRIBE_ACLS), {
        "resource_type_filter": k.TOPIC, "resource_name_filter": run.name("orders-x"), "pattern_type_filter": 2,
        "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}, label="MATCH filter")
    run.call(k.DELETE_ACLS, k.top(k.DELETE_ACLS), {"filters": [{
        "resource_type_filter": k.TOPIC, "resource_name_filter": run.name("orders"), "pattern_type_filter": 1,
        "principal_filter": "User:alice", "host_filter": None, "operation": 1, "permission_type": 1}]},
        label="delete with ANY pattern")


@scenario("acl/invalid-bindings")
def _(run):
    for label, binding in (("resource type ANY", {"resource_type": 1, "pattern": 3, "principal": "User:x"}),
                           ("pattern MATCH", {"resource_type": k.TOPIC, "pattern": 2, "principal": "User:x"}),
                           ("principal without a type", {"resource_type": k.TOPIC, "pattern": 3, "principal": "x"}),
                           ("cluster with another name", {"resource_type": k.CLUSTER, "pattern": 3,
                                                          "principal": "User:x", "name": "other"})):
        run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), {"creations": [{
            "resource_type": binding["resource_type"], "resource_name": binding.get("name", run.name("acl")),
            "resource_pattern_type": binding["pattern"], "principal": binding["principal"], "host": "*",
            "operation": 2, "permission_type": 3}]}, label=label)


@scenario("acl/unknown-codes-and-token-acls")
def _(run):
    def creation(rt, pt, op, perm, name=None):
        return {"creations": [{"resource_type": rt, "resource_name": name or run.name("acl"),
                               "resource_pattern_type": pt, "principal": "User:x", "host": "*",
                               "operation": op, "permission_type": perm}]}
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), creation(0, 3, 2, 3), label="resource type UNKNOWN")
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), creation(k.TOPIC, 3, 1, 3), label="operation ANY")
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), creation(k.TOPIC, 3, 2, 1), label="permission ANY")
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), creation(k.TOPIC, 3, 99, 3), label="operation 99")
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), creation(6, 3, 8, 3), label="a delegation-token ACL")
    run.call(k.DELETE_ACLS, k.top(k.DELETE_ACLS), {"filters": [{
        "resource_type_filter": 6, "resource_name_filter": run.name("acl"), "pattern_type_filter": 3,
        "principal_filter": "User:x", "host_filter": None, "operation": 1, "permission_type": 1}]},
        label="delete it")
    run.call(k.DESCRIBE_ACLS, k.top(k.DESCRIBE_ACLS), {
        "resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 0, "principal_filter": None,
        "host_filter": None, "operation": 1, "permission_type": 1}, label="describe with pattern UNKNOWN")


@scenario("sasl/failures")
def _(run):
    host, port = run.ref.sasl_bootstrap.rsplit(":", 1)
    run.conns["s1"] = BlockingConnection(host, int(port), client_id="conformance")
    run.call(k.SASL_HANDSHAKE, 1, {"mechanism": "GSSAPI"}, conn="s1", label="unsupported mechanism")
    run.conns["s2"] = BlockingConnection(host, int(port), client_id="conformance")
    run.call(k.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, conn="s2")
    run.call(k.SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0wrong"}, conn="s2", label="wrong password")
    run.conns["s3"] = BlockingConnection(host, int(port), client_id="conformance")
    run.call(k.API_VERSIONS, 3, {"client_software_name": "c", "client_software_version": "1"}, conn="s3",
             label="ApiVersions before authenticating")
    run.call(k.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                              "include_topic_authorized_operations": False}, conn="s3",
             label="Metadata before authenticating")
