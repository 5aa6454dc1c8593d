"""A group's configs are judged as Kafka's GroupConfig.validate judges them: each value in the
order of Kafka's definitions (its ConfigDef parses in that order), whatever the request's
order, then the cross-key rules, the streams assignor's name last of them (the client
generator's fifth run; scenario admin-edges/group-configs-checked-in-kafkas-order)."""

from __future__ import annotations

from kipper.broker.config import load
from kipper.broker.groups.configs import GROUP_CONFIGS, GroupConfigs


def test_the_first_invalid_value_in_kafkas_order_is_named_whatever_the_requests_order():
    configs = GroupConfigs(broker=load(None, {}))
    request = {"share.record.lock.duration.ms": "5", "consumer.heartbeat.interval.ms": "0"}
    assert configs.check_all(request) == (
        "Invalid value 0 for configuration consumer.heartbeat.interval.ms: Value must be at least 1")
    assert list(GROUP_CONFIGS)[:2] == ["consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"]


def test_a_streams_assignor_kafka_has_not_registered_is_refused():
    configs = GroupConfigs(broker=load(None, {}))
    assert configs.check_all({"streams.assignor.name": "bogus"}) == (
        "streams.assignor.name 'bogus' is not a registered task assignor. Registered assignors are: [sticky].")
    assert configs.check_all({"streams.assignor.name": "sticky"}) is None
