"""ProducerStateManager: seed 000 rules (latest mode), Kafka's window5, KIP-360
epochs and expiry. Modelled on Kafka's ProducerStateManagerTest."""

from __future__ import annotations

import pytest

from kipper.broker.producer_state import APPEND, DUPLICATE, LATEST, REJECT, WINDOW5, ProducerStateManager
from kipper.protocol.batch import BatchHeader
from kipper.protocol.errors import ErrorCode

MAX = 0x7FFFFFFF
PID = 1000


def header(first_seq: int, count: int = 1, epoch: int = 0, pid: int = PID, ts: int = 0) -> BatchHeader:
    return BatchHeader(base_offset=0, batch_length=100, partition_leader_epoch=0, magic=2, crc=0,
                       attributes=0, last_offset_delta=count - 1, base_timestamp=ts,
                       max_timestamp=ts, producer_id=pid, producer_epoch=epoch,
                       base_sequence=first_seq, records_count=count)


class Log:
    """A stand-in for the partition log's offset counter, to drive commits."""

    def __init__(self, psm: ProducerStateManager):
        self.psm = psm
        self.end = 0
        self.appended: list[tuple[int, int]] = []  # (pid, first_seq) per appended batch

    def produce(self, h: BatchHeader):
        v = self.psm.validate([h])
        self.psm.record(v)
        if v.outcome == APPEND:
            base = self.end
            self.end += h.last_offset_delta + 1
            self.psm.commit(v, [self.end - 1])
            self.appended.append((h.producer_id, h.base_sequence))
            return v, base
        return v, v.duplicate_base_offset


@pytest.fixture(params=[LATEST, WINDOW5])
def log(request):
    return Log(ProducerStateManager(request.param, max_in_flight_sequences=1000))


@pytest.fixture
def latest():
    return Log(ProducerStateManager(LATEST, max_in_flight_sequences=1000))


def test_new_producer_is_accepted_at_any_first_sequence(log):
    v, base = log.produce(header(42, 3))
    assert v.outcome == APPEND and base == 0
    assert log.psm.entry(PID)["batches"][0]["last_seq"] == 44


def test_next_batch_in_sequence_is_appended(log):
    log.produce(header(0, 5))
    v, base = log.produce(header(5, 5))
    assert v.outcome == APPEND and base == 5


def test_sequence_wraps_from_int_max_to_zero(log):
    log.produce(header(MAX - 1, 2))  # sequences MAX-1, MAX
    v, _ = log.produce(header(0, 3))
    assert v.outcome == APPEND
    assert log.psm.entry(PID)["batches"][0]["last_seq"] == 2


def test_batch_spanning_the_wrap_is_appended_and_followed_from_its_last_sequence(log):
    log.produce(header(MAX - 1, 4))  # MAX-1, MAX, 0, 1
    assert log.psm.entry(PID)["batches"][0]["last_seq"] == 1
    v, _ = log.produce(header(2))
    assert v.outcome == APPEND


def test_invalid_wrap_is_out_of_order(log):
    log.produce(header(MAX - 1, 2))
    v, _ = log.produce(header(1))  # skips 0
    assert v.outcome == REJECT and v.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_retry_of_latest_batch_returns_its_original_base_offset_without_appending(log):
    log.produce(header(0, 5))
    log.produce(header(5, 5))
    v, base = log.produce(header(5, 5))
    assert v.outcome == DUPLICATE and base == 5
    assert log.end == 10


def test_retry_of_older_batch_gets_duplicate_sequence_number_in_latest_mode(latest):
    latest.produce(header(0, 5))
    latest.produce(header(5, 5))
    v, _ = latest.produce(header(0, 5))
    assert v.outcome == REJECT and v.error == ErrorCode.DUPLICATE_SEQUENCE_NUMBER
    assert latest.end == 10


def test_retry_of_older_batch_in_window5_gets_its_original_offsets():
    log = Log(ProducerStateManager(WINDOW5))
    for i in range(5):
        log.produce(header(i * 2, 2))
    v, base = log.produce(header(2, 2))
    assert v.outcome == DUPLICATE and base == 2
    # the sixth batch pushes the first out of the window
    log.produce(header(10, 2))
    v, _ = log.produce(header(0, 2))
    assert v.outcome == REJECT and v.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


@pytest.mark.parametrize("behind,expected", [
    (0, ErrorCode.DUPLICATE_SEQUENCE_NUMBER),     # first_seq == last
    (999, ErrorCode.DUPLICATE_SEQUENCE_NUMBER),   # last edge inside the window of 1000
    (1000, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),  # first edge outside
])
def test_window_edges_in_latest_mode(latest, behind, expected):
    latest.produce(header(4990, 11))  # last sequence 5000
    v, _ = latest.produce(header(5000 - behind, 1))
    assert v.error == expected


@pytest.mark.parametrize("first, count", [
    (1, 3),  # 1-3 over 0-2: starts inside, ends one past the last appended
    (2, 5),  # 2-6
    (0, 4),  # 0-3: the latest batch and one more
    (MAX - 5, 10),  # from far behind (across the wrap) to past the last
])
def test_a_batch_overlapping_the_latest_with_new_sequences_is_out_of_order_as_in_kafka(log, first, count):
    """Not a duplicate: its records past the last appended sequence are new, and a client
    that took DUPLICATE_SEQUENCE_NUMBER for success would lose them (issue 36)."""
    log.produce(header(0, 3))  # 0-2
    v, _ = log.produce(header(first, count))
    assert v.outcome == REJECT and v.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.end == 3
    v, base = log.produce(header(3, 1))  # the next in order still goes in
    assert v.outcome == APPEND and base == 3


