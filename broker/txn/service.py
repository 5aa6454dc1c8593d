"""The broker's transactions: the coordinator engine wired to the partitions and groups.

The transaction handlers and the Produce path talk to this object. It carries
out the coordinator's ``Completion``s -- on one node at once: one broker leads every
partition, so markers are appended directly (no WriteTxnMarkers round trip)
and the groups' staged offsets are applied or dropped -- and answers the
coordinator's side of a transactional Produce: may this batch be appended
(KIP-890 part 1). The partition side (last stable offset, aborted index) is
the Partition's. Synchronous; the shell's timer calls ``tick(now)``.

In a cluster (docs/CLUSTER.md) the markers of partitions led elsewhere, and of groups
coordinated elsewhere (their `__consumer_offsets` partition), become a ``MarkerJob`` the
shell delivers with WriteTxnMarkers (broker/txn_markers.py); the transaction completes
(Complete*) once every leader has written them, CONCURRENT_TRANSACTIONS answering meanwhile.
A Produce (or a TxnOffsetCommit) whose transactional id another broker coordinates is checked,
or at transaction version 2 added, by that coordinator: ``ask_coordinator`` queues an
AddPartitionsToTxn v4+ (broker/txn/verification.py) the shell sends (broker/txn_verifier.py).
"""

from __future__ import annotations

from typing import NamedTuple

import structlog

from kipper.broker.groups.journal import OFFSETS_TOPIC, partition_for
from kipper.broker.txn.coordinator import (
    TV1, TV2, Completion, EndResult, InitResult, TransactionCoordinator, TransactionMetadata, TxnSettings,
)
from kipper.broker.txn.journal import STATE_OF
from kipper.broker.txn.markers import marker_batch
from kipper.broker.txn.states import TxnState
from kipper.broker.txn.verification import Ask, Operation, add_request, answered_errors
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)


class MarkerJob(NamedTuple):
    """Markers for other brokers: (topic, partition) of each, and what to call once all
    are written (``done(now)``)."""

    producer_id: int
    producer_epoch: int
    committed: bool
    coordinator_epoch: int
    partitions: frozenset
    done: object


