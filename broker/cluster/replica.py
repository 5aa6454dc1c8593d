"""One partition's replication on this broker: Kafka's Partition leader/follower state.

A ``ReplicaState`` hangs on ``Partition.replica`` in a cluster (None on one node). Its role
comes from the metadata log (broker/cluster/node.py): the leader of the partition, one of its
followers, or no replica at all (the broker still knows the leader, to answer
NOT_LEADER_OR_FOLLOWER with it). As leader it keeps each follower's log end and last
caught-up time (from the followers' Fetch requests), the high watermark (the smallest log end
over the ISR, never going back), the ISR changes to propose (expand on catch-up, shrink after
replica.lag.time.max.ms; one AlterPartition in flight at a time) and the acks=all waiters. As
follower it keeps the high watermark its leader sent. Both keep the leader-epoch cache.
"""

from __future__ import annotations

from typing import Callable

from kipper.broker.cluster.epochs import LeaderEpochCache
from kipper.protocol.errors import ErrorCode

LEADER, FOLLOWER, NOT_A_REPLICA = "leader", "follower", "none"


class FollowerState:
    """What a leader knows of one follower (Kafka's ReplicaState)."""

    __slots__ = ("log_end_offset", "log_start_offset", "last_caught_up_ms", "last_fetch_ms", "last_fetch_leader_end")

    def __init__(self, caught_up_ms: int):
        self.log_end_offset = -1  # unknown until it fetches
        self.log_start_offset = -1  # as its fetches say (DeleteRecords waits for it)
        self.last_caught_up_ms = caught_up_ms
        self.last_fetch_ms = -1
        self.last_fetch_leader_end = -1

    def fetched(self, fetch_offset: int, leader_end: int, now: int) -> None:
        """Kafka's updateFetchStateOrThrow: caught up when it fetched from the leader's log end,
        or from where the log ended at its previous fetch (then as of that fetch)."""
        if fetch_offset >= leader_end:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now)
        elif fetch_offset >= self.last_fetch_leader_end and self.last_fetch_ms >= 0:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_end = leader_end
        self.last_fetch_ms = now


