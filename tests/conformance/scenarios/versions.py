"""Every API kipper advertises, at its lowest and highest supported version and at its first
flexible version: a representative request that succeeds, after whatever setup it needs.
The setup requests are compared too (at their highest versions)."""

from __future__ import annotations

import hashlib
import hmac

from kipper.broker.composition import CONTROLLER_ONLY_APIS
from kipper.protocol.messages import APIS
from tests.conformance.scenarios import register
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import admin_edges, cluster_admin, features, quotas
from tests.conformance.scenarios.streams import probe_describe, probe_heartbeat
from tests.conformance.scenarios.share_probes import (
    _alter_share_offsets, _delete_share_offsets, _describe_share_offsets, _share_acknowledge, _share_describe,
    _share_fetch, _share_heartbeat)


def _produce(run, v):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(3), version=v)
    k.produce(run, t, k.batch(2, start=3), version=v)


def _fetch(run, v):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(3))
    k.fetch(run, t, 0, version=v)
    k.fetch(run, t, 2, version=v, label="fetch from the middle of a batch")


def _list_offsets(run, v):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(3))
    for ts in (-1, -2, k.TS + 1):
        k.list_offsets(run, t, ts, version=v, label=f"list offsets {ts}")


def _metadata(run, v):
    t = k.create_topic(run, partitions=2)
    body = {"topics": [{"name": t, "topic_id": None}], "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": v >= 8, "include_topic_authorized_operations": v >= 8}
    run.call(k.METADATA, v, body)


def _offset_commit(run, v):
    t = k.create_topic(run)
    k.commit(run, run.name("g"), t, 5, version=v)
    k.offset_fetch(run, run.name("g"), t)


def _offset_fetch(run, v):
    t = k.create_topic(run)
    k.commit(run, run.name("g"), t, 7)
    k.offset_fetch(run, run.name("g"), t, version=v)
    k.offset_fetch(run, run.name("g"), t, partitions=(0, 1), version=v, label="offset fetch, one unknown partition")


def _find_coordinator(run, v):
    k.find_coordinator(run, run.name("g"), version=v)
    if v >= 1:
        k.find_coordinator(run, run.name("txn"), 1, version=v, label="find transaction coordinator")


def _join_group(run, v):
    t = k.create_topic(run)
    resp = k.join_member(run, run.name("g"), [t], version=v)
    k.sync(run, run.name("g"), resp.get("generation_id", -1), resp.get("member_id", ""),
           {resp.get("member_id", ""): k.assignment({t: [0]})})


def _heartbeat(run, v):
    t = k.create_topic(run)
    member, gen = k.join_and_sync(run, run.name("g"), t)
    k.heartbeat(run, run.name("g"), gen, member, version=v)


def _leave_group(run, v):
    t = k.create_topic(run)
    member, gen = k.join_and_sync(run, run.name("g"), t)
    run.call(k.LEAVE_GROUP, v, {"group_id": run.name("g"), "member_id": member,
                                "members": [{"member_id": member, "group_instance_id": None, "reason": "done"}]})
    k.offset_fetch(run, run.name("g"), t, label="offsets after leaving")


def _sync_group(run, v):
    t = k.create_topic(run)
    resp = k.join_member(run, run.name("g"), [t])
    member = resp.get("member_id", "")
    k.sync(run, run.name("g"), resp.get("generation_id", -1), member, {member: k.assignment({t: [0]})}, version=v)


def _describe_groups(run, v):
    t = k.create_topic(run)
    k.join_and_sync(run, run.name("g"), t)
    run.call(k.DESCRIBE_GROUPS, v, {"groups": [run.name("g"), run.name("nogroup")],
                                    "include_authorized_operations": v >= 3})


def _list_groups(run, v):
    t = k.create_topic(run)
    k.join_and_sync(run, run.name("g"), t)
    k.commit(run, run.name("simple"), t, 1)
    run.call(k.LIST_GROUPS, v, {"states_filter": [], "types_filter": []})


def _sasl_handshake(run, v):
    run.conn("sasl", user=None)  # PLAINTEXT: Kafka answers a handshake there too
    run.call(k.SASL_HANDSHAKE, v, {"mechanism": "SCRAM-SHA-256"}, conn="sasl", label="handshake on PLAINTEXT")


def _api_versions(run, v):
    run.call(k.API_VERSIONS, v, {"client_software_name": "conformance", "client_software_version": "1.0"})


