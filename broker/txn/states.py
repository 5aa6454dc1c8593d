"""Transaction states of one transactional id and the moves between them.

    Empty --add partitions/offsets--> Ongoing --EndTxn(commit)--> PrepareCommit --markers--> CompleteCommit
                                        |  \--EndTxn(abort)----> PrepareAbort  --markers--> CompleteAbort
                                        \--timeout / new producer--> PrepareEpochFence --> PrepareAbort
    Empty, CompleteCommit, CompleteAbort --InitProducerId--> Empty;  --expiry--> Dead
    Empty, CompleteCommit, CompleteAbort --EndTxn v5 (abort)--> PrepareAbort   (transaction version 2)

``TRANSITIONS`` is Kafka's TransactionState table (valid previous states,
read the other way round), enforced by broker/transitions.py; ``transition`` is
the only place a state changes.
"""

from __future__ import annotations

from enum import Enum

from kipper.broker.transitions import IllegalTransition, Transitions  # noqa: F401  (txn's too)


class TxnState(str, Enum):
    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"
    DEAD = "Dead"


S = TxnState

TRANSITIONS = Transitions("transaction", {
    S.EMPTY: {S.EMPTY, S.ONGOING, S.PREPARE_ABORT, S.DEAD},
    S.ONGOING: {S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT, S.PREPARE_EPOCH_FENCE},
    S.PREPARE_COMMIT: {S.COMPLETE_COMMIT},
    S.PREPARE_ABORT: {S.COMPLETE_ABORT},
    S.PREPARE_EPOCH_FENCE: {S.PREPARE_ABORT},
    # (transaction version 2 aborts a settled transaction: EndTxn v5 ending nothing bumps the epoch)
    S.COMPLETE_COMMIT: {S.EMPTY, S.ONGOING, S.PREPARE_ABORT, S.DEAD},
    S.COMPLETE_ABORT: {S.EMPTY, S.ONGOING, S.PREPARE_ABORT, S.DEAD},
    S.DEAD: set(),
}, name=lambda state: state.value)

# a commit or abort is being completed: the client must retry (CONCURRENT_TRANSACTIONS)
COMPLETING = frozenset({S.PREPARE_COMMIT, S.PREPARE_ABORT, S.PREPARE_EPOCH_FENCE})
# no transaction open: InitProducerId may bump the epoch, expiry may remove the id
SETTLED = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})


def transition(meta, to: TxnState, now: int) -> None:
    """Move ``meta`` (a TransactionMetadata) to ``to``, or raise IllegalTransition."""
    TRANSITIONS.check(meta.state, to, meta.transactional_id)
    meta.state = to
    meta.last_update = now
