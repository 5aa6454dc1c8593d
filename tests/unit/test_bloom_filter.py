"""The time-controlled bloom filter (KIP-936) under a manual clock."""

from __future__ import annotations

import random

import pytest

from kipper.broker.quota.bloom import TimedBloomFilter

W = 10_000  # window, ms


def make(items=1000, fpr=0.001):
    return TimedBloomFilter(W, items, fpr)


def test_put_value_is_found_and_others_are_not():
    f = make()
    f.put(42, now=0)
    assert f.might_contain(42, now=1)
    assert not f.might_contain(43, now=1)


def test_a_new_writable_filter_starts_after_one_window():
    f = make()
    f.put(1, now=0)
    f.put(2, now=W - 1)
    assert len(f.filters) == 1 and f.writable_since(W - 1) == 0
    f.put(3, now=W)
    assert len(f.filters) == 2 and f.writable_since(W) == W


def test_at_most_two_filters_are_readable_and_one_writable():
    f = make()
    for t in range(0, 10 * W, W // 7):
        f.put(t, now=t)
        assert f.readable_count(t) <= 2
        assert f.writable_since(t) is not None


def test_value_is_remembered_until_one_and_a_half_windows():
    f = make()
    f.put(7, now=0)
    f.put(8, now=W)  # rolls over: filter of t=0 is now read-only
    assert f.might_contain(7, now=int(1.5 * W) - 1)
    assert not f.might_contain(7, now=int(1.5 * W))
    assert f.might_contain(8, now=int(1.5 * W))


def test_dispose_drops_filters_older_than_one_and_a_half_windows():
    f = make()
    f.put(1, now=0)
    f.put(2, now=W)
    assert f.dispose(now=int(1.5 * W) - 1) == 0
    assert f.dispose(now=int(1.5 * W)) == 1
    assert [c for c, _ in f.filters] == [W]
    assert f.active(int(2.5 * W) - 1) and not f.active(int(2.5 * W))
    assert f.dispose(now=int(2.5 * W)) == 1 and f.nbytes() == 0


def _observed_fpr(f, inserted: set, now: int, probes: int = 20000) -> float:
    rng = random.Random(7)
    hits = tried = 0
    while tried < probes:
        v = rng.getrandbits(62)
        if v in inserted:
            continue
        tried += 1
        hits += f.might_contain(v, now)
    return hits / tried


@pytest.mark.parametrize("fpr", [0.01, 0.001])
def test_false_positive_rate_at_capacity_is_within_bounds(fpr):
    f = make(items=5000, fpr=fpr)
    rng = random.Random(1)
    inserted = {rng.getrandbits(62) for _ in range(5000)}
    for v in inserted:
        f.put(v, now=0)
    assert all(f.might_contain(v, 1) for v in inserted)  # never a false negative
    assert _observed_fpr(f, inserted, 1) <= 1.5 * fpr


def test_filter_grows_past_its_expected_items_and_keeps_the_rate():
    f = make(items=500, fpr=0.01)
    rng = random.Random(2)
    inserted = {rng.getrandbits(62) for _ in range(5000)}
    small = None
    for i, v in enumerate(inserted):
        f.put(v, now=0)
        if i == 400:
            small = f.nbytes()
    assert f.nbytes() > small
    assert len(f.filters[-1][1].slices) == 4  # 500 + 1000 + 2000 + 4000 >= 5000
    assert _observed_fpr(f, inserted, 1) <= 0.01 * 1.2  # the configured rate, with sampling slack


def test_memory_of_one_filter_matches_the_bloom_formula():
    f = make(items=10000, fpr=0.001)
    f.put(1, now=0)
    # m = n ln(1/p) / ln(2)^2 bits at p/2 = 158,200 bits ~ 19.8 KB (pybloom rounds slices up)
    assert 19_000 <= f.nbytes() <= 22_000
