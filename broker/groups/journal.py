"""Committed offsets and classic-group metadata kept in ``__consumer_offsets``, as Kafka keeps them.

A group's records go to partition ``abs(groupId.hashCode()) % offsets.topic.num.partitions``
(Java's String hash, so the layout matches Kafka's). Each change is appended
through the partition's one write path before it is answered:

- OffsetCommit: an OffsetCommitKey/Value record per partition; expiry, topic
  deletion and OffsetDelete write tombstones (a key with a null value);
- TxnOffsetCommit: the same records in a transactional batch of the producer,
  which the COMMIT or ABORT marker written at the end of the transaction settles;
- a classic group that completes a rebalance, or empties, writes its
  GroupMetadataValue; a deleted group a tombstone;
- a streams group (KIP-1071) writes the records its coordinator decides
  (broker/groups/streams/records.py), as Kafka does.

``replay`` rebuilds the OffsetStore, the classic groups (and, through a callback,
the streams groups) from these records
at start, so committed offsets survive a restart and a crash. The topic is
compacted (``cleanup.policy=compact``), so it keeps the latest record per key.
"""

from __future__ import annotations

import structlog

from kipper.broker.config_values import java_string_hash
from kipper.broker.log.partition import COORDINATOR
from kipper.protocol import coordinator_records as cr
from kipper.protocol import records
from kipper.protocol import streams_records
from kipper.protocol.coordinator_records import UnknownRecord

log = structlog.get_logger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"


def partition_for(key: str, partitions: int) -> int:
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions  # Kafka's Utils.abs


