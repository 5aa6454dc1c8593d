"""super.users and allow.everyone.if.no.acl.found on a broker, as Kafka 4.4 describes and alters
them: its KafkaConfig does not declare them (the authorizer reads them when it starts), so they
are names it does not know. Set in the properties file, they are described sensitive and null;
not set, not at all; set at run time, they are stored and change nothing
(tests/conformance/scenarios/admin_edges.py asks the shared Kafka the part it can be asked)."""

from __future__ import annotations

from kipper.broker.context import Session
from tests.support.inproc import InProcessBroker

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, BROKER, UNKNOWN_TYPE, CLUSTER_AUTHORIZATION_FAILED = 32, 44, 4, 0, 31
NAMES = ["super.users", "allow.everyone.if.no.acl.found"]
SESSION = Session("PLAINTEXT", "127.0.0.1:6000", security_protocol="PLAINTEXT", principal="User:admin")


def _describe(broker, session: Session = SESSION) -> dict:
    answer = broker.call(DESCRIBE_CONFIGS, 4, {"resources": [{"resource_type": BROKER, "resource_name": "1",
                                                             "configuration_keys": NAMES}],
                                             "include_synonyms": True, "include_documentation": True}, session)
    result = answer["results"][0]
    return {c["name"]: c for c in result["configs"]} if result["error_code"] == 0 else result["error_code"]


def test_set_in_the_properties_they_are_described_as_names_kafka_does_not_know():
    broker = InProcessBroker(**{"super.users": "User:admin", "allow.everyone.if.no.acl.found": "false"})
    rows = _describe(broker)
    assert sorted(rows) == sorted(NAMES)
    for name, row in rows.items():
        assert (row["value"], row["is_sensitive"], row["read_only"], row["config_type"], row["config_source"],
                row["documentation"]) == (None, True, True, UNKNOWN_TYPE, 4, None), name
        assert row["synonyms"] == [{"name": name, "value": None, "source": 4}]
    assert _describe(InProcessBroker()) == {}  # not set: Kafka lists neither


def test_set_at_run_time_they_are_stored_described_and_change_nothing():
    broker = InProcessBroker(**{"authorizer.class.name": "standard", "super.users": "User:admin"})
    answer = broker.call(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [{
        "resource_type": BROKER, "resource_name": "1", "configs": [
            {"name": "super.users", "config_operation": 0, "value": "User:nobody"}]}]}, SESSION)
    assert answer["responses"][0]["error_code"] == 0
    row = _describe(broker)["super.users"]
    assert (row["value"], row["config_source"], [s["source"] for s in row["synonyms"]]) == (None, 2, [2, 4])
    nobody = Session("PLAINTEXT", "127.0.0.1:6001", security_protocol="PLAINTEXT", principal="User:nobody")
    assert _describe(broker, nobody) == CLUSTER_AUTHORIZATION_FAILED  # (still no super user)
