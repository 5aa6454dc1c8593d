"""SaslHandshake and SaslAuthenticate: move tokens between the client and the
connection's SaslAuthenticator (broker/security/authenticator.py).

A completed exchange sets the session's principal and marks it authenticated;
a failed one answers SASL_AUTHENTICATION_FAILED with one fixed message, logs
the attempt, and asks the connection to close after the answer, as Kafka does.
Handshake v0 (raw SASL tokens without SaslAuthenticate) is answered but its raw
tokens are not understood: every client tested here uses v1 (KIP-152).
"""

from __future__ import annotations

import structlog

from kipper.broker.handlers.replies import Reply
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

NOT_AFTER_AUTHENTICATION = "SaslAuthenticate request received after successful authentication"


def handle_sasl_handshake(req, ctx):
    session = ctx.session
    security = ctx.engines.security
    auth = session.sasl
    if auth is None:  # not a SASL listener: no mechanism is on offer here (Kafka's answer)
        return {"error_code": int(ErrorCode.ILLEGAL_SASL_STATE), "mechanisms": []}
    code = auth.handshake(req.mechanism)
    if code == ErrorCode.UNSUPPORTED_SASL_MECHANISM:
        log.warning("authentication_failed", peer=session.peer, listener=session.listener,
                    mechanism=req.mechanism, reason="unsupported_mechanism")
        security.login_failed()
        return Reply({"error_code": int(code), "mechanisms": list(auth.mechanisms)}, close=True)
    return {"error_code": int(code), "mechanisms": list(auth.mechanisms)}


def handle_sasl_authenticate(req, ctx):
    session = ctx.session
    security = ctx.engines.security
    auth = session.sasl
    if auth is None:
        # (a listener without SASL has authenticated its connections already: Kafka's words)
        return Reply(_answer(ErrorCode.ILLEGAL_SASL_STATE, NOT_AFTER_AUTHENTICATION, b""), close=True)
    step = auth.authenticate(req.auth_bytes or b"")
    if step.principal is not None:
        session.principal = step.principal
        session.authenticated = True
        security.login_succeeded()
        log.debug("authenticated", peer=session.peer, listener=session.listener,
                  mechanism=auth.mechanism, principal=step.principal)
    elif step.error:
        security.login_failed()
        log.warning("authentication_failed", peer=session.peer, listener=session.listener,
                    mechanism=auth.mechanism, user=auth.username, reason=step.reason)
        return Reply(_answer(step.error, step.message, step.token), close=step.close)
    return _answer(step.error, step.message, step.token)


def _answer(code: ErrorCode, message: str | None, token: bytes) -> dict:
    # (Kafka's answer to a step that succeeds leaves error_message at its default, "")
    return {"error_code": int(code), "error_message": "" if message is None and not code else message,
            "auth_bytes": token,
            "session_lifetime_ms": 0}
