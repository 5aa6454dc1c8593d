"""Kafka transactions (KIP-98, KIP-360 epochs, KIP-890 part 1 verification) on one broker.

- ``states``: the transaction states and the table of allowed moves.
- ``coordinator``: the TransactionCoordinator engine (transactional id -> producer id,
  epoch, state, partitions, groups, timeout), driven with time as an argument.
- ``markers``: the COMMIT/ABORT control batches the coordinator writes into partitions.
- ``service``: the above wired to the broker's partitions, producer state and groups.

The partition's side (last stable offset, aborted transactions) is the log's:
broker/log/txn_index.py.
"""

from kipper.broker.txn.coordinator import (
    Completion, InitResult, TransactionCoordinator, TransactionMetadata, TxnSettings,
)
from kipper.broker.txn.states import TRANSITIONS, IllegalTransition, TxnState, transition

__all__ = ["TRANSITIONS", "Completion", "IllegalTransition", "InitResult",
           "TransactionCoordinator", "TransactionMetadata", "TxnSettings", "TxnState", "transition"]
