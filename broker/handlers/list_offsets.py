"""ListOffsets: earliest, latest, max timestamp, or the first offset at a time."""

from __future__ import annotations

from protocol.errors import ErrorCode

LATEST, EARLIEST, MAX_TIMESTAMP = -1, -2, -3
EARLIEST_LOCAL, LATEST_TIERED = -4, -5


def _lookup(plog, timestamp: int) -> dict:
    if timestamp in (LATEST, LATEST_TIERED):
        return {"timestamp": -1, "offset": plog.high_watermark}
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return {"timestamp": -1, "offset": plog.log_start_offset}
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
    elif timestamp < 0:
        return {"error_code": int(ErrorCode.UNSUPPORTED_VERSION), "timestamp": -1, "offset": -1}
    else:
        found = plog.offset_for_timestamp(timestamp)
    if found is None:
        return {"timestamp": -1, "offset": -1}
    return {"offset": found[0], "timestamp": found[1]}


def handle_list_offsets(req, ctx):
    topics = ctx.state.topics
    out = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            plog = topics.partition(t.name, p.partition_index)
            if plog is None:
                parts.append({"partition_index": p.partition_index,
                              "error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)})
                continue
            row = {"partition_index": p.partition_index, "error_code": 0, "leader_epoch": 0}
            row.update(_lookup(plog, p.timestamp))
            parts.append(row)
        out.append({"name": t.name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": out}
