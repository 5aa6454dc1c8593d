"""The operator's view of producers and transactions (kafka-transactions.sh):
DescribeProducers reads a partition's producer state (seed 000 / KIP-360),
DescribeTransactions and ListTransactions the transaction coordinator."""

from __future__ import annotations

import re

from kipper.broker.acl.model import DESCRIBE, READ, TOPIC, TRANSACTIONAL_ID
from kipper.broker.log.topics import validate_topic_name
from kipper.broker.txn.states import TxnState
from kipper.protocol.errors import ErrorCode, kafka_text

STATE_NAMES = {s.value: s for s in TxnState}


UNKNOWN_TOPIC_TEXT = "This server does not host this topic-partition."  # Kafka's, for error 3


def handle_describe_producers(req, ctx):
    engines = ctx.engines
    out = []
    for t in req.topics:
        parts = []
        readable = ctx.authorize(READ, TOPIC, t.name)
        for index in t.partition_indexes:
            partition = engines.topics.partition(t.name, index)
            if partition is None and validate_topic_name(t.name) is not None:
                # a name no topic could have is Kafka's INVALID_TOPIC_EXCEPTION, with its text
                # (its first check, before authorization)
                parts.append({"partition_index": index, "error_code": int(ErrorCode.INVALID_TOPIC_EXCEPTION),
                              "error_message": validate_topic_name(t.name), "active_producers": []})
                continue
            if not readable:
                parts.append({"partition_index": index,
                              "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                              "error_message": kafka_text(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                              "active_producers": []})
                continue
            if partition is None:  # Kafka's text for a topic it does not have; null for a partition
                parts.append({"partition_index": index,
                              "error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
                              "error_message": None if engines.topics.get(t.name) else UNKNOWN_TOPIC_TEXT,
                              "active_producers": []})
                continue
            producers = []
            # Kafka's ProducerStateEntry: the last batch's max timestamp, and the coordinator
            # epoch of the producer's last marker on the partition (-1 before any)
            for pid, epoch, last_seq, last_ts, coordinator_epoch, txn_start in partition.active_producers():
                producers.append({
                    "producer_id": pid, "producer_epoch": epoch, "last_sequence": last_seq,
                    "last_timestamp": last_ts, "coordinator_epoch": coordinator_epoch,
                    "current_txn_start_offset": txn_start})
            parts.append({"partition_index": index, "error_code": 0, "error_message": None,
                          "active_producers": producers})
        out.append({"name": t.name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": out}


def _by_topic(partitions) -> list[dict]:
    topics: dict[str, list[int]] = {}
    for topic, partition in sorted(partitions):
        topics.setdefault(topic, []).append(partition)
    return [{"topic": t, "partitions": p} for t, p in topics.items()]


def handle_describe_transactions(req, ctx):
    txn = ctx.engines.txn
    out = []
    for tid in req.transactional_ids:
        meta = txn.transaction(tid) if tid else None
        if meta is None or not ctx.authorize(DESCRIBE, TRANSACTIONAL_ID, tid):
            code = (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED if not ctx.authorize(DESCRIBE, TRANSACTIONAL_ID, tid)
                    else ErrorCode.TRANSACTIONAL_ID_NOT_FOUND if tid else ErrorCode.INVALID_REQUEST)
            out.append({"error_code": int(code), "transactional_id": tid,
                        "transaction_state": "", "transaction_timeout_ms": 0,
                        "transaction_start_time_ms": 0, "producer_id": 0, "producer_epoch": 0,  # Kafka's
                        "topics": []})
            continue
        out.append({"error_code": 0, "transactional_id": tid, "transaction_state": meta.state.value,
                    "transaction_timeout_ms": meta.timeout_ms,
                    "transaction_start_time_ms": meta.txn_start, "producer_id": meta.producer_id,
                    "producer_epoch": meta.producer_epoch, "topics": _by_topic(txn.held_partitions(meta))})
    return {"throttle_time_ms": 0, "transaction_states": out}


def handle_list_transactions(req, ctx):
    pattern = req.get("transactional_id_pattern")
    if pattern:
        try:
            pattern = re.compile(pattern)
        except re.error:  # Kafka's first check: nothing else is answered, not the unknown states
            return {"throttle_time_ms": 0, "error_code": int(ErrorCode.INVALID_REGULAR_EXPRESSION),
                    "unknown_state_filters": [], "transaction_states": []}
    unknown = [s for s in req.state_filters if s not in STATE_NAMES]
    states = {STATE_NAMES[s] for s in req.state_filters if s in STATE_NAMES}
    base = {"throttle_time_ms": 0, "error_code": 0, "unknown_state_filters": unknown,
            "transaction_states": []}
    if req.state_filters and not states:
        return base  # only unknown states asked for: nothing can match
    found = ctx.engines.txn.list(states, set(req.producer_id_filters),
                                 req.get("duration_filter", -1), pattern or None, ctx.now)
    return {**base, "transaction_states": [  # only the ids the session may describe
        {"transactional_id": m.transactional_id, "producer_id": m.producer_id,
         "transaction_state": m.state.value} for m in found
        if ctx.authorize(DESCRIBE, TRANSACTIONAL_ID, m.transactional_id)]}
