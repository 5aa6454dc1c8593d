"""Transaction coordinator state kept in ``__transaction_state``, as Kafka keeps it.

Every change of a transactional id's metadata (a new or bumped producer id and
epoch, partitions and groups added, Prepare* and Complete*) appends a
TransactionLogKey/Value record to partition ``abs(transactionalId.hashCode()) %
transaction.state.log.num.partitions``; an expired id appends a tombstone. The
value carries seed 003's last producer id (upstream's PreviousProducerId) and
last epoch (a kipper tagged field), so an InitProducerId retry stays safe across
a coordinator restart. ``replay`` returns the latest metadata per id at start.
"""

from __future__ import annotations

import structlog

from kipper.broker.groups.journal import partition_for
from kipper.broker.log.partition import COORDINATOR
from kipper.broker.txn.states import TxnState
from kipper.protocol import coordinator_records as cr
from kipper.protocol import records

log = structlog.get_logger(__name__)

TXN_TOPIC = "__transaction_state"
S = TxnState
# Kafka's TransactionState ids
STATUS = {S.EMPTY: 0, S.ONGOING: 1, S.PREPARE_COMMIT: 2, S.PREPARE_ABORT: 3, S.COMPLETE_COMMIT: 4,
          S.COMPLETE_ABORT: 5, S.DEAD: 6, S.PREPARE_EPOCH_FENCE: 7}
STATE_OF = {v: k for k, v in STATUS.items()}
EMPTY_STATUS = STATUS[S.EMPTY]


class TransactionJournal:
    def __init__(self, topics, *, num_partitions: int, segment_bytes: int):
        self.topics = topics
        self.num_partitions = num_partitions
        # the configs Kafka gives the topic (TransactionLog), min.insync.replicas one node's
        self.configs = {"cleanup.policy": "compact", "compression.type": "uncompressed",
                        "min.insync.replicas": "1", "segment.bytes": str(segment_bytes),
                        "unclean.leader.election.enable": "false"}

    def topic(self):
        return self.topics.internal(TXN_TOPIC, self.num_partitions, self.configs)

    def _append(self, transactional_id: str, value: bytes | None, now: int) -> None:
        topic = self.topic()
        partition = topic.partitions[partition_for(transactional_id, len(topic.partitions))]
        batch = records.build_batch([(cr.transaction_log_key(transactional_id), value, now)])
        partition.append_batch(batch, now, COORDINATOR)

    def stored(self, meta, now: int) -> None:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(meta.partitions):
            by_topic.setdefault(topic, []).append(partition)
        # as Kafka 4.4's TransactionLog writes it: a previous producer id always (the current one
        # when there is no other), and no partition list at all while Empty
        status = STATUS[meta.state]
        value = {
            "producer_id": meta.producer_id,
            "previous_producer_id": meta.last_producer_id if meta.last_producer_id >= 0 else meta.producer_id,
            "producer_epoch": meta.producer_epoch, "last_producer_epoch": meta.last_producer_epoch,
            "transaction_timeout_ms": meta.timeout_ms, "transaction_status": status,
            "transaction_partitions": None if status == EMPTY_STATUS else [
                {"topic": t, "partition_ids": p} for t, p in by_topic.items()],
            "transaction_last_update_timestamp_ms": meta.last_update,
            "transaction_start_timestamp_ms": meta.txn_start,
            "next_producer_id": meta.next_producer_id, "client_transaction_version": meta.client_tv,
        }
        self._append(meta.transactional_id, cr.transaction_log_value(value), now)

    def removed(self, transactional_id: str, now: int) -> None:
        self._append(transactional_id, None, now)

    def replay(self, partitions=None) -> dict:
        """transactional id -> the decoded TransactionLogValue of its latest record (in
        ``partitions`` only: a cluster's coordinator that took over some of them)."""
        topic = self.topics.get(TXN_TOPIC)
        latest: dict[str, object] = {}
        if topic is None:
            return latest
        for partition in topic.partitions if partitions is None else partitions:
            for _, data in partition.batches_from(partition.log_start_offset):
                batch = records.decode_batch(data, verify_crc=False)
                if batch.header.is_control:
                    continue
                for rec in batch.records:
                    try:
                        tid = cr.decode("transaction_log_key", rec.key)[1].transactional_id
                        latest[tid] = (None if rec.value is None
                                       else cr.decode("transaction_log_value", rec.value)[1])
                    except (cr.UnknownRecord, ValueError) as exc:
                        log.warning("transaction_state_record_skipped", error=str(exc))
        return {tid: v for tid, v in latest.items() if v is not None}
