"""A broker's new values are judged in the order Kafka judges them (its per-broker throttles,
then KafkaConfig's definitions, then what it reads of a value after parsing), whatever the
request's order; max.connections.per.ip.overrides and metric.reporters are read as Kafka
reads them (scenario admin-edges/broker-configs-checked-in-kafkas-order)."""

from __future__ import annotations

import pytest

from kipper.broker.config import load
from kipper.broker.dynamic_configs import DynamicBrokerConfigs
from kipper.protocol.errors import ErrorCode


def test_the_first_invalid_value_in_kafkas_order_is_named_whatever_the_requests_order():
    configs = DynamicBrokerConfigs(load(None, {}))
    code, text = configs.check({"compression.type": "bogus", "message.max.bytes": "x",
                                "leader.replication.throttled.rate": "x"})
    assert code == ErrorCode.INVALID_REQUEST
    assert text == "Invalid value x for configuration leader.replication.throttled.rate: Not a number of type LONG"


@pytest.mark.parametrize("value, text", [
    ("bogus", "Error parsing configuration property 'max.connections.per.ip.overrides': begin 0, end -1, length 5"),
    (",a:1", "Error parsing configuration property 'max.connections.per.ip.overrides': begin 0, end -1, length 0"),
    ("127.0.0.1:5,x:y", 'For input string: "y"'),
    ("a:99999999999", 'For input string: "99999999999"'),
    ("not a host!:5", "max.connections.per.ip.overrides contains invalid addresses : not a host!"),
    ("a:1,", None), ("a:+5, b : 6", None), ("127.0.0.1:-1", None), ("", None)])
def test_per_ip_connection_limits_are_read_as_kafka_reads_them(value, text):
    code, found = DynamicBrokerConfigs(load(None, {})).check({"max.connections.per.ip.overrides": value})
    assert found == text and (code == ErrorCode.NONE) == (text is None)


def test_a_metrics_reporter_kafka_cannot_load_is_refused():
    configs = DynamicBrokerConfigs(load(None, {}))
    assert configs.check({"metric.reporters": "org.apache.kafka.common.metrics.JmxReporter"})[0] == ErrorCode.NONE
    code, text = configs.check({"metric.reporters": "bogus"})
    assert code == ErrorCode.INVALID_REQUEST and "DynamicMetricsReporters" in text
