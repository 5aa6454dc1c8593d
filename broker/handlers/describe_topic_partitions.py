"""DescribeTopicPartitions (KIP-966): Metadata's topics and partitions for Kafka's Admin
(describeTopics asks it first), sorted by name, a page of at most
``response_partition_limit`` partitions behind a cursor.

As Kafka's DescribeTopicPartitionsRequestHandler: all topics (those the principal may
DESCRIBE) for an empty list; named topics the principal may not describe come last with
TOPIC_AUTHORIZATION_FAILED and no id; an unknown name is UNKNOWN_TOPIC_OR_PARTITION (or
INVALID_TOPIC_EXCEPTION for a name no topic could have); a cursor whose topic is not in
the list, or whose partition is negative, is INVALID_REQUEST for every topic asked. One replica, never out of sync: the
eligible leader replica lists are empty, as Kafka's are for such a partition; in a cluster
the registrations the metadata log holds (handlers/leaders.py), whose eligible leader
replicas are empty too (kipper keeps none, docs/CLUSTER.md).
"""

from __future__ import annotations

from kipper.broker.acl.model import DESCRIBE, TOPIC
from kipper.broker.handlers.leaders import partition_row
from kipper.broker.log.topics import validate_topic_name
from kipper.protocol.errors import ErrorCode
from kipper.protocol.primitives import ZERO_UUID

# Kafka's max.request.partition.size.limit default: the page can be no larger
MAX_PARTITIONS_PER_RESPONSE = 2000


def handle_describe_topic_partitions(req, ctx):
    engines = ctx.engines
    cursor = req.cursor
    after = cursor.topic_name if cursor is not None else ""
    everything = not req.topics
    if everything:
        names = {t.name for t in engines.topics.all() if t.name >= after}
    else:
        names = {t.name for t in req.topics if t.name >= after}
    if cursor is not None and (cursor.partition_index < 0 or not everything and cursor.topic_name not in names):
        return {"throttle_time_ms": 0, "next_cursor": None,
                "topics": [{"error_code": int(ErrorCode.INVALID_REQUEST), "name": t.name, "topic_id": ZERO_UUID,
                            "is_internal": False, "partitions": []} for t in req.topics]}
    refused = [] if everything else sorted(n for n in names if not ctx.authorize(DESCRIBE, TOPIC, n))
    allowed = sorted(n for n in names if n not in refused and ctx.authorize(DESCRIBE, TOPIC, n))
    first = cursor.partition_index if cursor is not None and ctx.authorize(DESCRIBE, TOPIC, after) else 0
    # a limit of 0 or less still pages one partition at a time, as Kafka's handler does
    remaining = max(1, min(MAX_PARTITIONS_PER_RESPONSE, req.response_partition_limit))
    out, next_cursor = [], None
    for name in allowed:
        if remaining <= 0:
            next_cursor = {"topic_name": name, "partition_index": 0}
            break
        topic = engines.topics.get(name)
        if topic is None:
            if not everything:
                bad = validate_topic_name(name) is not None
                out.append({"error_code": int(ErrorCode.INVALID_TOPIC_EXCEPTION if bad
                                              else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
                            "name": name, "topic_id": ZERO_UUID, "is_internal": False, "partitions": [],
                            "topic_authorized_operations": ctx.authorized_operations(TOPIC, name)})
            continue
        start = first if name == after else 0
        end = min(len(topic.partitions), _int32(start + remaining))
        out.append({"error_code": 0, "name": name, "topic_id": topic.topic_id, "is_internal": topic.internal,
                    "partitions": [_partition(ctx, topic, index) for index in range(start, end)],
                    "topic_authorized_operations": ctx.authorized_operations(TOPIC, name)})
        if end < len(topic.partitions):
            next_cursor = {"topic_name": name, "partition_index": end}
            break
        remaining -= max(end - start, 0)
    out += [{"error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), "name": name, "topic_id": ZERO_UUID,
             "is_internal": False, "partitions": []} for name in refused]
    return {"throttle_time_ms": 0, "topics": out, "next_cursor": next_cursor}


def _partition(ctx, topic, index: int) -> dict:
    row = partition_row(ctx, topic, index)  # (no error code: Kafka's leaves a missing leader as -1)
    row.update(error_code=0, eligible_leader_replicas=[], last_known_elr=[])
    return row


def _int32(n: int) -> int:
    """Kafka adds the page size to the cursor's index as a Java int: past 2^31-1 it wraps
    negative, and the answer's next cursor names that index (found by the generator)."""
    return (n + (1 << 31)) % (1 << 32) - (1 << 31)
