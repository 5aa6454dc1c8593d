"""ListOffsets: earliest, latest, max timestamp, or the first offset at a time.

With isolation_level read_committed, latest is the last stable offset and
nothing at or past it is found by time, as in Kafka. With an authorizer, a topic
needs DESCRIBE (TOPIC_AUTHORIZATION_FAILED otherwise).
"""

from __future__ import annotations

from kipper.broker.acl.model import DESCRIBE, TOPIC
from kipper.broker.handlers.leaders import leader_epoch, leader_error
from kipper.protocol.errors import ErrorCode

LATEST, EARLIEST, MAX_TIMESTAMP = -1, -2, -3
EARLIEST_LOCAL, LATEST_TIERED = -4, -5
READ_COMMITTED = 1  # isolation_level
# the first ListOffsets version that may ask for each special timestamp (KIP-734, KIP-1005):
# an older request asking for one gets UNSUPPORTED_VERSION, as from Kafka
SINCE_VERSION = {MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9}
NOT_FOUND = {"timestamp": -1, "offset": -1, "leader_epoch": -1}


def _lookup(plog, timestamp: int, end: int) -> dict:
    if timestamp == LATEST:
        return {"timestamp": -1, "offset": end}
    if timestamp == LATEST_TIERED:  # nothing is in tiered storage: Kafka answers -1 without it
        return dict(NOT_FOUND)
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return {"timestamp": -1, "offset": plog.log_start_offset}
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
    elif timestamp < 0:
        return {"error_code": int(ErrorCode.UNSUPPORTED_VERSION), "timestamp": -1, "offset": -1}
    else:
        found = plog.offset_for_timestamp(timestamp)
    if found is None or found[0] >= end:
        return dict(NOT_FOUND)
    return {"offset": found[0], "timestamp": found[1]}


def _by_topic(req, ctx) -> tuple[dict, set, list]:
    """The request's partitions of topics the principal may describe, grouped by topic name
    in order of first appearance (Kafka answers a topic named twice once), the (topic,
    partition) pairs named twice, and the answers to the other topics: as Kafka's
    KafkaApis, each as asked (one naming no partition too), after the rest."""
    grouped: dict[str, dict] = {}
    seen, twice = set(), set()
    refused = []
    for t in req.topics:
        if not ctx.authorize(DESCRIBE, TOPIC, t.name):
            refused.append({"name": t.name, "partitions": [
                {"partition_index": p.partition_index, "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                 **NOT_FOUND} for p in t.partitions]})
            continue
        for p in t.partitions:
            key = (t.name, p.partition_index)
            if key in seen:
                twice.add(key)
            seen.add(key)
            grouped.setdefault(t.name, {}).setdefault(p.partition_index, p)
    return grouped, twice, refused


def handle_list_offsets(req, ctx):
    topics = ctx.engines.topics
    isolation = req.get("isolation_level", 0)
    if isolation not in (0, READ_COMMITTED) and any(ctx.authorize(DESCRIBE, TOPIC, t.name, counted=False)
                                                    for t in req.topics):
        # Kafka cannot read the level and answers with its request's error answer: every
        # topic as asked (one naming no partition too), each partition refused (there
        # UNKNOWN_SERVER_ERROR: declared, kafka-unknown-server-error). It reads the level
        # only when the principal may describe a topic it names: with none, each is refused so
        return {"throttle_time_ms": 0, "topics": [{"name": t.name, "partitions": [
            {"partition_index": p.partition_index, "error_code": int(ErrorCode.INVALID_REQUEST), **NOT_FOUND}
            for p in t.partitions]} for t in req.topics]}
    committed = isolation == READ_COMMITTED
    replica = req.get("replica_id", -1) >= 0  # a follower: up to the log end, whatever the isolation
    grouped, twice, refused = _by_topic(req, ctx)
    out = []
    for name, partitions in grouped.items():
        parts = []
        for p in partitions.values():
            if (name, p.partition_index) in twice:  # Kafka: a partition asked for twice is refused
                parts.append({"partition_index": p.partition_index,
                              "error_code": int(ErrorCode.INVALID_REQUEST), **NOT_FOUND})
                continue
            if ctx.api_version < SINCE_VERSION.get(p.timestamp, 0):  # Kafka's KafkaApis: before the partition
                parts.append({"partition_index": p.partition_index,
                              "error_code": int(ErrorCode.UNSUPPORTED_VERSION), **NOT_FOUND})
                continue
            plog = topics.partition(name, p.partition_index)
            if plog is None:
                parts.append({"partition_index": p.partition_index,
                              "error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)})
                continue
            code = leader_error(plog, p.get("current_leader_epoch", -1))
            if code is not None:
                parts.append({"partition_index": p.partition_index, "error_code": int(code), **NOT_FOUND})
                continue
            row = {"partition_index": p.partition_index, "error_code": 0, "leader_epoch": leader_epoch(plog)}
            end = plog.log_end_offset if replica else plog.last_stable_offset if committed else plog.high_watermark
            row.update(_lookup(plog, p.timestamp, end))
            parts.append(row)
        out.append({"name": name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": out + refused}
