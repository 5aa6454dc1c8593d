"""The Schema Registry of a secured broker (a real ``kipper broker`` process): HTTPS with the
broker's certificate, HTTP Basic authentication against the broker's SCRAM users, and the
broker's ACLs deciding who may read and change which subject (the topic it names) and the
global settings (the cluster), as docs/SCHEMA_REGISTRY.md describes."""

from __future__ import annotations

import json
import socket
import time

import pytest

from kipper.client.acl_requests import AclBinding, create_acls
from kipper.client.blocking import connect_any
from tests.support.broker import free_port
from tests.support.certs import USERS, start_secure_broker
from tests.support import requires

requires.module("avro", "schema-registry")
requires.module("confluent_kafka.schema_registry", "interop")
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: E402

pytestmark = pytest.mark.broker_subprocess
USER = json.dumps({"type": "record", "name": "User", "namespace": "ex", "fields": [{"name": "name", "type": "string"}]})


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    port = free_port()
    broker = start_secure_broker(tmp_path_factory.mktemp("registry"), {
        "schema.registry.listeners": f"https://127.0.0.1:{port}",
        "authorizer.class.name": "standard", "super.users": "User:admin;User:ANONYMOUS"})
    broker.registry_url = f"https://127.0.0.1:{port}"
    _await_listener(port)
    with connect_any(broker.bootstrap("PLAINTEXT")) as conn:  # PLAINTEXT is the operators' listener here
        results = create_acls(conn, [
            AclBinding("TOPIC", "orders", "LITERAL", "User:alice", "*", "WRITE", "ALLOW"),
            AclBinding("TOPIC", "audit", "LITERAL", "User:bob", "*", "READ", "ALLOW"),
        ]).results
        assert all(r.error_code == 0 for r in results), results
    yield broker
    broker.stop()


def _await_listener(port: int, timeout: float = 30.0) -> None:
    """The broker is started once its Kafka listeners accept; the registry's listener opens a
    moment later (a clean-clone run's first request met it closed)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"the Schema Registry's listener on {port} did not open"
            time.sleep(0.1)


def client(secure, user: str | None, password: str | None = None) -> SchemaRegistryClient:
    conf = {"url": secure.registry_url, "ssl.ca.location": str(secure.pki.ca), "max.retries": 0}
    if user is not None:
        conf["basic.auth.user.info"] = f"{user}:{USERS.get(user, '') if password is None else password}"
    return SchemaRegistryClient(conf)


def status(call) -> tuple[int, int]:
    with pytest.raises(SchemaRegistryError) as info:
        call()
    return info.value.http_status_code, info.value.error_code


@pytest.mark.parametrize("user, password", [(None, None), ("alice", "wrong"), ("nobody", "alice-secret")])
def test_requests_without_valid_credentials_get_401(secure, user, password):
    assert status(lambda: client(secure, user, password).get_subjects()) == (401, 401)


def test_a_user_registers_under_the_topic_it_may_write_and_nowhere_else(secure):
    alice = client(secure, "alice")
    assert alice.register_schema("orders-value", Schema(USER, "AVRO")) >= 1
    assert alice.get_latest_version("orders-value").version == 1
    assert status(lambda: alice.register_schema("payments-value", Schema(USER, "AVRO"))) == (403, 40301)
    assert "payments-value" not in client(secure, "admin").get_subjects()


def test_reading_needs_describe_and_deleting_permanently_needs_delete(secure):
    client(secure, "admin").register_schema("audit-value", Schema(USER, "AVRO"))
    bob, alice = client(secure, "bob"), client(secure, "alice")
    assert bob.get_latest_version("audit-value").version == 1  # READ implies DESCRIBE
    assert status(lambda: alice.get_latest_version("audit-value")) == (403, 40301)
    assert "audit-value" in bob.get_subjects() and "audit-value" not in alice.get_subjects()
    assert status(lambda: bob.delete_subject("audit-value")) == (403, 40301)  # no WRITE


def test_global_settings_change_only_with_alter_configs_on_the_cluster(secure):
    assert status(lambda: client(secure, "alice").set_compatibility(level="NONE")) == (403, 40301)
    admin = client(secure, "admin")  # a super user
    assert admin.set_compatibility(level="FULL") == {"compatibility": "FULL"}
    assert client(secure, "alice").get_compatibility() == "FULL"  # reading it needs nothing
    admin.set_compatibility(level="BACKWARD")


def test_plain_http_to_the_https_listener_gets_no_answer(secure):
    plain = SchemaRegistryClient({"url": secure.registry_url.replace("https", "http"), "max.retries": 0,
                                  "basic.auth.user.info": "admin:admin-secret"})
    with pytest.raises(Exception) as failed:
        plain.get_subjects()
    assert not isinstance(failed.value, SchemaRegistryError) or failed.value.http_status_code != 200
