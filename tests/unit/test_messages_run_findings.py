"""What the generator's first ``--messages`` run (the texts compared word for word, seed 10601,
docs/FUZZ_FINDINGS.md) met and was fixed at once: Kafka's words for a BROKER resource named
by no integer when described, for a SaslAuthenticate on a listener without SASL, and for a
SCRAM user without credentials. The rest it met is handed on there."""

from __future__ import annotations

from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.support.inproc import InProcessBroker

DESCRIBE_CONFIGS, ALTER_CONFIGS, SASL_AUTHENTICATE, DESCRIBE_USER_SCRAM_CREDENTIALS = 32, 33, 36, 50
BROKER = 4


def test_a_broker_resource_named_by_no_integer_is_a_broker_id_when_described_a_node_id_when_altered():
    broker = InProcessBroker()
    described = broker.call(DESCRIBE_CONFIGS, 2, {"resources": [
        {"resource_type": BROKER, "resource_name": "x", "configuration_keys": None}], "include_synonyms": False})
    assert described["results"][0]["error_message"] == "Broker id must be an integer, but it is: x"
    altered = broker.call(ALTER_CONFIGS, 2, {"resources": [
        {"resource_type": BROKER, "resource_name": "x", "configs": []}], "validate_only": True})
    assert altered["responses"][0]["error_message"] == "Node id must be an integer, but it is: x"


def test_sasl_authenticate_on_a_listener_without_sasl_has_kafka_s_words():
    broker = InProcessBroker()
    [answer], _ = broker.dispatcher.dispatch(
        [encode_request(APIS[SASL_AUTHENTICATE], 2, 1, "test", {"auth_bytes": b"x"})[4:]], 0, broker.session)
    assert answer.close  # (and the connection closes after it, as Kafka's does)
    assert b"SaslAuthenticate request received after successful authentication" in bytes(answer.body)


def test_a_scram_user_without_credentials_is_attempt_with_a_capital():
    broker = InProcessBroker()
    answer = broker.call(DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": [{"name": "u"}]})
    assert answer["results"][0]["error_message"] == "Attempt to describe a user credential that does not exist: u"