class ReplicaState:
    __slots__ = ("partition", "local_id", "role", "leader_id", "leader_epoch", "partition_epoch",
                 "replicas", "isr", "high_watermark", "epochs", "followers", "pending_isr", "waiters",
                 "deletions", "alive", "is_leader", "topic_id")

    def __init__(self, partition, local_id: int, topic_id=None):
        self.partition = partition
        self.local_id = local_id
        self.topic_id = topic_id
        self.role = NOT_A_REPLICA
        self.is_leader = False
        self.leader_id = -1
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.replicas: tuple[int, ...] = ()
        self.isr: tuple[int, ...] = ()
        self.high_watermark = partition.log_start_offset
        self.epochs = LeaderEpochCache.from_headers(partition.headers_from(partition.log_start_offset))
        self.followers: dict[int, FollowerState] = {}
        self.pending_isr: tuple[int, ...] | None = None  # proposed by an AlterPartition in flight
        self.waiters: list[list] = []  # [end offset, min ISR, callback(error)] of acks=all Produces
        self.deletions: list[tuple] = []  # (required offset, callback(error, low watermark)) of DeleteRecords
        self.alive: Callable[[int], bool] = lambda broker_id: True  # the node's view of its brokers
        partition._after_append = self._after_append

    def _after_append(self, topic: str, index: int) -> None:
        """After every append: a leader whose ISR is itself alone commits at once; the
        followers' long-polling fetches wake."""
        if not (self.is_leader and self.maybe_advance_high_watermark()):
            self.partition.wake()
    def __repr__(self) -> str:
        return (f"ReplicaState({self.partition.topic}-{self.partition.partition} {self.role} "
                f"leader={self.leader_id} epoch={self.leader_epoch} isr={self.isr} hw={self.high_watermark})")

    # --- roles, from the metadata log ------------------------------------------------------

    def _take(self, info) -> None:
        self.leader_id = info.leader
        self.leader_epoch = info.leader_epoch
        self.partition_epoch = info.partition_epoch
        self.replicas = info.replicas
        self.isr = info.isr

    def become_leader(self, info, now: int) -> None:
        """This broker leads at ``info.leader_epoch`` (Kafka's makeLeader): batches appended
        from now on carry the epoch, which begins at the log end; every follower starts with
        an unknown log end, those in the ISR caught up as of now."""
        new_epoch = not self.is_leader or info.leader_epoch != self.leader_epoch
        self._take(info)
        self.role, self.is_leader = LEADER, True
        self.partition.leader_epoch = info.leader_epoch
        if new_epoch:
            self.epochs.assign(info.leader_epoch, self.partition.log_end_offset)
            self.followers = {r: FollowerState(now if r in info.isr else 0)
                              for r in info.replicas if r != self.local_id}
            self.pending_isr = None
        else:  # the same leadership, with another ISR or replica set (AlterPartition, reassignment)
            for r in info.replicas:
                if r != self.local_id and r not in self.followers:
                    self.followers[r] = FollowerState(0)
            for r in list(self.followers):
                if r not in info.replicas:
                    del self.followers[r]
            if self.pending_isr is not None and set(self.pending_isr) == set(info.isr):
                self.pending_isr = None
        self.high_watermark = min(self.high_watermark, self.partition.log_end_offset)
        self.maybe_advance_high_watermark()

    def become_follower(self, info) -> None:
        """Another broker leads (or nobody: leader -1): acks=all waiters are answered
        NOT_LEADER_OR_FOLLOWER; the fetcher takes it from here (truncating by diverging epoch)."""
        self._stop_leading()
        self._take(info)
        self.role = FOLLOWER

    def become_not_a_replica(self, info) -> None:
        self._stop_leading()
        self._take(info)
        self.role = NOT_A_REPLICA

    def _stop_leading(self) -> None:
        self.is_leader = False
        self.followers = {}
        self.pending_isr = None
        waiters, self.waiters = self.waiters, []
        for _, _, callback in waiters:
            callback(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        deletions, self.deletions = self.deletions, []
        for _, callback in deletions:
            callback(ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)

    # --- the leader's side ---------------------------------------------------------------------

    def follower_fetched(self, replica_id: int, fetch_offset: int, now: int,
                         log_start: int = -1) -> tuple[int, ...] | None:
        """A follower fetched from ``fetch_offset``, its log starting at ``log_start``: its log
        end is that. The high watermark may move, and the low watermark that DeleteRecords
        waits for; the ISR to propose if the follower caught up and is not in it, else None."""
        state = self.followers.get(replica_id)
        if state is None:
            return None
        state.fetched(fetch_offset, self.partition.log_end_offset, now)
        state.log_start_offset = log_start
        if self.deletions:
            self._answer_deletions()
        self.maybe_advance_high_watermark()
        if self.pending_isr is None and replica_id not in self.isr and self._in_sync(state):
            self.pending_isr = (*self.isr, replica_id)
            self.maybe_advance_high_watermark()
            return self.pending_isr
        return None

    def _in_sync(self, state: FollowerState) -> bool:
        """Kafka's isFollowerInSync: at least the high watermark, and past the start of this
        leader's epoch."""
        start = self.epochs.start_of(self.leader_epoch)
        return state.log_end_offset >= self.high_watermark and start is not None and state.log_end_offset >= start

    def isr_to_shrink(self, now: int, max_lag_ms: int) -> tuple[int, ...] | None:
        """The ISR without the followers that have not caught up for ``max_lag_ms`` (Kafka's
        maybeShrinkIsr), or None when all are in sync or an AlterPartition is in flight."""
        if not self.is_leader or self.pending_isr is not None:
            return None
        end = self.partition.log_end_offset
        lagging = [r for r in self.isr if r != self.local_id and (
            (s := self.followers.get(r)) is None
            or (s.log_end_offset != end and now - s.last_caught_up_ms > max_lag_ms))]
        if not lagging:
            return None
        self.pending_isr = tuple(r for r in self.isr if r not in lagging)
        return self.pending_isr

    def alter_partition_answered(self, error: int, isr=None, partition_epoch: int = -1) -> None:
        """The controller's answer to our AlterPartition: the ISR it committed (the metadata
        log brings the same change), or an error, after which a later check proposes again."""
        self.pending_isr = None
        if error == ErrorCode.NONE and isr is not None and partition_epoch >= self.partition_epoch:
            self.isr = tuple(isr)
            self.partition_epoch = partition_epoch
        self.maybe_advance_high_watermark()

    def maybe_advance_high_watermark(self) -> bool:
        """The smallest log end over the ISR, and those being added to it; never back."""
        if not self.is_leader:
            return False
        hw = self.partition.log_end_offset
        members = self.isr if self.pending_isr is None else set(self.isr) | set(self.pending_isr)
        for r in members:
            if r != self.local_id:
                state = self.followers.get(r)
                end = state.log_end_offset if state is not None else -1
                if end < hw:
                    hw = end
        if hw <= self.high_watermark:
            return False
        self.high_watermark = hw
        self._answer_waiters()
        self.partition.wake()  # consumers read up to the high watermark
        return True

    def wait_for(self, end_offset: int, min_isr: int, callback: Callable[[ErrorCode], None]) -> None:
        """acks=all: ``callback`` gets NONE once the high watermark reaches ``end_offset``
        (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR is then smaller than ``min_isr``), or
        NOT_LEADER_OR_FOLLOWER if leadership goes first."""
        if self.high_watermark >= end_offset:
            callback(self._acks_error(min_isr))
        else:
            self.waiters.append([end_offset, min_isr, callback])

    def _acks_error(self, min_isr: int) -> ErrorCode:
        return ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND if len(self.isr) < min_isr else ErrorCode.NONE

    def _answer_waiters(self) -> None:
        hw, keep = self.high_watermark, []
        for waiter in self.waiters:
            if waiter[0] <= hw:
                waiter[2](self._acks_error(waiter[1]))
            else:
                keep.append(waiter)
        self.waiters = keep

    def low_watermark(self) -> int:
        """Kafka's lowWatermarkIfLeader: the smallest log start over this log and the followers
        on brokers that are alive (-1 for one that has not fetched yet)."""
        low = self.partition.log_start_offset
        for r, state in self.followers.items():
            if state.log_start_offset < low and self.alive(r):
                low = state.log_start_offset
        return low

    def wait_for_low_watermark(self, required: int, callback: Callable[[ErrorCode, int], None]) -> None:
        """DeleteRecords (Kafka's DelayedDeleteRecords): ``callback`` gets NONE and the low
        watermark once every live replica's log starts at ``required`` or later, or
        NOT_LEADER_OR_FOLLOWER if leadership goes first."""
        low = self.low_watermark()
        if low >= required:
            callback(ErrorCode.NONE, low)
        else:
            self.deletions.append((required, callback))

    def _answer_deletions(self) -> None:
        low, keep = self.low_watermark(), []
        for required, callback in self.deletions:
            if low >= required:
                callback(ErrorCode.NONE, low)
            else:
                keep.append((required, callback))
        self.deletions = keep

    # --- the follower's side -------------------------------------------------------------------

    def appended_as_follower(self, headers) -> None:
        """Batches from the leader were appended: their epochs join the cache."""
        for base, h in headers:
            if h.partition_leader_epoch > self.epochs.latest_epoch:
                self.epochs.assign(h.partition_leader_epoch, base)

    def leader_high_watermark(self, high_watermark: int) -> None:
        hw = min(high_watermark, self.partition.log_end_offset)
        if hw > self.high_watermark:
            self.high_watermark = hw
            self.partition.wake()  # consumers reading this follower (KIP-392)

    def truncated(self, end_offset: int) -> None:
        self.epochs.truncate_from_end(end_offset)
        if self.high_watermark > end_offset:
            self.high_watermark = end_offset
