"""Transaction APIs: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit,
WriteTxnMarkers. Decode, ask the transaction coordinator (broker/txn), answer.

Both protocols are served, as Kafka 4.4 serves them. A transaction-version-2 producer
(transaction.version=2 finalized, KIP-890 part 2) adds partitions with its Produce v12
and groups with its TxnOffsetCommit v5+, and ends each transaction with EndTxn v5, which
bumps the epoch; a classic one sends AddPartitionsToTxn v0-3 and AddOffsetsToTxn first.
AddPartitionsToTxn v4+ is the brokers' batched form (CLUSTER_ACTION; VerifyOnly). Versions
from before KIP-588 get INVALID_PRODUCER_EPOCH where newer ones get PRODUCER_FENCED; a
partition or group not in the transaction is INVALID_TXN_STATE, or TRANSACTION_ABORTABLE
for the versions that know it.
"""

from __future__ import annotations

import asyncio

from kipper.broker.acl.model import (
    CLUSTER, CLUSTER_ACTION, CLUSTER_NAME, GROUP, READ, TOPIC, TRANSACTIONAL_ID, WRITE,
)
from kipper.broker.config_values import java_hash_order, java_long_hash, java_sized_capacity, java_string_hash
from kipper.broker.groups.journal import OFFSETS_TOPIC, partition_for
from kipper.broker.handlers.offsets import MAX_METADATA, answered, as_asked, broker_answered
from kipper.broker.txn import verification
from kipper.protocol.errors import ErrorCode

PRODUCER_FENCED_SINCE = {24: 2, 25: 2, 26: 2}  # api key -> first version that knows error 90
# api key -> first version answered TRANSACTION_ABORTABLE (KIP-890) for a partition or group
# not in the producer's open transaction, where older versions get INVALID_TXN_STATE (Kafka 4.x:
# Produce v11, TxnOffsetCommit v4; Kafka's "genericError" transaction-supported operation)
TRANSACTION_ABORTABLE_SINCE = {0: 11, 28: 4}
# TxnOffsetCommit v5 is a transaction-version-2 producer's: it adds its group to the transaction
# (KIP-890 part 2; a Produce v12 its partition: broker/txn/verification.py)
TXN_OFFSET_COMMIT_ADDS_GROUP_SINCE = 5
END_TXN_V2_SINCE = 5  # EndTxn v5: transaction version 2, an epoch bump per transaction
BROKER_ADD_PARTITIONS_SINCE = 4  # AddPartitionsToTxn v4+: batched, from brokers
TOPIC_IDS_SINCE = 6  # TxnOffsetCommit v6 names topics by id (KIP-1319)
# how long a request waits for another broker's coordinator: past the shell's own timeout
# (broker/txn_verifier.py, Kafka's request.timeout.ms), so that one answers first
ASK_TIMEOUT_S = 35.0


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


async def asked_coordinator(txn, transactional_id: str, producer_id: int, producer_epoch: int, partitions,
                            operation) -> dict:
    """(topic, partition) -> the error another broker's transaction coordinator answered
    (broker/txn/verification.py: the ones in the transaction are not named)."""
    future = asyncio.get_running_loop().create_future()
    txn.ask_coordinator(transactional_id, producer_id, producer_epoch, partitions, operation,
                        lambda errors: future.done() or future.set_result(errors))
    try:
        return await asyncio.wait_for(future, ASK_TIMEOUT_S)
    except asyncio.TimeoutError:
        return dict.fromkeys(partitions, ErrorCode.NETWORK_EXCEPTION)


def _known(engines, topic: str, partition: int) -> bool:
    return engines.topics.partition(topic, partition) is not None


