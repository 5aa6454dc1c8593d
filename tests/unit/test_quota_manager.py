"""ProducerIdQuotaManager (KIP-936) under a manual clock: token bucket,
remembered ids, roll-over, disposal, cleanup, metrics."""

from __future__ import annotations

import random

from kipper.broker.quota.manager import ProducerIdQuotaManager, QuotaSettings
from kipper.broker.quota.rate import SampledStat, TokenBucket

S = QuotaSettings(samples=2, window_s=10, expected_items=1000, false_positive_rate=0.001)
W = S.window_ms


def manager(rate=2.0, default=None) -> ProducerIdQuotaManager:
    m = ProducerIdQuotaManager(S)
    m.set_quotas({"rogue": rate} if rate else {}, default)
    return m


def test_user_without_quota_is_admitted_and_not_tracked():
    m = manager(rate=None)
    assert all(m.check("anyone", pid, 0) == 0 for pid in range(1000))
    assert m.users == {}


def test_burst_is_rate_times_samples_times_window_then_throttled():
    m = manager(rate=2.0)  # burst = 2 x 2 x 10 = 40
    assert S.burst(2.0) == 40
    assert [m.check("rogue", pid, 0) for pid in range(40)] == [0] * 40
    assert m.check("rogue", 40, 0) == 500  # one token at 2/s is 500 ms away
    assert m.check("rogue", 40, 499) == 1
    assert m.check("rogue", 40, 500) == 0


def test_known_producer_id_takes_no_token_and_is_never_throttled():
    m = manager(rate=2.0)
    for pid in range(40):
        m.check("rogue", pid, 0)
    assert m.check("rogue", 999, 0) > 0
    assert all(m.check("rogue", pid, 1) == 0 for pid in range(40))
    assert m.users["rogue"].remembered == 40


def test_throttled_id_is_not_remembered():
    m = manager(rate=2.0)
    for pid in range(40):
        m.check("rogue", pid, 0)
    assert m.check("rogue", 777, 0) > 0
    assert not m.might_contain("rogue", 777, 0)


def test_remembered_id_counts_again_once_its_filter_is_gone():
    m = manager(rate=2.0)
    m.check("rogue", 5, 0)
    m.check("rogue", 6, W)                  # roll-over; pid 5 is in the read-only filter
    assert m.might_contain("rogue", 5, int(1.5 * W) - 1)
    admitted_before = m.users["rogue"].admitted
    m.check("rogue", 5, int(1.5 * W))      # forgotten: a new id again, takes a token
    assert m.users["rogue"].admitted == admitted_before + 1


def test_admitted_ids_never_exceed_burst_plus_rate_times_elapsed():
    rate = 3.0
    m = manager(rate=rate)
    rng = random.Random(3)
    now, admitted, pid = 0, 0, 0
    for _ in range(20000):
        now += rng.randint(0, 40)
        pid += 1
        if m.check("rogue", pid, now) == 0:
            admitted += 1
        assert admitted <= S.burst(rate) + rate * now / 1000
    assert admitted >= S.burst(rate) + rate * now / 1000 - 2  # and the quota is not stingy


def test_users_are_independent_and_default_quota_applies_to_all():
    m = manager(rate=2.0, default=100.0)
    for pid in range(41):
        m.check("rogue", pid, 0)
    assert m.check("rogue", 1000, 0) > 0
    assert all(m.check("good", pid, 0) == 0 for pid in range(1000))  # 100 x 20 = 2000 burst
    assert m.quota_for("good") == 100.0 and m.quota_for("rogue") == 2.0


def test_lowering_the_quota_clamps_the_bucket():
    m = manager(rate=100.0)
    m.check("rogue", 1, 0)                        # bucket ~2000
    m.set_quotas({"rogue": 1.0}, None)            # burst 20
    assert sum(m.check("rogue", p, 1) == 0 for p in range(2, 100)) == 20


def test_dispose_drops_old_filters_and_cleans_idle_users_once_refilled():
    m = manager(rate=2.0)
    for pid in range(40):
        m.check("rogue", pid, 0)        # empties the bucket
    assert m.dispose(int(1.5 * W) - 1) == (0, 0)
    assert m.dispose(int(1.5 * W)) == (1, 0)   # filter gone, but the bucket is not full yet
    assert "rogue" in m.users
    assert m.dispose(20_000) == (0, 1)          # 40 tokens at 2/s: full after 20 s
    assert m.users == {}
    assert m.snapshot(20_000)["cleaned_users"] == 1


def test_cleanup_never_gives_a_user_more_tokens_than_the_bucket_would():
    m = manager(rate=2.0)
    for pid in range(40):
        m.check("rogue", pid, 0)
    m.dispose(int(1.5 * W))
    assert m.check("rogue", 100, int(1.5 * W)) == 0
    # 15 s at 2/s = 30 tokens, one taken above: 29 more, then throttled
    assert sum(m.check("rogue", p, int(1.5 * W)) == 0 for p in range(200, 260)) == 29


def test_admitted_and_throttled_stay_cumulative_when_an_idle_user_is_forgotten():
    m = manager(rate=2.0)
    for pid in range(41):  # 40 admitted, the 41st throttled
        m.check("rogue", pid, 0)
    assert m.dispose(int(1.5 * W)) == (1, 0) and m.dispose(20_000) == (0, 1)
    assert "rogue" not in m.snapshot(20_000)["users"]
    for pid in range(100, 105):
        assert m.check("rogue", pid, 20_000) == 0
    u = m.snapshot(20_000)["users"]["rogue"]
    assert (u["admitted"], u["throttled"]) == (45, 1)  # not 5 and 0


def test_snapshot_reports_rate_tokens_and_throttle_time_per_user():
    m = manager(rate=2.0)
    for pid in range(41):
        m.check("rogue", pid, 0)
    snap = m.snapshot(1000)
    u = snap["users"]["rogue"]
    assert u["ProducerIds"]["tokens"] == 2.0        # refilled 1 s at 2/s
    assert u["ProducerIds"]["throttle-time"] == 500.0
    assert u["ProducerIds"]["rate"] == 40 / 10      # 40 ids over (samples-1) x 10 s
    assert u["admitted"] == 40 and u["throttled"] == 1 and u["filters"] == 1
    assert snap["bloom_bytes"] == u["bloom_bytes"] > 0


def test_token_bucket_refills_to_burst_and_no_further():
    b = TokenBucket(0.0, 0)
    assert b.refill(1000, 5.0, 10.0) == 5.0
    assert b.refill(100_000, 5.0, 10.0) == 10.0
    assert b.take(100_000, 5.0, 10.0) == 0 and b.tokens == 9.0


def test_sampled_rate_uses_at_least_samples_minus_one_windows():
    s = SampledStat(samples=11, window_ms=1000)
    for t in range(0, 1000, 10):
        s.record(t, 1)
    assert s.rate(1000) == 100 / 10
    assert s.rate(30_000) == 0.0  # all samples expired
