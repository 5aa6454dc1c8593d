"""SCRAM (RFC 5802 / RFC 7677), SASL PLAIN, the per-connection SASL state
machine and the credential store. No sockets."""

from __future__ import annotations

import base64
import json

import pytest

from kipper.protocol import sasl
from kipper.broker.security.authenticator import (
    AUTHENTICATE, COMPLETE, FAILED, HANDSHAKE, SaslAuthenticator, failure_message,
)
from kipper.broker.security.credentials import CredentialStore
from kipper.broker.security.scram import ScramCredential, ScramServer
from kipper.protocol.sasl import ScramClient, ScramError, escape_username, unescape_username
from kipper.protocol.errors import ErrorCode

MECHS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


# --- RFC test vectors ---------------------------------------------------------------------

# RFC 7677 section 3 (SCRAM-SHA-256): user "user", password "pencil"
RFC7677 = {
    "mechanism": "SCRAM-SHA-256",
    "client_nonce": "rOprNGfwEbeRWgbNEkqO",
    "server_nonce": "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
    "salt": "W22ZaJ0SNY7soEsUEjb6gQ==",
    "client_first": "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
    "server_first": "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
    "client_final": "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
    "server_final": "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
}
# RFC 5802 section 5 (SCRAM-SHA-1), same engine with another hash
RFC5802 = {
    "mechanism": "SCRAM-SHA-1",
    "client_nonce": "fyko+d2lbbFgONRv9qkxdawL",
    "server_nonce": "3rfcNHYJY1ZVvWVs7j",
    "salt": "QSXCR+Q6sek8bf92",
    "client_first": "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL",
    "server_first": "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
    "client_final": "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
    "server_final": "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=",
}


def _vector_credential(v) -> ScramCredential:
    return ScramCredential.from_password(v["mechanism"], "pencil", 4096, base64.b64decode(v["salt"]))


@pytest.mark.parametrize("v", [RFC7677, RFC5802], ids=["rfc7677-sha256", "rfc5802-sha1"])
def test_server_reproduces_the_rfc_exchange(v):
    cred = _vector_credential(v)
    server = ScramServer(v["mechanism"], lambda user: cred if user == "user" else None,
                         secret=b"s", nonce=v["server_nonce"])
    assert server.first(v["client_first"].encode()).decode() == v["server_first"]
    assert server.final(v["client_final"].encode()).decode() == v["server_final"]
    assert server.complete and server.username == "user"


@pytest.mark.parametrize("v", [RFC7677, RFC5802], ids=["rfc7677-sha256", "rfc5802-sha1"])
def test_client_reproduces_the_rfc_exchange(v):
    client = ScramClient(v["mechanism"], "user", "pencil", nonce=v["client_nonce"])
    assert client.first().decode() == v["client_first"]
    assert client.final(v["server_first"].encode()).decode() == v["client_final"]
    client.verify(v["server_final"].encode())


def test_client_rejects_a_server_that_does_not_know_the_password():
    v = RFC7677
    client = ScramClient(v["mechanism"], "user", "pencil", nonce=v["client_nonce"])
    client.final(v["server_first"].encode())
    with pytest.raises(ScramError):
        client.verify(b"v=" + base64.b64encode(b"\x00" * 32))


# --- round trips and failures -------------------------------------------------------------

def _exchange(mechanism, store_password, login_password, user="alice", known=True):
    cred = ScramCredential.from_password(mechanism, store_password)
    server = ScramServer(mechanism, lambda u: cred if known and u == user else None, secret=b"k")
    client = ScramClient(mechanism, user, login_password)
    server_first = server.first(client.first())
    server_final = server.final(client.final(server_first))
    client.verify(server_final)
    return server


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_round_trip_with_the_right_password_completes(mechanism):
    assert _exchange(mechanism, "s3cret", "s3cret").complete


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_wrong_password_fails_at_the_proof(mechanism):
    with pytest.raises(ScramError, match="invalid credentials"):
        _exchange(mechanism, "s3cret", "guess")


def test_unknown_user_gets_a_stable_made_up_salt_and_the_same_failure():
    lookup = lambda user: None  # noqa: E731
    first = ScramServer("SCRAM-SHA-256", lookup, secret=b"k").first(b"n,,n=mallory,r=abc")
    again = ScramServer("SCRAM-SHA-256", lookup, secret=b"k").first(b"n,,n=mallory,r=xyz")
    salt = lambda msg: dict(p.split("=", 1) for p in msg.decode().split(","))["s"]  # noqa: E731
    assert salt(first) == salt(again) and b"i=4096" in first
    with pytest.raises(ScramError, match="invalid credentials"):
        _exchange("SCRAM-SHA-256", "pw", "pw", known=False)