def handle_add_partitions_to_txn(req, ctx):
    if ctx.api_version >= BROKER_ADD_PARTITIONS_SINCE:
        return _add_partitions_batched(req, ctx)
    engines = ctx.engines
    # Kafka answers a refusal from a map (a topic or partition named twice is one), and the
    # coordinator's answer topic by topic as asked
    given = [(t.name, list(t.partitions)) for t in req.v3_and_below_topics]
    merged: dict[str, list[int]] = {}
    for name, parts in given:
        kept = merged.setdefault(name, [])
        kept.extend(p for p in parts if p not in kept)
    topics = [(name, parts) for name, parts in merged.items() if parts]  # a map: no topic of no partition
    unknown = {(name, p) for name, parts in topics for p in parts if not _known(engines, name, p)}
    refused = {name for name, _ in topics if not ctx.authorize(WRITE, TOPIC, name)}
    if not ctx.authorize(WRITE, TRANSACTIONAL_ID, req.v3_and_below_transactional_id):
        topics = given  # (Kafka's error response: every topic as asked, one of no partition too)

        def code(name, p):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif refused or unknown:
        # Kafka adds nothing when a topic is refused or a partition unknown; the rest were not
        # attempted. Its resultForTransaction lists the topics in a HashMap's order
        order = java_hash_order(name for name, _ in topics)
        topics.sort(key=lambda t: order.index(t[0]))

        def code(name, p):
            return (ErrorCode.TOPIC_AUTHORIZATION_FAILED if name in refused
                    else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if (name, p) in unknown
                    else ErrorCode.OPERATION_NOT_ATTEMPTED)
    elif not req.v3_and_below_transactional_id:  # the coordinator's refusal, answered as asked
        topics = given

        def code(name, p):
            return ErrorCode.INVALID_REQUEST
    else:
        error = engines.txn.add_partitions(
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


def _add_partitions_batched(req, ctx):
    """v4+: each transaction on its own, verify-only or added with transaction version 2;
    an unknown partition fails its transaction (the rest OPERATION_NOT_ATTEMPTED), answered
    from a map by topic, as a verification is; the coordinator's answers to an addition list
    the topics as asked. (Kafka lists the transactions in the order they complete, kipper in
    the order asked.)"""
    engines = ctx.engines
    if not ctx.authorize(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME):
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                "results_by_transaction": []}
    if any(t.transactional_id is None for t in req.transactions):
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.INVALID_REQUEST), "results_by_transaction": []}
    results = []
    for t in req.transactions:
        wanted = [(topic.name, p) for topic in t.topics for p in topic.partitions]
        unknown = {tp for tp in wanted if not _known(engines, *tp)}
        if unknown:
            codes = {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else ErrorCode.OPERATION_NOT_ATTEMPTED
                     for tp in wanted}
            results.append(_from_partitions(t.transactional_id, codes))
            continue
        # (the same answer a Produce gets from a coordinator on its own broker: answer_leader)
        errors = (dict.fromkeys(wanted, ErrorCode.INVALID_REQUEST) if not t.transactional_id else
                  engines.txn.answer_leader(t.transactional_id, t.producer_id, t.producer_epoch, wanted,
                                            not t.verify_only, ctx.now))
        if t.verify_only:  # the coordinator's verification answers from the partitions too
            results.append(_from_partitions(t.transactional_id, errors))
            continue
        results.append({"transactional_id": t.transactional_id, "topic_results": [
            {"name": topic.name, "results_by_partition": [
                {"partition_index": p, "partition_error_code": int(errors[(topic.name, p)])} for p in topic.partitions]}
            for topic in t.topics]})  # as asked: a topic of no partition too, as Kafka's coordinator
    return {"throttle_time_ms": 0, "error_code": 0, "results_by_transaction": results}


def _from_partitions(transactional_id: str, codes: dict) -> dict:
    """A transaction's result built from its partitions, as Kafka's resultForTransaction: by
    topic in a HashMap's order, a topic of no partition not answered."""
    by_topic: dict[str, list] = {}
    for (name, p), code in codes.items():
        by_topic.setdefault(name, []).append({"partition_index": p, "partition_error_code": int(code)})
    return {"transactional_id": transactional_id, "topic_results": [
        {"name": name, "results_by_partition": by_topic[name]} for name in java_hash_order(by_topic)]}


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
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
                "producer_id": -1, "producer_epoch": -1}
    if not req.transactional_id:  # Kafka's transaction coordinator: an empty id is no request
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.INVALID_REQUEST),
                "producer_id": -1, "producer_epoch": -1}
    if ctx.api_version >= END_TXN_V2_SINCE:
        result = ctx.engines.txn.end_txn_v2(req.transactional_id, req.producer_id, req.producer_epoch,
                                            req.committed, ctx.now)
        return {"throttle_time_ms": 0, "error_code": int(result.error), "producer_id": result.producer_id,
                "producer_epoch": result.producer_epoch}
    error = ctx.engines.txn.end_txn(req.transactional_id, req.producer_id, req.producer_epoch,
                                  req.committed, ctx.now)
    return {"throttle_time_ms": 0, "error_code": _for_version(error, ctx), "producer_id": -1, "producer_epoch": -1}


