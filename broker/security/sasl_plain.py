"""SASL PLAIN (RFC 4616): one message, authzid NUL authcid NUL password.

The broker keeps no passwords: the password is checked by recomputing the
user's SCRAM stored key with the stored salt and iterations (``verify``).
An unknown user costs the same PBKDF2 work as a known one, so timing does
not tell the two apart.
"""

from __future__ import annotations

from kipper.protocol.sasl import ScramError, parse_plain


class PlainServer:
    """``verify(user, password) -> bool`` is the credential store's check."""

    def __init__(self, verify):
        self.verify = verify
        self.username: str | None = None
        self.complete = False

    def authenticate(self, message: bytes) -> bytes:
        _, username, password = parse_plain(message)
        self.username = username
        if not self.verify(username, password):
            raise ScramError("invalid credentials")
        self.complete = True
        return b""
