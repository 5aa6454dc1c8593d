"""SCRAM (RFC 5802) with SHA-256 and SHA-512 (RFC 7677): credentials and both ends.

``ScramServer`` is the broker's side of one exchange: fed the client-first
message it answers with the server-first one, fed the client-final message it
checks the channel-binding echo, the nonce and the proof (constant time) and
answers with the server signature. ``ScramClient`` is the other side, used by
kipper's tools and tests. A server asked about an unknown user carries on with
a made-up salt and fails at the proof, so a client learns nothing about which
part was wrong. Usernames are escaped as RFC 5802 says (=2C, =3D); like Kafka,
names and passwords are used as UTF-8 without SASLprep.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

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


def _hmac(hash_name: str, key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, hash_name).digest()


def salted_password(hash_name: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(hash_name, password.encode("utf-8"), salt, iterations)


@dataclass(frozen=True)
class ScramCredential:
    """What the server stores: never the password, only the keys derived from it."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, hash_name: str, salted: bytes, salt: bytes,
                             iterations: int) -> "ScramCredential":
        client_key = _hmac(hash_name, salted, b"Client Key")
        return cls(salt, hashlib.new(hash_name, client_key).digest(),
                   _hmac(hash_name, salted, b"Server Key"), iterations)

    @classmethod
    def from_password(cls, mechanism: str, password: str, iterations: int = DEFAULT_ITERATIONS,
                      salt: bytes | None = None) -> "ScramCredential":
        hash_name = HASHES[mechanism]
        salt = salt if salt is not None else secrets.token_bytes(32)
        return cls.from_salted_password(hash_name, salted_password(hash_name, password, salt, iterations),
                                        salt, iterations)

    def verify_password(self, mechanism: str, password: str) -> bool:
        """PLAIN's check: recompute the stored key from the password, compare in constant time."""
        other = ScramCredential.from_password(mechanism, password, self.iterations, self.salt)
        return hmac.compare_digest(other.stored_key, self.stored_key)

    def to_json(self) -> dict:
        return {"salt": b64(self.salt), "stored_key": b64(self.stored_key),
                "server_key": b64(self.server_key), "iterations": self.iterations}

    @classmethod
    def from_json(cls, data: dict) -> "ScramCredential":
        return cls(unb64(data["salt"]), unb64(data["stored_key"]), unb64(data["server_key"]),
                   int(data["iterations"]))


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


def _attributes(message: str) -> list[tuple[str, str]]:
    out = []
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ScramError(f"malformed attribute '{part[:16]}'")
        out.append((part[0], part[2:]))
    return out


def _valid_nonce(nonce: str) -> bool:
    # RFC 5802: printable ASCII except ','
    return bool(nonce) and all(0x21 <= ord(c) <= 0x7E and c != "," for c in nonce)


