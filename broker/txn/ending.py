"""How EndTxn of a transaction-version-2 producer (EndTxn v5, KIP-890 part 2) is decided.

With transaction version 2 every completed transaction bumps the producer epoch, so an
EndTxn names the epoch of the transaction it ends and a retry names the epoch before the
bump. Kafka's table (TransactionCoordinator.endTransaction), "retry" meaning the request's
epoch is one below the current one (or the last epoch of a producer id rotated away):

    state            abort: retry | current       commit: retry | current
    Empty                   PRODUCER_FENCED | bump          PRODUCER_FENCED | INVALID_TXN_STATE
    CompleteAbort           NONE | bump                     INVALID_TXN_STATE | INVALID_TXN_STATE
    CompleteCommit          INVALID_TXN_STATE | bump        NONE | INVALID_TXN_STATE
    Ongoing                 (current only) prepare the abort or the commit, with a bump
    PrepareCommit/Abort     CONCURRENT_TRANSACTIONS (retry or current)

"bump" in a settled state is an abort of an empty transaction: only the epoch moves. In a
Prepare* state the epoch is already bumped, so "current" is the next transaction's: an EndTxn
sent before the markers are all written (a cluster's, whose markers go to other brokers) is
retried, as Kafka 4.x answers it (KAFKA-18575), not fenced.
"""

from __future__ import annotations

from typing import NamedTuple

from kipper.broker.txn.states import TxnState
from kipper.protocol.errors import ErrorCode

EPOCH_EXHAUSTED = 32767 - 1  # Kafka's isEpochExhausted: epoch >= Short.MAX_VALUE - 1
S = TxnState


class Decision(NamedTuple):
    error: ErrorCode  # NONE with prepare False: a retry, answered with the current pair
    prepare: bool = False  # move to PrepareCommit/PrepareAbort, bumping the epoch
    empty: bool = False  # an abort with nothing added: its start time is now


def decide(meta, producer_id: int, producer_epoch: int, committed: bool) -> Decision:
    if meta is None:
        return Decision(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    state = meta.state
    # a retry of an EndTxn whose bump exhausted the epoch and rotated the producer id
    retry_on_overflow = (meta.last_producer_id == producer_id and producer_epoch == EPOCH_EXHAUSTED
                         and meta.producer_epoch == 0)
    retry_on_bump = meta.producer_epoch == producer_epoch + 1
    if meta.producer_id != producer_id and not retry_on_overflow:
        return Decision(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        valid = retry_on_bump or producer_epoch == meta.producer_epoch
    elif state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        valid = retry_on_bump or retry_on_overflow or producer_epoch == meta.producer_epoch
    else:
        valid = producer_epoch == meta.producer_epoch
    if not valid:
        return Decision(ErrorCode.PRODUCER_FENCED)
    retry = retry_on_bump or retry_on_overflow
    if state == S.ONGOING:
        return Decision(ErrorCode.NONE, prepare=True)
    if state == S.COMPLETE_COMMIT:
        if committed:
            return Decision(ErrorCode.NONE if retry else ErrorCode.INVALID_TXN_STATE)
        return Decision(ErrorCode.INVALID_TXN_STATE) if retry else Decision(ErrorCode.NONE, True, True)
    if state == S.COMPLETE_ABORT:
        if committed:
            return Decision(ErrorCode.INVALID_TXN_STATE)
        return Decision(ErrorCode.NONE) if retry else Decision(ErrorCode.NONE, True, True)
    if state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        return Decision(ErrorCode.CONCURRENT_TRANSACTIONS)
    if state == S.EMPTY and not committed:
        return Decision(ErrorCode.NONE, True, True)
    return Decision(ErrorCode.INVALID_TXN_STATE)
