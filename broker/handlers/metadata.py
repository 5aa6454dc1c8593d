"""Metadata: brokers (this one), and topics with their single-replica partitions; in a
cluster (docs/CLUSTER.md), every live broker and each partition's registration from the
metadata log (leader, epoch, replicas, ISR, offline replicas: handlers/leaders.py).

v8+ asks for the operations the principal may perform on each topic and (v8-10)
on the cluster (KIP-430): what the ACLs allow, and without an authorizer every
operation Kafka supports on the resource type; never "not provided" once asked.

With an authorizer (Kafka's rules): a topic the principal may not DESCRIBE is
answered TOPIC_AUTHORIZATION_FAILED when named and left out of an all-topics
request; one asked for by id is refused so too, without its name (an id that no topic
has is UNKNOWN_TOPIC_ID). Auto-creation also needs CREATE on the cluster or on the topic.

As in Kafka, a topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION, also in the
answer to the request that auto-creates it (Kafka's controller creates it after that
answer; the next Metadata shows it), and a name that is not a legal topic name is
INVALID_TOPIC_EXCEPTION.

A topic's partitions are the bulk of the answer (a 1,000-partition topic is 1,000
structs) and change only with the partition count (in a cluster, with the metadata log),
so they are encoded once per (version, node, listener, metadata offset) and kept on the
Topic (``Topic.derived``); each request assembles the per-topic fields around them, so the
checks above still run for every request. A cluster's controller_id is a random live
broker, as Kafka's KRaft brokers answer (clients cannot reach the controller).
"""

from __future__ import annotations

import random

from construct import Container

from kipper.broker.acl.model import CLUSTER, CLUSTER_NAME, DESCRIBE, NOT_PROVIDED, TOPIC
from kipper.broker.handlers.leaders import partition_row
from kipper.broker.handlers.topics import may_create_topic
from kipper.broker.log.topics import validate_topic_name
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages.metadata import METADATA
from kipper.protocol.primitives import Encoded

_PARTITIONS = ("topics", "partitions")


def describe_topic(ctx, topic, ops: int = NOT_PROVIDED) -> dict:
    return {
        "error_code": 0, "name": topic.name, "topic_id": topic.topic_id,
        "is_internal": topic.internal, "topic_authorized_operations": ops,
        "partitions": encoded_partitions(ctx, topic),
    }


def encoded_partitions(ctx, topic) -> Encoded:
    """The topic's partitions array for the request's version, encoded again only when the
    partition count (or in a cluster the metadata log) moved; a deleted or recreated topic
    is another Topic with its own cache."""
    cluster = ctx.engines.cluster
    version = ctx.api_version
    key = ("metadata.partitions", version, ctx.engines.node_id, ctx.session.listener)
    stamp = (len(topic.partitions), cluster.metadata_offset if cluster is not None else 0)
    cached = topic.derived.get(key)
    if cached is None or cached[0] != stamp:
        rows = [partition_row(ctx, topic, i) for i in range(len(topic.partitions))]
        data = METADATA.field_schema("response", version, _PARTITIONS).build(rows)
        cached = topic.derived[key] = (stamp, Encoded(data))
    return cached[1]


def _brokers(ctx) -> tuple[list[dict], int]:
    """(the brokers, the controller id) of the answer."""
    engines = ctx.engines
    cluster = engines.cluster
    if cluster is None:
        host, port = engines.advertised_address(ctx.session.listener)
        return [{"node_id": engines.node_id, "host": host, "port": port,
                 "rack": engines.config["broker.rack"] or None}], engines.node_id
    live = cluster.live_brokers(ctx.session.listener)
    brokers = [{"node_id": i, "host": h, "port": p, "rack": r} for i, h, p, r in live]
    return brokers, random.choice(live)[0] if live else -1


