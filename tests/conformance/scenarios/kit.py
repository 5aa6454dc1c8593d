"""Steps scenarios share: topics that are ready to use, record batches, classic group
membership, producer ids, share-group members. Each step sends recorded requests unless
it waits on the broker (readiness polls are not compared: their count is timing)."""

from __future__ import annotations

import struct
import uuid

from kipper.protocol import records
from kipper.protocol.messages import APIS

PRODUCE, FETCH, LIST_OFFSETS, METADATA = APIS[0], APIS[1], APIS[2], APIS[3]
OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR = APIS[8], APIS[9], APIS[10]
JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = APIS[11], APIS[12], APIS[13], APIS[14]
DESCRIBE_GROUPS, LIST_GROUPS, SASL_HANDSHAKE, API_VERSIONS = APIS[15], APIS[16], APIS[17], APIS[18]
CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS, INIT_PRODUCER_ID = APIS[19], APIS[20], APIS[21], APIS[22]
ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN, WRITE_TXN_MARKERS = APIS[24], APIS[25], APIS[26], APIS[27]
TXN_OFFSET_COMMIT, DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = APIS[28], APIS[29], APIS[30], APIS[31]
DESCRIBE_CONFIGS, ALTER_CONFIGS, DESCRIBE_LOG_DIRS, SASL_AUTHENTICATE = APIS[32], APIS[33], APIS[35], APIS[36]
CREATE_PARTITIONS, DELETE_GROUPS, INCREMENTAL_ALTER_CONFIGS, OFFSET_DELETE = APIS[37], APIS[42], APIS[44], APIS[47]
DESCRIBE_CLIENT_QUOTAS, ALTER_CLIENT_QUOTAS = APIS[48], APIS[49]
DESCRIBE_SCRAM, ALTER_SCRAM, DESCRIBE_CLUSTER, DESCRIBE_PRODUCERS = APIS[50], APIS[51], APIS[60], APIS[61]
DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = APIS[65], APIS[66]
CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE = APIS[68], APIS[69]
SHARE_GROUP_HEARTBEAT, SHARE_GROUP_DESCRIBE, SHARE_FETCH, SHARE_ACKNOWLEDGE = APIS[76], APIS[77], APIS[78], APIS[79]
DESCRIBE_SHARE_GROUP_OFFSETS, ALTER_SHARE_GROUP_OFFSETS = APIS[90], APIS[91]
DELETE_SHARE_GROUP_OFFSETS = APIS[92]

TS = 1_700_000_000_000  # record timestamps are the scenario's, never the clock's
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, USER = 2, 3, 4, 5, 6  # ACL/config resource types
NO_TOPIC_ID = uuid.UUID(int=0)


def top(api) -> int:
    return api.max_version


def records_of(n: int = 1, *, start: int = 0, key: str | None = "k", ts: int = TS) -> list:
    return [((f"{key}{start + i}".encode() if key is not None else None), f"v{start + i}".encode(), ts + start + i)
            for i in range(n)]


def batch(n: int = 1, *, start: int = 0, producer_id: int = -1, producer_epoch: int = -1,
          base_sequence: int = -1, transactional: bool = False, key: str | None = "k",
          compression_type: int = 0, recs: list | None = None) -> bytes:
    return records.build_batch(recs or records_of(n, start=start, key=key), producer_id=producer_id,
                               producer_epoch=producer_epoch, base_sequence=base_sequence,
                               transactional=transactional, compression_type=compression_type)


def create_topic(run, suffix: str = "t", partitions: int = 1, configs: dict | None = None,
                 *, version: int | None = None, label: str = "create topic") -> str:
    """Creates ``token-suffix`` and waits until it has leaders (Kafka's metadata catches up
    a moment after CreateTopics answers). Returns the name; the id is in run.state."""
    name = run.name(suffix)
    v = top(CREATE_TOPICS) if version is None else version
    resp = run.call(CREATE_TOPICS, v, {
        "topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
                    "configs": [{"name": k, "value": str(val)} for k, val in (configs or {}).items()]}],
        "timeout_ms": 30000, "validate_only": False}, label=label)
    wait_for_leaders(run, name, partitions)
    return name


