"""Authentication against the real broker: SASL PLAIN and SCRAM over
SASL_PLAINTEXT and SASL_SSL, what an unauthenticated connection may do, failed
logins, credential management (kipper users, AlterUserScramCredentials)."""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
import time

import pytest

from kipper.client import admin
from kipper.client.admin import NewTopic, ScramCredentialDeletion, ScramCredentialUpsertion
from kipper.client.blocking import BlockingConnection
from kipper.client.connect import connect
from kipper.client.producer_requests import produce
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode, KafkaError
from tests.support.broker import ROOT
from tests.support.certs import start_secure_broker

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    b = start_secure_broker(tmp_path_factory.mktemp("sasl"), {"super.users": "User:admin;User:alice"})
    yield b
    b.stop()


def _metadata(conn):
    return admin.metadata(conn)


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_each_mechanism_logs_in_over_both_sasl_listeners(secure, protocol, mechanism):
    with connect(secure.bootstrap(protocol), secure.settings(protocol, mechanism)) as conn:
        meta = _metadata(conn)
        assert (meta.brokers[0].host, meta.brokers[0].port) == ("127.0.0.1", secure.ports[protocol])


def test_ssl_listener_serves_anonymous_clients_over_tls(secure):
    with connect(secure.bootstrap("SSL"), secure.settings("SSL")) as conn:
        assert _metadata(conn).brokers[0].port == secure.ports["SSL"]


def test_plaintext_client_on_a_tls_listener_gets_nothing(secure):
    with pytest.raises((ConnectionError, OSError)):
        with BlockingConnection("127.0.0.1", secure.ports["SSL"], timeout=5) as conn:
            conn.negotiate()


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("user,password", [("alice", "wrong"), ("nobody", "alice-secret")])
def test_failed_login_gets_one_message_whatever_was_wrong_and_the_connection_closes(
        secure, mechanism, user, password):
    settings = secure.settings("SASL_PLAINTEXT", mechanism, user, password)
    with pytest.raises(KafkaError) as err:
        connect(secure.bootstrap("SASL_PLAINTEXT"), settings)
    assert err.value.code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert str(err.value).endswith("Authentication failed during authentication due to invalid "
                                   f"credentials with SASL mechanism {mechanism}")


def test_failed_login_is_logged_without_the_password(secure):
    with pytest.raises(KafkaError):
        connect(secure.bootstrap("SASL_PLAINTEXT"),
                secure.settings("SASL_PLAINTEXT", "PLAIN", "alice", "hunter2-not-it"))
    deadline = time.time() + 5
    while "authentication_failed" not in secure.process.log_text() and time.time() < deadline:
        time.sleep(0.05)
    log = secure.process.log_text()
    assert "authentication_failed" in log and "mechanism=PLAIN" in log
    assert "hunter2" not in log


def _raw(secure, protocol="SASL_PLAINTEXT") -> BlockingConnection:
    conn = BlockingConnection("127.0.0.1", secure.ports[protocol], timeout=5)
    conn.negotiate()  # ApiVersions is served before authentication
    return conn


def test_unauthenticated_produce_on_a_sasl_listener_closes_the_connection(secure):
    batch = records.build_batch([(None, b"sneaky")])
    with _raw(secure) as conn:
        with pytest.raises(ConnectionError):
            produce(conn, {("t", 0): batch}, timeout_ms=1000)


def test_unauthenticated_metadata_closes_the_connection(secure):
    with _raw(secure) as conn:
        with pytest.raises(ConnectionError):
            _metadata(conn)


def test_frame_over_512_kib_before_authentication_is_refused(secure):
    with socket.create_connection(("127.0.0.1", secure.ports["SASL_PLAINTEXT"]), timeout=5) as s:
        s.sendall(struct.pack(">i", 512 * 1024 + 1) + b"\x00" * 1024)
        assert s.recv(1) == b""  # closed without an answer


def test_frame_over_512_kib_is_fine_after_authentication(secure, unique):
    with connect(secure.bootstrap("SASL_PLAINTEXT"), secure.settings("SASL_PLAINTEXT")) as conn:
        admin.create_topics(conn, [NewTopic(f"big-{unique}", 1, 1)], timeout_ms=5000)
        batch = records.build_batch([(None, b"x" * (600 * 1024))])
        resp = produce(conn, {(f"big-{unique}", 0): batch}, timeout_ms=1000)
        assert resp.responses[0].partition_responses[0].error_code == 0


def test_authenticate_before_handshake_is_an_illegal_state(secure):
    with _raw(secure) as conn:
        resp = conn.request(36, {"auth_bytes": b"\x00alice\x00alice-secret"})
        assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE


def test_unknown_mechanism_is_refused_with_the_enabled_list(secure):
    with _raw(secure) as conn:
        resp = conn.request(17, {"mechanism": "GSSAPI"}, version=1)
        assert resp.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
        assert list(resp.mechanisms) == MECHANISMS


def test_handshake_on_a_plaintext_listener_is_an_illegal_state_and_offers_no_mechanism(secure):
    # Kafka lists no mechanism where it does no SASL (found by tests/conformance, issue 29)
    with BlockingConnection("127.0.0.1", secure.ports["PLAINTEXT"], timeout=5) as conn:
        resp = conn.request(17, {"mechanism": "PLAIN"}, version=1)
        assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE and list(resp.mechanisms) == []


