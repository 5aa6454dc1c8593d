"""All partitions' producer-state managers, their shared counters and the
observability snapshot (entries, estimated bytes, duplicates, fencings)."""

from __future__ import annotations

from kipper.broker.producer_state.manager import Counters, ProducerStateManager


class ProducerStates:
    def __init__(self, mode: str, max_in_flight_sequences: int, expiration_ms: int):
        self.mode = mode
        self.window = max_in_flight_sequences
        self.expiration_ms = expiration_ms
        self.counters = Counters()
        self._managers: dict[tuple[str, int], ProducerStateManager] = {}

    def for_partition(self, topic: str, partition: int) -> ProducerStateManager:
        key = (topic, partition)
        psm = self._managers.get(key)
        if psm is None:
            psm = self._managers[key] = ProducerStateManager(self.mode, self.window, self.counters)
        return psm

    def get(self, topic: str, partition: int) -> ProducerStateManager | None:
        return self._managers.get((topic, partition))

    def drop_topic(self, topic: str) -> None:
        for key in [k for k in self._managers if k[0] == topic]:
            del self._managers[key]

    def expire(self, now: int) -> int:
        removed = sum(m.expire(now, self.expiration_ms) for m in self._managers.values())
        for key in [k for k, m in self._managers.items() if not len(m)]:
            del self._managers[key]
        return removed

    def snapshot(self) -> dict:
        per_partition = {f"{t}-{p}": {"entries": len(m), "bytes": m.nbytes()}
                         for (t, p), m in sorted(self._managers.items())}
        c = self.counters
        return {
            "mode": self.mode,
            "entries": sum(v["entries"] for v in per_partition.values()),
            "bytes": sum(v["bytes"] for v in per_partition.values()),
            "partitions": per_partition,
            "duplicates": c.duplicates,
            "duplicate_sequence_errors": c.duplicate_sequence_errors,
            "out_of_order": c.out_of_order,
            "fencings": c.fencings,
            "expired": c.expired,
        }