class ScramServer:
    """One SCRAM exchange on the broker. ``lookup(user)`` returns the user's
    ScramCredential for this mechanism or None; ``secret`` keys the made-up
    salts of unknown users (stable per user, so repeated probes look alike)."""

    def __init__(self, mechanism: str, lookup, *, secret: bytes, nonce: str | None = None,
                 default_iterations: int = DEFAULT_ITERATIONS):
        self.mechanism = mechanism
        self.hash_name = HASHES[mechanism]
        self.lookup = lookup
        self.secret = secret
        self.server_nonce = nonce or secrets.token_urlsafe(24)
        self.default_iterations = default_iterations
        self.username: str | None = None
        self.complete = False
        self._credential: ScramCredential | None = None
        self._known = False
        self._client_first_bare = ""
        self._server_first = ""
        self._gs2_header = ""
        self._nonce = ""

    def first(self, client_first: bytes) -> bytes:
        try:
            text = client_first.decode("utf-8")
        except UnicodeDecodeError:
            raise ScramError("client-first is not UTF-8") from None
        parts = text.split(",", 2)
        if len(parts) != 3:
            raise ScramError("client-first has no GS2 header")
        cb_flag, authzid, bare = parts
        if cb_flag not in ("n", "y"):
            raise ScramError("channel binding is not supported")
        if authzid and not authzid.startswith("a="):
            raise ScramError("malformed authzid")
        attrs = _attributes(bare)
        if len(attrs) < 2 or attrs[0][0] != "n" or attrs[1][0] != "r":
            raise ScramError("client-first must start with n= and r=")
        username = unescape_username(attrs[0][1])
        client_nonce = attrs[1][1]
        if not username or not _valid_nonce(client_nonce):
            raise ScramError("empty username or invalid client nonce")
        for key, value in attrs[2:]:
            if key == "m":
                raise ScramError("mandatory extension not supported")
            if key == "t" or value == "tokenauth=true":
                raise ScramError("delegation tokens are not supported")
        if authzid and unescape_username(authzid[2:]) != username:
            raise ScramError("authorization id differs from the username")
        self.username = username
        self._gs2_header = f"{cb_flag},{authzid},"
        self._client_first_bare = bare
        self._nonce = client_nonce + self.server_nonce
        credential = self.lookup(username)
        self._known = credential is not None
        if credential is None:
            salt = _hmac("sha256", self.secret, username.encode("utf-8"))[:32]
            credential = ScramCredential(salt, secrets.token_bytes(hashlib.new(self.hash_name).digest_size),
                                         b"", self.default_iterations)
        self._credential = credential
        self._server_first = f"r={self._nonce},s={b64(credential.salt)},i={credential.iterations}"
        return self._server_first.encode("utf-8")

    def final(self, client_final: bytes) -> bytes:
        if self._credential is None:
            raise ScramError("client-final before client-first")
        try:
            text = client_final.decode("utf-8")
        except UnicodeDecodeError:
            raise ScramError("client-final is not UTF-8") from None
        attrs = _attributes(text)
        if len(attrs) < 3 or attrs[0][0] != "c" or attrs[1][0] != "r" or attrs[-1][0] != "p":
            raise ScramError("client-final must be c=, r=, ..., p=")
        if not hmac.compare_digest(unb64(attrs[0][1]), self._gs2_header.encode("utf-8")):
            raise ScramError("channel binding does not match the GS2 header")
        if not hmac.compare_digest(attrs[1][1].encode("utf-8"), self._nonce.encode("utf-8")):
            raise ScramError("nonce does not match")
        proof = unb64(attrs[-1][1])
        without_proof = text[:text.rindex(",p=")]
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode("utf-8")
        cred = self._credential
        signature = _hmac(self.hash_name, cred.stored_key, auth_message)
        if len(proof) != len(signature):
            raise ScramError("invalid credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        ok = hmac.compare_digest(hashlib.new(self.hash_name, client_key).digest(), cred.stored_key)
        if not (ok and self._known):
            raise ScramError("invalid credentials")
        self.complete = True
        return f"v={b64(_hmac(self.hash_name, cred.server_key, auth_message))}".encode("utf-8")


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
        attrs = dict(_attributes(text))
        nonce, salt, iterations = attrs.get("r", ""), unb64(attrs.get("s", "")), int(attrs.get("i", "0"))
        if not nonce.startswith(self.client_nonce) or len(nonce) == len(self.client_nonce):
            raise ScramError("server nonce does not extend the client nonce")
        if iterations < MIN_ITERATIONS:
            raise ScramError(f"server asked for {iterations} iterations, below {MIN_ITERATIONS}")
        self._salted = salted_password(self.hash_name, self.password, salt, iterations)
        without_proof = f"c={b64(b'n,,')},r={nonce}"
        self._auth_message = f"{self._bare},{text},{without_proof}".encode("utf-8")
        client_key = _hmac(self.hash_name, self._salted, b"Client Key")
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        signature = _hmac(self.hash_name, stored_key, self._auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        return f"{without_proof},p={b64(proof)}".encode("utf-8")

    def verify(self, server_final: bytes) -> None:
        attrs = dict(_attributes(server_final.decode("utf-8")))
        if "e" in attrs:
            raise ScramError(f"server error: {attrs['e']}")
        server_key = _hmac(self.hash_name, self._salted, b"Server Key")
        expected = _hmac(self.hash_name, server_key, self._auth_message)
        if not hmac.compare_digest(unb64(attrs.get("v", "")), expected):
            raise ScramError("server signature does not match")
