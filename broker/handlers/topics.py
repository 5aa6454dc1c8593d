"""CreateTopics and DeleteTopics."""

from __future__ import annotations

import uuid

from kipper.broker.log.topics import TOPIC_CONFIGS, Topic, effective_config
from kipper.protocol.errors import ErrorCode

DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG = 1, 5


def handle_create_topics(req, ctx):
    broker = ctx.broker
    out = []
    for t in req.topics:
        if t.assignments:
            out.append({"name": t.name, "error_code": int(ErrorCode.INVALID_REQUEST),
                        "error_message": "manual replica assignment is not supported"})
            continue
        configs = {c.name: c.value for c in t.configs}
        if req.get("validate_only", False):
            code, message, count = broker.topics.check_new(t.name, t.num_partitions,
                                                          t.replication_factor, configs)
            topic = Topic(t.name, uuid.uuid4(), [], configs) if code == ErrorCode.NONE else None
        else:
            code, message, topic = broker.topics.create(t.name, t.num_partitions,
                                                       t.replication_factor, configs)
            count = len(topic.partitions) if topic is not None else 0
        row = {"name": t.name, "error_code": int(code), "error_message": message}
        if topic is not None:
            row.update(topic_id=topic.topic_id, num_partitions=count,
                       replication_factor=1, configs=[topic_config_row(topic, k, broker.config)
                                                      for k in sorted(TOPIC_CONFIGS)])
        out.append(row)
    return {"throttle_time_ms": 0, "topics": out}


def topic_config_row(topic, key: str, broker_config) -> dict:
    value, override = effective_config(topic, key, broker_config)
    return {"name": key, "value": value, "read_only": False, "is_sensitive": False,
            "config_source": DYNAMIC_TOPIC_CONFIG if override else DEFAULT_CONFIG}


def handle_delete_topics(req, ctx):
    broker = ctx.broker
    if ctx.api_version >= 6:
        wanted = [(t.get("name"), t.get("topic_id")) for t in req.topics]
    else:
        wanted = [(name, None) for name in req.topic_names]
    out = []
    for name, topic_id in wanted:
        topic = broker.topics.get(name) if name else broker.topics.by_id(topic_id)
        if topic is None:
            code = ErrorCode.UNKNOWN_TOPIC_ID if not name else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            out.append({"name": name, "topic_id": topic_id, "error_code": int(code)})
            continue
        broker.delete_topic(topic)
        out.append({"name": topic.name, "topic_id": topic.topic_id, "error_code": 0})
    return {"throttle_time_ms": 0, "responses": out}
