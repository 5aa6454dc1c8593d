"""Transaction APIs: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit,
WriteTxnMarkers. Decode, ask the transaction coordinator (broker/txn), answer.

Clients speak AddPartitionsToTxn v0-3 (v4+ is broker-to-broker) and the
transaction-version-1 protocol: this broker does not advertise the
transaction.version feature, so clients use KIP-890 part 2 only as far as a Produce
v12 implies it (its batch adds its partition, as Kafka 4.x lets it). Versions from
before KIP-588 get INVALID_PRODUCER_EPOCH where newer ones get PRODUCER_FENCED; a
partition or group not in the transaction is INVALID_TXN_STATE, or TRANSACTION_ABORTABLE
for the versions that know it.
"""

from __future__ import annotations

from kipper.broker.acl.model import (
    CLUSTER, CLUSTER_ACTION, CLUSTER_NAME, GROUP, READ, TOPIC, TRANSACTIONAL_ID, WRITE,
)
from kipper.broker.handlers.offsets import BROKER_SIDE, MAX_METADATA, answered
from kipper.protocol.errors import ErrorCode

PRODUCER_FENCED_SINCE = {24: 2, 25: 2, 26: 2}  # api key -> first version that knows error 90
# api key -> first version answered TRANSACTION_ABORTABLE (KIP-890) for a partition or group
# not in the producer's open transaction, where older versions get INVALID_TXN_STATE (Kafka 4.x:
# Produce v11, TxnOffsetCommit v4; Kafka's "genericError" transaction-supported operation)
TRANSACTION_ABORTABLE_SINCE = {0: 11, 28: 4}
# a Produce from v12 is a transaction-version-2 producer's: its batch adds the partition to the
# transaction (KIP-890 part 2) where an older one is refused
PRODUCE_ADDS_PARTITION_SINCE = 12


def _for_version(error: ErrorCode, ctx) -> int:
    if error == ErrorCode.PRODUCER_FENCED and ctx.api_version < PRODUCER_FENCED_SINCE.get(ctx.api_key, 0):
        return int(ErrorCode.INVALID_PRODUCER_EPOCH)
    return int(error)


def not_in_transaction(error: ErrorCode, ctx) -> ErrorCode:
    """``error`` as this request's version knows it: INVALID_TXN_STATE (not in the
    transaction) is TRANSACTION_ABORTABLE for the versions that have it."""
    if error == ErrorCode.INVALID_TXN_STATE and ctx.api_version >= TRANSACTION_ABORTABLE_SINCE.get(ctx.api_key, 1 << 15):
        return ErrorCode.TRANSACTION_ABORTABLE
    return error


def _known(engines, topic: str, partition: int) -> bool:
    return engines.topics.partition(topic, partition) is not None


def handle_add_partitions_to_txn(req, ctx):
    engines = ctx.engines
    # Kafka answers a refusal from a map (a topic or partition named twice is one), and the
    # coordinator's answer topic by topic as asked
    given = [(t.name, list(t.partitions)) for t in req.v3_and_below_topics]
    merged: dict[str, list[int]] = {}
    for name, parts in given:
        kept = merged.setdefault(name, [])
        kept.extend(p for p in parts if p not in kept)
    topics = list(merged.items())
    unknown = {(name, p) for name, parts in topics for p in parts if not _known(engines, name, p)}
    refused = {name for name, _ in topics if not ctx.authorize(WRITE, TOPIC, name)}
    if not ctx.authorize(WRITE, TRANSACTIONAL_ID, req.v3_and_below_transactional_id):
        def code(name, p):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif refused:  # Kafka adds nothing when one topic is refused; the rest were not attempted
        def code(name, p):
            return (ErrorCode.TOPIC_AUTHORIZATION_FAILED if name in refused
                    else ErrorCode.OPERATION_NOT_ATTEMPTED)
    elif unknown:
        # Kafka adds nothing when a partition is unknown; the rest were not attempted
        def code(name, p):
            return (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if (name, p) in unknown
                    else ErrorCode.OPERATION_NOT_ATTEMPTED)
    else:
        error = ErrorCode.INVALID_REQUEST if not req.v3_and_below_transactional_id else engines.txn.add_partitions(
            req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
            req.v3_and_below_producer_epoch,
            [(name, p) for name, parts in topics for p in parts], ctx.now)
        topics = given

        def code(name, p):
            return error
    return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": [
        {"name": name, "results_by_partition": [
            {"partition_index": p, "partition_error_code": _for_version(code(name, p), ctx)}
            for p in parts]}
        for name, parts in topics]}