def _create_topics(run, v):
    name = run.name("t")
    body = {"topics": [{"name": name, "num_partitions": 2, "replication_factor": 1, "assignments": [],
                        "configs": [{"name": "retention.ms", "value": "3600000"}]}],
            "timeout_ms": 30000, "validate_only": False}
    run.call(k.CREATE_TOPICS, v, body)
    run.call(k.CREATE_TOPICS, v, body, label="create the same topic again")
    body["topics"][0]["name"] = run.name("checked")
    run.call(k.CREATE_TOPICS, v, dict(body, validate_only=True), label="validate only")


def _delete_topics(run, v):
    t = k.create_topic(run)
    run.call(k.DELETE_TOPICS, v, {"topic_names": [t, run.name("missing")], "timeout_ms": 30000,
                                  "topics": [{"name": t, "topic_id": k.NO_TOPIC_ID},
                                             {"name": run.name("missing"), "topic_id": k.NO_TOPIC_ID}]})


def _delete_records(run, v):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(5))
    run.call(k.DELETE_RECORDS, v, {"topics": [{"name": t, "partitions": [{"partition_index": 0, "offset": 2}]}],
                                   "timeout_ms": 30000})
    k.list_offsets(run, t, -2, label="earliest after delete records")


def _init_producer_id(run, v):
    k.init_producer_id(run, None, version=v)
    k.init_producer_id(run, run.name("txn"), version=v, label="init transactional producer id")


def _txn(run):
    t = k.create_topic(run)
    txn = run.name("txn")
    resp = k.init_producer_id(run, txn)
    return t, txn, resp.get("producer_id", -1), resp.get("producer_epoch", -1)


def _add_partitions(run, v):
    t, txn, pid, epoch = _txn(run)
    if v >= 4:  # the brokers' form: verify, add, verify again
        k.add_partitions(run, txn, pid, epoch, t, version=v, verify_only=True, label="verify only")
    k.add_partitions(run, txn, pid, epoch, t, version=v)
    if v >= 4:
        k.add_partitions(run, txn, pid, epoch, t, version=v, verify_only=True, label="verify again")
    k.produce(run, t, k.batch(2, producer_id=pid, producer_epoch=epoch, base_sequence=0, transactional=True),
              transactional_id=txn)
    k.end_txn(run, txn, pid, epoch, True)


def _add_offsets(run, v):
    t, txn, pid, epoch = _txn(run)
    run.call(k.ADD_OFFSETS_TO_TXN, v, {"transactional_id": txn, "producer_id": pid, "producer_epoch": epoch,
                                       "group_id": run.name("g")})
    k.end_txn(run, txn, pid, epoch, False)


def _end_txn(run, v):
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    k.produce(run, t, k.batch(1, producer_id=pid, producer_epoch=epoch, base_sequence=0, transactional=True),
              transactional_id=txn)
    k.end_txn(run, txn, pid, epoch, True, version=v)
    wait_txn_state(run, txn, "CompleteCommit")  # Kafka writes the markers after answering
    k.fetch(run, t, 0, isolation=1, label="read_committed after commit")


def _write_txn_markers(run, v):
    t = k.create_topic(run)
    resp = k.init_producer_id(run, None)
    pid, epoch = resp.get("producer_id", -1), resp.get("producer_epoch", -1)
    run.call(k.WRITE_TXN_MARKERS, v, {"markers": [{
        "producer_id": pid, "producer_epoch": epoch, "transaction_result": False,
        "topics": [{"name": t, "partition_indexes": [0]}], "coordinator_epoch": 0, "transaction_version": 0}]})


def _txn_offset_commit(run, v):
    t, txn, pid, epoch = _txn(run)
    run.call(k.ADD_OFFSETS_TO_TXN, k.top(k.ADD_OFFSETS_TO_TXN), {
        "transactional_id": txn, "producer_id": pid, "producer_epoch": epoch, "group_id": run.name("g")})
    run.call(k.TXN_OFFSET_COMMIT, v, {
        "transactional_id": txn, "group_id": run.name("g"), "producer_id": pid, "producer_epoch": epoch,
        "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": t, "topic_id": k.topic_id(run, t) if v >= 6 else k.NO_TOPIC_ID, "partitions": [
            {"partition_index": 0, "committed_offset": 3, "committed_leader_epoch": -1, "committed_metadata": "m"}]}]})
    k.end_txn(run, txn, pid, epoch, True)
    wait_txn_state(run, txn, "CompleteCommit")
    k.offset_fetch(run, run.name("g"), t, label="offsets after the commit")