def test_final_with_a_changed_nonce_is_rejected():
    cred = ScramCredential.from_password("SCRAM-SHA-256", "pw")
    server = ScramServer("SCRAM-SHA-256", lambda u: cred, secret=b"k")
    client = ScramClient("SCRAM-SHA-256", "alice", "pw")
    server_first = server.first(client.first())
    final = client.final(server_first).decode().replace(",r=", ",r=X", 1)
    with pytest.raises(ScramError, match="nonce"):
        server.final(final.encode())


def test_final_with_a_different_channel_binding_is_rejected():
    cred = ScramCredential.from_password("SCRAM-SHA-256", "pw")
    server = ScramServer("SCRAM-SHA-256", lambda u: cred, secret=b"k")
    client = ScramClient("SCRAM-SHA-256", "alice", "pw")
    server_first = server.first(client.first())
    final = client.final(server_first).decode().replace("c=biws", "c=eSws", 1)
    with pytest.raises(ScramError, match="channel binding"):
        server.final(final.encode())


@pytest.mark.parametrize("message", [
    b"p=tls-unique,,n=alice,r=abc",      # channel binding requested
    b"n,,r=abc,n=alice",                 # attributes out of order
    b"n,,n=alice,r=a,b",                 # malformed attribute
    b"n,,n=alice,r=abc,tokenauth=true",  # delegation token login
    b"n,,n=,r=abc",                      # empty user
    b"n,,n=al=ZZice,r=abc",              # bad escape
])
def test_malformed_client_first_is_rejected(message):
    with pytest.raises(ScramError):
        ScramServer("SCRAM-SHA-256", lambda u: None, secret=b"k").first(message)


def test_client_first_before_anything_else_is_required():
    with pytest.raises(ScramError):
        ScramServer("SCRAM-SHA-256", lambda u: None, secret=b"k").final(b"c=biws,r=x,p=AAAA")


def test_client_refuses_fewer_than_4096_iterations():
    client = ScramClient("SCRAM-SHA-256", "alice", "pw", nonce="abc")
    with pytest.raises(ScramError, match="iterations"):
        client.final(b"r=abcdef,s=QSXCR+Q6sek8bf92,i=1000")


def test_usernames_with_comma_and_equals_are_escaped_both_ways():
    assert escape_username("a,b=c") == "a=2Cb=3Dc"
    assert unescape_username("a=2Cb=3Dc") == "a,b=c"
    assert _exchange("SCRAM-SHA-512", "pw", "pw", user="a,b=c").username == "a,b=c"


# --- PLAIN --------------------------------------------------------------------------------

def test_plain_message_parses_and_refuses_a_foreign_authzid():
    assert sasl.parse_plain(b"\x00alice\x00pw") == ("", "alice", "pw")
    assert sasl.parse_plain(b"alice\x00alice\x00pw")[1] == "alice"
    with pytest.raises(ScramError):
        sasl.parse_plain(b"admin\x00alice\x00pw")
    with pytest.raises(ScramError):
        sasl.parse_plain(b"\x00alice")


def test_plain_is_checked_against_the_salted_credential(tmp_path):
    store = CredentialStore(str(tmp_path))
    store.add_user("alice", "alice-secret")
    assert store.verify_password("alice", "alice-secret")
    assert not store.verify_password("alice", "alice-secre")
    assert not store.verify_password("nobody", "alice-secret")


# --- credential store -------------------------------------------------------------------

def test_store_keeps_no_password_and_at_least_4096_iterations(tmp_path):
    store = CredentialStore(str(tmp_path))
    store.add_user("alice", "correct horse battery staple")
    text = (tmp_path / "users.json").read_text()
    assert "correct horse" not in text
    data = json.loads(text)["users"]["alice"]
    assert set(data) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
    assert all(c["iterations"] >= 4096 for c in data.values())
    assert data["SCRAM-SHA-256"]["salt"] != data["SCRAM-SHA-512"]["salt"]
    assert oct((tmp_path / "users.json").stat().st_mode & 0o777) == "0o600"


