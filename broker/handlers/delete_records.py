"""DeleteRecords: move a partition's log start offset forward.

Producer state is not touched: KIP-360 keeps it after its batches are gone. A topic or
partition named twice is answered once, the last offset asked for it applied (Kafka's map).
In a cluster only the leader deletes, and it answers once every live replica's log starts
there too (Kafka's DelayedDeleteRecords: the followers learn the new start from their fetches
and say so in the next), or REQUEST_TIMED_OUT after the request's timeout.
"""

from __future__ import annotations

from kipper.broker.acl.model import DELETE, TOPIC
from kipper.broker.handlers.replies import waited
from kipper.protocol.errors import ErrorCode


def handle_delete_records(req, ctx):
    engines = ctx.engines
    wanted: dict[str, dict[int, int]] = {}
    for t in req.topics:
        offsets = wanted.setdefault(t.name, {})
        for p in t.partitions:
            offsets[p.partition_index] = p.offset
    out, waits = [], []
    for name, offsets in wanted.items():
        parts = []
        for index, offset in offsets.items():
            plog = engines.topics.partition(name, index)
            if not ctx.authorize(DELETE, TOPIC, name):
                parts.append(_refused(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            if plog is None:
                parts.append(_refused(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            replica = plog.replica
            if replica is not None and not replica.is_leader:
                parts.append(_refused(index, ErrorCode.NOT_LEADER_OR_FOLLOWER))
                continue
            target = plog.high_watermark if offset == -1 else offset
            if target < 0 or target > plog.high_watermark:
                parts.append(_refused(index, ErrorCode.OFFSET_OUT_OF_RANGE))
                continue
            low = plog.delete_records_before(target)  # never past a share group's hold
            row = {"partition_index": index, "low_watermark": low, "error_code": 0}
            if replica is not None:
                row["low_watermark"] = replica.low_watermark()
                if row["low_watermark"] < low:
                    waits.append((replica, low, row))
            parts.append(row)
        if parts:  # a topic that names no partition has no answer, as Kafka's
            out.append({"name": name, "partitions": parts})
    body = {"throttle_time_ms": 0, "topics": out}
    return _deleted_on_every_replica(body, waits, req.timeout_ms) if waits else body


def _refused(index: int, code: ErrorCode) -> dict:
    return {"partition_index": index, "low_watermark": -1, "error_code": int(code)}


async def _deleted_on_every_replica(body: dict, waits: list, timeout_ms: int) -> dict:
    """The answer once each waiting partition's low watermark reached its new log start, each
    row with the error its wait ended with (REQUEST_TIMED_OUT and the low watermark of the
    moment it was asked when the timeout came first: its wait, answered later, goes nowhere,
    as an acks=all one's does)."""
    answers = await waited([lambda done, r=replica, need=required: r.wait_for_low_watermark(need, done)
                            for replica, required, _ in waits], timeout_ms)
    for answer, (_, _, row) in zip(answers, waits):
        code, low = answer if answer is not None else (ErrorCode.REQUEST_TIMED_OUT, row["low_watermark"])
        row["error_code"], row["low_watermark"] = int(code), low
    return body