def handle_txn_offset_commit(req, ctx, verified: ErrorCode | None = None):
    """Kafka's order: the ACLs of the transactional id and the group answer every partition;
    then each topic (an id v6 cannot resolve, READ on it, its partitions); the coordinator
    checks (and from v5 adds the group to) the transaction for what is left, and the group
    its member; then the offsets are staged until the transaction ends. When another broker
    coordinates the transactional id, it is asked first (the group's `__consumer_offsets`
    partition, as Kafka's group coordinator asks) and ``verified`` is what it answered."""
    engines = ctx.engines
    by_id = ctx.api_version >= TOPIC_IDS_SINCE
    if not ctx.authorize(WRITE, TRANSACTIONAL_ID, req.transactional_id):
        refused = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not ctx.authorize(READ, GROUP, req.group_id):
        refused = ErrorCode.GROUP_AUTHORIZATION_FAILED
    else:
        refused = None
    codes, names = {}, []
    for i, t in enumerate(req.topics):
        name = _topic_name(engines, t) if by_id else t.name  # v6 names topics by id
        names.append(name)
        for p in t.partitions:
            if refused is not None:
                codes[i, p.partition_index] = refused
            elif name is None:
                codes[i, p.partition_index] = ErrorCode.UNKNOWN_TOPIC_ID
            elif not ctx.authorize(READ, TOPIC, name):
                codes[i, p.partition_index] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif not _known(engines, name, p.partition_index):
                codes[i, p.partition_index] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if refused is None and any((i, p.partition_index) not in codes
                               for i, t in enumerate(req.topics) for p in t.partitions):
        # the coordinators' first checks: an empty group id, then an empty transactional id
        error = (ErrorCode.INVALID_GROUP_ID if not req.group_id else
                 ErrorCode.INVALID_REQUEST if not req.transactional_id else ErrorCode.NONE)
        if error == ErrorCode.NONE and verified is None and engines.txn.coordinated_elsewhere(req.transactional_id):
            return _verify_then_commit(req, ctx)
        if error == ErrorCode.NONE:
            error = verified if verified is not None else not_in_transaction(engines.txn.verify_offset_commit(
                req.transactional_id, req.producer_id, req.producer_epoch, req.group_id, ctx.now,
                add=ctx.api_version >= TXN_OFFSET_COMMIT_ADDS_GROUP_SINCE), ctx)
        if error == ErrorCode.NONE:
            error = engines.groups.validate_txn_commit(
                req.group_id, req.get("member_id", ""), req.get("generation_id_or_member_epoch", -1),
                req.get("group_instance_id"), api_version=ctx.api_version,
                partitions=[(names[i], p.partition_index) for i, t in enumerate(req.topics)
                            for p in t.partitions if (i, p.partition_index) not in codes])
        too_large = staged = False  # (a commit whose every offset the coordinator refused)
        for i, t in enumerate(req.topics):
            for p in t.partitions:
                if (i, p.partition_index) in codes:
                    continue
                if error == ErrorCode.NONE and p.committed_metadata is not None and len(p.committed_metadata) > MAX_METADATA:
                    codes[i, p.partition_index] = ErrorCode.OFFSET_METADATA_TOO_LARGE
                    too_large = True
                    continue
                codes[i, p.partition_index] = error
                if error == ErrorCode.NONE:
                    staged = True
                    engines.offsets.stage(req.group_id, req.producer_id, names[i], p.partition_index,
                                         p.committed_offset, p.get("committed_leader_epoch", -1),
                                         p.committed_metadata, ctx.now, producer_epoch=req.producer_epoch)
        if staged:  # Kafka's commit makes the (empty, classic) group at once, whatever the transaction does
            engines.groups.ensure_simple_group(req.group_id)
        elif too_large:  # as OffsetCommit: a group only the coordinator's writes see
            engines.groups.commit_refused(req.group_id)
    out = [{"name": names[i] or "", "topic_id": t.get("topic_id"), "kept": refused is None and (
        names[i] is None or not ctx.authorize(READ, TOPIC, names[i]) or engines.topics.get(names[i]) is None),
        "partitions": [
        {"partition_index": p.partition_index, "error_code": int(codes[i, p.partition_index])}
        for p in t.partitions]} for i, t in enumerate(req.topics)]
    if refused is not None:  # Kafka's error response: every topic as asked, one of no partition too
        return {"throttle_time_ms": 0, "topics": as_asked(out)}
    return {"throttle_time_ms": 0, "topics": answered(out, broker_answered(out))}