def metadata(run, names, *, record: bool = True, version: int | None = None, label: str = "metadata"):
    v = top(METADATA) if version is None else version
    return run.call(METADATA, v, {"topics": [{"name": n, "topic_id": None} for n in names],
                                  "allow_auto_topic_creation": False,
                                  "include_topic_authorized_operations": False}, record=record, label=label)


def wait_for_leaders(run, name: str, partitions: int) -> None:
    def ready(resp):
        try:
            topic = resp["topics"][0]
            return (topic["error_code"] == 0 and len(topic["partitions"]) >= partitions
                    and all(p["leader_id"] >= 0 for p in topic["partitions"]))
        except (KeyError, IndexError, TypeError):
            return False
    resp = run.poll(lambda: metadata(run, [name], record=False), ready, timeout=20)
    if ready(resp):
        run.state.setdefault("topic_ids", {})[name] = uuid.UUID(resp["topics"][0]["topic_id"])
    # a leader in the metadata can precede the partition being served: ask the partitions too
    for p in range(partitions):
        run.poll(lambda p=p: run.call(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": name, "partitions": [{"partition_index": p, "current_leader_epoch": -1, "timestamp": -1}]}]},
            record=False), lambda r: _offsets_ok(r), timeout=20)
    await_the_group_coordinator(run, name)


def await_the_group_coordinator(run, name: str) -> None:
    """Kafka's group coordinator learns of a new topic a moment after the broker serves it
    (the metadata image reaches it as an event on the coordinator's own loop), and a group
    request in that moment finds the topic missing on Kafka alone: a consumer heartbeat with
    no assignment, a streams topology missing its source, share-group offsets of an unknown
    topic. The coordinator answers DescribeShareGroupOffsets from that image (the zero topic
    id until it knows the topic), so one for a group nobody uses is asked, unrecorded, until
    it names the topic's id (or answers with an error that says there is nothing to wait for)."""
    ask = {"groups": [{"group_id": run.name("coordinator-probe"),
                       "topics": [{"topic_name": name, "partitions": [0]}]}]}
    run.poll(lambda: run.call(DESCRIBE_SHARE_GROUP_OFFSETS, 1, ask, record=False), _coordinator_knows, timeout=10)


def _coordinator_knows(resp) -> bool:
    try:
        group = resp["groups"][0]
        return group["error_code"] != 0 or uuid.UUID(str(group["topics"][0]["topic_id"])).int != 0
    except (KeyError, IndexError, TypeError, ValueError):
        return True  # an answer of another shape: nothing this wait can learn from it


def _offsets_ok(resp) -> bool:
    try:
        return resp["topics"][0]["partitions"][0]["error_code"] == 0
    except (KeyError, IndexError, TypeError):
        return False


def topic_id(run, name: str) -> uuid.UUID:
    ids = run.state.setdefault("topic_ids", {})
    if name not in ids:
        resp = metadata(run, [name], record=False)
        ids[name] = uuid.UUID(resp["topics"][0]["topic_id"])
    return ids[name]


def produce(run, topic: str, data: bytes, *, partition: int = 0, version: int | None = None, acks: int = -1,
            transactional_id: str | None = None, label: str = "produce", conn: str = "main"):
    v = top(PRODUCE) if version is None else version
    return run.call(PRODUCE, v, {
        "transactional_id": transactional_id, "acks": acks, "timeout_ms": 30000,
        "topic_data": [{"name": topic, "topic_id": NO_TOPIC_ID,
                        "partition_data": [{"index": partition, "records": data}]}]}, label=label, conn=conn)