class Transactions:
    def __init__(self, settings: TxnSettings, *, topics, producer_ids, offsets, groups,
                 journal=None, live=None, cluster=None, markers=None, verifications=None,
                 server_tv=lambda: TV1):
        self.settings = settings
        # the broker config with the dynamic broker configs over it (broker/dynamic_configs.py):
        # transaction.partition.verification.enable is read there at each transactional Produce
        self.live = live if live is not None else {"transaction.partition.verification.enable": True}
        self.topics = topics
        self.offsets = offsets
        self.groups = groups
        self.journal = journal
        # server_tv: the finalized transaction.version (broker/features.py)
        self.coordinator = TransactionCoordinator(settings, producer_ids.allocate, journal, server_tv)
        self.cluster = cluster  # a cluster's ClusterNode (broker/cluster/node.py), None on one node
        self.markers = markers  # an Outbox of MarkerJobs the shell delivers (broker/txn_markers.py)
        self.verifications = verifications  # an Outbox of verification.Asks (broker/txn_verifier.py)

    def state_topic(self) -> None:
        """__transaction_state, made when a client first looks for a transaction
        coordinator, as Kafka makes it (FindCoordinator)."""
        if self.journal is not None:
            self.journal.topic()

    def unload(self, owned) -> int:
        """A cluster's broker no longer leads a `__transaction_state` partition: the
        transactional ids ``owned(id)`` picks are coordinated elsewhere now."""
        return self.coordinator.unload(owned)

    def recover(self, now: int, partitions=None) -> int:
        """Restore every transactional id from __transaction_state (from ``partitions``
        only: a cluster's coordinator taking them over) and finish the transactions a stop
        left between Prepare* and Complete*. Open ones time out as usual. How many ids
        were restored."""
        if self.journal is None:
            return 0
        pending = []
        restored = self.journal.replay(partitions)
        for tid, value in restored.items():
            meta = TransactionMetadata(
                tid, value.producer_id, value.producer_epoch, value.transaction_timeout_ms,
                last_producer_id=value.previous_producer_id,
                last_producer_epoch=value.last_producer_epoch, state=STATE_OF[value.transaction_status],
                partitions={(t.topic, p) for t in value.transaction_partitions or () for p in t.partition_ids},
                txn_start=value.transaction_start_timestamp_ms,
                last_update=value.transaction_last_update_timestamp_ms,
                next_producer_id=value.get("next_producer_id", -1),
                client_tv=value.get("client_transaction_version", 0))
            # the groups of a transaction are those holding offsets its producer staged
            meta.groups = set(self.offsets.groups_with_pending(meta.producer_id))
            completion = self.coordinator.restore(meta)
            if completion is not None:
                pending.append(completion)
        for completion in pending:
            self.complete(completion, now)
        if restored:
            log.info("transactions_recovered", transactional_ids=len(restored), completed=len(pending))
        return len(restored)

    # --- coordinator requests ------------------------------------------------------------------

    @property
    def coordinator_epoch(self) -> int:
        return self.settings.coordinator_epoch

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions, now: int, tv2: bool = False) -> ErrorCode:
        """AddPartitionsToTxn; ``tv2``: v4+, a broker's (or a transaction-version-2) add."""
        return self.coordinator.add_partitions(transactional_id, producer_id, producer_epoch,
                                               partitions, now, TV2 if tv2 else TV1)

    def verify_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                          partitions) -> dict:
        """AddPartitionsToTxn v4+ with VerifyOnly (Kafka's handleVerifyPartitionsInTransaction):
        (topic, partition) -> NONE when in the transaction, else TRANSACTION_ABORTABLE; or the
        one error of the transaction for every partition."""
        meta = self.coordinator.transactions.get(transactional_id)
        if meta is None or meta.producer_id != producer_id:
            error = ErrorCode.INVALID_PRODUCER_ID_MAPPING
        elif meta.producer_epoch != producer_epoch:
            error = ErrorCode.PRODUCER_FENCED
        elif meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            error = ErrorCode.CONCURRENT_TRANSACTIONS
        else:
            return {tp: ErrorCode.NONE if self._holds(meta, tp) else ErrorCode.TRANSACTION_ABORTABLE
                    for tp in partitions}
        return {tp: error for tp in partitions}

    def _holds(self, meta, tp) -> bool:
        """Whether the transaction holds the partition: one added, or the `__consumer_offsets`
        partition of a group added with AddOffsetsToTxn, as in Kafka; a settled transaction
        holds nothing (Kafka clears its partitions on completion)."""
        if meta.state != TxnState.ONGOING:
            return False
        return tp in meta.partitions or (
            tp[0] == OFFSETS_TOPIC and any(self._offsets_partition(g) == tp for g in meta.groups))

    def answer_leader(self, transactional_id: str, producer_id: int, producer_epoch: int, partitions,
                      add: bool, now: int) -> dict:
        """What the coordinator answers a partition leader's AddPartitionsToTxn v4+, whether it
        came over the wire or from a Produce on this broker: (topic, partition) -> error;
        ``add``: not verify-only (transaction version 2)."""
        if add:
            return dict.fromkeys(partitions, self.add_partitions(transactional_id, producer_id, producer_epoch,
                                                                 partitions, now, tv2=True))
        return self.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)

    def _offsets_partition(self, group_id: str) -> tuple[str, int]:
        """The group's `__consumer_offsets` partition, the topic made yet or not (Kafka's
        partitionFor over offsets.topic.num.partitions)."""
        offsets = self.topics.get(OFFSETS_TOPIC)
        journal = self.groups.journal
        count = len(offsets.partitions) if offsets else journal.num_partitions if journal is not None else 1
        return OFFSETS_TOPIC, partition_for(group_id, count)

    def held_partitions(self, meta) -> set:
        """The partitions a transaction holds as Kafka lists them (DescribeTransactions): those
        added, and the `__consumer_offsets` partition of each group added."""
        return set(meta.partitions) | {self._offsets_partition(g) for g in meta.groups}

    def coordinated_elsewhere(self, transactional_id: str) -> bool:
        """Whether another broker of the cluster coordinates ``transactional_id``."""
        return self.cluster is not None and not self.cluster.coordinates(transactional_id, True)

    def ask_coordinator(self, transactional_id: str, producer_id: int, producer_epoch: int, partitions,
                        operation: Operation, done) -> None:
        """Ask the broker that coordinates ``transactional_id`` whether ``partitions`` are in
        the producer's transaction (or, with ADD_PARTITION, to add them), as Kafka's partition
        leader does; ``done`` is called with (topic, partition) -> the error to go on with (the
        ones not named are in). No coordinator known: COORDINATOR_NOT_AVAILABLE at once."""
        partitions = list(partitions)
        coordinator, _ = self.cluster.coordinator(transactional_id, True)
        if coordinator < 0 or self.verifications is None:
            done(dict.fromkeys(partitions, ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        body = add_request(transactional_id, producer_id, producer_epoch, partitions, operation)
        self.verifications.put(Ask(coordinator, body,
                                   lambda answer: done(answered_errors(answer, partitions, operation))))

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int,
                    group_id: str, now: int) -> ErrorCode:
        return self.coordinator.add_offsets(transactional_id, producer_id, producer_epoch, group_id, now)

    def verify_offset_commit(self, transactional_id: str, producer_id: int, producer_epoch: int,
                             group_id: str, now: int, add: bool = False) -> ErrorCode:
        """Before staging a TxnOffsetCommit: the group must be in the producer's open
        transaction; ``add`` (v5+, a transaction-version-2 producer's request) adds it, as
        Kafka's group coordinator does through AddPartitionsToTxn. In a cluster, a group
        coordinator that does not coordinate the transactional id asked its coordinator
        before (``ask_coordinator``: the group's `__consumer_offsets` partition); the
        transaction's marker on that partition settles the offsets."""
        if self.cluster is not None and not self.cluster.coordinates(transactional_id, True):
            return ErrorCode.NONE
        if add:
            error = self.coordinator.add_offsets(transactional_id, producer_id, producer_epoch, group_id,
                                                 now, TV2)
            return ErrorCode.INVALID_PRODUCER_EPOCH if error == ErrorCode.PRODUCER_FENCED else error
        return self.coordinator.verify_offset_commit(transactional_id, producer_id, producer_epoch, group_id)

    def is_transactional(self, producer_id: int) -> bool:
        """Does a transactional id hold ``producer_id`` (DescribeProducers' coordinator epoch)?"""
        return self.coordinator.by_producer_id(producer_id) is not None

    def transaction(self, transactional_id: str):
        """The TransactionMetadata of a transactional id, or None (DescribeTransactions)."""
        return self.coordinator.transactions.get(transactional_id)

    def list(self, states, producer_ids: set[int], duration_ms: int, pattern, now: int) -> list:
        return self.coordinator.list(states, producer_ids, duration_ms, pattern, now)

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

    def end_txn_v2(self, transactional_id: str, producer_id: int, producer_epoch: int,
                   committed: bool, now: int) -> EndResult:
        """EndTxn v5 (transaction version 2): the answer names the producer id and epoch
        (bumped, or a new id at exhaustion) the producer goes on with."""
        result = self.coordinator.end_txn_v2(transactional_id, producer_id, producer_epoch, committed, now)
        if result.completion is None:
            return result
        self.complete(result.completion, now)
        meta = self.coordinator.transactions[transactional_id]
        return EndResult(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)

    def tick(self, now: int) -> int:
        completions = self.coordinator.tick(now)
        for completion in completions:
            self.complete(completion, now)
        return len(completions)

    def complete(self, completion: Completion, now: int) -> None:
        """Write the markers, settle the groups' offsets, then close the transaction."""
        pid, epoch, committed = completion.producer_id, completion.producer_epoch, completion.committed
        cluster = self.cluster
        elsewhere = set()
        for topic, partition in completion.partitions:
            if cluster is not None and cluster.leader_of(topic, partition) != cluster.node_id:
                elsewhere.add((topic, partition))
                continue
            error = self.write_markers(pid, epoch, committed, self.settings.coordinator_epoch,
                                       topic, partition, now)
            if error not in (ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
                # (an unknown partition was deleted since it was added)
                log.warning("txn_marker_refused", topic=topic, partition=partition,
                            producer_id=pid, producer_epoch=epoch, error=error.name)
        for group_id in completion.groups:
            if cluster is not None and not cluster.coordinates(group_id):
                elsewhere.add(self._offsets_partition(group_id))
                continue
            self._settle_group(group_id, pid, epoch, committed, self.settings.coordinator_epoch, now)
        if elsewhere:
            self.markers.put(MarkerJob(pid, epoch, committed, self.settings.coordinator_epoch,
                                       frozenset(elsewhere), lambda at: self._completed(completion, at)))
            return
        self.coordinator.complete(completion, now)
        log.debug("transaction_completed", transactional_id=completion.transactional_id,
                  producer_id=pid, producer_epoch=epoch, committed=committed,
                  partitions=len(completion.partitions), groups=len(completion.groups))

    def _completed(self, completion: Completion, now: int) -> None:
        """Every broker wrote its markers: the transaction completes (if this broker still
        coordinates it)."""
        if self.coordinator.transactions.get(completion.transactional_id) is not None:
            self.coordinator.complete(completion, now)

    def _settle_group(self, group_id: str, pid: int, epoch: int, committed: bool, coordinator_epoch: int,
                      now: int) -> bool:
        applied = self.offsets.complete_transaction(group_id, pid, committed, now, producer_epoch=epoch,
                                                    coordinator_epoch=coordinator_epoch)
        if committed and applied:
            self.groups.ensure_simple_group(group_id)  # as OffsetCommit makes one
        return applied

    def write_markers(self, producer_id: int, producer_epoch: int, committed: bool,
                      coordinator_epoch: int, topic: str, partition: int, now: int) -> ErrorCode:
        """One marker of a WriteTxnMarkers request (the coordinator-to-leader API). On a
        `__consumer_offsets` partition the groups it holds with offsets this producer staged
        are settled (each writes its marker there), as Kafka's group coordinator does."""
        if topic == OFFSETS_TOPIC:
            p = self.topics.partition(topic, partition)
            if p is not None and (p.replica is None or p.replica.is_leader):
                count = len(self.topics.get(topic).partitions)
                groups = [g for g in self.offsets.groups_with_pending(producer_id) if partition_for(g, count) == partition]
                for group_id in groups:
                    self._settle_group(group_id, producer_id, producer_epoch, committed, coordinator_epoch, now)
                if groups:
                    return ErrorCode.NONE
        return self._write_marker(producer_id, producer_epoch, committed, coordinator_epoch,
                                  topic, partition, now)

    def _write_marker(self, producer_id: int, producer_epoch: int, committed: bool,
                      coordinator_epoch: int, topic: str, partition: int, now: int) -> ErrorCode:
        p = self.topics.partition(topic, partition)
        if p is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if p.replica is not None and not p.replica.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        batch = marker_batch(producer_id, producer_epoch, committed, coordinator_epoch, now)
        return p.append_batch(batch, now).error

    # --- the partition side ----------------------------------------------------------------------

    def check_append(self, topic: str, partition: int, headers, transactional_id: str | None,
                     add_partition: bool, now: int) -> tuple[ErrorCode, str | None]:
        """Before appending a Produce that holds transactional batches: the coordinator's
        answer (as to a leader's AddPartitionsToTxn v4+, ``answer_leader``; the caller maps it
        as Kafka's leader does, broker/txn/verification.py). ``add_partition``: the Produce is
        of a transaction-version-2 producer (v12+, KIP-890 part 2), so a partition not yet in
        its open transaction is added to it (opening one if need be) instead of refused, as
        Kafka 4.x does; the request's transactional id must hold the batch's producer id and
        epoch."""
        for h in headers:
            if not h.is_transactional:
                continue
            if transactional_id is None:  # Kafka checks this of the request before anything else
                return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "transactional batch without a transactional id"
            if h.producer_id < 0:  # appended as Kafka does: no producer, so no transaction to verify
                continue  # (it opens none: the last stable offset does not wait for it)
            if not add_partition and not self.live["transaction.partition.verification.enable"]:
                continue  # (off, a transaction-version-2 Produce still adds its partition, as Kafka's)
            p = self.topics.partition(topic, partition)  # noted before the coordinator is asked
            if p is not None and p.start_verification(h, add_partition, now) != ErrorCode.NONE:
                return ErrorCode.INVALID_PRODUCER_EPOCH, (f"producer {h.producer_id} has an epoch newer than "
                                                          f"{h.producer_epoch} in {topic}-{partition}")
            if not transactional_id:  # the coordinator's first check of a verification
                return ErrorCode.INVALID_REQUEST, "an empty transactional id"
            if self.cluster is not None and not self.cluster.coordinates(transactional_id, True):
                continue  # (another broker coordinates it: asked before, ask_coordinator)
            tp = (topic, partition)  # asked as another broker's leader asks (verification.py maps it)
            error = self.answer_leader(transactional_id, h.producer_id, h.producer_epoch, [tp], add_partition,
                                       now)[tp]
            if error != ErrorCode.NONE:
                return error, (f"producer {h.producer_id} epoch {h.producer_epoch} has no open "
                               f"transaction holding {topic}-{partition}")
        return ErrorCode.NONE, None

    def snapshot(self) -> dict:
        out = self.coordinator.snapshot()
        indexes = [t for t in (p.txn_index_if_any for p in self.topics.partitions()) if t is not None]
        out["open_in_partitions"] = sum(len(t.ongoing) for t in indexes)
        out["aborted_index_entries"] = sum(len(t.aborted) for t in indexes)
        return out
