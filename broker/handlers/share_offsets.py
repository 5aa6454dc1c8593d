"""DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets (KIP-932's
admin APIs): the ACL checks Kafka's KafkaApis makes, then the share state (share/offsets.py).

Describe needs DESCRIBE on the group and on each topic; Alter READ on the group and on each
topic; Delete DELETE on the group and READ on each topic. A topic refused, or (Alter) unknown,
is answered here and comes first, as in Kafka's answer; a top-level error from the group check
replaces every topic result.
"""

from __future__ import annotations

from kipper.broker.acl.model import DELETE, DESCRIBE, GROUP, READ, TOPIC
from kipper.broker.handlers.share_group import UNSUPPORTED_MESSAGE, share_groups_enabled
from kipper.broker.share import offsets
from kipper.protocol.errors import ErrorCode
from kipper.protocol.uuid_text import uuid_text

GROUP_REFUSED = "Group authorization failed."
TOPIC_REFUSED = "Topic authorization failed."


def handle_describe_share_group_offsets(req, ctx):
    engines = ctx.engines
    groups = []
    for g in req.groups:
        if not share_groups_enabled(ctx):
            groups.append({"group_id": g.group_id, "topics": [], "error_code":
                           int(ErrorCode.UNSUPPORTED_VERSION), "error_message": None})
            continue
        if not ctx.authorize(DESCRIBE, GROUP, g.group_id):
            groups.append({"group_id": g.group_id, "topics": [], "error_code":
                           int(ErrorCode.GROUP_AUTHORIZATION_FAILED), "error_message": None})
            continue
        if g.topics is None:
            topics = [t for t in engines.share.describe_offsets(g.group_id, None)
                      if ctx.authorize(DESCRIBE, TOPIC, t["topic_name"])]
        else:
            allowed = [t for t in g.topics if ctx.authorize(DESCRIBE, TOPIC, t.topic_name)]
            # a topic there is, named twice, is one, and a partition of it named twice is one
            # (Kafka's map by topic id of sets); an unknown topic's partitions are answered as asked
            wanted: dict = {}
            for i, t in enumerate(allowed):
                known = engines.topics.get(t.topic_name) is not None
                parts = wanted.setdefault(t.topic_name if known else i, (t.topic_name, {} if known else []))[1]
                if known:
                    parts.update(dict.fromkeys(t.partitions))
                else:
                    parts.extend(t.partitions)
            topics = engines.share.describe_offsets(g.group_id, [(name, list(parts)) for name, parts in wanted.values()])
            topics += [{"topic_name": t.topic_name, "topic_id": offsets.ZERO_UUID, "partitions": [
                offsets.refused_row(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_REFUSED)
                for p in t.partitions]} for t in g.topics if t not in allowed]
        groups.append({"group_id": g.group_id, "topics": topics, "error_code": 0,
                       "error_message": None})
    return {"throttle_time_ms": 0, "groups": groups}


def _top_level(code: ErrorCode, message: str | None) -> dict:
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message,
            "responses": []}


class _Topic:
    def __init__(self, topic_name: str, partitions: list):
        self.topic_name = topic_name
        self.partitions = partitions


def _by_name(topics) -> list[_Topic]:
    """A topic named twice is one, its partitions all answered (Kafka's map by topic name)."""
    merged: dict[str, _Topic] = {}
    for t in topics:
        if t.topic_name in merged:
            merged[t.topic_name].partitions += list(t.partitions)
        else:
            merged[t.topic_name] = _Topic(t.topic_name, list(t.partitions))
    return list(merged.values())


def handle_alter_share_group_offsets(req, ctx):
    engines = ctx.engines
    if not share_groups_enabled(ctx):
        return _top_level(ErrorCode.UNSUPPORTED_VERSION, UNSUPPORTED_MESSAGE)
    if not ctx.authorize(READ, GROUP, req.group_id):
        return _top_level(ErrorCode.GROUP_AUTHORIZATION_FAILED, GROUP_REFUSED)
    refused, wanted = [], []
    for t in _by_name(req.topics):
        topic = engines.topics.get(t.topic_name)
        if not ctx.authorize(READ, TOPIC, t.topic_name):
            code, message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_REFUSED
        elif topic is None:
            code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, offsets.NOT_HOSTED
        else:
            wanted.append((topic, [(p.partition_index, p.start_offset) for p in t.partitions]))
            continue
        if not t.partitions:  # Kafka refuses from a map of partitions: a topic of none has no answer
            continue
        refused.append({"topic_name": t.topic_name,
                        "topic_id": topic.topic_id if topic is not None else offsets.ZERO_UUID,
                        "partitions": [{"partition_index": p.partition_index, "error_code": int(code),
                                        "error_message": message} for p in t.partitions]})
    # the group is made only for a topic it can hold offsets of (Kafka: none named, none made)
    code, message = engines.groups.share_offsets_group(req.group_id, create=bool(wanted), missing_ok=True)
    if code != ErrorCode.NONE:
        return _top_level(code, message)
    negative = next(((topic, p) for topic, parts in wanted for p, _ in parts if p < 0), None)
    if negative is not None:
        # Kafka's share coordinator refuses to initialize the state of a negative partition and
        # the whole request fails inside: nothing altered, but the group it made has its first
        # epoch, as a successful alter leaves it (the eighteenth run, seed 11001)
        engines.share.alter_failed(req.group_id)
        topic, partition = negative
        return _top_level(ErrorCode.UNKNOWN_SERVER_ERROR, "Initialize share group parameters has invalid partitionId"
                                                          f" - {req.group_id} {uuid_text(topic.topic_id)} {partition}")
    done = engines.share.alter_offsets(req.group_id, wanted, ctx.now)
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "responses": refused + done}


def handle_delete_share_group_offsets(req, ctx):
    engines = ctx.engines
    if not share_groups_enabled(ctx):
        return _top_level(ErrorCode.UNSUPPORTED_VERSION, UNSUPPORTED_MESSAGE)
    if not ctx.authorize(DELETE, GROUP, req.group_id):
        return _top_level(ErrorCode.GROUP_AUTHORIZATION_FAILED, GROUP_REFUSED)
    allowed = [t.topic_name for t in req.topics if ctx.authorize(READ, TOPIC, t.topic_name)]
    refused = [{"topic_name": t.topic_name, "topic_id": offsets.ZERO_UUID,
                "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), "error_message": TOPIC_REFUSED}
               for t in req.topics if t.topic_name not in allowed]
    code, message = engines.groups.share_offsets_group(req.group_id, create=False)
    if code != ErrorCode.NONE:
        return _top_level(code, message)
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "responses": refused + engines.share.delete_offsets(req.group_id, allowed)}
