"""CreateTopics, DeleteTopics and CreatePartitions, with Kafka's controller checks
(ReplicationControlManager): manual assignments must name registered brokers,
which here is this one; validate_only checks everything and changes nothing. A timeout_ms
of 0 or less has passed before Kafka's controller takes the request: every topic that got
past the broker's own checks (duplicates, authorization) is REQUEST_TIMED_OUT, and nothing
is done."""

from __future__ import annotations

import uuid

from kipper.broker.acl.model import ALTER, CLUSTER, CLUSTER_NAME, CREATE, DELETE, DESCRIBE, TOPIC
from kipper.broker.log.topic_configs import describable
from kipper.broker.log.topics import Topic
from kipper.protocol.errors import ErrorCode

MAX_PARTITIONS = 100000


def _timed_out(**fields) -> dict:
    return {**fields, "error_code": int(ErrorCode.REQUEST_TIMED_OUT), "error_message": None}


class Refused(Exception):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def may_create_topic(ctx, name: str) -> bool:
    """Kafka's rule for CreateTopics and Metadata's auto-creation: CREATE on the cluster,
    or on the topic itself."""
    return ctx.authorize(CREATE, CLUSTER, CLUSTER_NAME) or ctx.authorize(CREATE, TOPIC, name)


def check_assignment(broker_ids, node_id: int, replication_factor: int | None) -> None:
    """Kafka's validateManualPartitionAssignment, with one registered broker."""
    if not broker_ids:
        raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                      "The manual partition assignment includes an empty replica list.")
    previous = None
    for broker_id in sorted(broker_ids):
        if broker_id != node_id:
            raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
                          f"includes broker {broker_id}, but no such broker is registered.")
        if broker_id == previous:
            raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
                          f"includes the broker {broker_id} more than once.")
        previous = broker_id
    if replication_factor is not None and len(broker_ids) != replication_factor:
        raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
                      f"includes a partition with {len(broker_ids)} replica(s), but this is not "
                      f"consistent with previous partitions, which have {replication_factor} replica(s).")


def _assigned_count(t, node_id: int) -> int:
    """The partition count a manual assignment gives (numPartitions and the
    replication factor must then be -1)."""
    if t.replication_factor != -1:
        raise Refused(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, "
                      "but replication factor was not set to -1.")
    if t.num_partitions != -1:
        raise Refused(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, "
                      "but numPartitions was not set to -1.")
    seen = set()
    for a in t.assignments:
        if a.partition_index in seen:
            raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Found multiple manual partition "
                          f"assignments for partition {a.partition_index}")
        seen.add(a.partition_index)
        check_assignment(list(a.broker_ids), node_id, None)
    if seen != set(range(len(seen))):
        raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                      "partitions should be a consecutive 0-based integer sequence")
    return len(seen)


