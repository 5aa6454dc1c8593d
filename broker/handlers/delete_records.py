"""DeleteRecords: move a partition's log start offset forward.

Producer state is not touched: KIP-360 keeps it after its batches are gone. A topic or
partition named twice is answered once, the last offset asked for it applied (Kafka's map).
In a cluster only the leader deletes, and it answers once every live replica's log starts
there too (Kafka's DelayedDeleteRecords: the followers learn the new start from their fetches
and say so in the next), or REQUEST_TIMED_OUT after the request's timeout.
"""

from __future__ import annotations

import asyncio

from kipper.broker.acl.model import DELETE, TOPIC
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
    moment it was asked when the timeout came first)."""
    loop = asyncio.get_running_loop()
    pending = []
    for replica, required, row in waits:
        future = loop.create_future()
        callback = lambda code, low, f=future: f.done() or f.set_result((code, low))  # noqa: E731
        replica.wait_for_low_watermark(required, callback)
        pending.append((future, row, replica, callback))
    if not all(f.done() for f, *_ in pending):
        await asyncio.wait([f for f, *_ in pending], timeout=max(timeout_ms, 0) / 1000)
    for future, row, replica, callback in pending:
        if future.done():
            code, low = future.result()
        else:  # (its wait goes with it)
            code, low = ErrorCode.REQUEST_TIMED_OUT, row["low_watermark"]
            replica.deletions = [d for d in replica.deletions if d[1] is not callback]
        row["error_code"], row["low_watermark"] = int(code), low
    return body
