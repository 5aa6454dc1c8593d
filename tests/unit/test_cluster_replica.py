"""A partition's replication (broker/cluster/replica.py, epochs.py) and a follower's writes
(Partition.append_replica, truncate_to), with in-memory partitions and a manual clock: the
high watermark, acks=all waiters, ISR expansion and shrink, the diverging-epoch check, and
truncation that keeps producer state right."""

from __future__ import annotations

import pytest

from kipper.broker.cluster.epochs import LeaderEpochCache
from kipper.broker.cluster.image import PartitionInfo
from kipper.broker.cluster.replica import ReplicaState
from kipper.broker.handlers.leaders import divergence
from kipper.broker.log.partition import Partition
from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.storage.file_log import FileLog
from kipper.broker.storage.log_config import LogConfig
from kipper.broker.storage.memory_log import MemoryLog
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode


def partition(log=None) -> Partition:
    return Partition("t", 0, MemoryLog() if log is None else log, ProducerStateSettings())


def info(leader: int, epoch: int, isr=(1, 2, 3), replicas=(1, 2, 3), partition_epoch: int = 0) -> PartitionInfo:
    return PartitionInfo(tuple(replicas), tuple(isr), leader, epoch, partition_epoch)


def produce(p: Partition, n: int = 1, *, pid: int = -1, seq: int = 0, epoch: int = 0) -> tuple[int, int]:
    data = records.build_batch([(b"k", b"v%d" % i) for i in range(n)], producer_id=pid, producer_epoch=epoch,
                               base_sequence=seq if pid >= 0 else -1)
    result = p.append(data, b.split_batches(data), 1000)
    assert result.error == ErrorCode.NONE
    return result.base_offset, result.base_offset + n


def copy(leader: Partition, follower: Partition) -> None:
    """What a follower's fetch brings: the leader's batches from the follower's log end."""
    got = leader.read(follower.log_end_offset, 1 << 20, to_log_end=True)
    data = b"".join(bytes(c) for c in got.chunks)
    if data:
        spans = b.split_batches(data)
        follower.append_replica(data, spans, 1000)
        follower.replica.appended_as_follower([(h.base_offset, h) for _, _, h in spans])


@pytest.fixture
def leader():
    p = partition()
    p.replica = ReplicaState(p, 1)
    p.replica.become_leader(info(1, 4), now=0)
    return p


def test_the_high_watermark_is_the_smallest_log_end_in_the_isr(leader):
    replica = leader.replica
    produce(leader, 5)
    assert leader.log_end_offset == 5 and replica.high_watermark == 0
    replica.follower_fetched(2, 5, now=10)
    assert replica.high_watermark == 0, "follower 3 has not fetched yet"
    replica.follower_fetched(3, 3, now=10)
    assert replica.high_watermark == 3
    replica.follower_fetched(3, 5, now=20)
    assert replica.high_watermark == 5 and leader.high_watermark == 5
    assert leader.read(0, 1 << 20).records == 5


def test_consumers_read_only_below_the_high_watermark(leader):
    produce(leader, 2)
    assert leader.read(0, 1 << 20).chunks == []
    assert leader.read(0, 1 << 20, to_log_end=True).records == 2


def test_acks_all_waits_for_the_isr_and_reports_a_shrunk_isr(leader):
    replica = leader.replica
    answers = []
    _, end = produce(leader, 1)
    replica.wait_for(end, 2, answers.append)
    assert answers == []
    replica.follower_fetched(2, end, now=1)
    replica.follower_fetched(3, end, now=1)
    assert answers == [ErrorCode.NONE]
    replica.alter_partition_answered(ErrorCode.NONE, [1], 1)  # the ISR is the leader alone now
    _, end = produce(leader, 1)
    replica.wait_for(end, 2, answers.append)
    assert answers[-1] == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND


def test_a_leader_that_becomes_a_follower_answers_its_waiters(leader):
    answers = []
    _, end = produce(leader, 1)
    leader.replica.wait_for(end, 1, answers.append)
    leader.replica.become_follower(info(2, 5))
    assert answers == [ErrorCode.NOT_LEADER_OR_FOLLOWER]


def test_a_caught_up_follower_is_proposed_for_the_isr_once(leader):
    replica = leader.replica
    replica.alter_partition_answered(ErrorCode.NONE, [1, 2], 1)
    produce(leader, 3)
    replica.follower_fetched(2, 3, now=5)
    assert replica.high_watermark == 3
    assert replica.follower_fetched(3, 1, now=5) is None, "behind the high watermark"
    assert replica.follower_fetched(3, 3, now=6) == (1, 2, 3)
    assert replica.follower_fetched(3, 3, now=7) is None, "one AlterPartition at a time"


def test_a_follower_that_stops_catching_up_leaves_the_isr_after_the_lag(leader):
    replica = leader.replica
    produce(leader, 1)
    replica.follower_fetched(2, 1, now=100)
    replica.follower_fetched(3, 1, now=100)
    produce(leader, 1)
    replica.follower_fetched(2, 2, now=200)
    assert replica.isr_to_shrink(now=20_000, max_lag_ms=30_000) is None
    assert replica.isr_to_shrink(now=40_000, max_lag_ms=30_000) == (1, 2)


