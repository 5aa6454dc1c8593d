"""SASL messages both ends share: SCRAM (RFC 5802, RFC 7677) and PLAIN (RFC 4616).

The SCRAM primitives (salted passwords, attribute parsing, username escapes)
and the client's side of an exchange (``ScramClient``) live here so that the
client, the tools and the broker use one implementation; the broker's side
(``ScramServer``, stored credentials) is in kipper.broker.security.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

# RFC 7677 asks for at least 4096 iterations; Kafka accepts 4096..16384.
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
DEFAULT_ITERATIONS = 4096

HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512", "SCRAM-SHA-1": "sha1"}
# AlterUserScramCredentials / DescribeUserScramCredentials mechanism codes (KIP-554)
MECHANISM_CODES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MECHANISM_NAMES = {v: k for k, v in MECHANISM_CODES.items()}


class ScramError(Exception):
    """The exchange failed. ``reason`` is for the broker's log only."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise ScramError("invalid base64") from None


def hmac_digest(hash_name: str, key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, hash_name).digest()


def salted_password(hash_name: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(hash_name, password.encode("utf-8"), salt, iterations)


def escape_username(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def unescape_username(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        if text[i] == "=":
            code = text[i + 1:i + 3]
            if code not in ("2C", "3D"):
                raise ScramError("invalid escape in username")
            out.append("," if code == "2C" else "=")
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def attributes(message: str) -> list[tuple[str, str]]:
    out = []
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ScramError(f"malformed attribute '{part[:16]}'")
        out.append((part[0], part[2:]))
    return out


class ScramClient:
    """The client's side: first() -> bytes, final(server_first) -> bytes,
    verify(server_final) raises ScramError unless the server proved itself."""

    def __init__(self, mechanism: str, username: str, password: str, *, nonce: str | None = None):
        self.hash_name = HASHES[mechanism]
        self.username = username
        self.password = password
        self.client_nonce = nonce or secrets.token_urlsafe(24)
        self._bare = f"n={escape_username(username)},r={self.client_nonce}"
        self._auth_message = b""
        self._salted = b""

    def first(self) -> bytes:
        return f"n,,{self._bare}".encode("utf-8")

    def final(self, server_first: bytes) -> bytes:
        text = server_first.decode("utf-8")
        attrs = dict(attributes(text))
        nonce, salt, iterations = attrs.get("r", ""), unb64(attrs.get("s", "")), int(attrs.get("i", "0"))
        if not nonce.startswith(self.client_nonce) or len(nonce) == len(self.client_nonce):
            raise ScramError("server nonce does not extend the client nonce")
        if iterations < MIN_ITERATIONS:
            raise ScramError(f"server asked for {iterations} iterations, below {MIN_ITERATIONS}")
        self._salted = salted_password(self.hash_name, self.password, salt, iterations)
        without_proof = f"c={b64(b'n,,')},r={nonce}"
        self._auth_message = f"{self._bare},{text},{without_proof}".encode("utf-8")
        client_key = hmac_digest(self.hash_name, self._salted, b"Client Key")
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        signature = hmac_digest(self.hash_name, stored_key, self._auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        return f"{without_proof},p={b64(proof)}".encode("utf-8")

    def verify(self, server_final: bytes) -> None:
        attrs = dict(attributes(server_final.decode("utf-8")))
        if "e" in attrs:
            raise ScramError(f"server error: {attrs['e']}")
        server_key = hmac_digest(self.hash_name, self._salted, b"Server Key")
        expected = hmac_digest(self.hash_name, server_key, self._auth_message)
        if not hmac.compare_digest(unb64(attrs.get("v", "")), expected):
            raise ScramError("server signature does not match")


# --- PLAIN -------------------------------------------------------------------------

MAX_FIELD = 255  # RFC 4616 limits each field to 255 octets


def parse_plain(message: bytes) -> tuple[str, str, str]:
    parts = message.split(b"\x00")
    if len(parts) != 3:
        raise ScramError("PLAIN message must have three NUL-separated fields")
    if any(len(p) > MAX_FIELD for p in parts):
        raise ScramError("PLAIN field longer than 255 bytes")
    try:
        authzid, authcid, password = (p.decode("utf-8") for p in parts)
    except UnicodeDecodeError:
        raise ScramError("PLAIN message is not UTF-8") from None
    if not authcid or not password:
        raise ScramError("PLAIN username or password is empty")
    if authzid and authzid != authcid:
        raise ScramError("authorization id differs from the username")
    return authzid, authcid, password


def plain_client_message(username: str, password: str) -> bytes:
    return b"\x00" + username.encode("utf-8") + b"\x00" + password.encode("utf-8")
