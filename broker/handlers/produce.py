"""Produce: validate each partition's batches, append, answer per partition.

Each partition's result is computed on its own, so one bad partition does
not fail the others. The topic's configs in effect (max.message.bytes, the
timestamp rules, LogAppendTime, compression.type) are applied first
(broker/log/append_policy.py). Before the append come the producer-id quota
(seed 002), a compacted topic's refusal of keyless records and, for
transactional batches, the coordinator's check that the partition is in the
producer's transaction (KIP-890 part 1); the append itself is the
Partition's one write path. acks=0 gets no response at all, as in Kafka; a
throttled producer's connection is muted after the answer.
"""

from __future__ import annotations

from kipper.broker.acl.model import TOPIC, TRANSACTIONAL_ID, WRITE
from kipper.broker.dispatcher import NO_RESPONSE, Reply
from kipper.broker.log import append_policy
from kipper.broker.log.validate import Rejected, keyless_records, validate_records
from kipper.protocol.batch import TRANSACTIONAL
from kipper.protocol.errors import ErrorCode


def result(index: int, code: ErrorCode = ErrorCode.NONE, base_offset: int = -1,
           log_start_offset: int = -1, message: str | None = None, append_time: int = -1) -> dict:
    return {"index": index, "error_code": int(code), "base_offset": base_offset,
            "log_append_time_ms": append_time, "log_start_offset": log_start_offset,
            "error_message": message}


def _keyless_refused(index: int, keyless: list[int], topic: str, partition) -> dict:
    message = f"Compacted topic cannot accept message without key in topic partition {topic}-{index}."
    errors = [{"batch_index": i, "batch_index_error_message": message} for i in keyless]
    row = result(index, ErrorCode.INVALID_RECORD, log_start_offset=partition.log_start_offset,
                 message=f"One or more records have been rejected due to {len(keyless)} record errors "
                         f"in total, and only showing the first three errors at most: "
                         f"{[e['batch_index'] for e in errors[:3]]}")
    row["record_errors"] = errors
    return row


def handle_produce(req, ctx):
    broker = ctx.broker
    acks = req.acks
    now = ctx.now
    topics = broker.topics
    topic_configs = broker.topic_configs
    quotas = broker.quotas
    metrics = broker.metrics
    throttle_ms = 0
    responses = []
    tid = req.transactional_id
    txn_denied = tid is not None and not ctx.authorize(WRITE, TRANSACTIONAL_ID, tid)
    for tdata in req.topic_data:  # parsed by protocol/produce_codec.py: name and topic_id are both set
        name = tdata.name
        topic = topics.get(name) if name is not None else topics.by_id(tdata.topic_id)
        policy = topic_configs.policy(topic) if topic is not None else None
        denied = (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED if txn_denied else
                  ErrorCode.TOPIC_AUTHORIZATION_FAILED
                  if not ctx.authorize(WRITE, TOPIC, topic.name if topic else name or "") else None)
        parts = []
        for pdata in tdata.partition_data:
            index = pdata.index
            if acks not in (0, 1, -1):
                parts.append(result(index, ErrorCode.INVALID_REQUIRED_ACKS))
                continue
            if denied is not None:  # nothing is appended
                parts.append(result(index, denied))
                continue
            if topic is None or not 0 <= index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_ID if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                parts.append(result(index, code))
                continue
            partition = topic.partitions[index]
            records = pdata.records
            try:
                spans = validate_records(records, policy.max_message_bytes)
                append_policy.check(policy, records, spans, now)
                if policy.rewrites:
                    records, spans = append_policy.rewrite(policy, records, spans, now)
            except Rejected as exc:
                parts.append(result(index, exc.code, message=exc.message))
                continue
            with_pids, attributes = _producer_batches(spans)
            if with_pids:  # the producer-id quota; a plain producer's batches skip it
                wait = quotas.admit(ctx.session, topic.name, index, spans, now)
                if wait:
                    throttle_ms = max(throttle_ms, wait)
                    parts.append(result(index, ErrorCode.THROTTLING_QUOTA_EXCEEDED,
                                        log_start_offset=partition.log_start_offset,
                                        message="producer id quota exceeded"))
                    continue
            if partition.log.config.compact:
                keyless = keyless_records(records, spans)
                if keyless:  # Kafka's answer; nothing of the batch is appended
                    parts.append(_keyless_refused(index, keyless, topic.name, partition))
                    continue
            if attributes & TRANSACTIONAL:
                code, message = broker.txn.check_append(topic.name, index, [h for _, _, h in spans])
                if code != ErrorCode.NONE:
                    parts.append(result(index, code, log_start_offset=partition.log_start_offset,
                                        message=message))
                    continue
            appended = partition.append(records, spans, now)
            if appended.appended:
                metrics.record_in(topic.name, index, len(records),
                                  spans[0][2].records_count if len(spans) == 1 else _records_count(spans))
            parts.append({"index": index, "error_code": appended.error, "base_offset": appended.base_offset,
                          "log_append_time_ms": now if policy.log_append_time and appended.appended else -1,
                          "log_start_offset": partition.log_start_offset, "error_message": appended.message})
        responses.append({"name": name, "topic_id": tdata.topic_id, "partition_responses": parts})
    body = NO_RESPONSE if acks == 0 else {"responses": responses, "throttle_time_ms": throttle_ms}
    return Reply(body, mute_ms=throttle_ms) if throttle_ms else body


def _producer_batches(spans) -> tuple[bool, int]:
    """Whether any batch carries a producer id, and every batch's attributes OR-ed (is
    any transactional?), in one pass."""
    with_pids = False
    attributes = 0
    for _, _, h in spans:
        with_pids = with_pids or h.producer_id >= 0
        attributes |= h.attributes
    return with_pids, attributes


def _records_count(spans) -> int:
    return sum(h.records_count for _, _, h in spans)
