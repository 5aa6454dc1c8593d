"""The broker's metrics registry."""

from __future__ import annotations

import random

from kipper.broker.metrics import LatencyHistogram, Metrics


def test_histogram_percentiles_are_within_one_bucket_of_the_truth():
    h = LatencyHistogram()
    values = [random.randint(1, 2_000_000) for _ in range(20000)]
    for v in values:
        h.record(v)
    values.sort()
    for q in (0.5, 0.9, 0.99):
        true = values[int(q * len(values)) - 1]
        got = h.percentile(q)
        assert true <= got <= true * 1.13 + 1, (q, true, got)
    assert h.max_us == values[-1] and h.count == 20000


def test_interval_counts_reset_but_totals_do_not():
    m = Metrics()
    m.record_in("t", 0, 100, 3)
    m.observe_request("Produce", 250)
    m.providers["extra"] = lambda: {"x": 1}
    first = m.take_interval()
    assert first["partitions"] == [{"topic": "t", "partition": 0, "bytes_in": 100, "records_in": 3,
                                    "bytes_out": 0, "records_out": 0}]
    assert first["apis"]["Produce"]["count"] == 1 and first["extra"] == {"x": 1}
    m.record_in("t", 0, 50, 2)
    second = m.take_interval()
    assert second["partitions"][0]["records_in"] == 2 and "Produce" not in second["apis"]
    assert second["totals"]["records_in"] == 5 and second["totals"]["requests"] == 1


def test_recording_a_latency_n_times_over_is_recording_it_n_times():
    one, many = LatencyHistogram(), LatencyHistogram()
    for h in (one, many):
        h.record(40)
    for _ in range(7):
        one.record(900)
    many.record_many(900, 7)
    many.record_many(3, 2)
    one.record(3)
    one.record(3)
    assert (many.counts, many.count, many.sum_us, many.max_us, many.min_us) == \
        (one.counts, one.count, one.sum_us, one.max_us, one.min_us)
    fresh = LatencyHistogram()
    fresh.record_many(30, 2)
    assert (fresh.min_us, fresh.max_us, fresh.count, fresh.sum_us) == (30, 30, 2, 60)
