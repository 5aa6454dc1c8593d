"""The broker's transactions: the coordinator engine wired to the partitions and groups.

Handlers and the append, fetch and list-offsets paths talk to this object.
It carries out the coordinator's ``Completion``s at once -- one broker leads
every partition, so markers are appended directly (no WriteTxnMarkers round
trip) and the groups' staged offsets are applied or dropped -- and answers the
partition-side questions: may this transactional batch be appended, where is
the last stable offset, which aborted transactions overlap a fetch.
Synchronous; the shell's timer calls ``tick(now)``.
"""

from __future__ import annotations

import structlog

from kipper.broker.txn.coordinator import Completion, InitResult, TransactionCoordinator, TxnSettings
from kipper.broker.txn.markers import write_marker
from kipper.broker.txn.partition import TxnPartitions
from kipper.protocol.batch import read_header
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)


class Transactions:
    def __init__(self, settings: TxnSettings, state):
        self.settings = settings
        self.state = state
        self.coordinator = TransactionCoordinator(settings, state.producer_ids.allocate)
        self.partitions = TxnPartitions()

    @classmethod
    def attach(cls, state) -> "Transactions":
        txn = cls(TxnSettings.from_config(state.config), state)
        state.extensions.setdefault("topic_deleted", []).append(
            lambda topic: txn.partitions.drop_topic(topic.name))
        state.metrics.providers["transactions"] = txn.snapshot
        return txn

    # --- coordinator requests ------------------------------------------------------------------

    def init_producer_id(self, transactional_id: str, timeout_ms: int, producer_id: int,
                         producer_epoch: int, now: int) -> InitResult:
        result = self.coordinator.init_producer_id(transactional_id, timeout_ms, producer_id,
                                                   producer_epoch, now)
        if result.completion is not None:
            self.complete(result.completion, now)
        return result

    def end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int,
                committed: bool, now: int) -> ErrorCode:
        error, completion = self.coordinator.end_txn(transactional_id, producer_id, producer_epoch,
                                                     committed, now)
        if completion is not None:
            self.complete(completion, now)
        return error

    def tick(self, now: int) -> int:
        completions = self.coordinator.tick(now)
        for completion in completions:
            self.complete(completion, now)
        return len(completions)

    def complete(self, completion: Completion, now: int) -> None:
        """Write the markers, settle the groups' offsets, then close the transaction."""
        state = self.state
        pid, epoch, committed = completion.producer_id, completion.producer_epoch, completion.committed
        for topic, partition in completion.partitions:
            plog = state.topics.partition(topic, partition)
            if plog is None:
                continue  # deleted since it was added
            error = write_marker(state, self.partitions, plog, pid, epoch, committed,
                                 self.settings.coordinator_epoch, now)
            if error != ErrorCode.NONE:
                log.warning("txn_marker_refused", topic=topic, partition=partition,
                            producer_id=pid, producer_epoch=epoch, error=error.name)
        for group_id in completion.groups:
            applied = state.offsets.complete_transaction(group_id, pid, committed, now)
            if committed and applied and group_id not in state.groups.groups:
                state.groups.get_or_create(group_id)  # a simple group, as OffsetCommit makes
        self.coordinator.complete(completion, now)
        log.debug("transaction_completed", transactional_id=completion.transactional_id,
                  producer_id=pid, producer_epoch=epoch, committed=committed,
                  partitions=len(completion.partitions), groups=len(completion.groups))

    def write_markers(self, producer_id: int, producer_epoch: int, committed: bool,
                      coordinator_epoch: int, topic: str, partition: int, now: int) -> ErrorCode:
        """One marker of a WriteTxnMarkers request (the coordinator-to-leader API)."""
        plog = self.state.topics.partition(topic, partition)
        if plog is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return write_marker(self.state, self.partitions, plog, producer_id, producer_epoch,
                            committed, coordinator_epoch, now)

    # --- the partition side ----------------------------------------------------------------------

    def check_append(self, topic: str, partition: int, headers) -> tuple[ErrorCode, str | None]:
        """Before appending a Produce that holds transactional batches."""
        for h in headers:
            if not h.is_transactional:
                continue
            if h.producer_id < 0:
                return ErrorCode.INVALID_RECORD, "transactional batch without a producer id"
            if not self.settings.verify_partitions:
                continue
            error = self.coordinator.verify_produce(h.producer_id, h.producer_epoch, topic, partition)
            if error != ErrorCode.NONE:
                return error, (f"producer {h.producer_id} epoch {h.producer_epoch} has no open "
                               f"transaction holding {topic}-{partition}")
        return ErrorCode.NONE, None

    def appended(self, topic: str, partition: int, headers, base_offset: int) -> None:
        """After the append: open transactions start at their first batch's offset."""
        tp = self.partitions.for_partition(topic, partition)
        offset = base_offset
        for h in headers:
            if h.is_transactional:
                tp.begin(h.producer_id, offset)
            offset += h.last_offset_delta + 1

    def last_stable_offset(self, plog) -> int:
        tp = self.partitions.get(plog.topic, plog.partition)
        if tp is None:
            return plog.high_watermark
        return tp.last_stable_offset(plog.high_watermark, plog.log_start_offset)

    def aborted_transactions(self, plog, fetch_offset: int, chunks) -> list[dict]:
        """Fetch's AbortedTransactions for the batches ``chunks`` read from ``fetch_offset``."""
        tp = self.partitions.get(plog.topic, plog.partition)
        if tp is None or not tp.aborted or not chunks:
            return []
        last = read_header(chunks[-1])
        upper = last.base_offset + last.last_offset_delta + 1
        return [{"producer_id": a.producer_id, "first_offset": a.first_offset}
                for a in tp.aborted_between(fetch_offset, upper)]

    def snapshot(self) -> dict:
        out = self.coordinator.snapshot()
        out["open_in_partitions"] = self.partitions.open_transactions()
        out["aborted_index_entries"] = self.partitions.aborted_entries()
        return out