def handle_add_offsets_to_txn(req, ctx):
    if not ctx.authorize(WRITE, TRANSACTIONAL_ID, req.transactional_id):
        error = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not ctx.authorize(READ, GROUP, req.group_id):
        error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif not req.transactional_id:  # Kafka's transaction coordinator: an empty id is no request
        error = ErrorCode.INVALID_REQUEST
    else:
        error = ctx.engines.txn.add_offsets(req.transactional_id, req.producer_id,
                                            req.producer_epoch, req.group_id, ctx.now)
    return {"throttle_time_ms": 0, "error_code": _for_version(error, ctx)}


def handle_end_txn(req, ctx):
    if not ctx.authorize(WRITE, TRANSACTIONAL_ID, req.transactional_id):
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)}
    if not req.transactional_id:
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.INVALID_REQUEST)}
    error = ctx.engines.txn.end_txn(req.transactional_id, req.producer_id, req.producer_epoch,
                                  req.committed, ctx.now)
    return {"throttle_time_ms": 0, "error_code": _for_version(error, ctx)}


def handle_txn_offset_commit(req, ctx):
    """As Kafka's KafkaApis then coordinators: the transactional id's and the group's
    authorization, then each topic's, then unknown topics and partitions (the broker's own
    checks), then the transaction and the group member, then each offset."""
    engines = ctx.engines
    if not ctx.authorize(WRITE, TRANSACTIONAL_ID, req.transactional_id):
        refused = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not ctx.authorize(READ, GROUP, req.group_id):
        refused = ErrorCode.GROUP_AUTHORIZATION_FAILED
    else:
        refused = ErrorCode.NONE
    # the coordinators' first checks: an empty group id, then an empty transactional id
    error = (ErrorCode.INVALID_GROUP_ID if not req.group_id else
             ErrorCode.INVALID_REQUEST if not req.transactional_id else ErrorCode.NONE)
    if refused == ErrorCode.NONE and error == ErrorCode.NONE:
        error = not_in_transaction(engines.txn.verify_offset_commit(
            req.transactional_id, req.producer_id, req.producer_epoch, req.group_id), ctx)
        if error == ErrorCode.NONE:
            error = engines.groups.validate_txn_commit(req.group_id, req.get("member_id", ""),
                                                      req.get("generation_id_or_member_epoch", -1),
                                                      req.get("group_instance_id"))
    out = []
    for t in req.topics:
        name = t.name
        parts = []
        readable = refused == ErrorCode.NONE and ctx.authorize(READ, TOPIC, name)
        for p in t.partitions:
            if refused != ErrorCode.NONE:
                code = refused
            elif not readable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif not _known(engines, name, p.partition_index):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif error != ErrorCode.NONE:
                code = error
            elif p.committed_metadata is not None and len(p.committed_metadata) > MAX_METADATA:
                code = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                code = ErrorCode.NONE
                engines.offsets.stage(req.group_id, req.producer_id, name, p.partition_index,
                                     p.committed_offset, p.get("committed_leader_epoch", -1),
                                     p.committed_metadata, ctx.now, producer_epoch=req.producer_epoch)
            parts.append({"partition_index": p.partition_index, "error_code": int(code)})
        out.append((name, parts))
    merge = refused == ErrorCode.NONE and any(r["error_code"] in BROKER_SIDE for _, parts in out for r in parts)
    return {"throttle_time_ms": 0, "topics": answered(out, merge)}


def handle_write_txn_markers(req, ctx):
    """A marker (or a topic of one) that names no partition has no answer, as Kafka's."""
    txn = ctx.engines.txn
    allowed = ctx.authorize(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME)
    out = []
    for m in req.markers:
        topics = []
        for t in m.topics:
            if t.partition_indexes:
                topics.append({"name": t.name, "partitions": [
                    {"partition_index": p, "error_code": int(txn.write_markers(
                        m.producer_id, m.producer_epoch, m.transaction_result, m.coordinator_epoch,
                        t.name, p, ctx.now) if allowed else ErrorCode.CLUSTER_AUTHORIZATION_FAILED)}
                    for p in t.partition_indexes]})
        if topics:
            out.append({"producer_id": m.producer_id, "topics": topics})
    return {"markers": out}
