"""CreateTopics, DeleteTopics and CreatePartitions, with Kafka's controller checks
(ReplicationControlManager): manual assignments must name registered brokers (this one
alone on one node; a cluster's controller runs these handlers over its registry,
broker/cluster/controller_topics.py); validate_only checks everything and changes nothing. A timeout_ms
of 0 or less has passed before Kafka's controller takes the request: when a topic got past
the broker's own checks (duplicates, authorization), the whole request fails with
REQUEST_TIMED_OUT, each topic it names answered so (Kafka's getErrorResponse), and nothing is
done; with none, the broker's own refusals are the answer."""

from __future__ import annotations

import uuid

from kipper.broker.acl.model import ALTER, CLUSTER, CLUSTER_NAME, CREATE, DELETE, DESCRIBE, TOPIC
from kipper.broker.log.topic_configs import describable
from kipper.broker.log.topics import MAX_RECORDS_PER_REQUEST, Topic, assignment_problem
from kipper.protocol.errors import ErrorCode

MAX_PARTITIONS = 100000


def _timed_out(**fields) -> dict:
    return {**fields, "error_code": int(ErrorCode.REQUEST_TIMED_OUT), "error_message": None}


class Refused(Exception):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def may_create_topic(ctx, name: str, counted: bool = True) -> bool:
    """Kafka's rule for CreateTopics and Metadata's auto-creation: CREATE on the cluster,
    or on the topic itself (``counted``: see RequestContext.authorize)."""
    return (ctx.authorize(CREATE, CLUSTER, CLUSTER_NAME, counted=counted)
            or ctx.authorize(CREATE, TOPIC, name, counted=counted))


def check_assignment(broker_ids, registered, replication_factor: int | None) -> None:
    problem = assignment_problem(broker_ids, registered, replication_factor)
    if problem is not None:
        raise Refused(*problem)


def _assigned_count(t, registered) -> int:
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
        check_assignment(list(a.broker_ids), registered, None)
    if seen != set(range(len(seen))):
        raise Refused(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                      "partitions should be a consecutive 0-based integer sequence")
    return len(seen)


def _creation_configs(t) -> dict:
    """A new topic's configs: a name given twice takes its last value (Kafka reads them into a
    map), but a null given for it anywhere is refused (Kafka looks for nulls in the list first)."""
    configs = {c.name: c.value for c in t.configs}
    configs.update({c.name: None for c in t.configs if c.value is None})
    return configs


def _check_topic(engines, t) -> tuple[ErrorCode, str | None, int]:
    """One CreatableTopic's checks (Kafka's controller's order): (error, message, count)."""
    configs = _creation_configs(t)
    if not t.assignments:
        return engines.topics.check_new(t.name, t.num_partitions, t.replication_factor, configs)
    code, message, _ = engines.topics.check_new(t.name, 1, 1, configs)
    if code != ErrorCode.NONE:
        return code, message, 0
    try:
        return ErrorCode.NONE, None, _assigned_count(t, engines.topics.registered_brokers())
    except Refused as exc:
        return exc.code, exc.message, 0


def handle_create_topics(req, ctx):
    engines = ctx.engines
    validate_only = req.get("validate_only", False)
    names = [t.name for t in req.topics]
    # (a look only: the refusals are counted where they are answered)
    if req.timeout_ms <= 0 and any(names.count(n) == 1 and may_create_topic(ctx, n, counted=False)
                                   for n in names):
        return {"throttle_time_ms": 0, "topics": [_timed_out(name=n) for n in names]}
    out, accepted = [], []
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
        code, message, count = _check_topic(engines, t)
        if code != ErrorCode.NONE:
            out.append({"name": t.name, "error_code": int(code), "error_message": message})
        else:
            accepted.append((t, count))
    # Kafka's controller writes the request's topics as one batch of records (a topic record,
    # its partitions and its configs): past its limit the whole batch is refused
    records = sum(1 + count + len(t.configs) for t, count in accepted)
    if records > MAX_RECORDS_PER_REQUEST:
        out += [{"name": t.name, "error_code": int(ErrorCode.POLICY_VIOLATION),
                 "error_message": "Unable to perform excessively large batch operation."} for t, _ in accepted]
        return {"throttle_time_ms": 0, "topics": out}
    view = engines.topic_configs
    for t, count in accepted:
        configs = _creation_configs(t)
        assignments = [list(a.broker_ids) for a in sorted(t.assignments, key=lambda a: a.partition_index)] \
            if t.assignments else None
        if validate_only:
            topic = Topic(t.name, uuid.uuid4(), [], configs)
        else:  # checked again: an earlier topic of this request may collide with it
            code, message, topic = engines.topics.create(t.name, count, t.replication_factor, configs,
                                                         assignments=assignments)
            if topic is None:
                out.append({"name": t.name, "error_code": int(code), "error_message": message})
                continue
        rf = len(assignments[0]) if assignments else t.replication_factor if validate_only and \
            t.replication_factor > 0 else engines.topics.replication_factor(topic)
        out.append({"name": t.name, "error_code": 0, "error_message": None, "topic_id": topic.topic_id,
                    "num_partitions": count, "replication_factor": rf,
                    "configs": [view.row(topic.configs, k, as_given=True) for k in describable()]})
    return {"throttle_time_ms": 0, "topics": out}


ZERO_ID = uuid.UUID(int=0)
NOT_HOSTED = "This server does not host this topic-partition."
NOT_HOSTED_ID = "This server does not host this topic ID."
TOPIC_DENIED = "Topic authorization failed."