def wait_txn_state(run, txn: str, state: str) -> None:
    run.poll(lambda: run.call(k.DESCRIBE_TRANSACTIONS, k.top(k.DESCRIBE_TRANSACTIONS), {"transactional_ids": [txn]},
                              record=False),
             lambda r: (r.get("transaction_states") or [{}])[0].get("transaction_state") == state)


def _acl(run, op=2, host="*"):
    return {"resource_type": k.TOPIC, "resource_name": run.name("acl"), "resource_pattern_type": 3,
            "principal": "User:bob", "host": host, "operation": op, "permission_type": 3}


def _acl_filter(run):
    return {"resource_type_filter": k.TOPIC, "resource_name_filter": run.name("acl"), "pattern_type_filter": 3,
            "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}


def _settle_acls(run, present: bool) -> None:
    """Kafka applies ACL changes from its metadata log a moment after answering."""
    run.poll(lambda: run.call(k.DESCRIBE_ACLS, k.top(k.DESCRIBE_ACLS), _acl_filter(run), record=False),
             lambda r: bool(r.get("resources")) == present)


def _describe_acls(run, v):
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), {"creations": [_acl(run), _acl(run, 3)]})
    _settle_acls(run, True)
    run.call(k.DESCRIBE_ACLS, v, _acl_filter(run))


def _create_acls(run, v):
    run.call(k.CREATE_ACLS, v, {"creations": [_acl(run)]})
    _settle_acls(run, True)
    run.call(k.DESCRIBE_ACLS, k.top(k.DESCRIBE_ACLS), _acl_filter(run))


def _delete_acls(run, v):
    run.call(k.CREATE_ACLS, k.top(k.CREATE_ACLS), {"creations": [_acl(run), _acl(run, 4)]})
    _settle_acls(run, True)
    run.call(k.DELETE_ACLS, v, {"filters": [_acl_filter(run)]})
    _settle_acls(run, False)
    run.call(k.DESCRIBE_ACLS, k.top(k.DESCRIBE_ACLS), _acl_filter(run))


def _describe_configs(run, v):
    t = k.create_topic(run, configs={"retention.ms": "3600000"})
    run.call(k.DESCRIBE_CONFIGS, v, {"resources": [{"resource_type": k.TOPIC, "resource_name": t,
                                                    "configuration_keys": ["retention.ms", "cleanup.policy"]}],
                                     "include_synonyms": True, "include_documentation": False})


def _alter_configs(run, v):
    t = k.create_topic(run)
    run.call(k.ALTER_CONFIGS, v, {"resources": [{"resource_type": k.TOPIC, "resource_name": t, "configs": [
        {"name": "retention.ms", "value": "7200000"}]}], "validate_only": False})
    run.wait(0.5)  # Kafka applies it from the metadata log, a moment after answering
    run.call(k.DESCRIBE_CONFIGS, k.top(k.DESCRIBE_CONFIGS), {"resources": [
        {"resource_type": k.TOPIC, "resource_name": t, "configuration_keys": ["retention.ms"]}],
        "include_synonyms": False, "include_documentation": False})


def _describe_log_dirs(run, v):
    t = k.create_topic(run)
    k.produce(run, t, k.batch(2))
    run.call(k.DESCRIBE_LOG_DIRS, v, {"topics": [{"topic": t, "partitions": [0]}]})


def _sasl_authenticate(run, v):
    from kipper.client.blocking import BlockingConnection

    host, port = run.ref.sasl_bootstrap.rsplit(":", 1)
    run.conns["sasl"] = BlockingConnection(host, int(port), client_id="conformance")
    run.call(k.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, conn="sasl")
    run.call(k.SASL_AUTHENTICATE, v, {"auth_bytes": b"\0alice\0alice-secret"}, conn="sasl")


def _create_partitions(run, v):
    t = k.create_topic(run)
    run.call(k.CREATE_PARTITIONS, v, {"topics": [{"name": t, "count": 3, "assignments": None}],
                                      "timeout_ms": 30000, "validate_only": False})
    k.wait_for_leaders(run, t, 3)
    k.metadata(run, [t], label="metadata after growing")


def _delete_groups(run, v):
    t = k.create_topic(run)
    k.commit(run, run.name("g"), t, 1)
    run.call(k.DELETE_GROUPS, v, {"groups_names": [run.name("g"), run.name("nogroup")]})


