"""Typed builders for the cluster-level admin requests: DescribeCluster,
DescribeLogDirs, DescribeProducers, DescribeTransactions and ListTransactions,
over a BlockingConnection (as kipper.client.admin: negotiated version, Kafka's
field names, the parsed response returned with its errors in it)."""

from __future__ import annotations

from typing import Iterable, Mapping

from kipper.client.admin import by_topic, send
from kipper.client.blocking import BlockingConnection
from kipper.protocol.messages.describe_cluster import DESCRIBE_CLUSTER
from kipper.protocol.messages.describe_log_dirs import DESCRIBE_LOG_DIRS
from kipper.protocol.messages.describe_producers import DESCRIBE_PRODUCERS
from kipper.protocol.messages.describe_transactions import DESCRIBE_TRANSACTIONS
from kipper.protocol.messages.list_transactions import LIST_TRANSACTIONS

BROKER_ENDPOINT = 1  # DescribeCluster's EndpointType.BROKER

__all__ = ["describe_cluster", "describe_log_dirs", "describe_producers", "describe_transactions",
           "list_transactions"]


def describe_cluster(conn: BlockingConnection, *, include_cluster_authorized_operations: bool = False,
                     version: int | None = None):
    return send(conn, DESCRIBE_CLUSTER, {
        "include_cluster_authorized_operations": include_cluster_authorized_operations,
        "endpoint_type": BROKER_ENDPOINT, "include_fenced_brokers": False}, version)


def describe_log_dirs(conn: BlockingConnection, partitions: Mapping[str, Iterable[int]] | None = None, *,
                      version: int | None = None):
    """Log directories and partition sizes: of ``partitions`` ({topic: [partition]}) or all (None)."""
    topics = None if partitions is None else [{"topic": t, "partitions": list(ps)}
                                              for t, ps in partitions.items()]
    return send(conn, DESCRIBE_LOG_DIRS, {"topics": topics}, version)


def describe_producers(conn: BlockingConnection, partitions: Iterable[tuple[str, int]], *,
                       version: int | None = None):
    """The producers each (topic, partition) keeps state for."""
    return send(conn, DESCRIBE_PRODUCERS, {"topics": [
        {"name": topic, "partition_indexes": [p for p, _ in parts]}
        for topic, parts in by_topic(((tp, None) for tp in partitions)).items()]}, version)


def describe_transactions(conn: BlockingConnection, transactional_ids: Iterable[str], *,
                          version: int | None = None):
    return send(conn, DESCRIBE_TRANSACTIONS, {"transactional_ids": list(transactional_ids)}, version)


def list_transactions(conn: BlockingConnection, *, states: Iterable[str] = (),
                      producer_ids: Iterable[int] = (), duration_ms: int = -1,
                      transactional_id_pattern: str | None = None, version: int | None = None):
    """Transactional ids by state, producer id, duration (v1) and pattern (v2)."""
    return send(conn, LIST_TRANSACTIONS, {
        "state_filters": list(states), "producer_id_filters": list(producer_ids),
        "duration_filter": duration_ms, "transactional_id_pattern": transactional_id_pattern}, version)
