"""Share-partition state of the broker: loaded engines, the checkpoint index, control-batch writes.

``ShareStore`` owns every SharePartition that is in memory and, for every
share-partition that ever existed, its ``Durable`` index entry (SCO and chain
head), which is what lets recovery skip the log scan. Changes are persisted as
one SHARE_DELTA per operation, or a SHARE_CHECKPOINT once
``checkpoint_max_deltas`` deltas have piled up, appended through the
partition's one write path. The log start is held at the earliest SCO of a
topic-partition (the ESO: ``Partition.start_hold``, kept up to date here); a
share-partition whose log moved on checkpoints again every
``checkpoint_interval_ms`` so the hold stays short. Synchronous: the shell
calls ``tick(now)``.
"""

from __future__ import annotations

from typing import Callable

import structlog

from kipper.broker.config_values import BY_DURATION, java_duration_ms
from kipper.broker.log.topics import Topic
from kipper.broker.share import index_file
from kipper.broker.share.durable import UNINITIALIZED, Durable, Pending
from kipper.broker.share.partition import SharePartition
from kipper.broker.share.group_settings import GroupShareSettings
from kipper.broker.share.log_view import PartitionLogView, log_view
from kipper.broker.share.recovery import RecoveryError, read_chain, rebuild
from kipper.broker.share.settings import ShareSettings
from kipper.broker.share.states import AVAILABLE, TERMINAL
from kipper.protocol import records
from kipper.protocol import share_records as sr

log = structlog.get_logger(__name__)

Key = tuple[str, str, int]  # (group_id, topic, partition)