def _incremental_alter_configs(run, v):
    t = k.create_topic(run)
    run.call(k.INCREMENTAL_ALTER_CONFIGS, v, {"resources": [{"resource_type": k.TOPIC, "resource_name": t, "configs": [
        {"name": "retention.ms", "config_operation": 0, "value": "7200000"},
        {"name": "cleanup.policy", "config_operation": 2, "value": "compact"}]}], "validate_only": False})
    run.wait(0.5)  # Kafka applies it from the metadata log, a moment after answering
    run.call(k.DESCRIBE_CONFIGS, k.top(k.DESCRIBE_CONFIGS), {"resources": [
        {"resource_type": k.TOPIC, "resource_name": t, "configuration_keys": ["retention.ms", "cleanup.policy"]}],
        "include_synonyms": False, "include_documentation": False})


def _offset_delete(run, v):
    t = k.create_topic(run)
    k.commit(run, run.name("g"), t, 4)
    run.call(k.OFFSET_DELETE, v, {"group_id": run.name("g"), "topics": [
        {"name": t, "partitions": [{"partition_index": 0}]}]})
    k.offset_fetch(run, run.name("g"), t, label="offsets after delete")


def _describe_scram(run, v):
    run.call(k.DESCRIBE_SCRAM, v, {"users": [{"name": "alice"}, {"name": run.name("nobody")}]})


def salted_password(password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)


def _alter_scram(run, v):
    salt = hmac.new(b"k", run.token.encode(), "sha256").digest()[:16]
    run.call(k.ALTER_SCRAM, v, {"deletions": [], "upsertions": [{
        "name": run.name("user"), "mechanism": 1, "iterations": 4096, "salt": salt,
        "salted_password": salted_password("pw", salt, 4096)}]})
    body = {"users": [{"name": run.name("user")}]}
    run.poll(lambda: run.call(k.DESCRIBE_SCRAM, k.top(k.DESCRIBE_SCRAM), body, record=False),
             lambda r: (r.get("results") or [{}])[0].get("error_code") == 0)  # Kafka: the metadata log
    run.call(k.DESCRIBE_SCRAM, k.top(k.DESCRIBE_SCRAM), body)


def _describe_cluster(run, v):
    run.call(k.DESCRIBE_CLUSTER, v, {"include_cluster_authorized_operations": True, "endpoint_type": 1,
                                     "include_fenced_brokers": False})


def _describe_topic_partitions(run, v):
    # (issue 30: Kafka's Admin describeTopics asks this first) a page, its cursor, an unknown name
    t = k.create_topic(run, partitions=3)
    run.call(APIS[75], v, {"topics": [{"name": t}, {"name": run.name("none")}], "response_partition_limit": 2,
                           "cursor": None})
    run.call(APIS[75], v, {"topics": [{"name": t}], "response_partition_limit": 2000,
                           "cursor": {"topic_name": t, "partition_index": 2}}, label="from the cursor")


def _offset_for_leader_epoch(run, v):
    # (issue 39) one node leads at epoch 0: epoch 0 ends at the log end, a later one is unknown
    t = k.create_topic(run)
    k.produce(run, t, k.batch(3))
    body = {"replica_id": -1, "topics": [{"topic": t, "partitions": [
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0},
        {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 3}]}]}
    run.call(APIS[23], v, body)
    run.call(APIS[23], v, {"replica_id": -1, "topics": [{"topic": t, "partitions": [
        {"partition": 0, "current_leader_epoch": 2, "leader_epoch": 0}, {"partition": 9, "current_leader_epoch": -1,
                                                                          "leader_epoch": 0}]}]},
             label="an epoch ahead, and an unknown partition")


def _describe_producers(run, v):
    t = k.create_topic(run)
    resp = k.init_producer_id(run, None)
    pid, epoch = resp.get("producer_id", -1), resp.get("producer_epoch", -1)
    k.produce(run, t, k.batch(3, producer_id=pid, producer_epoch=epoch, base_sequence=0))
    run.call(k.DESCRIBE_PRODUCERS, v, {"topics": [{"name": t, "partition_indexes": [0, 5]}]})


def _describe_transactions(run, v):
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    run.call(k.DESCRIBE_TRANSACTIONS, v, {"transactional_ids": [txn, run.name("none")]})
    k.end_txn(run, txn, pid, epoch, False)


def _list_transactions(run, v):
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    run.call(k.LIST_TRANSACTIONS, v, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                                      "transactional_id_pattern": None})
    k.end_txn(run, txn, pid, epoch, False)


