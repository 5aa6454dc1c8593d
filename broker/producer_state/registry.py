"""The broker-wide view of producer state: expiry over every partition, the
shared counters and the observability snapshot (entries, estimated bytes,
duplicates, fencings). Each Partition owns its own ProducerStateManager; this
object only walks them."""

from __future__ import annotations

from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.producer_state.manager import ProducerStateManager


class ProducerStates:
    def __init__(self, settings: ProducerStateSettings, topics):
        self.settings = settings
        self.topics = topics

    @property
    def mode(self) -> str:
        return self.settings.mode

    @property
    def counters(self):
        return self.settings.counters

    def get(self, topic: str, partition: int) -> ProducerStateManager | None:
        p = self.topics.partition(topic, partition)
        return p.producer_state_if_any if p is not None else None

    def _managers(self):
        for p in self.topics.partitions():
            psm = p.producer_state_if_any
            if psm is not None:
                yield (p.topic, p.partition), psm

    def expire(self, now: int) -> int:
        return sum(p.expire_producers(now) for p in self.topics.partitions())

    def snapshot(self) -> dict:
        per_partition = {f"{t}-{p}": {"entries": len(m), "bytes": m.nbytes()}
                         for (t, p), m in sorted(self._managers())}
        c = self.settings.counters
        return {
            "mode": self.settings.mode,
            "entries": sum(v["entries"] for v in per_partition.values()),
            "bytes": sum(v["bytes"] for v in per_partition.values()),
            "partitions": per_partition,
            "duplicates": c.duplicates,
            "duplicate_sequence_errors": c.duplicate_sequence_errors,
            "out_of_order": c.out_of_order,
            "fencings": c.fencings,
            "expired": c.expired,
        }
