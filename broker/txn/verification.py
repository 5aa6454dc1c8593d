"""KIP-890 at a partition leader: a transactional write checked (or, at transaction version 2,
added) with the transaction coordinator, and the coordinator's answer as the client sees it.

Kafka's partition leader asks the coordinator with AddPartitionsToTxn v4+ (its
AddPartitionsToTxnManager) whichever broker coordinates the transactional id; kipper asks a
local coordinator directly (broker/txn/service.py) and another broker's over a peer link
(broker/txn_verifier.py). Here, without I/O, what both share: which operation a request's
version asks for, the request's transaction entry, the coordinator's answer (or its absence)
read into an error per partition, and that error as Kafka's ReplicaManager answers a Produce
and its group coordinator a TxnOffsetCommit.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from kipper.protocol.errors import ErrorCode

E = ErrorCode


class Operation(IntEnum):
    """What the client's version supports (Kafka's TransactionSupportedOperation)."""

    DEFAULT_ERROR = 0  # INVALID_TXN_STATE for a partition not in the transaction
    GENERIC_ERROR_SUPPORTED = 1  # TRANSACTION_ABORTABLE instead (KIP-890)
    ADD_PARTITION = 2  # transaction version 2: the request adds the partition


def produce_operation(version: int) -> Operation:
    """Produce v12+ adds (transaction version 2), v11 knows TRANSACTION_ABORTABLE."""
    return Operation.ADD_PARTITION if version > 11 else \
        Operation.GENERIC_ERROR_SUPPORTED if version > 10 else Operation.DEFAULT_ERROR


def txn_offset_commit_operation(version: int) -> Operation:
    """TxnOffsetCommit v5+ adds its group's partition, v4 knows TRANSACTION_ABORTABLE."""
    return Operation.ADD_PARTITION if version > 4 else \
        Operation.GENERIC_ERROR_SUPPORTED if version > 3 else Operation.DEFAULT_ERROR


class Ask(NamedTuple):
    """One AddPartitionsToTxn for the shell to send: to ``coordinator`` (a node id), the
    request ``body``; ``answered`` is called with the parsed answer, or with NETWORK_EXCEPTION
    (not delivered) or None (the coordinator serves no v4+: not verified, as Kafka skips)."""

    coordinator: int
    body: dict
    answered: object


def add_request(transactional_id: str, producer_id: int, producer_epoch: int, partitions,
                operation: Operation) -> dict:
    """AddPartitionsToTxn v4+'s body: one transaction, verify-only unless it adds."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return {"transactions": [{
        "transactional_id": transactional_id, "producer_id": producer_id, "producer_epoch": producer_epoch,
        "verify_only": operation != Operation.ADD_PARTITION,
        "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}]}


def answered_errors(answer, partitions, operation: Operation) -> dict:
    """(topic, partition) -> the error the leader goes on with, from the coordinator's answer
    (Kafka's AddPartitionsToTxnHandler): NETWORK_EXCEPTION when none came, nothing when the
    coordinator does not serve the brokers' versions, CLUSTER_AUTHORIZATION_FAILED as
    INVALID_TXN_STATE, PRODUCER_FENCED as INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE as
    INVALID_TXN_STATE for the clients that do not know it. Partitions not named are NONE."""
    if answer is None:
        return {}
    if isinstance(answer, ErrorCode):
        return dict.fromkeys(partitions, answer)
    if answer.error_code:
        error = E(answer.error_code)
        return dict.fromkeys(partitions, E.INVALID_TXN_STATE if error == E.CLUSTER_AUTHORIZATION_FAILED else error)
    out = {}
    for result in answer.results_by_transaction:
        for topic in result.topic_results:
            for p in topic.results_by_partition:
                if p.partition_error_code:
                    out[topic.name, p.partition_index] = leader_error(E(p.partition_error_code), operation)
    return out


def leader_error(code: ErrorCode, operation: Operation) -> ErrorCode:
    """One partition's error in the coordinator's answer as the leader goes on with it."""
    if code == E.PRODUCER_FENCED:  # producers expect INVALID_PRODUCER_EPOCH here
        return E.INVALID_PRODUCER_EPOCH
    if code == E.TRANSACTION_ABORTABLE and operation == Operation.DEFAULT_ERROR:
        return E.INVALID_TXN_STATE
    return code


# retriable errors older clients may not retry: Kafka's leader answers NOT_ENOUGH_REPLICAS
# (which triggers no metadata refresh) with the underlying error in the message
_UNVERIFIED = frozenset({E.NETWORK_EXCEPTION, E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE,
                         E.NOT_COORDINATOR})


def produce_error(code: ErrorCode, operation: Operation) -> tuple[ErrorCode, str | None]:
    """A verification's error as a Produce answers it (Kafka's ReplicaManager): the code and
    its message. CONCURRENT_TRANSACTIONS stays for transaction version 2 (common while the
    previous transaction completes)."""
    if code in _UNVERIFIED or (code == E.CONCURRENT_TRANSACTIONS and operation != Operation.ADD_PARTITION):
        return E.NOT_ENOUGH_REPLICAS, ("Unable to verify the partition has been added to the transaction. "
                                       f"Underlying error: {code.name}")
    if code == E.INVALID_TXN_STATE:
        return code, "Partition was not added to the transaction"
    return code, None


def offset_commit_error(code: ErrorCode) -> ErrorCode:
    """A verification's error as Kafka's group coordinator answers a TxnOffsetCommit
    (its handleOperationException)."""
    if code == E.NETWORK_EXCEPTION:
        return E.COORDINATOR_LOAD_IN_PROGRESS
    if code in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS, E.REQUEST_TIMED_OUT):
        return E.COORDINATOR_NOT_AVAILABLE
    if code in (E.NOT_LEADER_OR_FOLLOWER, E.KAFKA_STORAGE_ERROR):
        return E.NOT_COORDINATOR
    return code