def _consumer_heartbeat(run, v):
    t = k.create_topic(run, partitions=2)
    body = {"group_id": run.name("g"), "member_id": run.name("m0"), "member_epoch": 0, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": [t],
            "subscribed_topic_regex": None, "server_assignor": "uniform", "topic_partitions": []}
    resp = run.call(k.CONSUMER_GROUP_HEARTBEAT, v, body)
    body.update(member_epoch=resp.get("member_epoch", -1), subscribed_topic_names=None, server_assignor=None,
                rebalance_timeout_ms=-1, topic_partitions=None)
    body["topic_partitions"] = [{"topic_id": k.topic_id(run, t), "partitions": [0, 1]}]
    run.call(k.CONSUMER_GROUP_HEARTBEAT, v, body, label="heartbeat with the assignment")
    run.call(k.CONSUMER_GROUP_HEARTBEAT, v, dict(body, member_epoch=-1), label="leave")


def _consumer_describe(run, v):
    t = k.create_topic(run)
    run.call(k.CONSUMER_GROUP_HEARTBEAT, k.top(k.CONSUMER_GROUP_HEARTBEAT), {
        "group_id": run.name("g"), "member_id": run.name("m0"), "member_epoch": 0, "instance_id": None,
        "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": [t],
        "subscribed_topic_regex": None, "server_assignor": "range", "topic_partitions": []})
    run.call(k.CONSUMER_GROUP_DESCRIBE, v, {"group_ids": [run.name("g"), run.name("nogroup")],
                                            "include_authorized_operations": True})


PROBES = {
    0: _produce, 1: _fetch, 2: _list_offsets, 3: _metadata, 8: _offset_commit, 9: _offset_fetch,
    10: _find_coordinator, 11: _join_group, 12: _heartbeat, 13: _leave_group, 14: _sync_group,
    15: _describe_groups, 16: _list_groups, 17: _sasl_handshake, 18: _api_versions, 19: _create_topics,
    20: _delete_topics, 21: _delete_records, 22: _init_producer_id, 23: _offset_for_leader_epoch,
    24: _add_partitions, 25: _add_offsets,
    26: _end_txn, 27: _write_txn_markers, 28: _txn_offset_commit, 29: _describe_acls, 30: _create_acls,
    31: _delete_acls, 32: _describe_configs, 33: _alter_configs, 35: _describe_log_dirs, 36: _sasl_authenticate,
    37: _create_partitions, 42: _delete_groups, 43: admin_edges.elect_leaders_at,
    44: _incremental_alter_configs, 47: _offset_delete,
    48: quotas.describe_at, 49: quotas.alter_at, 50: _describe_scram, 51: _alter_scram,
    55: admin_edges.describe_quorum_at,
    60: _describe_cluster, 61: _describe_producers, 65: _describe_transactions, 66: _list_transactions,
    68: _consumer_heartbeat, 69: _consumer_describe, 75: _describe_topic_partitions, 76: _share_heartbeat,
    77: _share_describe, 78: _share_fetch, 79: _share_acknowledge, 90: _describe_share_offsets,
    88: probe_heartbeat, 89: probe_describe, 91: _alter_share_offsets, 92: _delete_share_offsets,
    **features.PROBES, **cluster_admin.PROBES,
}


# versions between the ends where a field or a behaviour changed (topic ids, KIP-320 epochs,
# static membership, KIP-848 commits...), probed too
MIDDLE = {0: (7, 8), 1: (7, 11, 13, 15), 2: (4, 7, 8), 3: (4, 8, 10), 8: (6, 7), 9: (7, 8), 10: (4,),
          11: (4, 5, 7), 19: (4,), 14: (3,), 13: (3,)}


# the APIs only a cluster's nodes serve (docs/CLUSTER.md); a one-node broker advertises none
CLUSTER_ONLY = CONTROLLER_ONLY_APIS


def versions_to_probe(api) -> list[int]:
    wanted = {api.min_version, api.max_version, *MIDDLE.get(api.key, ())}
    flexible = api.flexible_range.lo
    if api.flexible_range.lo <= api.flexible_range.hi and api.min_version <= flexible <= api.max_version:
        wanted.add(flexible)
    return sorted(wanted)


def _bind(probe, version):
    return lambda run: probe(run, version)


for _key, _api in sorted(APIS.items()):
    if not _api.advertise or _key in CLUSTER_ONLY:  # (a cluster's: tests/conformance/test_cluster_conformance.py)
        continue
    if _key not in PROBES:
        raise LookupError(f"kipper advertises {_api.name} but no version probe covers it")
    for _v in versions_to_probe(_api):
        register(f"versions/{_api.name}/v{_v}", _bind(PROBES[_key], _v))
