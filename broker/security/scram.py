"""The broker's side of SCRAM (RFC 5802, RFC 7677): stored credentials and ScramServer.

``ScramServer`` is fed the client-first message and answers with the
server-first one; fed the client-final message it checks the channel-binding
echo, the nonce and the proof (constant time) and answers with the server
signature. A server asked about an unknown user carries on with a made-up
salt and fails at the proof, so a client learns nothing about which part was
wrong. The primitives and the client's side are in kipper.protocol.sasl.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from kipper.protocol.sasl import (
    DEFAULT_ITERATIONS, HASHES, ScramError, attributes, b64, hmac_digest, salted_password, unb64,
    unescape_username,
)


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
        client_key = hmac_digest(hash_name, salted, b"Client Key")
        return cls(salt, hashlib.new(hash_name, client_key).digest(),
                   hmac_digest(hash_name, salted, b"Server Key"), iterations)

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
        attrs = attributes(bare)
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
            salt = hmac_digest("sha256", self.secret, username.encode("utf-8"))[:32]
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
        attrs = attributes(text)
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
        signature = hmac_digest(self.hash_name, cred.stored_key, auth_message)
        if len(proof) != len(signature):
            raise ScramError("invalid credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        ok = hmac.compare_digest(hashlib.new(self.hash_name, client_key).digest(), cred.stored_key)
        if not (ok and self._known):
            raise ScramError("invalid credentials")
        self.complete = True
        return f"v={b64(hmac_digest(self.hash_name, cred.server_key, auth_message))}".encode("utf-8")