class ShareStore:
    def __init__(self, settings: ShareSettings, topics, *,
                 on_available: Callable[[str, int], None] | None = None,
                 group_config: Callable[[str, str], str | None] | None = None,
                 index_files: index_file.IndexFiles | None = None):
        self.settings = settings
        self.index_files = index_files or index_file.NoIndexFiles()
        self.group_settings = GroupShareSettings(settings, group_config)
        self.topics = topics
        self.on_available = on_available or (lambda topic, partition: None)
        self.loaded: dict[Key, SharePartition] = {}
        self.index: dict[tuple[str, int], dict[str, Durable]] = {}
        self.writes = {records.SHARE_CHECKPOINT: 0, records.SHARE_DELTA: 0}
        self.recoveries = 0
        self._indexed: set[tuple[str, int]] = set()  # partitions whose snapshot file exists

    # --- loading -----------------------------------------------------------------------

    def start_offset(self, group_id: str, topic: Topic, plog, now: int) -> int:
        """Where a new share-partition starts: share.auto.offset.reset's earliest, latest, or
        by_duration (the first record at or after now less the duration; the log end when
        every record is older)."""
        reset = self.group_settings.auto_offset_reset(group_id, topic.configs)
        if reset == "earliest":
            return plog.log_start_offset
        if reset.startswith(BY_DURATION):
            found = plog.offset_for_timestamp(now - (java_duration_ms(reset[len(BY_DURATION):]) or 0))
            if found is not None:
                return max(found[0], plog.log_start_offset)
        return self.view(group_id, plog).log_end_offset

    def view(self, group_id: str, plog) -> PartitionLogView:
        """The log as this group reads it (share.isolation.level)."""
        return log_view(plog, self.group_settings.read_committed(group_id))

    def _tune(self, sp: SharePartition) -> SharePartition:
        """The group's configs in force now (they may change at any time)."""
        g = self.group_settings
        sp.delivery_count_limit = g.delivery_count_limit(sp.group_id)
        sp.lock_duration_ms = g.lock_duration_ms(sp.group_id)
        sp.max_in_flight_records = g.record_locks(sp.group_id)
        return sp

    def _new_engine(self, group_id: str, topic: str, partition: int, start: int) -> SharePartition:
        return self._tune(SharePartition(group_id, topic, partition, start_offset=start,
                                         delivery_count_limit=0, lock_duration_ms=0,
                                         max_in_flight_records=0))

    def get(self, group_id: str, topic: Topic, partition: int, now: int) -> SharePartition | None:
        """The share-partition, loaded from its control records or created
        (with a first checkpoint) at share.auto.offset.reset."""
        key = (group_id, topic.name, partition)
        sp = self.loaded.get(key)
        if sp is not None:
            plog = topic.partitions[partition]
            if plog.log_start_offset > sp.spso and sp.move_start(plog.log_start_offset):
                self.checkpoint(sp, now)  # retention or DeleteRecords ran since the last tick
            return self._tune(sp)
        if not 0 <= partition < len(topic.partitions):
            return None
        plog = topic.partitions[partition]
        durable = self.index.get((topic.name, partition), {}).get(group_id)
        if durable is not None:
            try:
                sp = self.recover(group_id, topic.name, plog, durable)
            except RecoveryError as exc:
                log.error("share_partition_recovery_failed", group_id=group_id, topic=topic.name,
                          partition=partition, error=str(exc))
                durable = None
        if sp is None:  # new, or reset to "uninitialized" by AlterShareGroupOffsets (-1)
            sp = self._new_engine(group_id, topic.name, partition,
                                  self.start_offset(group_id, topic, plog, now))
            if durable is None:
                self.index.setdefault((topic.name, partition), {})[group_id] = Durable(group_id)
            self.loaded[key] = sp
            self.checkpoint(sp, now)
            log.info("share_partition_initialized", group_id=group_id, topic=topic.name,
                     partition=partition, spso=sp.spso)
        self.loaded[key] = sp
        if sp.move_start(plog.log_start_offset):
            self.checkpoint(sp, now)
        return sp

    def recover(self, group_id: str, topic: str, plog, durable: Durable) -> SharePartition | None:
        """Rebuild from the latest checkpoint and the deltas after it; None when the
        checkpoint says the share-partition starts again (StartOffset -1)."""
        sp, deltas = self._rebuild(group_id, topic, plog, durable)
        if sp is not None:
            sp.summary = (sp.spso, sum(r.last - r.first + 1 for r in sp.runs if r.state in TERMINAL))
            self.recoveries += 1
            log.info("share_partition_recovered", group_id=group_id, topic=topic,
                     partition=plog.partition, checkpoint_offset=durable.checkpoint_offset,
                     deltas=deltas, spso=sp.spso, speo=sp.speo)
        return sp

    def _rebuild(self, group_id: str, topic: str, plog, durable: Durable, *, move_start: bool = True):
        checkpoint, deltas = read_chain(plog, group_id, durable.head_offset, durable.checkpoint_epoch)
        if checkpoint.start_offset == UNINITIALIZED and not deltas:
            return None, 0
        sp = self._new_engine(group_id, topic, plog.partition, checkpoint.start_offset)
        rebuild(sp, checkpoint, deltas, self.view(group_id, plog), move_start=move_start)
        return sp, len(deltas)

    def summary(self, group_id: str, topic: Topic, partition: int) -> tuple[int, int] | None:
        """(SPSO, records acknowledged or archived in the window) as Kafka's share coordinator
        holds them (ReadShareGroupStateSummary), without loading anything: from memory as the
        last acknowledgement or release wrote them (the SPSO before that write moved it; None
        before the first write), or from its control records as written (an SPSO that
        AlterShareGroupOffsets put below the log start shows until the next load, as in
        Kafka). None when the group has no state there, or the state says it starts again
        (AlterShareGroupOffsets to -1)."""
        sp = self.loaded.get((group_id, topic.name, partition))
        if sp is not None:
            return sp.summary
        durable = self.index.get((topic.name, partition), {}).get(group_id)
        if durable is None or durable.uninitialized:
            return None
        plog = topic.partitions[partition]
        try:
            checkpoint, deltas = read_chain(plog, group_id, durable.head_offset,
                                            durable.checkpoint_epoch)
            if not deltas and not checkpoint.states:
                return checkpoint.start_offset, 0
            sp, _ = self._rebuild(group_id, topic.name, plog, durable, move_start=False)
        except RecoveryError as exc:
            log.error("share_partition_recovery_failed", group_id=group_id, topic=topic.name,
                      partition=partition, error=str(exc))
            return None
        return sp.spso, sum(r.last - r.first + 1 for r in sp.runs if r.state in TERMINAL)

    def has_state(self, group_id: str, topic: str, partition: int) -> bool:
        return group_id in self.index.get((topic, partition), {})

    def groups_with_state(self) -> set[str]:
        return {g for entries in self.index.values() for g in entries}

    def partitions_of(self, group_id: str) -> list[tuple[str, int]]:
        """Every (topic, partition) the group has share state for (Kafka's "initialized")."""
        return sorted(key for key, entries in self.index.items() if group_id in entries)

    def reset(self, group_id: str, topic: str, partition: int, start: int, now: int) -> None:
        """AlterShareGroupOffsets: the share-partition starts again at ``start``, nothing in
        flight and every delivery count back to zero: one SHARE_CHECKPOINT with a new
        checkpoint epoch, StartOffset = EndOffset = ``start`` (-1: "uninitialized", the next
        load starts at share.auto.offset.reset, as Kafka's persister does)."""
        self.loaded.pop((group_id, topic, partition), None)
        durable = self.index.setdefault((topic, partition), {}).setdefault(group_id, Durable(group_id))
        sp = self._new_engine(group_id, topic, partition, start)
        self._write(sp, durable, durable.plan_checkpoint(sp), now)
        log.info("share_partition_reset", group_id=group_id, topic=topic, partition=partition,
                 spso=start)

    def delete(self, group_id: str, topic: str) -> int:
        """DeleteShareGroupOffsets: the group's state on every partition of ``topic`` goes
        from memory and from the share snapshot files, and the log start it held is
        released. How many share-partitions there were."""
        for key in [k for k in self.loaded if k[0] == group_id and k[1] == topic]:
            del self.loaded[key]
        gone = 0
        for (name, partition), entries in self.index.items():
            if name != topic or entries.pop(group_id, None) is None:
                continue
            gone += 1
            plog = self.topics.partition(name, partition)
            if plog is not None:
                plog.start_hold = self.floor(name, partition)
                self._save_index((name, partition), plog)
        return gone

    def unload(self, key: Key, now: int, *, checkpoint: bool = True) -> None:
        """Drop a share-partition from memory; ``checkpoint`` first so that
        recovery later reads one record."""
        sp = self.loaded.get(key)
        if sp is None:
            return
        if checkpoint and self._plog(sp) is not None:
            self.checkpoint(sp, now)
        del self.loaded[key]

    def group_keys(self, group_id: str) -> list[Key]:
        return [k for k in self.loaded if k[0] == group_id]

    # --- writes ----------------------------------------------------------------------------

    def _plog(self, sp: SharePartition):
        return self.topics.partition(sp.topic, sp.partition)

    def _durable(self, sp: SharePartition) -> Durable:
        return self.index[(sp.topic, sp.partition)][sp.group_id]

    def _write(self, sp: SharePartition, durable: Durable, pending: Pending, now: int) -> int:
        plog = self._plog(sp)
        key = (sp.topic, sp.partition)
        if key not in self._indexed:  # the file exists before the partition's first share record
            self._save_index(key, plog)
        if pending.kind == records.SHARE_CHECKPOINT:
            data = sr.checkpoint_batch(pending.value, timestamp=now)
        else:
            data = sr.delta_batch(pending.value, timestamp=now)
        offset = plog.append_batch(data, now).base_offset
        durable.commit(pending, offset, now)
        self.writes[pending.kind] += 1
        if pending.kind == records.SHARE_CHECKPOINT:
            plog.start_hold = self.floor(sp.topic, sp.partition)
            self._save_index(key, plog)
        return offset

    # --- the share snapshot file (with log.dirs) ----------------------------------------------

    def _save_index(self, key, plog) -> None:
        self._indexed.add(key)
        self.index_files.write(*key, index_file.encode(self.index.get(key, {}), plog.log_end_offset))

    def load(self) -> int:
        """At start: every share-partition's index entry from its partition's snapshot
        file, following the records written after it. How many share-partitions."""
        count = 0
        for topic in self.topics.all():
            for plog in topic.partitions:
                data = self.index_files.read(topic.name, plog.partition)
                if data is None:
                    continue
                key = (topic.name, plog.partition)
                try:
                    entries, scanned_to = index_file.decode(data)
                except (ValueError, KeyError, TypeError) as exc:
                    log.warning("share_snapshot_unreadable", topic=topic.name,
                                partition=plog.partition, error=str(exc))
                    entries, scanned_to = {}, plog.log_start_offset
                found = index_file.rescan(plog, entries, max(scanned_to, plog.log_start_offset))
                self.index[key] = entries
                self._indexed.add(key)
                plog.start_hold = self.floor(topic.name, plog.partition)
                if found:
                    self._save_index(key, plog)
                count += len(entries)
        return count

    def close(self) -> None:
        """A clean stop: every snapshot file up to date."""
        for (topic, partition) in list(self._indexed):
            plog = self.topics.partition(topic, partition)
            if plog is not None:
                self._save_index((topic, partition), plog)

    def checkpoint(self, sp: SharePartition, now: int) -> int:
        durable = self._durable(sp)
        return self._write(sp, durable, durable.plan_checkpoint(sp), now)

    def persist(self, sp: SharePartition, changes, now: int) -> None:
        """Write the durable effect of one operation (nothing if it changed nothing)."""
        if not changes:
            return
        if self._plog(sp) is None:
            return
        durable = self._durable(sp)
        if durable.deltas_since_checkpoint + 1 >= self.settings.checkpoint_max_deltas:
            self.checkpoint(sp, now)
        else:
            self._write(sp, durable, durable.plan_delta(sp, changes), now)
        if any(state == AVAILABLE for _, _, state, _ in changes):
            self.on_available(sp.topic, sp.partition)

    # --- time ------------------------------------------------------------------------------

    def tick(self, now: int) -> None:
        interval = self.settings.checkpoint_interval_ms
        for key, sp in list(self.loaded.items()):
            plog = self._plog(sp)
            if plog is None:
                continue
            if sp.move_start(plog.log_start_offset):
                self.checkpoint(sp, now)
            self.persist(sp, sp.expire(now), now)
            durable = self._durable(sp)
            if now - durable.last_checkpoint_ms >= interval and (
                    durable.deltas_since_checkpoint or _data_after(plog, durable.checkpoint_offset)):
                self.checkpoint(sp, now)
        for (topic, partition), entries in list(self.index.items()):
            plog = self.topics.partition(topic, partition)
            if plog is None:
                continue
            for group_id, durable in list(entries.items()):
                if (group_id, topic, partition) in self.loaded:
                    continue
                if now - durable.last_checkpoint_ms >= interval and _data_after(plog, durable.checkpoint_offset):
                    # an idle share-partition still moves its SCO on, so it never pins the log start
                    if durable.uninitialized:
                        self.reset(group_id, topic, partition, UNINITIALIZED, now)
                        continue
                    topic_obj = self.topics.get(topic)
                    key = (group_id, topic, partition)
                    self.get(group_id, topic_obj, partition, now)
                    self.unload(key, now)

    # --- the partitions' view -----------------------------------------------------------------

    def floor(self, topic: str, partition: int) -> int | None:
        """The ESO: the earliest SCO of the topic-partition's share-partitions."""
        entries = self.index.get((topic, partition))
        if not entries:
            return None
        scos = [d.checkpoint_offset for d in entries.values() if d.checkpoint_offset >= 0]
        return min(scos) if scos else None

    def group_deleted(self, group_id: str) -> int:
        """DeleteGroups: the group's share-partitions go from memory and from every
        snapshot file, so neither a restart nor recovery brings them back; the log
        start they held is released. How many share-partitions there were."""
        for key in self.group_keys(group_id):
            del self.loaded[key]
        gone = 0
        for (topic, partition), entries in self.index.items():
            if entries.pop(group_id, None) is None:
                continue
            gone += 1
            plog = self.topics.partition(topic, partition)
            if plog is not None:
                plog.start_hold = self.floor(topic, partition)
                self._save_index((topic, partition), plog)
        return gone

    def topic_deleted(self, topic: str) -> None:
        for key in [k for k in self.loaded if k[1] == topic]:
            del self.loaded[key]
        for key in [k for k in self.index if k[0] == topic]:
            del self.index[key]
        self._indexed = {k for k in self._indexed if k[0] != topic}


def _data_after(plog, offset: int) -> bool:
    """Is there data (not just other share records) after ``offset``? Only then
    does a new checkpoint let log cleaning move on."""
    return next(PartitionLogView(plog).data_spans(offset + 1), None) is not None
