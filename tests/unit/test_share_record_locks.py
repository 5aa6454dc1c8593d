"""The record-lock cap (share.partition.max.record.locks) as Kafka 4.4's SharePartition applies it.

The figures are the ones a Kafka 4.4 broker gave for the same log and requests (one partition of
1000 records, the group config share.partition.max.record.locks=100): the window grows by at most
(cap - records in the window), rounded up to the end of the batch that crosses it in batch_optimized
mode; record_limit cuts at the record and leaves the rest of that batch in the window, AVAILABLE,
where the next fetch finds it even at the cap. At the cap the window grows no further.
"""

from __future__ import annotations

from kipper.broker.share.partition import SharePartition
from kipper.broker.share.states import ACCEPT, AVAILABLE, RELEASE
from tests.unit.test_share_partition import FakeLog, data

LOCK = 1000


def engine(cap=100):
    return SharePartition("g", "t", 0, start_offset=0, delivery_count_limit=5,
                          lock_duration_ms=LOCK, max_in_flight_records=cap)


def count(ranges):
    return sum(last - first + 1 for first, last, _ in ranges)


def test_batch_optimized_takes_the_batch_that_crosses_the_cap_whole_then_stops():
    sp, log = engine(), data(1000, per_batch=30)
    assert sp.acquire("a", 0, log, max_records=200, batch_optimized=True) == [(0, 119, 1)]
    assert sp.at_cap() and sp.acquire("b", 0, log, max_records=200, batch_optimized=True) == []


def test_batch_optimized_budget_is_the_room_left_under_the_cap():
    sp, log = engine(), data(1000, per_batch=30)
    assert sp.acquire("a", 0, log, max_records=50, batch_optimized=True) == [(0, 59, 1)]
    # room 40: the batch 90-119 crosses it and is taken whole (Kafka: 60 records, 60-119)
    assert sp.acquire("b", 0, log, max_records=50, batch_optimized=True) == [(60, 119, 1)]
    assert sp.acquire("c", 0, log, max_records=50, batch_optimized=True) == []


def test_one_batch_larger_than_the_cap_is_taken_whole_in_batch_optimized_mode():
    sp, log = engine(), data(1000, per_batch=300)
    assert sp.acquire("a", 0, log, max_records=200, batch_optimized=True) == [(0, 299, 1)]
    assert sp.acquire("b", 0, log, max_records=200, batch_optimized=True) == []


def test_record_limit_cuts_at_the_cap_and_the_rest_of_the_batch_waits_in_the_window():
    sp, log = engine(), data(1000, per_batch=300)
    assert sp.acquire("a", 0, log, max_records=200) == [(0, 99, 1)]
    assert (sp.spso, sp.speo, sp.available_records, sp.window_records) == (0, 300, 200, 300)
    # at the cap the window does not grow, but what is in it is handed out (Kafka: 100-299)
    assert sp.acquire("b", 0, log, max_records=200) == [(100, 299, 1)]
    assert sp.acquire("c", 0, log, max_records=200) == []


def test_record_limit_with_small_batches():
    sp, log = engine(), data(1000, per_batch=30)
    assert sp.acquire("a", 0, log, max_records=200) == [(0, 99, 1)]
    assert sp.acquire("b", 0, log, max_records=200) == [(100, 119, 1)]
    assert sp.acquire("c", 0, log, max_records=200) == []


def test_room_comes_back_when_the_spso_moves():
    sp, log = engine(), data(1000, per_batch=10)
    assert count(sp.acquire("a", 0, log, max_records=500)) == 100
    sp.acknowledge("a", [(0, 29, [ACCEPT])], 0)
    assert sp.acquire("b", 0, log, max_records=500) == [(100, 129, 1)]


def test_at_the_cap_released_records_are_still_handed_out_but_the_window_does_not_grow():
    sp, log = engine(), data(1000, per_batch=10)
    sp.acquire("a", 0, log, max_records=100)
    sp.acknowledge("a", [(50, 59, [RELEASE])], 0)
    assert sp.acquire("b", 0, log, max_records=500) == [(50, 59, 2)]
    assert sp.speo == 100


def test_released_records_count_against_the_budget_below_the_cap():
    # Kafka: one budget of min(MaxRecords, cap - in flight) for released and new records
    sp, log = engine(), data(1000, per_batch=10)
    sp.acquire("a", 0, log, max_records=50)
    sp.acknowledge("a", [(0, 9, [RELEASE])], 0)
    assert sp.acquire("b", 0, log, max_records=200) == [(0, 9, 2), (50, 89, 1)]
    assert sp.window_records == 90


def test_lock_expiry_frees_nothing_under_the_cap_but_makes_records_available_again():
    sp, log = engine(), data(1000, per_batch=10)
    sp.acquire("a", 0, log, max_records=100)
    sp.expire(LOCK)
    assert sp.available_records == 100 and sp.at_cap()
    assert count(sp.acquire("b", LOCK, log, max_records=500)) == 100
    assert sp.speo == 100


def test_control_batches_in_the_window_do_not_count_against_the_cap():
    # SHARE_CHECKPOINT/SHARE_DELTA (and transaction markers) sit between the data batches
    batches = []
    for i in range(0, 1100, 11):
        batches += [(i, i + 9, False), (i + 10, i + 10, True)]
    sp, log = engine(), FakeLog(batches)
    got = sp.acquire("a", 0, log, max_records=500)
    assert count(got) == 100 and sp.window_records == 100 and sp.in_flight == 109


def test_the_cap_follows_the_group_config_at_once():
    sp, log = engine(cap=100), data(1000, per_batch=10)
    assert count(sp.acquire("a", 0, log, max_records=500)) == 100
    sp.max_in_flight_records = 150
    assert count(sp.acquire("b", 0, log, max_records=500)) == 50
    assert [r.state for r in sp.runs if r.state == AVAILABLE] == []
