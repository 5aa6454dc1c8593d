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
from kipper.broker.handlers.replies import NO_RESPONSE, Reply
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
    now = ctx.now
    metrics = ctx.broker.metrics
    throttle_ms = 0
    responses = []
    txn_denied = req.transactional_id is not None and \
        not ctx.authorize(WRITE, TRANSACTIONAL_ID, req.transactional_id)
    for tdata in req.topic_data:  # parsed by protocol/produce_codec.py: name and topic_id are both set
        target = _target(ctx, tdata, txn_denied)
        parts = []
        for pdata in tdata.partition_data:
            row, wait, nbytes, nrecords = _partition_row(ctx, target, req.acks, pdata.index, pdata.records, now)
            if nrecords:
                metrics.record_in(target[1].name, pdata.index, nbytes, nrecords)
            if wait > throttle_ms:
                throttle_ms = wait
            parts.append(row)
        responses.append({"name": tdata.name, "topic_id": tdata.topic_id, "partition_responses": parts})
    return _body(req.acks, responses, throttle_ms)


def handle_produce_run(head, records: list, ctx) -> list:
    """Consecutive requests of one connection that repeat one head (one topic and
    partition, the same client id, acks and transactional id: ``head``, a
    protocol/produce_codec.RepeatedHead) and differ in their ``records``, answered in
    order: the same steps as ``handle_produce`` for each, but the topic, its configs and
    the authorization are looked up once, the clock read once and the counters updated
    once. Why: a producer keeping many single-batch requests in flight (linger.ms=0)
    sends bursts of them, and those steps were a fifth of each one's cost. Nothing a
    Produce does changes them, so the answers are the ones sent one at a time would get.
    Stops after an answer that mutes the connection (a quota throttle): the rest wait, as
    they do then."""
    now = ctx.now
    target = _run_target(ctx, head)
    name, topic_id, acks, index = head.name, head.topic_id, head.acks, head.index
    topic, policy = target[1], target[2]
    # the checks before the batches are the same for every request of the run
    partition = topic.partitions[index] if _refusal(target, acks, index) is None else None
    out = []
    run_bytes = run_records = 0
    for batch in records:
        if partition is not None:
            row, wait, nbytes, nrecords = _append_row(ctx, topic, partition, policy, index, batch, now)
        else:
            if target[3] is not None and out:  # a refusal is counted (and logged) per request
                target = _run_target(ctx, head)
            row, wait, nbytes, nrecords = _partition_row(ctx, target, acks, index, batch, now)
        run_bytes += nbytes
        run_records += nrecords
        out.append(_body(acks, [{"name": name, "topic_id": topic_id, "partition_responses": [row]}], wait))
        if wait:
            break
    if run_records:
        ctx.broker.metrics.record_in(target[1].name, index, run_bytes, run_records)
    return out


def _run_target(ctx, head) -> tuple:
    tid = head.transactional_id
    return _target(ctx, head, tid is not None and not ctx.authorize(WRITE, TRANSACTIONAL_ID, tid))


def _body(acks: int, responses: list, throttle_ms: int):
    body = NO_RESPONSE if acks == 0 else {"responses": responses, "throttle_time_ms": throttle_ms}
    return Reply(body, mute_ms=throttle_ms) if throttle_ms else body


def _target(ctx, tdata, txn_denied: bool) -> tuple:
    """(name, topic or None, its append policy, the authorization error or None) of a
    request's topic entry."""
    name = tdata.name
    topics = ctx.broker.topics
    topic = topics.get(name) if name is not None else topics.by_id(tdata.topic_id)
    policy = ctx.broker.topic_configs.policy(topic) if topic is not None else None
    denied = (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED if txn_denied else
              ErrorCode.TOPIC_AUTHORIZATION_FAILED
              if not ctx.authorize(WRITE, TOPIC, topic.name if topic else name or "") else None)
    return name, topic, policy, denied


def _partition_row(ctx, target: tuple, acks: int, index: int, records, now: int) -> tuple[dict, int, int, int]:
    """One partition's answer, the quota's throttle time (0 unless exceeded), and the
    bytes and records appended (for the caller to count)."""
    refusal = _refusal(target, acks, index)
    if refusal is not None:  # nothing is appended
        return result(index, refusal), 0, 0, 0
    topic = target[1]
    return _append_row(ctx, topic, topic.partitions[index], target[2], index, records, now)


def _refusal(target: tuple, acks: int, index: int) -> ErrorCode | None:
    """Why a request may not write to partition ``index`` of ``target``'s topic, before
    its batches are looked at; None when it may."""
    name, topic, _, denied = target
    if acks not in (0, 1, -1):
        return ErrorCode.INVALID_REQUIRED_ACKS
    if denied is not None:
        return denied
    if topic is None or not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_ID if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return None


def _append_row(ctx, topic, partition, policy, index: int, records, now: int) -> tuple[dict, int, int, int]:
    """``_partition_row`` once the request may write to ``partition``: its batches'
    checks, the producer-id quota, then the append."""
    try:
        spans = validate_records(records, policy.max_message_bytes)
        append_policy.check(policy, records, spans, now)
        if policy.rewrites:
            records, spans = append_policy.rewrite(policy, records, spans, now)
    except Rejected as exc:
        return result(index, exc.code, message=exc.message), 0, 0, 0
    broker = ctx.broker
    with_pids, attributes = _producer_batches(spans)
    if with_pids:  # the producer-id quota; a plain producer's batches skip it
        wait = broker.quotas.admit(ctx.session, topic.name, index, spans, now)
        if wait:
            return result(index, ErrorCode.THROTTLING_QUOTA_EXCEEDED, log_start_offset=partition.log_start_offset,
                          message="producer id quota exceeded"), wait, 0, 0
    if partition.log.config.compact:
        keyless = keyless_records(records, spans)
        if keyless:  # Kafka's answer; nothing of the batch is appended
            return _keyless_refused(index, keyless, topic.name, partition), 0, 0, 0
    if attributes & TRANSACTIONAL:
        code, message = broker.txn.check_append(topic.name, index, [h for _, _, h in spans])
        if code != ErrorCode.NONE:
            return result(index, code, log_start_offset=partition.log_start_offset, message=message), 0, 0, 0
    appended = partition.append(records, spans, now)
    row = {"index": index, "error_code": appended.error, "base_offset": appended.base_offset,
           "log_append_time_ms": now if policy.log_append_time and appended.appended else -1,
           "log_start_offset": partition.log_start_offset, "error_message": appended.message}
    if not appended.appended:  # refused, or a retry answered from producer state
        return row, 0, 0, 0
    return row, 0, len(records), spans[0][2].records_count if len(spans) == 1 else _records_count(spans)


def _producer_batches(spans) -> tuple[bool, int]:
    """Whether any batch carries a producer id, and every batch's attributes OR-ed (is
    any transactional?), in one pass."""
    if len(spans) == 1:  # nearly always
        h = spans[0][2]
        return h.producer_id >= 0, h.attributes
    with_pids = False
    attributes = 0
    for _, _, h in spans:
        with_pids = with_pids or h.producer_id >= 0
        attributes |= h.attributes
    return with_pids, attributes


def _records_count(spans) -> int:
    return sum(h.records_count for _, _, h in spans)
