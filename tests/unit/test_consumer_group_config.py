"""The group.consumer.* keys (KIP-848): Kafka's defaults, the cross-key rules of
Kafka's GroupCoordinatorConfig, and the assignor list."""

from __future__ import annotations

import pytest

from kipper.broker.config import ConfigError, load
from kipper.broker.groups.consumer import ConsumerGroupSettings


def test_defaults_are_kafkas():
    c = load()
    assert (c["group.consumer.session.timeout.ms"], c["group.consumer.min.session.timeout.ms"],
            c["group.consumer.max.session.timeout.ms"]) == (45000, 45000, 60000)
    assert (c["group.consumer.heartbeat.interval.ms"], c["group.consumer.min.heartbeat.interval.ms"],
            c["group.consumer.max.heartbeat.interval.ms"]) == (5000, 5000, 15000)
    assert c["group.consumer.max.size"] == 2**31 - 1
    assert c["group.consumer.assignors"] == ("uniform", "range")
    assert ConsumerGroupSettings.from_config(c) == ConsumerGroupSettings()


@pytest.mark.parametrize("overrides,message", [
    ({"group.consumer.session.timeout.ms": "30000"},
     r"^group.consumer.session.timeout.ms: 30000 is outside \[group.consumer.min.session.timeout.ms=45000, "),
    ({"group.consumer.session.timeout.ms": "61000"}, r"is outside"),
    ({"group.consumer.min.session.timeout.ms": "50000", "group.consumer.max.session.timeout.ms": "48000"},
     r"^group.consumer.max.session.timeout.ms must be greater than or equal to group.consumer.min.session"),
    ({"group.consumer.heartbeat.interval.ms": "4000"}, r"^group.consumer.heartbeat.interval.ms: 4000 is outside"),
    ({"group.consumer.min.session.timeout.ms": "100", "group.consumer.session.timeout.ms": "3000",
      "group.consumer.min.heartbeat.interval.ms": "100", "group.consumer.heartbeat.interval.ms": "3000"},
     r"^group.consumer.heartbeat.interval.ms must be below group.consumer.session.timeout.ms$"),
])
def test_timeouts_are_checked_against_their_bounds_and_each_other(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load(overrides=overrides)


def test_short_timeouts_for_tests_are_allowed_once_the_minimums_are_lowered():
    c = load(overrides={"group.consumer.min.session.timeout.ms": "1000",
                        "group.consumer.session.timeout.ms": "3000",
                        "group.consumer.min.heartbeat.interval.ms": "100",
                        "group.consumer.heartbeat.interval.ms": "250"})
    s = ConsumerGroupSettings.from_config(c)
    assert (s.session_timeout_ms, s.heartbeat_interval_ms) == (3000, 250)


def test_assignors_take_short_names_or_kafka_class_names_and_the_first_is_the_default():
    c = load(overrides={"group.consumer.assignors":
                        "org.apache.kafka.coordinator.group.assignor.RangeAssignor, uniform"})
    assert c["group.consumer.assignors"] == ("range", "uniform")
    assert ConsumerGroupSettings.from_config(c).default_assignor == "range"


@pytest.mark.parametrize("text", ["", "sticky", "uniform,cooperative-sticky"])
def test_unknown_assignors_are_refused(text):
    with pytest.raises(ConfigError, match=r"^group.consumer.assignors: .* must list one or more of uniform, range"):
        load(overrides={"group.consumer.assignors": text})
