"""A broker's loggers (BROKER_LOGGER resources, kafka-configs --entity-type broker-loggers):
what tests/conformance/scenarios/admin_edges.py's broker-loggers cannot ask the shared Kafka
(a level really set, a user without ALTER_CONFIGS on the cluster), and the level reaching
kipper's logging."""

from __future__ import annotations

from kipper.broker.broker_loggers import BrokerLoggers
from kipper.broker.context import Session
from tests.support.inproc import InProcessBroker

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, BROKER_LOGGER = 32, 44, 8
ADMIN = Session("PLAINTEXT", "127.0.0.1:6000", security_protocol="PLAINTEXT", principal="User:admin")
NOBODY = Session("PLAINTEXT", "127.0.0.1:6001", security_protocol="PLAINTEXT", principal="User:nobody")


def _set(broker, level: str, session=ADMIN, validate_only: bool = False) -> dict:
    return broker.call(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": validate_only, "resources": [{
        "resource_type": BROKER_LOGGER, "resource_name": "1", "configs": [
            {"name": "root", "config_operation": 0, "value": level}]}]}, session)["responses"][0]


def _root(broker) -> str:
    answer = broker.call(DESCRIBE_CONFIGS, 4, {"resources": [{"resource_type": BROKER_LOGGER, "resource_name": "1",
                                                             "configuration_keys": None}],
                                             "include_synonyms": False, "include_documentation": False}, ADMIN)
    configs = answer["results"][0]["configs"]
    assert [c["name"] for c in configs] == ["root"]
    return configs[0]["value"]


def test_a_level_set_is_described_as_set_and_a_validated_one_changes_nothing():
    broker = InProcessBroker(**{"log.level": "WARNING"})
    assert _root(broker) == "WARN"
    assert _set(broker, "DEBUG", validate_only=True)["error_code"] == 0
    assert _root(broker) == "WARN"
    assert _set(broker, "TRACE")["error_code"] == 0
    assert _root(broker) == "TRACE"


def test_a_user_without_alter_configs_on_the_cluster_is_refused_as_kafka_refuses():
    """(Kafka's answer, met by the protocol generator as a user: tests/unit/test_user_connection_findings.py)"""
    broker = InProcessBroker(**{"authorizer.class.name": "standard", "super.users": "User:admin"})
    refused = _set(broker, "DEBUG", session=NOBODY)
    assert (refused["error_code"], refused["error_message"]) == (31, None)
    assert _root(broker) == "INFO"


def test_the_level_reaches_kippers_logging_as_the_nearest_it_has():
    applied = []
    loggers = BrokerLoggers(1, "INFO", applied.append)

    class Op:
        def __init__(self, value):
            self.config_operation, self.name, self.value = 0, "root", value
    for level in ("TRACE", "FATAL", "WARN"):
        assert loggers.check("1", [Op(level)]) is None
        loggers.apply([Op(level)])
    assert applied == ["DEBUG", "ERROR", "WARNING"] and loggers.loggers() == {"root": "WARN"}
