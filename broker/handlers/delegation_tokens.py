"""The delegation-token APIs (KIP-48) of a broker that issues none: Kafka's answers when
``delegation.token.secret.key`` is unset, its default, which is the only way kipper runs.

Kafka first asks whether the channel may ask about tokens at all: not over PLAINTEXT, not over
SSL without a client certificate (ANONYMOUS) and not over a token's own login
(DELEGATION_TOKEN_REQUEST_NOT_ALLOWED). CreateDelegationToken then checks the owner named
(CREATE_TOKENS on the USER it names, unless it is the requester) and that every renewer is a
User (INVALID_PRINCIPAL_TYPE). What passes reaches the token manager, which is disabled:
DELEGATION_TOKEN_AUTH_DISABLED. A refusal made before the manager carries Kafka's error
timestamps (-1); the manager's own carries its response's defaults (0).
"""

from __future__ import annotations

from kipper.broker.acl.model import CREATE_TOKENS, USER
from kipper.protocol.errors import ErrorCode

USER_TYPE = "User"
ERROR_TIMESTAMP = -1  # Kafka's DelegationTokenManager.ErrorTimestamp


def _allowed(ctx) -> bool:
    protocol, principal = ctx.session.security_protocol, ctx.session.principal
    return not (protocol == "PLAINTEXT" or (protocol == "SSL" and principal == "User:ANONYMOUS"))


def _principal(text: str) -> tuple[str, str]:
    kind, _, name = text.partition(":")
    return kind, name


def handle_create_delegation_token(req, ctx):
    requester = _principal(ctx.session.principal)
    named = req.get("owner_principal_name")
    owner = (req.get("owner_principal_type"), named) if named else requester
    code, stamp = ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, 0
    if not _allowed(ctx):
        code, stamp = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, ERROR_TIMESTAMP
    elif owner != requester and not ctx.authorize(CREATE_TOKENS, USER, f"{owner[0]}:{owner[1]}"):
        code, stamp = ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, ERROR_TIMESTAMP
    elif any(r.principal_type != USER_TYPE for r in req.renewers):
        code, stamp = ErrorCode.INVALID_PRINCIPAL_TYPE, ERROR_TIMESTAMP
    return {"error_code": int(code), "principal_type": owner[0], "principal_name": owner[1],
            "token_requester_principal_type": requester[0], "token_requester_principal_name": requester[1],
            "issue_timestamp_ms": stamp, "expiry_timestamp_ms": stamp, "max_timestamp_ms": stamp,
            "token_id": "", "hmac": b"", "throttle_time_ms": 0}


def _renew_or_expire(req, ctx):
    if not _allowed(ctx):
        return {"error_code": int(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
                "expiry_timestamp_ms": ERROR_TIMESTAMP, "throttle_time_ms": 0}
    return {"error_code": int(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED), "expiry_timestamp_ms": 0,
            "throttle_time_ms": 0}


handle_renew_delegation_token = handle_expire_delegation_token = _renew_or_expire


def handle_describe_delegation_token(req, ctx):
    code = ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED if _allowed(ctx) else ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    return {"error_code": int(code), "tokens": [], "throttle_time_ms": 0}
