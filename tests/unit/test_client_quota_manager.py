"""Kafka's byte-rate quota engine (broker/quota/client_quota_manager.py) on a manual
clock: the sampled rate, the throttle time Kafka answers, which entity's quota a client
gets (the most specific), who shares a sensor, and what is taken back or forgotten."""

from __future__ import annotations

import pytest

from kipper.broker.quota.client_quota_manager import ClientQuotaManager, Rate, WindowSettings

U, C = ("user", "alice"), ("client-id", "app")
DU, DC = ("user", None), ("client-id", None)


def manager(quotas: dict, samples=11, window_s=1) -> ClientQuotaManager:
    m = ClientQuotaManager("producer_byte_rate", WindowSettings(samples, window_s))
    m.set_quotas({tuple(sorted(entity)): {"producer_byte_rate": v} for entity, v in quotas.items()})
    return m


def test_rate_divides_by_at_least_samples_minus_one_windows():
    r = Rate(WindowSettings(11, 1), 0)
    r.record(10_000, 0)
    assert r.window_size_ms(0) == 10_000 and r.measure(0) == 1000.0
    r.record(10_000, 15_000)  # the first sample is older than 11 windows: reset
    assert r.measure(15_000) == 1000.0


def test_rate_ring_reuses_samples_after_samples_windows():
    r = Rate(WindowSettings(2, 1), 0)
    for t in (0, 1000, 2000, 3000):
        r.record(100, t)
    assert len(r.starts) == 2 and sum(r.values) == 200


def test_within_quota_is_not_throttled():
    m = manager({(U,): 1000})
    assert m.record("alice", "app", 10_000, 0) == 0  # 10000 B / 10 s = 1000 B/s: at the quota


def test_over_quota_gets_kafkas_throttle_time():
    m = manager({(U,): 1000})
    # 20000 B over a 10 s window: 2000 B/s, (2000 - 1000) / 1000 x 10000 ms
    assert m.record("alice", "app", 20_000, 0) == 10_000
    # five seconds later: 25000 B / 10 s = 2500 B/s -> 1.5 x 10000 ms
    assert m.record("alice", "app", 5_000, 5_000) == 15_000


def test_a_burst_counts_until_its_sample_is_older_than_the_samples():
    m = manager({(U,): 1000})
    assert m.record("alice", "app", 20_000, 0) == 10_000
    # the window stays 10 s while the burst's sample is in it (Kafka's Rate)
    assert m.record("alice", "app", 1, 10_000) > 0
    # at 11 s (11 samples of 1 s) it is reset, and the client is within its quota again
    assert m.record("alice", "app", 1, 11_000) == 0


def test_sustained_producer_gets_about_its_quota():
    """A client that sends as soon as its throttle ends moves about quota bytes per second."""
    m = manager({(U,): 10_000}, samples=2, window_s=1)
    now, sent = 0, 0
    while now < 60_000:
        sent += 5_000
        now += max(m.record("alice", "app", 5_000, now), 1)
    assert 9_000 <= sent * 1000 / now <= 11_000


@pytest.mark.parametrize("quotas,user,client,expected", [
    ({(U, C): 1, (U, DC): 2, (U,): 3, (DU, C): 4, (DU, DC): 5, (DU,): 6, (C,): 7, (DC,): 8}, "alice", "app", 1),
    ({(U, DC): 2, (U,): 3, (DU, C): 4, (DU, DC): 5, (DU,): 6, (C,): 7, (DC,): 8}, "alice", "app", 2),
    ({(U,): 3, (DU, C): 4, (DU, DC): 5, (DU,): 6, (C,): 7, (DC,): 8}, "alice", "app", 3),
    ({(DU, C): 4, (DU, DC): 5, (DU,): 6, (C,): 7, (DC,): 8}, "alice", "app", 4),
    ({(DU, DC): 5, (DU,): 6, (C,): 7, (DC,): 8}, "alice", "app", 5),
    ({(DU,): 6, (C,): 7, (DC,): 8}, "alice", "app", 6),
    ({(C,): 7, (DC,): 8}, "alice", "app", 7),
    ({(DC,): 8}, "alice", "app", 8),
    ({(U, C): 1}, "bob", "app", None),
])
def test_the_most_specific_entity_wins(quotas, user, client, expected):
    found = manager(quotas).quota_for(user, client)
    assert (found[1] if found else None) == expected


def test_a_user_quota_is_shared_by_its_clients_a_default_one_is_per_user():
    m = manager({(U,): 1000, (DU,): 1000})
    assert m.record("alice", "a", 10_000, 0) == 0
    assert m.record("alice", "b", 10_000, 0) > 0  # the same sensor: alice's
    assert m.record("bob", "a", 10_000, 0) == 0   # the default user's quota: bob's own
    assert m.record("carol", "a", 10_000, 0) == 0


def test_no_quota_for_the_client_records_nothing():
    m = manager({(U,): 1000})
    assert m.record("bob", "x", 10**9, 0) == 0 and m.sensors == {}


def test_unrecord_takes_bytes_back():
    m = manager({(U,): 1000})
    assert m.record("alice", "app", 20_000, 0) > 0
    m.unrecord("alice", "app", 20_000, 0)
    assert m.record("alice", "app", 10_000, 0) == 0


def test_max_value_in_window_is_the_quota_over_samples_minus_one_windows():
    assert manager({(U,): 1000}).max_value_in_window("alice", "x") == 10_000
    assert manager({(U,): 1000}).max_value_in_window("bob", "x") is None


def test_idle_sensors_are_forgotten_after_an_hour():
    m = manager({(U,): 1000})
    m.record("alice", "app", 1, 0)
    assert m.dispose(3_599_999) == 0 and m.dispose(3_600_000) == 1 and m.sensors == {}


def test_a_changed_quota_starts_the_sensors_again():
    m = manager({(U,): 1000})
    assert m.record("alice", "app", 20_000, 0) > 0
    m.set_quotas({(U,): {"producer_byte_rate": 5000.0}})
    assert m.record("alice", "app", 20_000, 0) == 0
