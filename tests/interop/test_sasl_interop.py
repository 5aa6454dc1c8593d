"""confluent-kafka and kafka-python authenticate with PLAIN, SCRAM-SHA-256 and
SCRAM-SHA-512 over SASL_PLAINTEXT and SASL_SSL (a test CA made at test time),
produce idempotently, and read back; a wrong password fails cleanly."""

from __future__ import annotations

import time

import pytest

from tests.support import requires
from tests.support.certs import USERS, start_secure_broker
from tests.support.readback import read_topic

ck = requires.module("confluent_kafka", "interop")
requires.module("kafka", "interop")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from kafka import KafkaConsumer, KafkaProducer  # noqa: E402
from kafka.errors import KafkaError as KafkaPythonError  # noqa: E402

pytestmark = pytest.mark.interop

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
PROTOCOLS = ["SASL_PLAINTEXT", "SASL_SSL"]
N = 20


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    b = start_secure_broker(tmp_path_factory.mktemp("sasl-interop"))
    yield b
    b.stop()


def _confluent_config(secure, protocol, mechanism, password=USERS["alice"]):
    return {"bootstrap.servers": secure.bootstrap(protocol), "security.protocol": protocol,
            "sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": password,
            "ssl.ca.location": str(secure.pki.ca)}


def _kafka_python_config(secure, protocol, mechanism, password=USERS["alice"]):
    return {"bootstrap_servers": secure.bootstrap(protocol), "security_protocol": protocol,
            "sasl_mechanism": mechanism, "sasl_plain_username": "alice", "sasl_plain_password": password,
            "ssl_cafile": str(secure.pki.ca)}


def _values(secure, topic):
    return [r.value for r in read_topic(secure.bootstrap("PLAINTEXT"), topic)[0]]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_authenticates_produces_and_consumes(secure, unique, protocol, mechanism):
    topic = f"ck-{mechanism.lower()}-{protocol.lower()}-{unique}"
    conf = _confluent_config(secure, protocol, mechanism)
    errors = []
    producer = Producer({**conf, "enable.idempotence": True, "acks": "all"})
    for i in range(N):
        producer.produce(topic, value=b"ck-%d" % i, on_delivery=lambda e, m: e and errors.append(e))
    assert producer.flush(20) == 0 and errors == []
    assert _values(secure, topic) == [b"ck-%d" % i for i in range(N)]
    consumer = Consumer({**conf, "group.id": f"g-{unique}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got, deadline = [], time.time() + 20
    while len(got) < N and time.time() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    consumer.close()
    assert got == [b"ck-%d" % i for i in range(N)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python_authenticates_produces_and_consumes(secure, unique, protocol, mechanism):
    topic = f"kp-{mechanism.lower()}-{protocol.lower()}-{unique}"
    conf = _kafka_python_config(secure, protocol, mechanism)
    producer = KafkaProducer(**conf, acks="all", enable_idempotence=True)
    futures = [producer.send(topic, value=b"kp-%d" % i, partition=0) for i in range(N)]
    producer.flush(20)
    assert all(f.get(10) for f in futures)
    producer.close(5)
    assert _values(secure, topic) == [b"kp-%d" % i for i in range(N)]
    consumer = KafkaConsumer(**conf, auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=5000)
    consumer.assign([__import__("kafka").TopicPartition(topic, 0)])
    consumer.seek(__import__("kafka").TopicPartition(topic, 0), 0)
    got = [m.value for _, m in zip(range(N), consumer)]
    consumer.close()
    assert got == [b"kp-%d" % i for i in range(N)]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_with_a_wrong_password_fails_cleanly(secure, unique, mechanism):
    errors = []
    conf = _confluent_config(secure, "SASL_SSL", mechanism, password="wrong")
    producer = Producer({**conf, "message.timeout.ms": 3000,
                         "error_cb": lambda e: errors.append(e)})
    producer.produce(f"denied-{unique}", value=b"x")
    deadline = time.time() + 10
    while not errors and time.time() < deadline:
        producer.poll(0.1)
    assert any(e.code() == ck.KafkaError._AUTHENTICATION for e in errors), errors
    assert any("invalid credentials" in e.str() for e in errors)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python_with_a_wrong_password_fails_cleanly(secure, mechanism, caplog):
    # kafka-python 3 keeps retrying the bootstrap until bootstrap_timeout_ms, logging each refusal
    with pytest.raises(KafkaPythonError):
        KafkaProducer(**_kafka_python_config(secure, "SASL_PLAINTEXT", mechanism, password="wrong"),
                      bootstrap_timeout_ms=2000)
    assert "SaslAuthenticationFailedError: Authentication failed during authentication due to " \
           f"invalid credentials with SASL mechanism {mechanism}" in caplog.text


def test_confluent_admin_manages_scram_users_that_then_log_in(secure, unique):
    from confluent_kafka.admin import (
        AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient(_confluent_config(secure, "SASL_SSL", "SCRAM-SHA-512"))
    user = f"erin-{unique}"
    futures = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
        user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"erin-pw", b"some-salt-bytes")])
    futures[user].result(10)
    described = admin.describe_user_scram_credentials([user])[user].result(10)
    assert [(i.mechanism, i.iterations) for i in described.scram_credential_infos] == \
        [(ScramMechanism.SCRAM_SHA_256, 8192)]
    producer = Producer({**_confluent_config(secure, "SASL_PLAINTEXT", "SCRAM-SHA-256"),
                         "sasl.username": user, "sasl.password": "erin-pw"})
    errors = []
    producer.produce(f"erin-{unique}", value=b"hi", on_delivery=lambda e, m: e and errors.append(e))
    assert producer.flush(15) == 0 and errors == []
    admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_256)])[
        user].result(10)
    with pytest.raises(ck.KafkaException):
        admin.describe_user_scram_credentials([user])[user].result(10)


def test_kafka_python_admin_describes_scram_users(secure):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(**_kafka_python_config(secure, "SASL_PLAINTEXT", "SCRAM-SHA-256"))
    try:
        result = admin.describe_user_scram_credentials(["alice"])
    finally:
        admin.close()
    assert result["alice"]["error"] is None
    assert sorted((int(i["mechanism"]), i["iterations"]) for i in result["alice"]["credential_infos"]) == \
        [(1, 4096), (2, 4096)]
