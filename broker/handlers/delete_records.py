"""DeleteRecords: move a partition's log start offset forward.

Producer state is not touched: KIP-360 keeps it after its batches are gone. A topic or
partition named twice is answered once, the last offset asked for it applied (Kafka's map).
"""

from __future__ import annotations

from kipper.broker.acl.model import DELETE, TOPIC
from kipper.protocol.errors import ErrorCode


def handle_delete_records(req, ctx):
    engines = ctx.engines
    wanted: dict[str, dict[int, int]] = {}
    for t in req.topics:
        offsets = wanted.setdefault(t.name, {})
        for p in t.partitions:
            offsets[p.partition_index] = p.offset
    out = []
    for name, offsets in wanted.items():
        parts = []
        for index, offset in offsets.items():
            plog = engines.topics.partition(name, index)
            if not ctx.authorize(DELETE, TOPIC, name):
                parts.append({"partition_index": index, "low_watermark": -1,
                              "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)})
                continue
            if plog is None:
                parts.append({"partition_index": index, "low_watermark": -1,
                              "error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)})
                continue
            target = plog.high_watermark if offset == -1 else offset
            if target < 0 or target > plog.high_watermark:
                parts.append({"partition_index": index, "low_watermark": -1,
                              "error_code": int(ErrorCode.OFFSET_OUT_OF_RANGE)})
                continue
            low = plog.delete_records_before(target)  # never past a share group's hold
            parts.append({"partition_index": index, "low_watermark": low, "error_code": 0})
        if parts:  # a topic that names no partition has no answer, as Kafka's
            out.append({"name": name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": out}