def test_a_follower_whose_log_diverged_is_told_where_to_truncate(leader):
    replica = leader.replica
    produce(leader, 2)  # epoch 4: offsets 0-1
    replica.become_leader(info(1, 6), now=0)  # epoch 6 begins at 2
    produce(leader, 1)
    assert divergence(leader, 2, 4) is None, "its log ends where epoch 4 ended"
    assert divergence(leader, 5, 4) == (4, 2), "it has offsets of epoch 4 beyond 2"
    assert divergence(leader, 1, 5) == (4, 2), "epoch 5 never led here"
    assert divergence(leader, 3, 6) is None
    assert divergence(leader, 3, 7) == ErrorCode.OFFSET_OUT_OF_RANGE, "an epoch after the leader's own"
    assert divergence(leader, 3, -1) is None, "no epoch sent"


def test_the_epoch_cache_answers_as_kafkas():
    cache = LeaderEpochCache()
    cache.assign(2, 0)
    cache.assign(4, 10)
    cache.assign(7, 25)
    assert cache.end_offset_for(7, 30) == (7, 30)
    assert cache.end_offset_for(4, 30) == (4, 25)
    assert cache.end_offset_for(5, 30) == (4, 25)
    assert cache.end_offset_for(1, 30) == (1, 0)
    assert cache.end_offset_for(9, 30) == (-1, -1)
    assert cache.end_offset_for(-1, 30) == (-1, -1)
    cache.truncate_from_end(25)
    assert cache.latest_epoch == 4
    cache.truncate_from_start(12)
    assert cache.epochs == [4] and cache.starts == [12]
    cache.assign(3, 5)  # an older epoch after truncation replaces what broke the order
    assert cache.epochs == [3] and cache.starts == [5]


def test_a_follower_keeps_the_leaders_offsets_epochs_and_producer_state(leader):
    produce(leader, 2, pid=7, seq=0)
    follower = partition()
    follower.replica = ReplicaState(follower, 2)
    follower.replica.become_follower(info(1, 4))
    copy(leader, follower)
    assert [base for base, _ in follower.batches()] == [0]
    assert b.read_header(follower.batches()[0][1]).partition_leader_epoch == 4
    assert follower.replica.epochs.latest_epoch == 4
    # promoted, it answers the producer's retry as a duplicate
    follower.replica.become_leader(info(2, 5), now=0)
    data = records.build_batch([(b"k", b"v0"), (b"k", b"v1")], producer_id=7, producer_epoch=0, base_sequence=0)
    retry = follower.append(data, b.split_batches(data), 2000)
    assert retry.error == ErrorCode.NONE and not retry.appended and retry.base_offset == 0


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_truncation_drops_the_diverged_batches_and_their_producer_state(kind, tmp_path):
    log = MemoryLog() if kind == "memory" else FileLog.create(tmp_path / "t-0", LogConfig(), 0)
    p = partition(log)
    p.replica = ReplicaState(p, 2)
    p.replica.become_leader(info(2, 1), now=0)
    produce(p, 3, pid=7, seq=0)  # offsets 0-2, sequences 0-2
    produce(p, 2, pid=7, seq=3)  # offsets 3-4, sequences 3-4
    assert p.truncate_to(3) == 3
    p.replica.truncated(3)
    assert p.log_end_offset == 3 and [base for base, _ in p.batches()] == [0]
    again = produce(p, 2, pid=7, seq=3)  # the leader's sequence 3 is new again here
    assert again == (3, 5)
    if kind == "file":
        log.close()
        reopened = FileLog.open(tmp_path / "t-0", LogConfig(), log_start_offset=0, recovery_point=0,
                                clean=False, now_ms=0)
        assert reopened.log_end_offset == 5
        reopened.close()


def test_a_follower_behind_its_leaders_log_start_starts_over_there():
    p = partition()
    produce(p, 3)
    p.restart_at(10)
    assert (p.log_start_offset, p.log_end_offset) == (10, 10) and p.batches() == []


def test_delete_records_waits_for_every_live_replicas_log_start(leader):
    replica = leader.replica
    _, end = produce(leader, 5)
    for r in (2, 3):
        replica.follower_fetched(r, end, now=1, log_start=0)
    assert leader.delete_records_before(3) == 3
    assert replica.low_watermark() == 0  # the followers still start at 0
    answers = []
    replica.wait_for_low_watermark(3, lambda code, low: answers.append((code, low)))
    replica.follower_fetched(2, end, now=2, log_start=3)  # it learnt the start from its last fetch
    assert answers == []
    dead = {3}
    replica.alive = lambda broker_id: broker_id not in dead
    replica.follower_fetched(2, end, now=3, log_start=3)  # a broker that is gone does not hold it back
    assert answers == [(ErrorCode.NONE, 3)]
    replica.wait_for_low_watermark(4, lambda code, low: answers.append((code, low)))
    replica.become_follower(info(2, 5))
    assert answers[-1] == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)
