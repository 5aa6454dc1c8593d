"""DeleteRecords: move a partition's log start offset forward.

Producer state is not touched: KIP-360 keeps it after its batches are gone.
"""

from __future__ import annotations

from kipper.broker.acl.model import DELETE, TOPIC
from kipper.protocol.errors import ErrorCode


def handle_delete_records(req, ctx):
    engines = ctx.engines
    out = []
    for t in req.topics:
        parts = []
        for p in t.partitions:
            plog = engines.topics.partition(t.name, p.partition_index)
            if not ctx.authorize(DELETE, TOPIC, t.name):
                parts.append({"partition_index": p.partition_index, "low_watermark": -1,
                              "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)})
                continue
            if plog is None:
                parts.append({"partition_index": p.partition_index, "low_watermark": -1,
                              "error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)})
                continue
            target = plog.high_watermark if p.offset == -1 else p.offset
            if target < 0 or target > plog.high_watermark:
                parts.append({"partition_index": p.partition_index, "low_watermark": -1,
                              "error_code": int(ErrorCode.OFFSET_OUT_OF_RANGE)})
                continue
            low = plog.delete_records_before(target)  # never past a share group's hold
            parts.append({"partition_index": p.partition_index, "low_watermark": low, "error_code": 0})
        if parts:  # a topic that names no partition has no answer, as Kafka's
            out.append({"name": t.name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": out}