async def _verify_then_commit(req, ctx):
    offsets = ctx.engines.topics.get(OFFSETS_TOPIC)
    tp = (OFFSETS_TOPIC, partition_for(req.group_id, len(offsets.partitions) if offsets else 1))
    errors = await asked_coordinator(ctx.engines.txn, req.transactional_id, req.producer_id, req.producer_epoch,
                                     [tp], verification.txn_offset_commit_operation(ctx.api_version))
    error = verification.offset_commit_error(errors.get(tp, ErrorCode.NONE))
    return handle_txn_offset_commit(req, ctx, ErrorCode(_for_version(error, ctx)))


def _topic_name(engines, t) -> str | None:
    topic = engines.topics.by_id(t.topic_id)
    return topic.name if topic is not None else None


def handle_write_txn_markers(req, ctx):
    """A marker (or a topic of one) that names no partition has no answer, as Kafka's; markers of
    one producer id are answered as one, the later marker's answer standing for a partition both
    name. Kafka's answer is a ConcurrentHashMap by producer id of ConcurrentHashMaps by partition,
    each topic's partitions gathered in a HashMap by name: the answer follows their orders."""
    if not ctx.authorize(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME):
        return _refused_markers(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    txn = ctx.engines.txn
    by_producer: dict[int, dict[tuple[str, int], int]] = {}
    for m in req.markers:
        answers = by_producer.setdefault(m.producer_id, {}) if any(t.partition_indexes for t in m.topics) else {}
        for t in m.topics:
            for p in t.partition_indexes:
                answers[(t.name, p)] = int(txn.write_markers(
                    m.producer_id, m.producer_epoch, m.transaction_result, m.coordinator_epoch, t.name, p, ctx.now))
    return {"markers": [{"producer_id": pid, "topics": _marker_topics(by_producer[pid], concurrent=True)}
                        for pid in java_hash_order(by_producer, hash=java_long_hash, concurrent=True)]}


def _refused_markers(req, error: ErrorCode) -> dict:
    """The whole request refused, as Kafka's WriteTxnMarkersRequest.getErrorResponse answers it:
    every marker's producer id, even one that names no partition, with the error for each
    partition it names; a later marker of the same producer id replaces the earlier one whole.
    A HashMap sized to the markers by producer id, of HashMaps by partition."""
    by_producer: dict[int, dict[tuple[str, int], int]] = {}
    for m in req.markers:
        by_producer[m.producer_id] = {(t.name, p): int(error) for t in m.topics for p in t.partition_indexes}
    capacity = java_sized_capacity(len(req.markers), len(by_producer))
    return {"markers": [{"producer_id": pid, "topics": _marker_topics(by_producer[pid], concurrent=False)}
                        for pid in java_hash_order(by_producer, capacity, hash=java_long_hash)]}


def _marker_topics(answers: dict[tuple[str, int], int], concurrent: bool) -> list[dict]:
    topics: dict[str, list] = {}
    for name, p in java_hash_order(answers, hash=_topic_partition_hash, concurrent=concurrent):
        topics.setdefault(name, []).append({"partition_index": p, "error_code": answers[(name, p)]})
    return [{"name": name, "partitions": topics[name]} for name in java_hash_order(topics)]


def _topic_partition_hash(tp: tuple[str, int]) -> int:
    """Kafka's TopicPartition.hashCode."""
    return (31 * (31 + tp[1]) + java_string_hash(tp[0])) & 0xFFFFFFFF