def test_kipper_users_add_is_picked_up_by_the_running_broker(secure):
    subprocess.run([sys.executable, "-m", "kipper", "users", "add", "--config-dir", str(secure.config_dir),
                    "--user", "carol", "--password", "carol-secret"], cwd=ROOT, check=True, capture_output=True)
    settings = secure.settings("SASL_PLAINTEXT", "SCRAM-SHA-512", "carol", "carol-secret")
    deadline = time.time() + 10
    while True:
        try:
            with connect(secure.bootstrap("SASL_PLAINTEXT"), settings) as conn:
                _metadata(conn)
            break
        except KafkaError:
            assert time.time() < deadline, "the broker never reloaded users.json"
            time.sleep(0.2)
    listed = subprocess.run([sys.executable, "-m", "kipper", "users", "list", "--config-dir",
                             str(secure.config_dir)], cwd=ROOT, check=True, capture_output=True, text=True)
    assert "carol\tSCRAM-SHA-256(iterations=4096),SCRAM-SHA-512(iterations=4096)" in listed.stdout


def _configs(secure, *args, user="admin"):
    settings = secure.settings("SASL_PLAINTEXT", "SCRAM-SHA-256", user)
    path = secure.config_dir.parent / f"{user}.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items() if k != "sasl.password") +
                    f'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
                    f'username="{user}" password="{settings["sasl.password"]}";\n')
    return subprocess.run([sys.executable, "-m", "kipper", "configs", "--bootstrap-server",
                           secure.bootstrap("SASL_PLAINTEXT"), "--command-config", str(path), *args],
                          cwd=ROOT, capture_output=True, text=True)


def test_scram_credentials_through_the_admin_api(secure):
    added = _configs(secure, "--alter", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=dave-pw]",
                     "--entity-type", "users", "--entity-name", "dave")
    assert added.returncode == 0, added.stderr
    with connect(secure.bootstrap("SASL_SSL"), secure.settings("SASL_SSL", "SCRAM-SHA-512", "dave", "dave-pw")):
        pass
    with pytest.raises(KafkaError):  # only SHA-512 was set
        connect(secure.bootstrap("SASL_SSL"), secure.settings("SASL_SSL", "SCRAM-SHA-256", "dave", "dave-pw"))
    shown = _configs(secure, "--describe", "--entity-type", "users", "--entity-name", "dave")
    assert "SCRAM credential configs for user-principal 'dave' are SCRAM-SHA-512=iterations=8192" in shown.stdout
    deleted = _configs(secure, "--alter", "--delete-config", "SCRAM-SHA-512", "--entity-type", "users",
                       "--entity-name", "dave")
    assert deleted.returncode == 0, deleted.stderr
    with pytest.raises(KafkaError):
        connect(secure.bootstrap("SASL_SSL"), secure.settings("SASL_SSL", "SCRAM-SHA-512", "dave", "dave-pw"))


def test_alter_scram_credentials_errors(secure):
    with connect(secure.bootstrap("SASL_PLAINTEXT"), secure.settings("SASL_PLAINTEXT", user="admin")) as conn:
        resp = admin.alter_user_scram_credentials(conn, deletions=[ScramCredentialDeletion("ghost", 1)], upsertions=[
            ScramCredentialUpsertion("low", 1, 1000, b"s", b"p"),
            ScramCredentialUpsertion("mech", 9, 4096, b"s", b"p"),
            ScramCredentialUpsertion("twice", 1, 4096, b"s", b"p"),
            ScramCredentialUpsertion("twice", 1, 4096, b"s", b"p")])
        codes = {r.user: r.error_code for r in resp.results}
        assert codes == {"ghost": ErrorCode.RESOURCE_NOT_FOUND, "low": ErrorCode.UNACCEPTABLE_CREDENTIAL,
                         "mech": ErrorCode.UNSUPPORTED_SASL_MECHANISM, "twice": ErrorCode.DUPLICATE_RESOURCE}
        # a user once per request, whatever the mechanisms (Kafka's ScramControlManager, found by
        # kafka-configs --add-config 'SCRAM-SHA-256=[...],SCRAM-SHA-512=[...]', issue 30)
        resp = admin.alter_user_scram_credentials(conn, deletions=[ScramCredentialDeletion("alice", 2)], upsertions=[
            ScramCredentialUpsertion("both", 1, 4096, b"s", b"p"),
            ScramCredentialUpsertion("both", 2, 4096, b"s", b"p"),
            ScramCredentialUpsertion("alice", 1, 4096, b"s", b"p")])
        codes = {r.user: r.error_code for r in resp.results}
        assert codes == {"both": ErrorCode.DUPLICATE_RESOURCE, "alice": ErrorCode.DUPLICATE_RESOURCE}
        assert {r.user for r in admin.describe_user_scram_credentials(conn, ["both"]).results
                if r.error_code == ErrorCode.RESOURCE_NOT_FOUND} == {"both"}  # nothing stored
        described = admin.describe_user_scram_credentials(conn, ["ghost", "alice"])
        codes = {r.user: r.error_code for r in described.results}
        assert codes == {"ghost": ErrorCode.RESOURCE_NOT_FOUND, "alice": 0}


def test_only_super_users_manage_credentials_and_quotas(secure):
    denied = _configs(secure, "--alter", "--add-config", "producer_ids_rate=1000", "--entity-type", "users",
                      "--entity-name", "rogue", user="rogue")
    assert denied.returncode == 1 and "CLUSTER_AUTHORIZATION_FAILED" in denied.stderr
    with connect(secure.bootstrap("SASL_PLAINTEXT"), secure.settings("SASL_PLAINTEXT", user="rogue")) as conn:
        resp = admin.alter_user_scram_credentials(conn, deletions=[ScramCredentialDeletion("admin", 1)])
        assert resp.results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