def handle_create_topics(req, ctx):
    engines = ctx.engines
    validate_only = req.get("validate_only", False)
    names = [t.name for t in req.topics]
    out = []
    for i, t in enumerate(req.topics):
        if names.count(t.name) > 1:
            if names.index(t.name) == i:  # one answer per name, as Kafka's (a map by name)
                out.append({"name": t.name, "error_code": int(ErrorCode.INVALID_REQUEST),
                            "error_message": "Duplicate topic name."})
            continue
        if not may_create_topic(ctx, t.name):
            out.append({"name": t.name, "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                        "error_message": "Authorization failed."})
            continue
        if req.timeout_ms <= 0:
            out.append(_timed_out(name=t.name))
            continue
        configs = {c.name: c.value for c in t.configs}
        count = t.num_partitions
        if t.assignments:
            code, message, _ = engines.topics.check_new(t.name, 1, 1, configs)
            if code == ErrorCode.NONE:
                try:
                    count = _assigned_count(t, engines.node_id)
                except Refused as exc:
                    code, message = exc.code, exc.message
            if code != ErrorCode.NONE:
                out.append({"name": t.name, "error_code": int(code), "error_message": message})
                continue
        if validate_only:
            code, message, count = engines.topics.check_new(t.name, count, t.replication_factor, configs)
            topic = Topic(t.name, uuid.uuid4(), [], {k: v for k, v in configs.items() if v is not None}) \
                if code == ErrorCode.NONE else None
        else:
            code, message, topic = engines.topics.create(t.name, count, t.replication_factor, configs)
            count = len(topic.partitions) if topic is not None else 0
        row = {"name": t.name, "error_code": int(code), "error_message": message}
        if topic is not None:
            view = engines.topic_configs
            row.update(topic_id=topic.topic_id, num_partitions=count, replication_factor=1,
                       configs=[view.row(topic.configs, k) for k in describable()])
        out.append(row)
    return {"throttle_time_ms": 0, "topics": out}


def handle_delete_topics(req, ctx):
    engines = ctx.engines
    if ctx.api_version >= 6:
        wanted = [(t.get("name"), t.get("topic_id")) for t in req.topics]
    else:
        wanted = [(name, None) for name in req.topic_names]
    out = []
    keys = [name or topic_id for name, topic_id in wanted]
    duplicates = {k for k in keys if keys.count(k) > 1}
    for i, (name, topic_id) in enumerate(wanted):
        if keys[i] in duplicates:  # answered once, nothing deleted (Kafka's ControllerApis)
            if keys.index(keys[i]) == i:
                out.append({"name": name, "topic_id": topic_id, "error_code": int(ErrorCode.INVALID_REQUEST),
                            "error_message": "Duplicate topic name." if name else "Duplicate topic id."})
            continue
        topic = engines.topics.get(name) if name else engines.topics.by_id(topic_id)
        if topic is not None and not ctx.authorize(DELETE, TOPIC, topic.name):
            # Kafka: a topic asked for by id keeps its name hidden unless it may be described
            shown = name or (topic.name if ctx.authorize(DESCRIBE, TOPIC, topic.name) else None)
            out.append({"name": shown, "topic_id": topic_id,
                        "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)})
            continue
        if topic is None and name and not ctx.authorize(DESCRIBE, TOPIC, name):
            out.append({"name": name, "topic_id": topic_id,
                        "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)})
            continue
        if req.timeout_ms <= 0:
            out.append(_timed_out(name=name, topic_id=topic_id))
            continue
        if topic is None:
            code = ErrorCode.UNKNOWN_TOPIC_ID if not name else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            out.append({"name": name, "topic_id": topic_id, "error_code": int(code)})
            continue
        engines.delete_topic(topic)
        out.append({"name": topic.name, "topic_id": topic.topic_id, "error_code": 0})
    return {"throttle_time_ms": 0, "responses": out}


def _check_growth(engines, t) -> Topic:
    topic = engines.topics.get(t.name)
    if topic is None:
        raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                      "This server does not host this topic-partition.")
    have = len(topic.partitions)
    if t.count == have:
        raise Refused(ErrorCode.INVALID_PARTITIONS, f"Topic already has {have} partition(s).")
    if t.count < have:
        raise Refused(ErrorCode.INVALID_PARTITIONS, f"The topic {t.name} currently has {have} "
                      f"partition(s); {t.count} would not be an increase.")
    if t.count > MAX_PARTITIONS:
        raise Refused(ErrorCode.INVALID_PARTITIONS,
                      f"Number of partitions must be between 1 and {MAX_PARTITIONS}.")
    additional = t.count - have
    if t.assignments is not None:
        if len(t.assignments) != additional:
            raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Attempted to add {additional} "
                          f"additional partition(s), but only {len(t.assignments)} assignment(s) "
                          "were specified.")
        for a in t.assignments:
            check_assignment(list(a.broker_ids), engines.node_id, 1)
    return topic


def handle_create_partitions(req, ctx):
    """Grow topics; new partitions are in Metadata at once, and groups subscribed to
    the topic rebalance (KIP-848 groups on their next heartbeat, classic groups when
    their clients see the new metadata)."""
    engines = ctx.engines
    names = [t.name for t in req.topics]
    results = []
    for t in req.topics:
        code, message = ErrorCode.NONE, None
        try:
            if names.count(t.name) > 1:
                raise Refused(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
            if not ctx.authorize(ALTER, TOPIC, t.name):
                raise Refused(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
            if req.timeout_ms <= 0:
                raise Refused(ErrorCode.REQUEST_TIMED_OUT, None)
            topic = _check_growth(engines, t)
            if not req.validate_only:
                engines.topics.add_partitions(topic, t.count)
        except Refused as exc:
            code, message = exc.code, exc.message
        results.append({"name": t.name, "error_code": int(code), "error_message": message})
    return {"throttle_time_ms": 0, "results": results}
