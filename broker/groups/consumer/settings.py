"""Consumer-group (KIP-848) settings: one frozen dataclass from the broker config's
``group.consumer.*`` keys."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConsumerGroupSettings:
    session_timeout_ms: int = 45000      # Kafka's group.consumer.session.timeout.ms default
    heartbeat_interval_ms: int = 5000    # group.consumer.heartbeat.interval.ms
    max_size: int = 2**31 - 1            # group.consumer.max.size
    assignors: tuple[str, ...] = ("uniform", "range")  # group.consumer.assignors; first = default

    @classmethod
    def from_config(cls, config) -> "ConsumerGroupSettings":
        return cls(
            session_timeout_ms=config["group.consumer.session.timeout.ms"],
            heartbeat_interval_ms=config["group.consumer.heartbeat.interval.ms"],
            max_size=config["group.consumer.max.size"],
            assignors=tuple(config["group.consumer.assignors"]),
        )

    @property
    def default_assignor(self) -> str:
        return self.assignors[0]
