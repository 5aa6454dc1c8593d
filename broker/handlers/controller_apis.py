"""The controller's APIs: what brokers ask of it, and the metadata log's Fetch.

BrokerRegistration, BrokerHeartbeat, AlterPartition, AllocateProducerIds and
UnregisterBroker go to the ``Controller`` engine (broker/cluster/controller.py) as they
are. A Fetch of `__cluster_metadata` (KRaft's topic id, partition 0) reads the metadata
log from the broker's offset, long polling until records come (as KRaft's leader does);
a fetcher whose last epoch the log does not hold gets the diverging epoch. The topic
admin APIs (CreateTopics, DeleteTopics, CreatePartitions, configs) are the usual
handlers over the controller's TopicManager (broker/cluster/controller_topics.py).
"""

from __future__ import annotations

from kipper.protocol import metadata_records as mr
from kipper.protocol.errors import ErrorCode

METADATA_KEY = (mr.METADATA_TOPIC, 0)


def handle_broker_registration(req, ctx):
    return ctx.engines.controller.register(req, ctx.now)


def handle_broker_heartbeat(req, ctx):
    return ctx.engines.controller.heartbeat(req, ctx.now)


def handle_alter_partition(req, ctx):
    return ctx.engines.controller.alter_partition(req, ctx.now)


def handle_allocate_producer_ids(req, ctx):
    return ctx.engines.controller.allocate_producer_ids(req.broker_id, req.broker_epoch, ctx.now)


def handle_unregister_broker(req, ctx):
    return unregister_answer(ctx.engines.controller.unregister(req.broker_id, ctx.now), req.broker_id)


def unregister_answer(code: ErrorCode, broker_id: int) -> dict:
    """Kafka's UnregisterBroker answer: an empty message on success, its
    ReplicationControlManager's words for an id it does not know."""
    message = {ErrorCode.NONE: "",
               ErrorCode.BROKER_ID_NOT_REGISTERED: f"Broker ID {broker_id} is not currently registered"}.get(code)
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message}


def _replica_id(req, version: int) -> int:
    if version >= 15:
        state = req.get("replica_state") or {}
        return state.get("replica_id", -1)
    return req.get("replica_id", -1)


def _read_metadata(req, ctx) -> tuple[dict, int]:
    controller = ctx.engines.controller
    rows, total = [], 0
    for t in req.topics:
        name = t.get("topic")
        known = name == mr.METADATA_TOPIC or (name is None and t.topic_id.bytes == mr.METADATA_TOPIC_ID_BYTES)
        parts = []
        for p in t.partitions:
            if not known or p.partition != 0:
                code = ErrorCode.UNKNOWN_TOPIC_ID if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                parts.append({"partition_index": p.partition, "error_code": int(code), "high_watermark": -1,
                              "last_stable_offset": -1, "log_start_offset": -1, "records": b""})
                continue
            row, size = controller.read_metadata(p.fetch_offset, p.get("last_fetched_epoch", -1),
                                                 p.partition_max_bytes, _replica_id(req, ctx.api_version), ctx.now)
            total += size
            parts.append(row)
        rows.append({"topic": name, "topic_id": t.get("topic_id"), "partitions": parts})
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": rows}, total


def handle_metadata_fetch(req, ctx):
    """Fetch on the controller: the metadata log, as a KRaft leader serves it."""
    body, size = _read_metadata(req, ctx)
    if size or req.max_wait_ms <= 0:
        return body
    return _long_poll(req, ctx)


async def _long_poll(req, ctx):
    clock = ctx.engines.clock
    deadline = clock() + req.max_wait_ms
    while True:
        await ctx.engines.appends.wait([METADATA_KEY], (deadline - clock()) / 1000)
        body, size = _read_metadata(req, ctx)
        if size or clock() >= deadline:
            return body


def refused(api_key: int, req, code: ErrorCode, message: str | None) -> dict:
    """AlterPartitionReassignments', ListPartitionReassignments' or UnregisterBroker's answer
    refused as a whole: Kafka's getErrorResponse, every partition named answered with the error
    (its AllowReplicationFactorChange left at the default)."""
    if api_key == 45:
        return {"throttle_time_ms": 0, "allow_replication_factor_change": True,
                "error_code": int(code), "error_message": message, "responses": [
                    {"name": t.name, "partitions": [
                        {"partition_index": p.partition_index, "error_code": int(code), "error_message": message}
                        for p in t.partitions]} for t in req.topics]}
    if api_key == 46:
        return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message, "topics": [
            {"name": t.name, "partitions": [{"partition_index": i, "replicas": [], "adding_replicas": [],
                                             "removing_replicas": []} for i in t.partition_indexes]}
            for t in req.topics or []]}
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message}  # UnregisterBroker


def handle_alter_partition_reassignments(req, ctx):
    if not req.topics:  # (Kafka's answer to nothing asked: an empty message, not none, its flag the default)
        return {"throttle_time_ms": 0, "allow_replication_factor_change": True, "error_code": 0,
                "error_message": "", "responses": []}
    if req.timeout_ms <= 0:  # its deadline passed before the controller took it
        return refused(45, req, ErrorCode.REQUEST_TIMED_OUT, None)
    topics = ctx.engines.topics
    out = []
    for t in req.topics:
        rows = []
        for p in t.partitions:
            code, message = topics.reassign(t.name, p.partition_index,
                                            list(p.replicas) if p.replicas is not None else None)
            rows.append({"partition_index": p.partition_index, "error_code": int(code), "error_message": message})
        out.append({"name": t.name, "partitions": rows})
    return {"throttle_time_ms": 0, "allow_replication_factor_change": req.get("allow_replication_factor_change", True),
            "error_code": 0, "error_message": None, "responses": out}


def handle_list_partition_reassignments(req, ctx):
    wanted = None
    if req.topics is not None:
        wanted = {(t.name, i) for t in req.topics for i in t.partition_indexes}
    by_topic: dict[str, list] = {}
    for name, index, part in ctx.engines.topics.reassignments(wanted):
        by_topic.setdefault(name, []).append({"partition_index": index, "replicas": list(part.replicas),
                                              "adding_replicas": list(part.adding),
                                              "removing_replicas": list(part.removing)})
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "topics": [{"name": n, "partitions": rows} for n, rows in by_topic.items()]}
