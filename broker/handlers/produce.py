"""Produce: check each partition's batch, append it, answer per partition.

One handler answers every Produce: a run of requests (protocol/produce_codec.ProduceRun), a
request alone being a run of one. Per partition, in Kafka's order: the refusals that need no
batch (acks, authorization, an unknown topic or partition, an internal topic); a transactional
batch's check that the partition is in its producer's transaction (KIP-890; from v12 the batch
adds it), made before the batch is validated, as Kafka verifies before its LogValidator; the
batch's checks against the topic's configs (broker/log/validate.py, the one place a batch is
checked); the producer-id quota (seed 002); a compacted topic's refusal of keyless records;
then the append, through the Partition's one write path. One bad partition does not fail the
others, but records that are null where Kafka takes them close the connection with nothing
appended (Kafka fails inside and never answers). A partition named twice is written once,
with its last records, and answered once (Kafka reads a request into a map); transactional
batches of more than one producer (id and epoch) fail the whole request. acks=0 gets no
response, and when a partition was refused the connection is closed instead, so that the
client learns of it (as Kafka's KafkaApis); a producer over a quota (producer ids, seed 002;
producer_byte_rate) is throttled and muted.

In a cluster (docs/CLUSTER.md) a partition is written on its leader only (NOT_LEADER_OR_FOLLOWER
with the leader it knows, KIP-951); acks=all needs an ISR of at least min.insync.replicas
(NOT_ENOUGH_REPLICAS, nothing appended) and is answered once the high watermark passes the
batch (``_replicated``: REQUEST_TIMED_OUT after timeout_ms, NOT_ENOUGH_REPLICAS_AFTER_APPEND
if the ISR shrank below the minimum meanwhile), as Kafka's DelayedProduce.
"""

from __future__ import annotations

from typing import NamedTuple

from kipper.broker.acl.model import TOPIC, TRANSACTIONAL_ID, WRITE
from kipper.broker.handlers.leaders import current_leader, node_endpoints
from kipper.broker.handlers.produce_entries import (MORE_THAN_ONE_PRODUCER, ZSTD_SINCE, Repeated, distinct,
                                                    mixed_producers, records_refusal, transactional)
from kipper.broker.handlers.replies import NO_RESPONSE, Holding, Reply, waited
from kipper.broker.handlers.txn import asked_coordinator
from kipper.broker.log import validate
from kipper.broker.txn import verification
from kipper.protocol import compression
from kipper.protocol.batch import HEADER_SIZE, TRANSACTIONAL, read_header
from kipper.protocol.errors import ErrorCode

VALID_ACKS = (0, 1, -1)
# Kafka's internal topics (Topic.INTERNAL_TOPICS): a client may not write to them. kipper keeps
# what they hold in its own stores and makes the topic on first use, so the name alone counts
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


class Target(NamedTuple):
    """A request's topic entry as the handler acts on it: the topic (None when there is
    none of that name or id), its append policy, and why the session may not write to it
    (an authorization error code), if it may not."""

    name: str | None  # as the request gave it (None from v13: the request names a topic id)
    topic: object  # broker/log/topics.Topic, or None
    policy: object  # broker/log/validate.AppendPolicy, None without a topic
    denied: ErrorCode | None


_new_tuple = tuple.__new__  # (a Target is made per request alone: without NamedTuple's Python __new__)