def test_a_second_store_on_the_same_directory_sees_changes_after_reload(tmp_path):
    broker_view = CredentialStore(str(tmp_path))
    tool = CredentialStore(str(tmp_path))
    tool.add_user("bob", "pw")
    assert broker_view.lookup("bob", "SCRAM-SHA-256") is None
    assert broker_view.maybe_reload()
    assert broker_view.lookup("bob", "SCRAM-SHA-256") is not None
    assert not broker_view.maybe_reload()  # nothing changed since
    tool.delete_user("bob")
    assert broker_view.maybe_reload() and broker_view.lookup("bob", "SCRAM-SHA-256") is None


def test_changes_from_two_writers_are_both_kept(tmp_path):
    a, b = CredentialStore(str(tmp_path)), CredentialStore(str(tmp_path))
    a.add_user("alice", "pw")
    b.add_user("bob", "pw")  # b never reloaded, but change() re-reads under the lock
    assert set(CredentialStore(str(tmp_path)).users) == {"alice", "bob"}


# --- the per-connection SASL state machine ------------------------------------------------

def _authenticator(tmp_path, password="pw"):
    store = CredentialStore(str(tmp_path))
    store.add_user("alice", password)
    return SaslAuthenticator(MECHS, store)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_login_walks_handshake_authenticate_complete(tmp_path, mechanism):
    auth = _authenticator(tmp_path)
    assert auth.state == HANDSHAKE
    assert auth.handshake(mechanism) == ErrorCode.NONE and auth.state == AUTHENTICATE
    client = ScramClient(mechanism, "alice", "pw")
    step = auth.authenticate(client.first())
    assert step.error == ErrorCode.NONE and step.principal is None and auth.state == AUTHENTICATE
    step = auth.authenticate(client.final(step.token))
    assert step.principal == "User:alice" and auth.state == COMPLETE
    client.verify(step.token)


def test_plain_login_completes_in_one_step(tmp_path):
    auth = _authenticator(tmp_path)
    auth.handshake("PLAIN")
    step = auth.authenticate(sasl.plain_client_message("alice", "pw"))
    assert step.error == ErrorCode.NONE and step.principal == "User:alice"


def test_wrong_password_and_unknown_user_get_the_same_answer(tmp_path):
    answers = []
    for user, password in (("alice", "wrong"), ("nobody", "pw")):
        for mechanism in MECHS:
            auth = _authenticator(tmp_path)
            auth.handshake(mechanism)
            if mechanism == "PLAIN":
                step = auth.authenticate(sasl.plain_client_message(user, password))
            else:
                client = ScramClient(mechanism, user, password)
                step = auth.authenticate(client.final(auth.authenticate(client.first()).token))
            assert step.error == ErrorCode.SASL_AUTHENTICATION_FAILED and step.close
            assert step.message == failure_message(mechanism) and auth.state == FAILED
            answers.append((mechanism, step.message, step.token))
    assert answers[:3] == answers[3:]


def test_authenticate_before_handshake_is_an_illegal_state(tmp_path):
    step = _authenticator(tmp_path).authenticate(b"\x00alice\x00pw")
    assert step.error == ErrorCode.ILLEGAL_SASL_STATE and step.close


def test_second_handshake_and_unknown_mechanism_are_refused(tmp_path):
    auth = _authenticator(tmp_path)
    assert auth.handshake("GSSAPI") == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert auth.state == HANDSHAKE
    assert auth.handshake("PLAIN") == ErrorCode.NONE
    assert auth.handshake("PLAIN") == ErrorCode.ILLEGAL_SASL_STATE


def test_a_failed_exchange_cannot_be_continued(tmp_path):
    auth = _authenticator(tmp_path)
    auth.handshake("PLAIN")
    auth.authenticate(sasl.plain_client_message("alice", "wrong"))
    assert auth.authenticate(sasl.plain_client_message("alice", "pw")).error == ErrorCode.ILLEGAL_SASL_STATE


# --- TLS client certificates ---------------------------------------------------------------

def test_client_certificate_subject_becomes_an_rfc2253_principal():
    from kipper.broker.security.tls import principal_from_cert

    cert = {"subject": ((("countryName", "US"),), (("organizationName", "Acme, Inc"),),
                        (("commonName", "client-1"),))}
    assert principal_from_cert(cert) == "User:CN=client-1,O=Acme\\, Inc,C=US"
    assert principal_from_cert({}) is None and principal_from_cert(None) is None
