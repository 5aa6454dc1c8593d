"""Committed offsets per (group, topic, partition), kept in memory.

Offsets of a group with no members expire after ``offsets.retention.minutes``
without a commit, as Kafka does; the shell calls ``expire(now)``. Offsets
committed inside a transaction (TxnOffsetCommit) are staged per producer id
and become the group's committed offsets only when the transaction commits.
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
        # group -> producer id -> (topic, partition) -> offset, until the transaction ends
        self._pending: dict[str, dict[int, dict[tuple[str, int], CommittedOffset]]] = {}

    def commit(self, group_id: str, topic: str, partition: int, offset: int,
               leader_epoch: int, metadata: str | None, now: int) -> None:
        self._groups.setdefault(group_id, {})[(topic, partition)] = CommittedOffset(
            offset, leader_epoch, metadata, now)
        self._last_commit[group_id] = now

    def stage(self, group_id: str, producer_id: int, topic: str, partition: int, offset: int,
              leader_epoch: int, metadata: str | None, now: int) -> None:
        """A transactional commit: held until ``complete_transaction``."""
        self._pending.setdefault(group_id, {}).setdefault(producer_id, {})[(topic, partition)] = (
            CommittedOffset(offset, leader_epoch, metadata, now))

    def complete_transaction(self, group_id: str, producer_id: int, committed: bool,
                             now: int) -> int:
        """Apply (commit) or drop (abort) what ``producer_id`` staged; returns how many."""
        by_producer = self._pending.get(group_id)
        staged = by_producer.pop(producer_id, None) if by_producer is not None else None
        if by_producer is not None and not by_producer:
            del self._pending[group_id]
        if not staged:
            return 0
        if committed:
            self._groups.setdefault(group_id, {}).update(staged)
            self._last_commit[group_id] = now
        return len(staged)

    def has_pending(self, group_id: str, topic: str, partition: int) -> bool:
        """An open transaction staged an offset here (OffsetFetch's UNSTABLE_OFFSET_COMMIT)."""
        return any((topic, partition) in staged
                   for staged in self._pending.get(group_id, {}).values())

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
        for by_producer in self._pending.values():
            for staged in by_producer.values():
                for key in [k for k in staged if k[0] == topic]:
                    del staged[key]

    def expire(self, now: int, active_groups: set[str]) -> int:
        dropped = 0
        for group_id in list(self._groups):
            if group_id in active_groups or group_id in self._pending:
                continue
            if now - self._last_commit.get(group_id, now) > self.retention_ms:
                dropped += len(self._groups.pop(group_id))
                self._last_commit.pop(group_id, None)
        return dropped