def _asked(req, ctx) -> list[tuple]:
    """A DeleteTopics request's (name, topic id) entries, as given."""
    return ([(t.get("name"), t.get("topic_id") or ZERO_ID) for t in req.topics] if ctx.api_version >= 6
            else [(name, ZERO_ID) for name in req.topic_names])


def _delete_requests(req, ctx):
    """Kafka's reading of a DeleteTopics request (ControllerApis.deleteTopics): the names
    and ids to delete, each given once, and the refusals of the rest."""
    states = _asked(req, ctx)
    refused, names, ids = [], {}, {}
    for name, topic_id in states:
        if name is None and topic_id == ZERO_ID:
            refused.append((None, ZERO_ID, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified."))
        elif name is None:
            ids[topic_id] = ids.get(topic_id, 0) + 1
        elif topic_id == ZERO_ID:
            names[name] = names.get(name, 0) + 1
        else:
            refused.append((name, topic_id, ErrorCode.INVALID_REQUEST,
                            "You may not specify both topic name and topic id."))
    refused += [(n, ZERO_ID, ErrorCode.INVALID_REQUEST, "Duplicate topic name.") for n, c in names.items() if c > 1]
    twice = [i for i, c in ids.items() if c > 1]
    refused += [(None, i, ErrorCode.INVALID_REQUEST, "Duplicate topic id.") for i in twice]
    return refused, [n for n, c in names.items() if c == 1], [i for i, c in ids.items() if c == 1], twice


def handle_delete_topics(req, ctx):
    engines = ctx.engines
    out, doomed = [], {}  # doomed: topic id -> (the name to answer with, the topic)
    refused, names, ids, ids_twice = _delete_requests(req, ctx)
    if req.timeout_ms <= 0 and (names or ids):
        # the controller's deadline passed before it looked them up: Kafka answers the whole
        # request with its error response, every entry as given (refused ones too)
        return {"throttle_time_ms": 0, "responses": [
            {"name": n, "topic_id": i, "error_code": int(ErrorCode.REQUEST_TIMED_OUT), "error_message": None}
            for n, i in _asked(req, ctx)]}
    out += refused
    for topic_id in ids:
        topic = engines.topics.by_id(topic_id)
        if topic is None:
            out.append((None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID, NOT_HOSTED_ID))
        elif not ctx.authorize(DELETE, TOPIC, topic.name):
            # a topic asked for by id keeps its name hidden unless it may be described
            shown = topic.name if ctx.authorize(DESCRIBE, TOPIC, topic.name) else None
            out.append((shown, topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_DENIED))
        else:
            doomed[topic_id] = (topic.name, topic)
    given_by_id = set(doomed) | set(ids_twice)
    for name in names:
        topic = engines.topics.get(name)
        if not ctx.authorize(DESCRIBE, TOPIC, name):
            out.append((name, ZERO_ID, ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_DENIED))
        elif topic is not None and not ctx.authorize(DELETE, TOPIC, name):
            out.append((name, ZERO_ID, ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_DENIED))
        elif topic is None:
            out.append((name, ZERO_ID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED))
        elif topic.topic_id in given_by_id:
            # the same topic by name and by id: Kafka deletes neither and answers the name only
            doomed.pop(topic.topic_id, None)
            out.append((name, topic.topic_id, ErrorCode.INVALID_REQUEST,
                        "The provided topic name maps to an ID that was already supplied."))
        else:
            doomed[topic.topic_id] = (name, topic)
    for topic_id, (name, topic) in doomed.items():
        engines.delete_topic(topic)
        out.append((name, topic_id, ErrorCode.NONE, None))
    return {"throttle_time_ms": 0, "responses": [
        {"name": n, "topic_id": i, "error_code": int(c), "error_message": m} for n, i, c, m in out]}


def _check_growth(engines, t) -> Topic:
    topic = engines.topics.get(t.name)
    if topic is None:
        raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)  # (Kafka's answer has no text)
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
            check_assignment(list(a.broker_ids), engines.topics.registered_brokers(),
                             engines.topics.replication_factor(topic))
    return topic


def handle_create_partitions(req, ctx):
    """Grow topics; new partitions are in Metadata at once, and groups subscribed to
    the topic rebalance (KIP-848 groups on their next heartbeat, classic groups when
    their clients see the new metadata)."""
    engines = ctx.engines
    names = [t.name for t in req.topics]
    if req.timeout_ms <= 0 and any(names.count(n) == 1 and ctx.authorize(ALTER, TOPIC, n, counted=False)
                                   for n in names):
        return {"throttle_time_ms": 0, "results": [_timed_out(name=n) for n in names]}
    results = []
    for i, t in enumerate(req.topics):
        code, message = ErrorCode.NONE, None
        if names.count(t.name) > 1 and names.index(t.name) != i:
            continue  # one answer per name, as Kafka's (a map by name)
        try:
            if names.count(t.name) > 1:
                raise Refused(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
            if not ctx.authorize(ALTER, TOPIC, t.name):
                raise Refused(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
            topic = _check_growth(engines, t)
            if not req.validate_only:
                engines.topics.add_partitions(topic, t.count, [list(a.broker_ids) for a in t.assignments]
                                              if t.assignments is not None else None)
        except Refused as exc:
            code, message = exc.code, exc.message
        results.append({"name": t.name, "error_code": int(code), "error_message": message})
    return {"throttle_time_ms": 0, "results": results}