def fetch(run, topic: str, offset: int = 0, *, partition: int = 0, version: int | None = None,
          isolation: int = 0, max_wait_ms: int = 50, max_bytes: int = 1 << 20, leader_epoch: int = -1,
          label: str = "fetch", record: bool = True):
    v = top(FETCH) if version is None else version
    return run.call(FETCH, v, {
        "cluster_id": None, "replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1,
        "max_bytes": max_bytes, "isolation_level": isolation, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": topic, "topic_id": topic_id(run, topic) if v >= 13 else NO_TOPIC_ID,
                    "partitions": [{"partition": partition, "current_leader_epoch": leader_epoch,
                                    "fetch_offset": offset, "last_fetched_epoch": -1, "log_start_offset": -1,
                                    "partition_max_bytes": max_bytes}]}],
        "forgotten_topics_data": [], "rack_id": ""}, label=label, record=record)


def list_offsets(run, topic: str, timestamp: int, *, partition: int = 0, version: int | None = None,
                 isolation: int = 0, leader_epoch: int = -1, label: str = "list offsets"):
    v = top(LIST_OFFSETS) if version is None else version
    return run.call(LIST_OFFSETS, v, {
        "replica_id": -1, "isolation_level": isolation,
        "topics": [{"name": topic, "partitions": [{"partition_index": partition, "current_leader_epoch": leader_epoch,
                                                   "timestamp": timestamp}]}],
        "timeout_ms": 30000}, label=label)


def find_coordinator(run, key: str, key_type: int = 0, *, version: int | None = None, label="find coordinator"):
    v = top(FIND_COORDINATOR) if version is None else version
    return run.call(FIND_COORDINATOR, v, {"key": key, "key_type": key_type, "coordinator_keys": [key]}, label=label)


# --- classic groups ---------------------------------------------------------------------

