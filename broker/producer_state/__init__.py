"""Idempotent-producer state (seed 000, KIP-360): per-partition managers, their
compact table, the settings every partition shares, the broker-wide view (expiry,
snapshot) and producer id allocation. The floor under log/: each Partition owns a
manager, as Kafka's UnifiedLog owns its ProducerStateManager."""

from kipper.broker.producer_state.ids import ProducerIdManager
from kipper.broker.producer_state.manager import (
    APPEND, DUPLICATE, LATEST, REJECT, WINDOW5, Counters, ProducerStateManager, Validation,
)

__all__ = ["APPEND", "DUPLICATE", "LATEST", "REJECT", "WINDOW5", "Counters",
           "ProducerIdManager", "ProducerStateManager", "Validation"]
