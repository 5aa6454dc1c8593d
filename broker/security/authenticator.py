"""One connection's SASL exchange (KIP-152): SaslHandshake, then SaslAuthenticate.

States and allowed moves::

    HANDSHAKE --handshake(known mechanism)--> AUTHENTICATE
    AUTHENTICATE --token, more needed (SCRAM first)--> AUTHENTICATE
    AUTHENTICATE --last token ok--> COMPLETE      (principal User:<name>)
    AUTHENTICATE --bad token--> FAILED            (connection closed after the answer)

Anything else is ILLEGAL_SASL_STATE. Every failure answers with the same
message, whatever was wrong; the reason goes to the broker's log only.
"""

from __future__ import annotations

from dataclasses import dataclass

from kipper.broker.security import sasl_plain
from kipper.broker.security.credentials import CredentialStore
from kipper.broker.security.scram import ScramServer
from kipper.protocol.sasl import ScramError
from kipper.protocol.errors import ErrorCode

HANDSHAKE, AUTHENTICATE, COMPLETE, FAILED = "HANDSHAKE", "AUTHENTICATE", "COMPLETE", "FAILED"

MOVES = {
    HANDSHAKE: {AUTHENTICATE},
    AUTHENTICATE: {AUTHENTICATE, COMPLETE, FAILED},
    COMPLETE: set(),
    FAILED: set(),
}


def failure_message(mechanism: str) -> str:
    # Kafka's wording for a failed SCRAM or PLAIN login
    return ("Authentication failed during authentication due to invalid credentials "
            f"with SASL mechanism {mechanism}")


@dataclass
class AuthStep:
    error: ErrorCode
    message: str | None = None
    token: bytes = b""
    principal: str | None = None  # set when authentication completed
    close: bool = False           # answer, then close the connection
    reason: str | None = None     # for the log only


class SaslAuthenticator:
    def __init__(self, mechanisms: tuple[str, ...], store: CredentialStore, *,
                 nonce: str | None = None):
        self.mechanisms = mechanisms
        self.store = store
        self.nonce = nonce
        self.state = HANDSHAKE
        self.mechanism: str | None = None
        self._server = None

    def _move(self, new: str) -> None:
        if new not in MOVES[self.state]:
            raise AssertionError(f"SASL state {self.state} -> {new}")
        self.state = new

    def handshake(self, mechanism: str) -> ErrorCode:
        if self.state != HANDSHAKE:
            return ErrorCode.ILLEGAL_SASL_STATE
        if mechanism not in self.mechanisms:
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM
        self.mechanism = mechanism
        if mechanism == "PLAIN":
            self._server = sasl_plain.PlainServer(self.store.verify_password)
        else:
            self._server = ScramServer(mechanism, lambda u, m=mechanism: self.store.lookup(u, m),
                                       secret=self.store.secret, nonce=self.nonce)
        self._move(AUTHENTICATE)
        return ErrorCode.NONE

    @property
    def username(self) -> str | None:
        return getattr(self._server, "username", None)

    def authenticate(self, token: bytes) -> AuthStep:
        if self.state != AUTHENTICATE:
            return AuthStep(ErrorCode.ILLEGAL_SASL_STATE,
                            f"SaslAuthenticate in state {self.state}", close=True,
                            reason="illegal_state")
        server = self._server
        try:
            if isinstance(server, ScramServer) and server.username is None:
                out = server.first(token)
            elif isinstance(server, ScramServer):
                out = server.final(token)
            else:
                out = server.authenticate(token)
        except ScramError as exc:
            self._move(FAILED)
            return AuthStep(ErrorCode.SASL_AUTHENTICATION_FAILED, failure_message(self.mechanism),
                            close=True, reason=exc.reason)
        if server.complete:
            self._move(COMPLETE)
            return AuthStep(ErrorCode.NONE, token=out, principal=f"User:{server.username}")
        self._move(AUTHENTICATE)
        return AuthStep(ErrorCode.NONE, token=out)
