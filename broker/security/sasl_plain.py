"""SASL PLAIN (RFC 4616): one message, authzid NUL authcid NUL password.

The broker keeps no passwords: the password is checked by recomputing the
user's SCRAM stored key with the stored salt and iterations (``verify``).
An unknown user costs the same PBKDF2 work as a known one, so timing does
not tell the two apart.
"""

from __future__ import annotations

from broker.security.scram import ScramError

MAX_FIELD = 255  # RFC 4616 limits each field to 255 octets


def parse(message: bytes) -> tuple[str, str, str]:
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


class PlainServer:
    """``verify(user, password) -> bool`` is the credential store's check."""

    def __init__(self, verify):
        self.verify = verify
        self.username: str | None = None
        self.complete = False

    def authenticate(self, message: bytes) -> bytes:
        _, username, password = parse(message)
        self.username = username
        if not self.verify(username, password):
            raise ScramError("invalid credentials")
        self.complete = True
        return b""


def client_message(username: str, password: str) -> bytes:
    return b"\x00" + username.encode("utf-8") + b"\x00" + password.encode("utf-8")