def subscription(topics: list[str]) -> bytes:
    """ConsumerProtocolSubscription v0, as Kafka's consumers write it."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def assignment(parts: dict[str, list[int]]) -> bytes:
    out = struct.pack(">hi", 0, len(parts))
    for t, ps in parts.items():
        out += struct.pack(">h", len(t)) + t.encode() + struct.pack(">i", len(ps))
        out += b"".join(struct.pack(">i", p) for p in ps)
    return out + struct.pack(">i", -1)


def join(run, group: str, topics: list[str], *, member_id: str = "", version: int | None = None,
         instance_id: str | None = None, session_ms: int = 30000, rebalance_ms: int = 30000,
         label: str = "join group", conn: str = "main", protocol: str = "range"):
    v = top(JOIN_GROUP) if version is None else version
    return run.call(JOIN_GROUP, v, {
        "group_id": group, "session_timeout_ms": session_ms, "rebalance_timeout_ms": rebalance_ms,
        "member_id": member_id, "group_instance_id": instance_id, "protocol_type": "consumer",
        "protocols": [{"name": protocol, "metadata": subscription(topics)}], "reason": None},
        label=label, conn=conn)


def join_member(run, group: str, topics: list[str], *, version: int | None = None,
                instance_id: str | None = None, conn: str = "main", **kw) -> dict:
    """JoinGroup, and again with the member id when v4+ asks for one (MEMBER_ID_REQUIRED)."""
    resp = join(run, group, topics, version=version, instance_id=instance_id, conn=conn, **kw)
    if resp.get("error_code") == 79:
        resp = join(run, group, topics, member_id=resp["member_id"], version=version,
                    instance_id=instance_id, conn=conn, label="join group again", **kw)
    return resp


def sync(run, group: str, generation: int, member_id: str, assignments: dict | None = None, *,
         version: int | None = None, instance_id: str | None = None, conn: str = "main", label="sync group"):
    v = top(SYNC_GROUP) if version is None else version
    return run.call(SYNC_GROUP, v, {
        "group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance_id,
        "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]},
        label=label, conn=conn)


def join_and_sync(run, group: str, topic: str, **kw) -> tuple[str, int]:
    resp = join_member(run, group, [topic], **kw)
    member, gen = resp.get("member_id", ""), resp.get("generation_id", -1)
    sync(run, group, gen, member, {member: assignment({topic: [0]})},
         instance_id=kw.get("instance_id"), conn=kw.get("conn", "main"))
    return member, gen


def heartbeat(run, group: str, generation: int, member_id: str, *, version: int | None = None,
              instance_id: str | None = None, conn: str = "main", label="heartbeat", record: bool = True):
    v = top(HEARTBEAT) if version is None else version
    return run.call(HEARTBEAT, v, {"group_id": group, "generation_id": generation, "member_id": member_id,
                                   "group_instance_id": instance_id}, label=label, conn=conn, record=record)


def commit(run, group: str, topic: str, offset: int, *, generation: int = -1, member_id: str = "",
           version: int | None = None, partition: int = 0, instance_id: str | None = None,
           metadata_text: str | None = "", label: str = "offset commit"):
    v = top(OFFSET_COMMIT) if version is None else version
    return run.call(OFFSET_COMMIT, v, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
        "group_instance_id": instance_id, "retention_time_ms": -1,
        "topics": [{"name": topic, "topic_id": NO_TOPIC_ID, "partitions": [{
            "partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1,
            "committed_metadata": metadata_text}]}]}, label=label)


def offset_fetch(run, group: str, topic: str | None, partitions=(0,), *, version: int | None = None,
                 require_stable: bool = False, label: str = "offset fetch"):
    v = top(OFFSET_FETCH) if version is None else version
    topics = None if topic is None else [{"name": topic, "topic_id": NO_TOPIC_ID,
                                          "partition_indexes": list(partitions)}]
    return run.call(OFFSET_FETCH, v, {
        "group_id": group, "topics": topics, "require_stable": require_stable,
        "groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": topics}]}, label=label)


# --- producers ---------------------------------------------------------------------------

def init_producer_id(run, transactional_id: str | None = None, *, version: int | None = None,
                     producer_id: int = -1, epoch: int = -1, timeout_ms: int = 60000, label="init producer id",
                     conn: str = "main"):
    v = top(INIT_PRODUCER_ID) if version is None else version
    return run.call(INIT_PRODUCER_ID, v, {
        "transactional_id": transactional_id, "transaction_timeout_ms": timeout_ms,
        "producer_id": producer_id, "producer_epoch": epoch}, label=label, conn=conn)


# the newest versions of the classic transaction protocol: a client sends AddPartitionsToTxn up to v3
# (v4+ is brokers'), and EndTxn v5 is transaction version 2's (scenarios ask for it by name)
CLIENT_ADD_PARTITIONS, CLASSIC_END_TXN = 3, 4


def add_partitions(run, txn: str, pid: int, epoch: int, topic: str, partitions=(0,), *, version=None,
                   verify_only: bool = False, label="add partitions to txn"):
    v = CLIENT_ADD_PARTITIONS if version is None else version
    topics = [{"name": topic, "partitions": list(partitions)}]
    if v >= 4:  # the brokers' batched form
        return run.call(ADD_PARTITIONS_TO_TXN, v, {"transactions": [{
            "transactional_id": txn, "producer_id": pid, "producer_epoch": epoch, "verify_only": verify_only,
            "topics": topics}]}, label=label)
    return run.call(ADD_PARTITIONS_TO_TXN, v, {
        "v3_and_below_transactional_id": txn, "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": topics, "transactions": []}, label=label)


def end_txn(run, txn: str, pid: int, epoch: int, committed: bool, *, version=None, label="end txn"):
    v = CLASSIC_END_TXN if version is None else version
    return run.call(END_TXN, v, {"transactional_id": txn, "producer_id": pid, "producer_epoch": epoch,
                                 "committed": committed}, label=label)


def group_config(run, group: str, configs: dict[str, str], label: str = "group configs"):
    return run.call(INCREMENTAL_ALTER_CONFIGS, top(INCREMENTAL_ALTER_CONFIGS), {
        "resources": [{"resource_type": 32, "resource_name": group, "configs": [
            {"name": k, "config_operation": 0, "value": v} for k, v in configs.items()]}],
        "validate_only": False}, label=label)
