"""Idempotent-producer state (seed 000, KIP-360): per-partition managers,
their compact table, and producer id allocation."""

from kipper.broker.producer_state.ids import ProducerIdManager
from kipper.broker.producer_state.manager import (
    APPEND, DUPLICATE, LATEST, REJECT, WINDOW5, Counters, ProducerStateManager, Validation,
)

__all__ = ["APPEND", "DUPLICATE", "LATEST", "REJECT", "WINDOW5", "Counters",
           "ProducerIdManager", "ProducerStateManager", "Validation"]
