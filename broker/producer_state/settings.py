"""What every partition's producer state shares (seed 000, KIP-360): the mode, the
duplicate window, the expiry and one set of counters.

One ``ProducerStateSettings`` is built by the composition root and handed to every
Partition, which makes its ``ProducerStateManager`` from it on the first idempotent
batch. ``producer.id.expiration.ms`` is a dynamic broker config (KIP-226): it is read
from the live config view at each expiry, so a change reaches every partition at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kipper.broker.producer_state.manager import Counters, ProducerStateManager

_DEFAULTS = {"producer.id.expiration.ms": 86_400_000}


@dataclass(frozen=True)
class ProducerStateSettings:
    mode: str = "latest"
    window: int = 10_000_000
    # the broker config with the dynamic broker configs over it (broker/dynamic_configs.py)
    live: Mapping = field(default_factory=lambda: _DEFAULTS)
    counters: Counters = field(default_factory=Counters)

    @property
    def expiration_ms(self) -> int:
        return self.live["producer.id.expiration.ms"]

    def new_manager(self) -> ProducerStateManager:
        return ProducerStateManager(self.mode, self.window, self.counters)
