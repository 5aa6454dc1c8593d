"""The producer's view of the cluster: brokers, topics, partition leaders."""

from __future__ import annotations

from dataclasses import dataclass, field

from kipper.protocol.errors import ErrorCode


@dataclass
class TopicInfo:
    leaders: list[int]  # partition -> leader node id (-1: none)
    error: int = 0


@dataclass
class ClusterMetadata:
    brokers: dict[int, tuple[str, int]] = field(default_factory=dict)
    topics: dict[str, TopicInfo] = field(default_factory=dict)
    wanted: set[str] = field(default_factory=set)  # topics the producer has used
    last_refresh: float = float("-inf")
    refresh_requested: bool = True
    errors: dict[str, int] = field(default_factory=dict)  # topic -> last metadata error

    def partitions(self, topic: str) -> int:
        info = self.topics.get(topic)
        return len(info.leaders) if info else 0

    def leader(self, topic: str, partition: int) -> int:
        info = self.topics.get(topic)
        if info is None or partition >= len(info.leaders):
            return -1
        return info.leaders[partition]

    def update(self, body, now: float) -> None:
        """Apply a Metadata response."""
        self.brokers = {b.node_id: (b.host, b.port) for b in body.brokers}
        for t in body.topics:
            if t.error_code and t.error_code != ErrorCode.LEADER_NOT_AVAILABLE:
                self.errors[t.name] = t.error_code
                self.topics.pop(t.name, None)
                continue
            leaders = [-1] * len(t.partitions)
            for p in t.partitions:
                if p.partition_index < len(leaders):
                    leaders[p.partition_index] = p.leader_id if p.error_code in (0, 9) else -1
            if leaders:
                self.topics[t.name] = TopicInfo(leaders)
                self.errors.pop(t.name, None)
        self.last_refresh = now
        self.refresh_requested = False

    def stale(self, now: float, max_age: float) -> bool:
        return self.refresh_requested or now - self.last_refresh >= max_age
