"""Committed offsets per (group, topic, partition), kept in memory.

Offsets of a group with no members expire after ``offsets.retention.minutes``
without a commit, as Kafka does; the shell calls ``expire(now)``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp: int


class OffsetStore:
    def __init__(self, retention_ms: int = 7 * 24 * 3600 * 1000):
        self.retention_ms = retention_ms
        self._groups: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self._last_commit: dict[str, int] = {}

    def commit(self, group_id: str, topic: str, partition: int, offset: int,
               leader_epoch: int, metadata: str | None, now: int) -> None:
        self._groups.setdefault(group_id, {})[(topic, partition)] = CommittedOffset(
            offset, leader_epoch, metadata, now)
        self._last_commit[group_id] = now

    def get(self, group_id: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._groups.get(group_id, {}).get((topic, partition))

    def group_offsets(self, group_id: str) -> dict[tuple[str, int], CommittedOffset]:
        return dict(self._groups.get(group_id, {}))

    def groups(self) -> list[str]:
        return list(self._groups)

    def delete_topic(self, topic: str) -> None:
        for offsets in self._groups.values():
            for key in [k for k in offsets if k[0] == topic]:
                del offsets[key]

    def expire(self, now: int, active_groups: set[str]) -> int:
        dropped = 0
        for group_id in list(self._groups):
            if group_id in active_groups:
                continue
            if now - self._last_commit.get(group_id, now) > self.retention_ms:
                dropped += len(self._groups.pop(group_id))
                self._last_commit.pop(group_id, None)
        return dropped