def _topic_ids_before_v12(wanted) -> dict:
    """Metadata v10-11 naming a topic by id, or with no name: Kafka refuses the whole request
    (its MetadataRequest error answer): every topic asked INVALID_REQUEST, no brokers, no
    cluster id."""
    return {"throttle_time_ms": 0, "brokers": [], "cluster_id": None, "controller_id": -1,
            "topics": [{"error_code": int(ErrorCode.INVALID_REQUEST), "name": t.get("name") or "",
                        "topic_id": t.topic_id, "is_internal": False, "partitions": []} for t in wanted],
            "cluster_authorized_operations": NOT_PROVIDED}


def handle_metadata(req, ctx):
    engines = ctx.engines
    topics = engines.topics
    wanted = req.topics
    with_ops = bool(req.get("include_topic_authorized_operations"))

    def ops(name: str) -> int:
        return ctx.authorized_operations(TOPIC, name) if with_ops else NOT_PROVIDED

    version = ctx.api_version
    if wanted and version in (10, 11) and any(t.get("name") is None or t.topic_id.int for t in wanted):
        return _topic_ids_before_v12(wanted)
    if wanted and version >= 12 and any(t.topic_id.int for t in wanted):
        # Kafka's KafkaApis: a request naming any topic id is answered by its ids alone
        wanted = [Container(name=None, topic_id=t.topic_id) for t in wanted if t.topic_id.int]
    if wanted is None or (version == 0 and not wanted):
        out = [describe_topic(ctx, t, ops(t.name)) for t in topics.all()
               if ctx.authorize(DESCRIBE, TOPIC, t.name)]
    else:
        auto = req.get("allow_auto_topic_creation", True)
        out = []
        asked = set()
        for item in wanted:
            name = item.get("name")
            key = name if name is not None else item.topic_id
            if key in asked:  # a topic asked twice is answered once, as Kafka's (a set of names)
                continue
            asked.add(key)
            if name is None:
                topic = topics.by_id(item.topic_id)
                if topic is None or not ctx.authorize(DESCRIBE, TOPIC, topic.name):
                    # (a topic id is not secret to Kafka: one the principal may not describe is
                    # refused as such, without its name)
                    error = ErrorCode.UNKNOWN_TOPIC_ID if topic is None else ErrorCode.TOPIC_AUTHORIZATION_FAILED
                    out.append({"error_code": int(error), "name": None, "topic_id": item.topic_id})
                else:
                    out.append(describe_topic(ctx, topic, ops(topic.name)))
                continue
            if not ctx.authorize(DESCRIBE, TOPIC, name):
                out.append({"error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), "name": name})
                continue
            topic = topics.get(name)
            if topic is not None:
                out.append(describe_topic(ctx, topic, ops(topic.name)))
                continue
            if validate_topic_name(name) is not None:
                error = ErrorCode.INVALID_TOPIC_EXCEPTION
            elif auto and topics.auto_create and not may_create_topic(ctx, name):
                error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            else:
                if auto and topics.auto_create and engines.cluster is not None:
                    engines.cluster.create_topic(name)  # the controller makes it
                elif auto:
                    topics.get_or_create(name)
                # as Kafka: the request that auto-creates a topic does not show it yet (its
                # controller creates it after the answer); the next Metadata does
                error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            # Kafka's answer for a topic it does not have (or cannot name) carries the asker's
            # operations on that name too, as for a topic it has; not a refused creation's
            refused = error == ErrorCode.TOPIC_AUTHORIZATION_FAILED
            out.append({"error_code": int(error), "name": name,
                        "topic_authorized_operations": NOT_PROVIDED if refused else ops(name)})
    brokers, controller_id = _brokers(ctx)
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": engines.cluster_id,
        "controller_id": controller_id,
        "topics": out,
        "cluster_authorized_operations": ctx.authorized_operations(CLUSTER, CLUSTER_NAME)
        if req.get("include_cluster_authorized_operations") else NOT_PROVIDED,
    }
