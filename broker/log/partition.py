"""One topic-partition as its leader holds it: Kafka's Partition and UnifiedLog in one.

A Partition owns the log storage, the idempotent-producer state (seed 000,
KIP-360), the transaction index (last stable offset, aborted transactions)
and the append notification that wakes Fetch long-polls. Everything written
into the partition goes through ``append``:

- Produce batches (origin ``CLIENT``): idempotent ones are validated by the
  producer state first (validate, append, then commit: Kafka's
  ProducerAppendInfo); a rejected or duplicate batch appends nothing, and a
  transactional batch opens its producer's transaction in the index;
- broker-written control batches (origin ``COORDINATOR``): a COMMIT/ABORT
  marker is checked against the producer's epoch, then closes the producer's
  transaction (recording an abort for read_committed); share-group
  SHARE_CHECKPOINT/SHARE_DELTA records are stored as they are.

The coordinator-side check of a transactional Produce (KIP-890 part 1) and
the producer-id quota come before ``append``; they are not the log's business.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from kipper.broker.log.txn_index import AbortedTxn, TxnPartition
from kipper.broker.producer_state import snapshot as producer_snapshot
from kipper.broker.producer_state.manager import DUPLICATE, REJECT, ProducerStateManager
from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.storage.log_storage import LogStorage, ReadResult, first_stamped
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode

CLIENT, COORDINATOR = "client", "coordinator"  # Kafka's AppendOrigin


class AppendResult(NamedTuple):
    error: ErrorCode
    base_offset: int = -1
    message: str | None = None
    appended: bool = False  # False: refused, or an exact retry answered from producer state
    # an exact retry's answer: the stored batch's timestamp, which Kafka sends as
    # log_append_time_ms whatever the topic's timestamp type
    log_append_time: int = -1


_REFUSED_NO_RECORDS = AppendResult(ErrorCode.INVALID_RECORD, message="no record batches")


_new_tuple = tuple.__new__


def _appended(base_offset: int) -> AppendResult:
    """A successful append's result, made without the namedtuple's Python-level __new__
    (every Produce makes one)."""
    return _new_tuple(AppendResult, (ErrorCode.NONE, base_offset, None, True, -1))


class Partition:
    __slots__ = ("topic", "partition", "log", "start_hold", "_producers", "_txn", "_settings",
                 "_notify", "_after_append", "replica", "leader_epoch")

    def __init__(self, topic: str, partition: int, log: LogStorage,
                 producer_settings: ProducerStateSettings,
                 notify: Callable[[str, int], None] | None = None):
        self.topic = topic
        self.partition = partition
        self.log = log
        # the lowest offset the log start may move to: share groups keep the data
        # after their earliest checkpoint (seed 004's ESO); set by the share store
        self.start_hold: int | None = None
        self._settings = producer_settings
        self._producers: ProducerStateManager | None = None  # made on the first idempotent batch
        self._txn: TxnPartition | None = None  # made on the first transactional batch
        self._notify = notify or _nobody_waits
        # what an append does after it: wake the long polls (a cluster's leader first moves its
        # high watermark: broker/cluster/replica.py sets its own)
        self._after_append = self._notify
        # in a cluster, this broker's replication of the partition (broker/cluster/replica.py:
        # leader or follower, high watermark, ISR); None on one node, where it leads alone
        self.replica = None
        self.leader_epoch = b.LEADER_EPOCH  # stamped into every batch the leader appends

    # --- offsets ------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def high_watermark(self) -> int:
        replica = self.replica  # one node: every appended offset is committed
        return self.log.log_end_offset if replica is None else replica.high_watermark

    @property
    def last_stable_offset(self) -> int:
        hw = self.high_watermark
        if self._txn is None:
            return hw
        return self._txn.last_stable_offset(hw, self.log.log_start_offset)

    @property
    def compacted(self) -> bool:
        """cleanup.policy holds compact: keyless records are refused, the cleaner keeps the
        last record of each key."""
        return self.log.config.compact

    # --- what the partition owns --------------------------------------------------------

    @property
    def producer_state(self) -> ProducerStateManager:
        if self._producers is None:
            self._producers = self._settings.new_manager()
        return self._producers

    @property
    def producer_state_if_any(self) -> ProducerStateManager | None:
        return self._producers

    @property
    def txn_index(self) -> TxnPartition:
        if self._txn is None:
            self._txn = TxnPartition()
        return self._txn

    @property
    def txn_index_if_any(self) -> TxnPartition | None:
        return self._txn

    def in_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether the producer has a transaction open here at that epoch (Kafka's
        UnifiedLog.hasOngoingTransaction): its later batches need no verification."""
        txn, psm = self._txn, self._producers
        if txn is None or psm is None or producer_id not in txn.ongoing:
            return False
        row = psm.table.find(producer_id)
        return row >= 0 and psm.table.epochs[row] == producer_epoch

    def fences(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether the producer has a newer epoch here than ``producer_epoch``."""
        psm = self._producers
        row = psm.table.find(producer_id) if psm is not None else -1
        return row >= 0 and psm.table.epochs[row] > producer_epoch

    def start_verification(self, header, supports_epoch_bump: bool, now: int) -> ErrorCode:
        """A transactional batch its leader is about to verify (Kafka's
        maybeStartTransactionVerification): INVALID_PRODUCER_EPOCH, before any coordinator is
        asked, if its producer has a newer epoch here; else noted (ProducerStateManager's
        ``verifying``) unless its producer has a transaction open here at that epoch."""
        pid, epoch = header.producer_id, header.producer_epoch
        if self.fences(pid, epoch):
            return ErrorCode.INVALID_PRODUCER_EPOCH
        if not self.in_transaction(pid, epoch):
            self.producer_state.start_verification(pid, header.base_sequence, epoch, supports_epoch_bump, now)
        return ErrorCode.NONE

    def active_producers(self) -> list[tuple[int, int, int, int, int, int]]:
        """(producer id, epoch, last sequence, last timestamp, coordinator epoch, first offset
        of its open transaction or -1) of each producer the partition holds state for
        (DescribeProducers)."""
        psm, txn = self._producers, self._txn
        if psm is None:
            return []
        ongoing = txn.ongoing if txn is not None else {}
        return [(pid, epoch, last_seq, last_ts, coordinator_epoch, ongoing.get(pid, -1))
                for pid, epoch, last_seq, last_ts, coordinator_epoch in psm.active()]

    def expire_producers(self, now: int) -> int:
        """Drop producer state idle for producer.id.expiration.ms (KIP-360 keeps it
        after its batches are deleted, but not forever)."""
        psm = self._producers
        if psm is None:
            return 0
        txn = self._txn  # a producer with an open transaction here never expires (Kafka)
        removed = psm.expire(now, self._settings.expiration_ms, txn.ongoing if txn is not None else frozenset())
        if not len(psm) and not psm.verifying:
            self._producers = None
        return removed

    # --- the one write path ---------------------------------------------------------------

    def append(self, buf, spans, now: int, origin: str = CLIENT) -> AppendResult:
        """Append the validated batches ``spans`` [(start, end, header)] of ``buf``."""
        if not spans:
            return _REFUSED_NO_RECORDS
        log = self.log
        # Kafka rolls on segment.ms by record time: the incoming batches' largest timestamp
        # against the segment's first batch's (LogSegment.shouldRoll)
        # (a client's Produce carries one batch: no generator for it on the hot path)
        newest = spans[0][2].max_timestamp if len(spans) == 1 else max(h.max_timestamp for _, _, h in spans)
        rolled = log.maybe_roll(spans[-1][1] - spans[0][0], now, newest)
        if rolled is not None:  # Kafka snapshots producer state as a segment rolls
            self.snapshot_producers(rolled)
        if origin == COORDINATOR:
            headers = [h for _, _, h in spans]
            if any(h.is_control and h.is_transactional for h in headers):
                return self._append_markers(buf, spans, headers, now)
            return self._append_coordinator_data(buf, spans, headers, now)
        for _, _, h in spans:
            if h.producer_id >= 0:
                break
        else:  # no idempotent batch: nothing to check
            base, _ = log.append(buf, spans, now, self.leader_epoch)
            self._after_append(self.topic, self.partition)
            return _appended(base)
        headers = [h for _, _, h in spans]
        psm = self.producer_state
        validation = psm.validate(headers)
        psm.record(validation)
        if validation.outcome == REJECT:
            return AppendResult(validation.error, -1, validation.message)
        if validation.outcome == DUPLICATE:
            return AppendResult(ErrorCode.NONE, validation.duplicate_base_offset,
                                log_append_time=validation.duplicate_timestamp)
        txn = self._txn
        if txn is not None and txn.ongoing:
            for h in headers:  # (Kafka's appendDataBatch, whatever the batch's epoch)
                if h.producer_id in txn.ongoing and not h.attributes & b.TRANSACTIONAL:
                    return AppendResult(ErrorCode.INVALID_TXN_STATE, -1,
                                        f"a plain batch of producer {h.producer_id}, whose transaction is open here")
        base, _ = self.log.append(buf, spans, now, self.leader_epoch)
        last_offsets = []
        offset = base
        for h in headers:
            last = offset + h.last_offset_delta
            if h.producer_id >= 0:
                last_offsets.append(last)
                if h.attributes & b.TRANSACTIONAL:  # its transaction starts at its first batch
                    self.txn_index.begin(h.producer_id, offset)
                    if psm.verifying:
                        psm.end_verification(h.producer_id, h.producer_epoch, False)
            offset = last + 1
        psm.commit(validation, last_offsets)
        self._after_append(self.topic, self.partition)
        return _appended(base)

    def append_batch(self, data: bytes, now: int, origin: str = COORDINATOR) -> AppendResult:
        """Append batches built by the broker itself (markers, share records)."""
        return self.append(data, b.split_batches(data), now, origin)

    def _append_coordinator_data(self, buf, spans, headers, now: int) -> AppendResult:
        """Records a coordinator writes (share-group state, offsets, transaction state).
        They carry no sequence numbers; a transactional batch (a TxnOffsetCommit) opens
        its producer's transaction, which a marker ends."""
        base, _ = self.log.append(buf, spans, now, self.leader_epoch)
        offset = base
        psm = self._producers
        for h in headers:
            if h.is_transactional and h.producer_id >= 0:
                self.txn_index.begin(h.producer_id, offset)
                if psm is not None:
                    psm.end_verification(h.producer_id, h.producer_epoch, False)
            offset += h.last_offset_delta + 1
        self._after_append(self.topic, self.partition)
        return AppendResult(ErrorCode.NONE, base, None, True)

    def _append_markers(self, buf, spans, headers, now: int) -> AppendResult:
        """COMMIT/ABORT markers (KIP-98): no epoch older than the partition's; once
        appended, the producer takes the marker's epoch and its transaction ends."""
        psm = self.producer_state
        for start, end, h in spans:
            if h.is_control and h.is_transactional:
                error = psm.check_marker(h.producer_id, h.producer_epoch, _marker(buf, start, end)[1])
                if error != ErrorCode.NONE:
                    return AppendResult(error)
        base, _ = self.log.append(buf, spans, now, self.leader_epoch)
        offset = base
        txn = self.txn_index
        for start, end, h in spans:
            if h.is_control and h.is_transactional:
                marker_type, coordinator_epoch = _marker(buf, start, end)
                committed = marker_type == records.COMMIT
                psm.apply_marker(h.producer_id, h.producer_epoch, now, coordinator_epoch)
                psm.end_verification(h.producer_id, h.producer_epoch, True)
                aborted = txn.end(h.producer_id, offset, committed)
                if aborted is not None:
                    self.log.record_aborted(aborted.producer_id, aborted.first_offset, offset,
                                            self.last_stable_offset)
            offset += h.last_offset_delta + 1
        txn.trim(self.log.log_start_offset)
        self._after_append(self.topic, self.partition)
        return AppendResult(ErrorCode.NONE, base, None, True)

    # --- a follower's writes ---------------------------------------------------------------

    def append_replica(self, buf, spans, now: int) -> None:
        """A follower appends what its leader stored, at the leader's offsets and epochs; the
        producer state and the transaction index follow the batches as recovery replays them,
        so that this broker can lead the partition next (Kafka's appendAsFollower)."""
        self.log.append(buf, spans, now, as_given=True)
        for start, end, h in spans:
            if h.producer_id < 0:
                continue
            base = h.base_offset
            if h.is_control:
                if h.is_transactional:
                    self._replay_marker(base, h, buf[start:end])
                continue
            if h.base_sequence >= 0:
                producer_snapshot.replay_batch(self.producer_state, h, base)
            if h.is_transactional:
                self.txn_index.begin(h.producer_id, base)
        self._notify(self.topic, self.partition)

    def truncate_to(self, offset: int) -> int:
        """Drop what follows ``offset`` (a follower's log that diverged from its leader's);
        producer state and the transaction index are rebuilt from what remains. The new end."""
        end = self.log.truncate_to(offset)
        self._producers = None
        self._txn = None
        self.recover()
        return end

    def restart_at(self, offset: int) -> None:
        """Empty, starting at ``offset`` (a follower behind its leader's log start)."""
        self.log.restart_at(offset)
        self._producers = None
        self._txn = None

    def wake(self) -> None:
        """Wake the long polls waiting on this partition (its high watermark moved)."""
        self._notify(self.topic, self.partition)

    # --- reads ------------------------------------------------------------------------------

    def read(self, offset: int, max_bytes: int, *, always_one: bool = True,
             read_committed: bool = False, one_segment: bool = False, to_log_end: bool = False,
             regions: bool = False) -> ReadResult:
        """Batches from ``offset``; read_committed stops at the last stable offset, any other
        read at the high watermark (the log end on one node), a follower's (``to_log_end``)
        at the log end; ``one_segment``: only the segment holding ``offset`` (Kafka's Fetch);
        ``regions``: file ranges for sendfile where the log is on disk (storage/file_region.py)."""
        end = self.last_stable_offset if read_committed else \
            None if self.replica is None or to_log_end else self.replica.high_watermark
        return self.log.read(offset, max_bytes, always_one=always_one, one_segment=one_segment,
                             end_offset=end, regions=regions)

    def batch_head(self, offset: int, nbytes: int, *, read_committed: bool = False):
        """The first ``nbytes`` of the batch at ``offset`` (a view), when it is in the segment
        of ``offset - 1`` and below the end a Fetch reads to, and longer than that; else
        None. Kafka's Fetch sends whole batches up to its limit and then the slice of the
        segment file up to the limit, cutting into the next batch (consumers drop the cut
        batch); the handler appends this after the whole batches it read."""
        log = self.log
        if nbytes <= 0 or log.segment_index(offset - 1) != log.segment_index(offset):
            return None
        got = log.read(offset, 0, always_one=True, one_segment=True,
                       end_offset=self.last_stable_offset if read_committed else None)
        if not got.chunks or len(got.chunks[0]) <= nbytes:
            return None
        return memoryview(got.chunks[0])[:nbytes]

    def aborted_transactions(self, fetch_offset: int, upper: int) -> list[dict]:
        """Fetch's AbortedTransactions for a read of [fetch_offset, upper)."""
        txn = self._txn
        if txn is None or not txn.aborted or upper <= fetch_offset:
            return []
        return [{"producer_id": a.producer_id, "first_offset": a.first_offset}
                for a in txn.aborted_between(fetch_offset, upper)]

    def batches_from(self, offset: int):
        return self.log.batches_from(offset)

    def headers_from(self, offset: int):
        return self.log.headers_from(offset)

    def batches(self) -> list[tuple[int, bytes]]:
        """Every stored (base offset, batch), oldest first (tools and tests)."""
        return list(self.log.batches_from(self.log.log_start_offset))

    def batch_at_offset(self, offset: int):
        return self.log.batch_at_offset(offset)

    def offset_for_timestamp(self, timestamp: int):
        return self.log.offset_for_timestamp(timestamp)

    def max_timestamp(self):
        """(offset, timestamp) of the first record carrying the largest timestamp
        (ListOffsets MAX_TIMESTAMP, KIP-734 as Kafka 3.8+ answers it after KAFKA-16310).
        The storage knows the batch from headers; only that batch is read here."""
        found = self.log.max_timestamp()
        if found is None:  # no record has a timestamp (or none is left): Kafka's max is then
            # unknown (-1), and it answers the first record of a batch whose max is -1
            located = self.log.batch_at_offset(self.log.log_start_offset)
            if located is None or b.read_header(located[1]).max_timestamp != -1:
                return None
        else:
            located = self.log.batch_at_offset(found[0])
            if located is None:
                return found
        largest = b.read_header(located[1]).max_timestamp
        at = first_stamped(located[1], largest, None)  # (None: Kafka finds nothing either)
        return None if at is None else (at, largest)

    # --- moving the log start ------------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: move the log start, never past a share group's hold.
        Producer state stays (KIP-360)."""
        if self.start_hold is not None:
            offset = min(offset, self.start_hold)
        low = self.log.delete_records_before(offset)
        if self._txn is not None:
            self._txn.trim(low)
        return low

    def apply_retention(self, now: int, retention_ms: int, retention_bytes: int) -> int:
        floor = self.high_watermark if self.start_hold is None else min(self.start_hold, self.high_watermark)
        dropped = self.log.apply_retention(now, retention_ms, retention_bytes, floor)
        if dropped and self._txn is not None:
            self._txn.trim(self.log.log_start_offset)
        return dropped


    # --- durability -------------------------------------------------------------------------

    def snapshot_producers(self, offset: int) -> None:
        """Write the producer state as of ``offset`` (the log end) where the storage keeps it."""
        psm = self._producers
        ongoing = self._txn.ongoing if self._txn is not None else {}
        entries = producer_snapshot.snapshot_entries(psm, ongoing) if psm is not None else []
        self.log.write_producer_snapshot(offset, entries)

    def recover(self) -> int:
        """Rebuild producer state and the transaction index after the storage opened:
        the newest producer snapshot, the aborted transactions the storage kept, then
        every batch after the snapshot. The number of batches replayed."""
        found = self.log.latest_producer_snapshot()
        start = self.log.log_start_offset
        ongoing: dict[int, int] = {}
        if found is not None:
            start, entries = found
            if entries:
                ongoing = producer_snapshot.restore(self.producer_state, entries)
        self.log.drop_aborted_from(start)
        aborted = [AbortedTxn(pid, first, last) for pid, first, last, _ in self.log.aborted_transactions()]
        if aborted or ongoing:
            self.txn_index.restore(aborted, ongoing)
        replayed = 0
        for base, h, _ in self.log.headers_from(start):
            if base < start or h.producer_id < 0:
                continue
            replayed += 1
            if h.is_control:
                if h.is_transactional:
                    self._replay_marker(base, h)
                continue
            if h.base_sequence >= 0:  # a producer's batch (a coordinator's has no sequence)
                producer_snapshot.replay_batch(self.producer_state, h, base)
            if h.is_transactional:
                self.txn_index.begin(h.producer_id, base)
        return replayed

    def _replay_marker(self, base: int, h, data=None) -> None:
        if data is None:
            found = self.log.batch_at_offset(base)
            data = found[1] if found is not None else None
        marker_type, coordinator_epoch = _marker(data, 0, len(data)) if data is not None else (-1, -1)
        committed = marker_type == records.COMMIT
        self.producer_state.apply_marker(h.producer_id, h.producer_epoch, h.max_timestamp, coordinator_epoch)
        aborted = self.txn_index.end(h.producer_id, base, committed)
        if aborted is not None:
            self.log.record_aborted(aborted.producer_id, aborted.first_offset, base, self.last_stable_offset)

    def close(self) -> None:
        """A clean stop: the producer state as of the log end, then the storage."""
        self.snapshot_producers(self.log.log_end_offset)
        self.log.close()

    def delete(self) -> None:
        self.log.delete()


def _nobody_waits(topic: str, partition: int) -> None:
    pass


def _marker(buf, start: int, end: int) -> tuple[int, int]:
    """(COMMIT or ABORT, coordinator epoch) of a marker batch."""
    record = records.decode_batch(buf, start, end, verify_crc=False).records[0]
    return records.control_type(record.key), records.marker_coordinator_epoch(record.value)
