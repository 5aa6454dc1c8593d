"""DescribeCluster and DescribeLogDirs: the cluster (this one broker, or a cluster's live
brokers with a random one as the controller, as a KRaft broker answers) and the directories
its logs are in (in a cluster, those of the partitions this broker is a replica of).

DescribeLogDirs describes ``log.dirs`` when it is set: each directory with the
size of every partition stored there and the space of its file system. In
memory the answer is one directory, ``IN_MEMORY_DIR``, holding every partition
at its in-memory size, with the space unknown (-1, as Kafka reports it).
"""

from __future__ import annotations

import shutil

import random

from kipper.broker.acl.model import CLUSTER, CLUSTER_NAME, DESCRIBE, NOT_PROVIDED
from kipper.broker.cluster.replica import NOT_A_REPLICA
from kipper.protocol.errors import ErrorCode

BROKER_ENDPOINT, CONTROLLER_ENDPOINT = 1, 2
IN_MEMORY_DIR = "memory:"
UNKNOWN_BYTES = -1


def handle_describe_cluster(req, ctx):
    engines = ctx.engines
    endpoint_type = req.get("endpoint_type", BROKER_ENDPOINT)
    base = {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "endpoint_type": BROKER_ENDPOINT, "cluster_id": engines.cluster_id,
            "controller_id": -1, "brokers": [], "cluster_authorized_operations": NOT_PROVIDED}
    if endpoint_type not in (BROKER_ENDPOINT, CONTROLLER_ENDPOINT):  # Kafka's AuthHelper checks
        code = ErrorCode.INVALID_REQUEST if ctx.api_version == 0 else ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
        return {**base, "error_code": int(code), "error_message": f"Unsupported endpoint type {endpoint_type}"}
    if endpoint_type != BROKER_ENDPOINT:
        code = ErrorCode.INVALID_REQUEST if ctx.api_version == 0 else ErrorCode.MISMATCHED_ENDPOINT_TYPE
        return {**base, "error_code": int(code), "error_message": "The request was sent to an endpoint "
                "of type BROKER, but we wanted an endpoint of type CONTROLLER"}
    operations = _cluster_operations(ctx) if req.include_cluster_authorized_operations else NOT_PROVIDED
    cluster = engines.cluster
    if cluster is not None:
        brokers = cluster.described_brokers(ctx.session.listener, req.get("include_fenced_brokers", False))
        live = [b["broker_id"] for b in brokers if not b["is_fenced"]]
        return {**base, "controller_id": random.choice(live) if live else -1, "brokers": brokers,
                "cluster_authorized_operations": operations}
    host, port = engines.advertised_address(ctx.session.listener)
    return {**base, "controller_id": engines.node_id,
            "brokers": [{"broker_id": engines.node_id, "host": host, "port": port,
                         "rack": engines.config["broker.rack"] or None,
                         "is_fenced": False}],
            "cluster_authorized_operations": operations}


def _cluster_operations(ctx) -> int:
    """Kafka's AuthHelper: the operations, if the session may DESCRIBE the cluster; else 0."""
    if not ctx.authorize(DESCRIBE, CLUSTER, CLUSTER_NAME):
        return 0
    return ctx.authorized_operations(CLUSTER, CLUSTER_NAME)


def _wanted(engines, topics):
    """(topic, [partition]) pairs asked for; every partition when ``topics`` is None. A
    topic or partition named twice is one (Kafka asks its ReplicaManager for a set)."""
    if topics is None:
        return [(t, [p for p in t.partitions if _stored_here(p)]) for t in engines.topics.all()]
    wanted: dict[str, dict[int, None]] = {}  # a topic or partition named twice is one (Kafka's set)
    for item in topics:
        topic = engines.topics.get(item.topic)
        if topic is not None:
            indexes = wanted.setdefault(item.topic, {})
            indexes.update((i, None) for i in item.partitions
                           if 0 <= i < len(topic.partitions) and _stored_here(topic.partitions[i]))
    return [(engines.topics.get(name), [engines.topics.get(name).partitions[i] for i in indexes])
            for name, indexes in wanted.items()]


def _stored_here(partition) -> bool:
    """One node stores every partition; a cluster's broker those it is a replica of."""
    return partition.replica is None or partition.replica.role != NOT_A_REPLICA


def _space(directory: str) -> tuple[int, int]:
    try:
        usage = shutil.disk_usage(directory)
    except OSError:
        return UNKNOWN_BYTES, UNKNOWN_BYTES
    return usage.total, usage.free


def handle_describe_log_dirs(req, ctx):
    engines = ctx.engines
    if not ctx.authorize(DESCRIBE, CLUSTER, CLUSTER_NAME):
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                "results": []}
    storage = engines.storage
    wanted = _wanted(engines, req.topics)
    if storage is None:
        dirs = {IN_MEMORY_DIR: wanted}
    else:
        dirs = {str(d.path): [] for d in storage.dirs}
        for topic, partitions in wanted:
            by_dir: dict[str, list] = {}
            for p in partitions:
                where = storage.dir_of(topic.name, p.partition)
                if where is not None:
                    by_dir.setdefault(str(where), []).append(p)
            for d, parts in by_dir.items():
                dirs.setdefault(d, []).append((topic, parts))
    results = []
    for directory, topics in dirs.items():
        total, usable = _space(directory) if storage is not None else (UNKNOWN_BYTES, UNKNOWN_BYTES)
        results.append({
            "error_code": 0, "log_dir": directory, "total_bytes": total, "usable_bytes": usable,
            "is_cordoned": False,
            "topics": [{"name": topic.name, "partitions": [
                {"partition_index": p.partition, "partition_size": p.log.size_bytes, "offset_lag": 0,
                 "is_future_key": False} for p in parts]} for topic, parts in topics if parts]})
    return {"throttle_time_ms": 0, "error_code": 0, "results": results}
