"""benchmarks.producer_compare's values: every client gets the same ones."""

from __future__ import annotations

from benchmarks.producer_compare import values_to_send


def test_without_a_spread_one_value_is_sent_n_times():
    values = list(values_to_send(5, 100, 0))
    assert len(values) == 5 and len(set(values)) == 1 and len(values[0]) == 100


def test_with_a_spread_1024_values_in_range_come_in_turn_and_are_the_same_for_every_client():
    values = list(values_to_send(3000, 100, 50))
    assert len(values) == 3000
    assert all(50 <= len(v) <= 150 for v in values)
    assert len({len(v) for v in values}) > 50
    assert values[:1024] == values[1024:2048]
    assert values == list(values_to_send(3000, 100, 50))