class GroupJournal:
    def __init__(self, topics, *, num_partitions: int, segment_bytes: int):
        self.topics = topics
        self.num_partitions = num_partitions
        self.written = None  # called with a partition's index after each write to it (the coordinator's)
        # the configs Kafka gives the topic (GroupCoordinator's offsetsTopicConfigs)
        self.configs = {"cleanup.policy": "compact", "compression.type": "producer",
                        "segment.bytes": str(segment_bytes)}

    def topic(self):
        return self.topics.internal(OFFSETS_TOPIC, self.num_partitions, self.configs)

    def _partition(self, group_id: str):
        topic = self.topic()
        return topic.partitions[partition_for(group_id, len(topic.partitions))]

    def _append(self, group_id: str, kvs: list, now: int, *, producer_id: int = -1,
                producer_epoch: int = -1, transactional: bool = False) -> None:
        # (Kafka's CoordinatorRuntime builds its batches with base sequence 0, producer or not)
        batch = records.build_batch([(k, v, now) for k, v in kvs], producer_id=producer_id,
                                    producer_epoch=producer_epoch, base_sequence=0, transactional=transactional)
        self._write(group_id, batch, now)

    def _write(self, group_id: str, batch: bytes, now: int) -> None:
        """Append to the group's partition through its one write path, then say so (``written``)."""
        partition = self._partition(group_id)
        partition.append_batch(batch, now, COORDINATOR)
        if self.written is not None:
            self.written(partition.partition)

    # --- offsets --------------------------------------------------------------------------------

    def offsets_committed(self, group_id: str, items, now: int) -> None:
        """``items``: (topic, partition, CommittedOffset)."""
        if items:
            self._append(group_id, self._offset_records(group_id, items), now)

    def _offset_records(self, group_id: str, items) -> list:
        """Kafka 4.4's records of committed offsets: OffsetCommitValue v4 with the topic's id
        when the topic exists (v3 without, as before topic ids)."""
        out = []
        for t, p, c in items:
            topic = self.topics.get(t)
            out.append((cr.offset_commit_key(group_id, t, p), cr.offset_commit_value(
                c.offset, c.leader_epoch, c.metadata, c.commit_timestamp, topic.topic_id if topic else None)))
        return out

    def offsets_staged(self, group_id: str, producer_id: int, producer_epoch: int, items,
                       now: int) -> None:
        if items:
            self._append(group_id, self._offset_records(group_id, items), now, producer_id=producer_id,
                         producer_epoch=producer_epoch, transactional=True)

    def transaction_ended(self, group_id: str, producer_id: int, producer_epoch: int,
                          committed: bool, coordinator_epoch: int, now: int) -> None:
        batch = records.build_control_batch(
            records.COMMIT if committed else records.ABORT, records.end_txn_marker(coordinator_epoch),
            producer_id=producer_id, producer_epoch=producer_epoch, transactional=True, timestamp=now)
        self._write(group_id, batch, now)

    def offsets_deleted(self, group_id: str, keys, now: int) -> None:
        """Tombstones for (topic, partition) keys."""
        if keys:
            self._append(group_id, [(cr.offset_commit_key(group_id, t, p), None) for t, p in keys], now)

    # --- classic groups -------------------------------------------------------------------------

    def group_stored(self, group, now: int) -> None:
        value = {"protocol_type": group.protocol_type or "", "generation": group.generation_id,
                 "protocol": group.protocol_name, "leader": group.leader_id,
                 "current_state_timestamp": now,
                 "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                              "client_id": m.client_id, "client_host": m.client_host,
                              "rebalance_timeout": m.rebalance_timeout_ms,
                              "session_timeout": m.session_timeout_ms,
                              "subscription": m.metadata_for(group.protocol_name or ""),
                              "assignment": m.assignment} for m in group.members.values()]}
        self._append(group.group_id, [(cr.group_metadata_key(group.group_id),
                                       cr.group_metadata_value(value))], now)

    def group_deleted(self, group_id: str, now: int) -> None:
        self._append(group_id, [(cr.group_metadata_key(group_id), None)], now)

    # --- streams groups --------------------------------------------------------------------------

    def streams_records(self, group_id: str, written, now: int) -> None:
        """``written``: records of broker/groups/streams/records.py (each knows its encoding)."""
        if written:
            self._append(group_id, [r.encoded() for r in written], now)

    # --- start ------------------------------------------------------------------------------------

    def replay(self, offsets, classic, now: int, streams=None, partitions=None) -> dict:
        """Rebuild committed offsets and classic groups from the topic, oldest first (from
        ``partitions`` only: a cluster's coordinator that took over some of them);
        ``streams(key, value)`` is given each streams-group record."""
        topic = self.topics.get(OFFSETS_TOPIC)
        counts = {"offsets": 0, "groups": 0, "records": 0}
        if topic is None:
            return counts
        groups: dict[str, object] = {}
        for partition in topic.partitions if partitions is None else partitions:
            pending: dict[int, list] = {}  # producer id -> staged (group, topic, partition, value)
            for _, data in partition.batches_from(partition.log_start_offset):
                batch = records.decode_batch(data, verify_crc=False)
                h = batch.header
                if h.is_control:
                    if h.is_transactional:
                        staged = pending.pop(h.producer_id, [])
                        if records.control_type(batch.records[0].key) == records.COMMIT:
                            for group, t, p, value in staged:
                                offsets.restore(group, t, p, value)
                    continue
                for rec in batch.records:
                    counts["records"] += 1
                    if streams is not None and streams_records.is_streams_key(rec.key):
                        streams(rec.key, rec.value)
                        continue
                    try:
                        kind, key = cr.decode_group_key(rec.key)
                    except (UnknownRecord, ValueError) as exc:
                        log.warning("consumer_offsets_record_skipped", error=str(exc))
                        continue
                    if kind == cr.GROUP_METADATA_KEY_VERSION:
                        groups[key.group] = (None if rec.value is None
                                             else cr.decode_group_value(kind, rec.value))
                        continue
                    value = None if rec.value is None else cr.decode_group_value(kind, rec.value)
                    if h.is_transactional:
                        pending.setdefault(h.producer_id, []).append((key.group, key.topic,
                                                                      key.partition, value))
                    else:
                        offsets.restore(key.group, key.topic, key.partition, value)
            for producer_id, staged in pending.items():  # still open: the coordinator ends them
                for group, t, p, value in staged:
                    if value is not None:
                        offsets.stage(group, producer_id, t, p, value.offset, value.leader_epoch,
                                      value.metadata or None, value.commit_timestamp, journal=False)
        for group_id, value in groups.items():
            if value is not None:
                classic.restore_group(group_id, value, now)
                counts["groups"] += 1
        counts["offsets"] = offsets.count()
        return counts