def test_a_batch_inside_the_appended_range_stays_a_duplicate_in_latest_mode(latest):
    latest.produce(header(0, 5))
    latest.produce(header(5, 5))  # last = 9
    for first, count in ((1, 3), (5, 4), (9, 1), (MAX - 3, 5)):  # ends at 3, 8, 9 and 1
        v, _ = latest.produce(header(first, count))
        assert v.error == ErrorCode.DUPLICATE_SEQUENCE_NUMBER, (first, count)


def test_window_counts_across_the_wrap(latest):
    latest.produce(header(5, 1))  # last = 5
    v, _ = latest.produce(header(MAX - 10, 1))  # 16 behind, across the wrap
    assert v.error == ErrorCode.DUPLICATE_SEQUENCE_NUMBER
    v, _ = latest.produce(header(MAX - 2000, 1))
    assert v.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_gap_ahead_is_out_of_order(log):
    log.produce(header(0, 5))
    v, _ = log.produce(header(7))
    assert v.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_lower_epoch_is_fenced(log):
    log.produce(header(0, epoch=3))
    v, _ = log.produce(header(1, epoch=2))
    assert v.error == ErrorCode.INVALID_PRODUCER_EPOCH
    assert log.psm.counters.fencings == 1


def test_bumped_epoch_must_start_at_sequence_zero(log):
    log.produce(header(0, 5, epoch=0))
    v, _ = log.produce(header(5, epoch=1))
    assert v.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    v, _ = log.produce(header(0, epoch=1))
    assert v.outcome == APPEND
    entry = log.psm.entry(PID)
    assert entry["producer_epoch"] == 1 and len(entry["batches"]) == 1


def test_validation_does_not_change_state(log):
    log.produce(header(0, 5))
    before = log.psm.entry(PID)
    for h in (header(5), header(0, 5), header(9), header(0, epoch=1)):
        log.psm.validate([h])
    assert log.psm.entry(PID) == before
    assert len(log.psm) == 1


def test_expiry_drops_idle_producers_under_a_manual_clock(log):
    log.produce(header(0, pid=1, ts=1_000))
    log.produce(header(0, pid=2, ts=5_000))
    assert log.psm.expire(now=10_999, expiration_ms=10_000) == 0
    assert log.psm.expire(now=11_000, expiration_ms=10_000) == 1
    assert log.psm.entry(1) is None and log.psm.entry(2) is not None


def test_a_producers_time_is_its_last_batchs_max_timestamp_as_in_kafka(log):
    # Kafka's BatchMetadata timestamp (DescribeProducers' last_timestamp, a duplicate's
    # log_append_time_ms, and expiry) is the batch's max timestamp, not the append time
    log.produce(header(0, pid=1, ts=2_000))
    assert log.psm.entry(1)["batches"][0]["timestamp"] == 2_000
    assert log.psm.expire(now=11_999, expiration_ms=10_000) == 0
    assert log.psm.expire(now=12_000, expiration_ms=10_000) == 1
    log.produce(header(0, pid=2, ts=2_000))
    assert log.psm.expire(now=12_000, expiration_ms=10_000, keep={2}) == 0  # an open transaction stays
    retry = log.psm.validate([header(0, pid=2, ts=2_000)])
    assert (retry.outcome, retry.duplicate_timestamp) == ("duplicate", 2_000)


def test_expired_producer_resumes_at_any_sequence(log):
    log.produce(header(0, 10))
    log.psm.expire(now=100, expiration_ms=50)
    v, _ = log.produce(header(500))
    assert v.outcome == APPEND


def test_multiple_batches_for_one_producer_in_one_request_are_checked_in_order(log):
    v = log.psm.validate([header(0, 2), header(2, 2)])
    assert v.outcome == APPEND and len(v.pending) == 2
    v = log.psm.validate([header(0, 2), header(5, 2)])
    assert v.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_many_producers_are_stored_and_found_after_removals():
    psm = ProducerStateManager(LATEST)
    log = Log(psm)
    for pid in range(1, 2001):
        log.produce(header(0, pid=pid, ts=pid))  # the batch timestamp counts
    assert len(psm) == 2000
    psm.expire(now=1000 + 10, expiration_ms=10)  # removes pids 1..1000
    assert len(psm) == 1000
    for pid in range(1, 2001):
        assert (psm.entry(pid) is None) == (pid <= 1000)
    v, _ = log.produce(header(1, pid=1500))
    assert v.outcome == APPEND


def test_latest_entries_are_several_times_smaller_than_window5():
    small = ProducerStateManager(LATEST)
    big = ProducerStateManager(WINDOW5)
    for psm in (small, big):
        log = Log(psm)
        for pid in range(1, 5001):
            for seq in range(5):
                log.produce(header(seq, pid=pid))
    assert big.nbytes() / small.nbytes() >= 3
