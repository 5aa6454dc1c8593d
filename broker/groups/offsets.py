"""Committed offsets per (group, topic, partition), journaled to ``__consumer_offsets``.

Offsets of a group with no members expire after ``offsets.retention.minutes``
without a commit, as Kafka does; the shell calls ``expire(now)``. Offsets
committed inside a transaction (TxnOffsetCommit) are staged per producer id
and become the group's committed offsets only when the transaction commits.
Every change is written to the journal (broker/groups/journal.py) before it
is applied here, so a restart replays it (``restore``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp: int


class _NoJournal:
    """For engines tested on their own: changes are not written anywhere."""

    def offsets_committed(self, group_id, items, now): pass
    def offsets_staged(self, group_id, producer_id, producer_epoch, items, now): pass
    def transaction_ended(self, group_id, producer_id, producer_epoch, committed, coordinator_epoch, now): pass
    def offsets_deleted(self, group_id, keys, now): pass


class OffsetStore:
    def __init__(self, retention_ms: int = 7 * 24 * 3600 * 1000, journal=None):
        self.retention_ms = retention_ms
        self.journal = journal or _NoJournal()
        self._groups: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self._last_commit: dict[str, int] = {}
        # group -> producer id -> (topic, partition) -> offset, until the transaction ends
        self._pending: dict[str, dict[int, dict[tuple[str, int], CommittedOffset]]] = {}

    def commit(self, group_id: str, topic: str, partition: int, offset: int,
               leader_epoch: int, metadata: str | None, now: int) -> None:
        self.commit_all(group_id, [(topic, partition, offset, leader_epoch, metadata)], now)

    def commit_all(self, group_id: str, items, now: int) -> None:
        """OffsetCommit: ``items`` are (topic, partition, offset, leader epoch, metadata)."""
        entries = [(t, p, CommittedOffset(o, e, m, now)) for t, p, o, e, m in items]
        self.journal.offsets_committed(group_id, entries, now)
        offsets = self._groups.setdefault(group_id, {})
        for t, p, c in entries:
            offsets[(t, p)] = c
        self._last_commit[group_id] = now

    def stage(self, group_id: str, producer_id: int, topic: str, partition: int, offset: int,
              leader_epoch: int, metadata: str | None, now: int, *, producer_epoch: int = -1,
              journal: bool = True) -> None:
        """A transactional commit: held until ``complete_transaction``."""
        c = CommittedOffset(offset, leader_epoch, metadata, now)
        if journal:
            self.journal.offsets_staged(group_id, producer_id, producer_epoch, [(topic, partition, c)], now)
        self._pending.setdefault(group_id, {}).setdefault(producer_id, {})[(topic, partition)] = c

    def complete_transaction(self, group_id: str, producer_id: int, committed: bool,
                             now: int, *, producer_epoch: int = -1, coordinator_epoch: int = 0) -> int:
        """Apply (commit) or drop (abort) what ``producer_id`` staged; returns how many."""
        self.journal.transaction_ended(group_id, producer_id, producer_epoch, committed,
                                       coordinator_epoch, now)
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

    def groups_with_pending(self, producer_id: int) -> list[str]:
        return [g for g, by_producer in self._pending.items() if producer_id in by_producer]

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

    def count(self) -> int:
        return sum(len(o) for o in self._groups.values())

    def delete(self, group_id: str, keys, now: int) -> int:
        """Remove committed offsets (tombstones in the journal); how many there were."""
        offsets = self._groups.get(group_id, {})
        gone = list(dict.fromkeys(k for k in keys if k in offsets))  # a key named twice goes once
        if gone:
            self.journal.offsets_deleted(group_id, gone, now)
            for k in gone:
                del offsets[k]
        if not offsets:
            self._groups.pop(group_id, None)
            self._last_commit.pop(group_id, None)
        return len(gone)

    def has_group(self, group_id: str) -> bool:
        return group_id in self._groups or group_id in self._pending

    def delete_group(self, group_id: str, now: int) -> int:
        """DeleteGroups: every committed offset of the group (tombstones), and what
        open transactions staged for it; how many committed offsets there were."""
        deleted = self.delete(group_id, list(self._groups.get(group_id, {})), now)
        self._pending.pop(group_id, None)
        return deleted

    def delete_topic(self, topic: str, now: int = 0) -> None:
        for group_id, offsets in list(self._groups.items()):
            self.delete(group_id, [k for k in offsets if k[0] == topic], now)
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
                dropped += self.delete(group_id, list(self._groups[group_id]), now)
        return dropped

    def unload(self, owned) -> int:
        """Forget the groups ``owned(group_id)`` picks (their coordinator moved to another
        broker of the cluster, with the partition their records are in). How many."""
        gone = [g for g in {*self._groups, *self._pending} if owned(g)]
        for group_id in gone:
            self._groups.pop(group_id, None)
            self._last_commit.pop(group_id, None)
            self._pending.pop(group_id, None)
        return len(gone)

    def restore(self, group_id: str, topic: str, partition: int, value) -> None:
        """A replayed record: an OffsetCommitValue, or None for a tombstone."""
        if value is None:
            offsets = self._groups.get(group_id)
            if offsets is not None:
                offsets.pop((topic, partition), None)
                if not offsets:
                    self._groups.pop(group_id, None)
            return
        self._groups.setdefault(group_id, {})[(topic, partition)] = CommittedOffset(
            value.offset, value.leader_epoch, value.metadata or None, value.commit_timestamp)
        self._last_commit[group_id] = max(self._last_commit.get(group_id, 0), value.commit_timestamp)
