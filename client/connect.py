"""Connecting to a broker with Kafka's client security settings: TLS and SASL.

``connect`` opens a BlockingConnection to the first reachable bootstrap
server and does TLS and SASL (PLAIN, SCRAM-SHA-256/512) as a command config
says: security.protocol, sasl.mechanism, sasl.jaas.config (or sasl.username
and sasl.password), ssl.truststore.location (or ssl.ca.location, PEM) and
ssl.endpoint.identification.algorithm. The tools, the jobs and the tests use it
to reach SASL and TLS listeners.
"""

from __future__ import annotations

import re
import socket
import ssl

from kipper.client.blocking import BlockingConnection, parse_bootstrap
from kipper.protocol.errors import KafkaError
from kipper.protocol.properties import read_properties
from kipper.protocol.sasl import MECHANISM_CODES, ScramClient, ScramError, plain_client_message

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def client_settings(path: str | None) -> dict[str, str]:
    props = read_properties(path) if path else {}
    jaas = props.get("sasl.jaas.config", "")
    for key in ("username", "password"):
        m = re.search(rf'{key}\s*=\s*"((?:[^"\\]|\\.)*)"', jaas)
        if m and f"sasl.{key}" not in props:
            props[f"sasl.{key}"] = m.group(1).replace('\\"', '"')
    return props


def connect(bootstrap: str, settings: dict[str, str] | None = None, *, client_id: str = "kipper-tool",
            timeout: float = 30.0) -> BlockingConnection:
    """A BlockingConnection to the first reachable bootstrap server, with TLS
    and SASL done as ``settings`` (a command config) says."""
    settings = settings or {}
    protocol = settings.get("security.protocol", "PLAINTEXT").upper()
    last = None
    for host, port in parse_bootstrap(bootstrap):
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            last = exc
            continue
        if protocol in ("SSL", "SASL_SSL"):
            sock = _tls_context(settings).wrap_socket(sock, server_hostname=host)
        conn = BlockingConnection(host, port, client_id=client_id, timeout=timeout, sock=sock)
        try:
            conn.negotiate()
            if protocol.startswith("SASL_"):
                authenticate(conn, settings.get("sasl.mechanism", "PLAIN"),
                             settings.get("sasl.username", ""), settings.get("sasl.password", ""))
        except BaseException:
            conn.close()
            raise
        return conn
    raise ConnectionError(f"cannot reach any bootstrap server in '{bootstrap}': {last}")


def _tls_context(settings: dict[str, str]) -> ssl.SSLContext:
    ctx = ssl.create_default_context(
        cafile=settings.get("ssl.truststore.location") or settings.get("ssl.ca.location") or None)
    if settings.get("ssl.endpoint.identification.algorithm", "https").lower() in ("", "none"):
        ctx.check_hostname = False
    cert = settings.get("ssl.keystore.location") or settings.get("ssl.certificate.location")
    if cert:
        ctx.load_cert_chain(cert, settings.get("ssl.key.location") or None,
                            password=settings.get("ssl.key.password") or None)
    return ctx


def authenticate(conn: BlockingConnection, mechanism: str, username: str, password: str) -> None:
    """SaslHandshake v1, then SaslAuthenticate round trips (KIP-152)."""
    hs = conn.request(SASL_HANDSHAKE, {"mechanism": mechanism}, version=1)
    if hs.error_code:
        raise KafkaError(hs.error_code, f"broker offers {list(hs.mechanisms)}")

    def step(token: bytes) -> bytes:
        r = conn.request(SASL_AUTHENTICATE, {"auth_bytes": token})
        if r.error_code:
            raise KafkaError(r.error_code, r.error_message or "")
        return r.auth_bytes or b""

    if mechanism == "PLAIN":
        step(plain_client_message(username, password))
        return
    if mechanism not in MECHANISM_CODES:
        raise ValueError(f"unsupported sasl.mechanism {mechanism}")
    client = ScramClient(mechanism, username, password)
    server_first = step(client.first())
    try:
        client.verify(step(client.final(server_first)))
    except ScramError as exc:
        raise ConnectionError(f"the broker failed SCRAM server authentication: {exc}") from None