def handle_produce(run, ctx, verified: dict | None = None) -> list:
    """The answers to the requests of ``run``, in order; fewer when an answer mutes the
    connection (a quota throttle) or holds it (a transactional batch whose coordinator is
    another broker's: ``verified`` is its answer, once asked): the requests after it wait, as
    they do one at a time.

    A topic entry's lookup (the topic, its configs in effect, the authorization) is done
    once for the run: requests of a run share their head, and nothing a Produce does
    changes what the lookup finds. A refused entry is looked up again per request, so
    each refusal is counted (and logged) as Kafka counts it. Why: a producer keeping many
    single-batch requests in flight (linger.ms=0) sends bursts of them, and these steps
    were a fifth of each one's cost."""
    now = ctx.now
    record_in = ctx.engines.metrics.record_in
    quotas = ctx.engines.quotas
    byte_quota = quotas.produce_quota_set()  # producer_byte_rate set for someone
    answers = []
    last_entry = last_target = None
    # the partition whose appended bytes and records are being summed: counted once per
    # partition in a row of the run, not once per request
    counted_target, counted_index, nbytes, nrecords = None, -1, 0, 0
    cluster = ctx.engines.cluster is not None
    # share fetches the appends woke: each is tried once its request's appends are all in
    # (Kafka completes delayed share fetches after each request); empty unless one waits
    woken = ctx.engines.appends.woken
    for req in run:
        acks = req.acks
        if cluster and verified is None and req.transactional_id and acks in (1, -1):
            asks = _coordinated_elsewhere(ctx, req)
            if asks:  # the append waits for the coordinator's answer, and the connection with it
                answers.append(Holding(_verify_then_append(req, ctx, asks)))
                break
        tid = req.transactional_id
        if any(transactional(p.records) for t in req.topic_data for p in t.partition_data) and (
                tid is None or not ctx.authorize(WRITE, TRANSACTIONAL_ID, tid)):
            # Kafka refuses the whole request before its topics: every partition is answered 53;
            # a transactional id beside batches that are not transactional is not looked at
            answers.append(_refused_whole(distinct(req.topic_data, ctx.api_version), acks,
                                          ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
            if acks == 0:
                break
            continue
        throttle_ms = 0
        responses = []
        waits = [] if cluster else None  # a cluster's acks=all: (replica, end offset, min ISR, row)
        refused = False
        topic_data = req.topic_data
        if len(topic_data) != 1 or len(topic_data[0].partition_data) != 1:
            topic_data = distinct(topic_data, ctx.api_version)
        if _unreadable(ctx, topic_data):
            answers.append(Reply(NO_RESPONSE, abort="a Produce with a partition whose records are null"))
            break
        if len(topic_data) > 1 or (topic_data and len(topic_data[0].partition_data) > 1):
            if mixed_producers(p.records for t in topic_data for p in t.partition_data) and \
                    mixed_producers(_writable(ctx, topic_data)):
                answers.append(_refused_whole(topic_data, acks, ErrorCode.INVALID_PRODUCER_ID_MAPPING,
                                              MORE_THAN_ONE_PRODUCER))
                if acks == 0:
                    break
                continue
        for tdata in topic_data:  # (protocol/produce_codec.py sets both name and topic_id)
            if tdata is last_entry and last_target.denied is None:
                target = last_target
            else:
                target = last_target = _target(ctx, tdata)
                last_entry = tdata
            rows = []
            for pdata in tdata.partition_data:
                index = pdata.index
                row, wait, appended_bytes, appended_records = _partition_row(
                    ctx, target, acks, index, pdata.records, now, req.transactional_id, waits, verified)
                if type(pdata) is Repeated and target.denied is None and target.topic is not None \
                        and 0 <= index < len(target.topic.partitions):
                    row = _row(index, pdata.refusal)
                if appended_records:
                    if target is not counted_target or index != counted_index:
                        if nrecords:
                            record_in(counted_target.topic.name, counted_index, nbytes, nrecords)
                        counted_target, counted_index, nbytes, nrecords = target, index, 0, 0
                    nbytes += appended_bytes
                    nrecords += appended_records
                if wait > throttle_ms:
                    throttle_ms = wait
                if row["error_code"]:
                    refused = True
                rows.append(row)
            if rows:  # a topic that names no partition has no answer, as Kafka's (a map by partition)
                responses.append({"name": tdata.name, "topic_id": tdata.topic_id, "partition_responses": rows})
        if woken:
            ctx.engines.appends.settle()
        if byte_quota:  # Kafka counts the request after the append, acks=0 too
            wait = quotas.record_produce(ctx, _request_bytes(req), now)
            if wait > throttle_ms:
                throttle_ms = wait
        if acks == 0 and refused:  # the client learns of it by the close (Kafka's closeConnection)
            answers.append(Reply(NO_RESPONSE, abort="a Produce with acks=0 was refused: " + ", ".join(
                f"{t['name']}-{r['index']} {ErrorCode(r['error_code']).name}"
                for t in responses for r in t["partition_responses"] if r["error_code"])))
            break
        body = NO_RESPONSE if acks == 0 else {"responses": responses, "throttle_time_ms": throttle_ms}
        if cluster and acks != 0:
            _name_leaders(ctx, body)
        if waits:
            answers.append(_replicated(body, waits, req.timeout_ms, throttle_ms))
        else:
            answers.append(Reply(body, mute_ms=throttle_ms) if throttle_ms else body)
        if throttle_ms:
            break
    if nrecords:
        record_in(counted_target.topic.name, counted_index, nbytes, nrecords)
    return answers


def _coordinated_elsewhere(ctx, req) -> dict:
    """(producer id, epoch) -> the partitions of ``req`` whose transactional batch another
    broker's coordinator must check (or add, from v12) before the append: those this broker
    leads, that the session may write, whose producer has no transaction open in them at that
    epoch yet (Kafka's maybeStartTransactionVerification: only a transaction's first batch
    in a partition is verified)."""
    engines = ctx.engines
    txn = engines.txn
    tid = req.transactional_id
    adds = verification.produce_operation(ctx.api_version) == verification.Operation.ADD_PARTITION
    if not txn.coordinated_elsewhere(tid) or not ctx.authorize(WRITE, TRANSACTIONAL_ID, tid) or not (
            adds or txn.live["transaction.partition.verification.enable"]):  # (off: v12+ still adds)
        return {}
    asks: dict = {}
    for tdata in req.topic_data:
        topic = engines.topics.get(tdata.name) if tdata.name is not None else engines.topics.by_id(tdata.topic_id)
        if topic is None or topic.internal or not ctx.authorize(WRITE, TOPIC, topic.name):
            continue
        for pdata in tdata.partition_data:
            records = pdata.records
            if not 0 <= pdata.index < len(topic.partitions) or not transactional(records):
                continue
            partition = topic.partitions[pdata.index]
            header = read_header(records)
            if header.producer_id < 0 or (partition.replica is not None and not partition.replica.is_leader) \
                    or partition.in_transaction(header.producer_id, header.producer_epoch) \
                    or partition.fences(header.producer_id, header.producer_epoch):  # (refused here)
                continue
            asks.setdefault((header.producer_id, header.producer_epoch), []).append((topic.name, pdata.index))
    return asks


async def _verify_then_append(req, ctx, asks: dict):
    """Ask the coordinator (one request a producer epoch: nearly always one), then answer
    ``req`` as ``handle_produce`` does, with what it answered."""
    operation = verification.produce_operation(ctx.api_version)
    verified = {}
    for (producer_id, producer_epoch), partitions in asks.items():
        verified.update(await asked_coordinator(ctx.engines.txn, req.transactional_id, producer_id,
                                                producer_epoch, partitions, operation))
    verified.setdefault(None, ErrorCode.NONE)  # (asked: never asked again, even if all are in)
    [answer] = handle_produce([req], ctx, verified)
    return await answer if hasattr(answer, "__await__") else answer


def _unreadable(ctx, topic_data: list) -> bool:
    """Whether a partition's (last) records are null where Kafka takes them (a topic the producer
    may write that has it): Kafka fails inside and never answers; kipper closes at once."""
    for t in topic_data:
        nulls = [p.index for p in t.partition_data if p.records is None]
        target = _target(ctx, t) if nulls else None
        if target is not None and target.topic is not None and target.denied in (
                None, ErrorCode.INVALID_TOPIC_EXCEPTION) and any(0 <= i < len(target.topic.partitions) for i in nulls):
            return True
    return False


def _refused_whole(topic_data: list, acks: int, code: ErrorCode, message: str | None = None):
    """Every partition answered ``code`` (Kafka's ProduceRequest.getErrorResponse), or with
    acks=0 the connection closed."""
    if acks == 0:
        return Reply(NO_RESPONSE, abort=f"a Produce with acks=0 was refused whole: {code.name}")
    return {"responses": [{"name": t.name, "topic_id": t.topic_id, "partition_responses": [
        _row(p.index, code, message=message) for p in t.partition_data]} for t in topic_data if t.partition_data],
        "throttle_time_ms": 0}


def _writable(ctx, topic_data: list):
    """The records Kafka's handleProduceAppend is given: of the partitions the request may
    write that exist, each read as one batch."""
    for t in topic_data:
        target = _target(ctx, t)
        if target.topic is not None and target.denied is None:
            yield from (p.records for p in t.partition_data if type(p) is not Repeated and 0 <= p.index < len(
                target.topic.partitions) and records_refusal(p.records, ctx.api_version) is None)


def _name_leaders(ctx, body: dict) -> None:
    """KIP-951: the endpoints of the leaders named in NOT_LEADER_OR_FOLLOWER answers (v10+)."""
    if ctx.api_version < 10:
        return
    leaders = {row["current_leader"]["leader_id"] for t in body["responses"] for row in t["partition_responses"]
               if "current_leader" in row}
    if leaders:
        body["node_endpoints"] = node_endpoints(ctx, leaders)


async def _replicated(body: dict, waits: list, timeout_ms: int, mute_ms: int):
    """The answer once every partition's high watermark passed its batch (Kafka's
    DelayedProduce), each row with the error its wait ended with."""
    answers = await waited([lambda done, r=replica, e=end, m=min_isr: r.wait_for(e, m, done)
                            for replica, end, min_isr, _ in waits], timeout_ms)
    for answer, (_, _, _, row) in zip(answers, waits):
        code = answer[0] if answer is not None else ErrorCode.REQUEST_TIMED_OUT
        if code != ErrorCode.NONE:
            row["error_code"] = int(code)
    return Reply(body, mute_ms=mute_ms) if mute_ms else body


def _request_bytes(req) -> int:
    """The record bytes of a request (Kafka counts the whole request, a few dozen bytes more)."""
    return sum(len(p.records) for t in req.topic_data for p in t.partition_data if p.records is not None)


def _target(ctx, tdata) -> Target:
    name = tdata.name
    engines = ctx.engines
    topic = engines.topics.get(name) if name is not None else engines.topics.by_id(tdata.topic_id)
    policy = engines.topic_configs.policy(topic) if topic is not None else None
    denied = (ErrorCode.TOPIC_AUTHORIZATION_FAILED
              if not ctx.authorize(WRITE, TOPIC, topic.name if topic else name or "") else
              ErrorCode.INVALID_TOPIC_EXCEPTION
              if (topic.internal if topic is not None else name in INTERNAL_TOPICS) else None)
    return _new_tuple(Target, (name, topic, policy, denied))


def _refusal(target: Target, acks: int, index: int) -> ErrorCode:
    """Why a request may not write to partition ``index`` of ``target``'s topic, before
    its batch is looked at (``_partition_row`` asks only when it may not). Invalid acks come
    last: Kafka's broker answers authorization and unknown partitions before its
    ReplicaManager looks at acks."""
    denied = target.denied
    if denied is not None and denied != ErrorCode.INVALID_TOPIC_EXCEPTION:
        return denied
    topic = target.topic
    if topic is not None and not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_ID if target.name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if denied is not None:  # an internal topic: Kafka's ReplicaManager refuses the append
        return denied
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_ID if target.name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if acks not in VALID_ACKS:
        return ErrorCode.INVALID_REQUIRED_ACKS
    raise AssertionError("a partition it may write to")


def _in_transaction(ctx, topic: str, index: int, header, transactional_id: str | None, now: int,
                    verified: dict | None) -> tuple[ErrorCode, str | None, str | None]:
    """KIP-890 for a transactional batch: the error its Produce answers (NONE: append it), the
    answer's message and the log's. The local coordinator checks (or, from v12, adds) the
    partition; what another broker's coordinator answered is in ``verified`` (asked before,
    ``_verify_then_append``); both as Kafka's partition leader answers them."""
    operation = verification.produce_operation(ctx.api_version)
    code, message = ctx.engines.txn.check_append(topic, index, [header], transactional_id,
                                                 operation == verification.Operation.ADD_PARTITION, now)
    if code == ErrorCode.NONE and verified:
        code = verified.get((topic, index), ErrorCode.NONE)
        message = f"the transaction's coordinator answered {code.name}"
    if code == ErrorCode.NONE:
        return code, None, None
    code, text = verification.produce_error(verification.leader_error(code, operation), operation)
    return code, text, message or code.name


def _before_acks(ctx, topic: str, index: int, records, transactional_id: str | None, now: int,
                 verified: dict | None = None) -> tuple[ErrorCode, str | None]:
    """What Kafka answers before its ReplicaManager looks at acks (and the answer's message):
    the request's records read (KafkaApis' validateRecords), then a transactional batch
    verified with its coordinator; else INVALID_REQUIRED_ACKS."""
    if (read := records_refusal(records, ctx.api_version)) is not None:
        return read, None
    if records is not None:  # (null records: as before, the acks; no bytes: no batch)
        refused = _not_in_transaction(ctx, topic, index, records, transactional_id, now, verified)
        if refused is not None:
            return refused[:2]
    return ErrorCode.INVALID_REQUIRED_ACKS, None


def _partition_row(ctx, target: Target, acks: int, index: int, records, now: int,
                   transactional_id: str | None = None, waits: list | None = None,
                   verified: dict | None = None) -> tuple[dict, int, int, int]:
    """One partition's answer, the quota's throttle time (0 unless exceeded), and the
    bytes and records appended (for the caller to count). In a cluster, an acks=all
    append that waits for the ISR adds (replica, end offset, min ISR, row) to ``waits``."""
    topic = target.topic
    if (acks not in VALID_ACKS or target.denied is not None or topic is None
            or not 0 <= index < len(topic.partitions)):  # nothing is appended
        code = _refusal(target, acks, index)
        text = None
        if code == ErrorCode.INVALID_REQUIRED_ACKS:
            code, text = _before_acks(ctx, topic.name, index, records, transactional_id, now, verified)
        return _row(index, code, message=text), 0, 0, 0
    policy = target.policy
    partition = topic.partitions[index]
    if ctx.api_version < ZSTD_SINCE and records and len(records) >= HEADER_SIZE and records[22] & 7 == compression.ZSTD:
        return _row(index, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE), 0, 0, 0  # Kafka's validateRecords
    replica = partition.replica
    if replica is not None:
        if not replica.is_leader:
            row = _row(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
            row["current_leader"] = current_leader(partition)
            return row, 0, 0, 0
        if acks == -1 and len(replica.isr) < policy.min_insync_replicas:
            # no message: Kafka's Produce carries only a record validation's own words
            return _row(index, ErrorCode.NOT_ENOUGH_REPLICAS, log_start_offset=partition.log_start_offset), 0, 0, 0
    if transactional(records):
        # KIP-890: in the transaction, or added to it from v12; Kafka verifies before its
        # LogValidator looks at the batch (a batch it cannot read as one is refused below)
        refused = _not_in_transaction(ctx, topic.name, index, records, transactional_id, now, verified)
        if refused is not None:
            _log_refusal(ctx, topic.name, index, records, refused[0], refused[2], now)
            return _row(index, refused[0], message=refused[1]), 0, 0, 0
    try:
        records, spans = validate.checked_batch(records, policy, now)
    except validate.Rejected as exc:  # nothing is appended, nothing of the producer's state moves
        errors = exc.record_errors
        _log_refusal(ctx, topic.name, index, records, exc.code,
                     exc.message if not errors or errors[0][1] == exc.message else f"{exc.message}: {errors[0][1]}",
                     now)
        row = _row(index, exc.code, message=exc.message if exc.shown else None,
                   log_start_offset=partition.log_start_offset if exc.log_start else -1)
        if errors:
            row["record_errors"] = [{"batch_index": i, "batch_index_error_message": m} for i, m in errors]
        return row, 0, 0, 0
    [(_, _, header)] = spans  # one batch a partition (validate.py)
    engines = ctx.engines
    if header.producer_id >= 0:  # the producer-id quota; a plain producer's batches skip it
        wait = engines.quotas.admit(ctx.session, partition, spans, now)
        if wait:
            return _row(index, ErrorCode.THROTTLING_QUOTA_EXCEEDED, log_start_offset=partition.log_start_offset,
                        message="producer id quota exceeded"), wait, 0, 0
    if policy.compact:  # (the topic's cleanup.policy in effect)
        keyless = validate.keyless_records(records, spans)
        if keyless:  # Kafka's answer; nothing of the batch is appended
            row = _keyless_refused(index, keyless, topic.name, partition)
            _log_refusal(ctx, topic.name, index, records, ErrorCode.INVALID_RECORD, row["error_message"], now)
            return row, 0, 0, 0
    appended = partition.append(records, spans, now)
    # (Kafka's answer carries no message for a refusal by producer state: the log has it)
    row = {"index": index, "error_code": appended.error, "base_offset": appended.base_offset,
           "log_append_time_ms": now if policy.log_append_time and appended.appended else appended.log_append_time,
           "log_start_offset": partition.log_start_offset, "error_message": None}
    if replica is not None and acks == -1 and appended.error == ErrorCode.NONE:
        end = appended.base_offset + header.last_offset_delta + 1
        if replica.high_watermark < end:
            waits.append((replica, end, policy.min_insync_replicas, row))
    if not appended.appended:  # refused, or a retry answered from producer state
        if appended.error and appended.error != ErrorCode.DUPLICATE_SEQUENCE_NUMBER:  # (a retry's answer)
            _log_refusal(ctx, topic.name, index, records, ErrorCode(appended.error),
                         appended.message or ErrorCode(appended.error).name, now)
        return row, 0, 0, 0
    return row, 0, len(records), header.records_count


def _not_in_transaction(ctx, topic: str, index: int, records, transactional_id, now: int, verified):
    """(code, text, message) refusing a transactional batch whose producer is not in the
    transaction (Kafka answers it before the log: log_start_offset -1), or None."""
    try:
        _, _, header = validate.produced_batch(records, counts=False)
    except validate.Rejected:
        return None  # (the validation answers it)
    if not header.attributes & TRANSACTIONAL:
        return None
    refused = _in_transaction(ctx, topic, index, header, transactional_id, now, verified)
    return refused if refused[0] != ErrorCode.NONE else None


def _log_refusal(ctx, topic: str, index: int, records, code: ErrorCode, message: str, now: int) -> None:
    """Count the refusal; a line in the log at most once a second per producer (its
    producer id, or else its connection and client id)."""
    producer_id = read_header(records).producer_id if records is not None and len(records) >= HEADER_SIZE else -1
    session = ctx.session
    producer = producer_id if producer_id >= 0 else (session.peer, ctx.client_id)
    ctx.engines.refusals.refused(now, producer, error=ErrorCode(code).name, message=message, topic=topic,
                                 partition=index, producer_id=producer_id, client_id=ctx.client_id,
                                 peer=session.peer)


def _row(index: int, code: ErrorCode = ErrorCode.NONE, base_offset: int = -1,
         log_start_offset: int = -1, message: str | None = None) -> dict:
    return {"index": index, "error_code": int(code), "base_offset": base_offset,
            "log_append_time_ms": -1, "log_start_offset": log_start_offset, "error_message": message}


def _keyless_refused(index: int, keyless: list[int], topic: str, partition) -> dict:
    message = f"Compacted topic cannot accept message without key in topic partition {topic}-{index}."
    errors = [{"batch_index": i, "batch_index_error_message": message} for i in keyless]
    row = _row(index, ErrorCode.INVALID_RECORD, log_start_offset=partition.log_start_offset,
               message=f"One or more records have been rejected due to {len(keyless)} record errors "
                       f"in total, and only showing the first three errors at most: "
                       f"{[e['batch_index'] for e in errors[:3]]}")
    row["record_errors"] = errors
    return row
