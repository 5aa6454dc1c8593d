"""Produce: validate each partition's batches, append, answer per partition.

Each partition's result is computed on its own, so one bad partition does
not fail the others. acks=0 gets no response at all, as in Kafka.
"""

from __future__ import annotations

from kipper.broker.dispatcher import NO_RESPONSE
from kipper.broker.log.append import append_records, result
from kipper.broker.log.validate import Rejected, validate_records
from kipper.protocol.errors import ErrorCode


def handle_produce(req, ctx):
    state = ctx.state
    acks = req.acks
    now = ctx.now
    max_bytes = state.config["message.max.bytes"]
    topics = state.topics
    admission = state.extensions.get("produce_admission")  # producer-id quota (seed 002)
    throttle_ms = 0
    responses = []
    for tdata in req.topic_data:
        name = tdata.get("name")
        topic = topics.get(name) if name is not None else topics.by_id(tdata.topic_id)
        limit = int(topic.configs.get("max.message.bytes", max_bytes)) if topic else max_bytes
        parts = []
        for pdata in tdata.partition_data:
            index = pdata.index
            if acks not in (0, 1, -1):
                parts.append(result(index, ErrorCode.INVALID_REQUIRED_ACKS))
                continue
            if topic is None or not 0 <= index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_ID if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                parts.append(result(index, code))
                continue
            plog = topic.partitions[index]
            try:
                spans = validate_records(pdata.records, limit)
            except Rejected as exc:
                parts.append(result(index, exc.code, message=exc.message))
                continue
            if admission is not None:
                wait = admission(ctx.session, plog.topic, index, spans, now)
                if wait:
                    throttle_ms = max(throttle_ms, wait)
                    parts.append(result(index, ErrorCode.THROTTLING_QUOTA_EXCEEDED,
                                        log_start_offset=plog.log_start_offset,
                                        message="producer id quota exceeded"))
                    continue
            parts.append(append_records(state, plog, pdata.records, spans, now))
            state.appends.notify(plog.topic, index)
        responses.append({"name": name, "topic_id": tdata.get("topic_id"),
                          "partition_responses": parts})
    if throttle_ms:
        ctx.session.mute_ms = max(ctx.session.mute_ms, throttle_ms)
    if acks == 0:
        return NO_RESPONSE
    return {"responses": responses, "throttle_time_ms": throttle_ms}
