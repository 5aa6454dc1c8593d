"""DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554).

Upsertions carry the salted password computed by the client; the broker keeps
only the stored and server keys derived from it. Errors follow Kafka:
UNACCEPTABLE_CREDENTIAL for iterations outside 4096..16384 or an empty name,
UNSUPPORTED_SASL_MECHANISM for an unknown mechanism, RESOURCE_NOT_FOUND for
deleting or describing what is not there. A user may appear once in a request,
deletions and upsertions together, as Kafka's controller (ScramControlManager) insists:
a second change to the same user, even for another mechanism, is DUPLICATE_RESOURCE for
that user. A request's changes are applied together.
"""

from __future__ import annotations

import structlog

from kipper.broker.security.credentials import valid_username
from kipper.broker.security.scram import ScramCredential
from kipper.broker.acl.model import ALTER, DESCRIBE
from kipper.broker.config_values import java_hash_order
from kipper.broker.handlers.client_quotas import may_manage
from kipper.protocol.errors import ErrorCode
from kipper.protocol.sasl import HASHES, MAX_ITERATIONS, MECHANISM_CODES, MECHANISM_NAMES, MIN_ITERATIONS

log = structlog.get_logger(__name__)


def handle_describe_user_scram_credentials(req, ctx):
    security = ctx.engines.security
    if not may_manage(ctx, DESCRIBE):
        # Kafka's error response: one result per user asked, each named ""; of null users (every
        # user) Kafka fails inside and never answers, where kipper answers the refusal with no
        # result (listed: kafka-closes-the-connection)
        denied = {"user": "", "error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), "error_message": None,
                  "credential_infos": []}
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                "error_message": None, "results": [dict(denied) for _ in req.users or ()]}
    known = security.describe_credentials()
    wanted = [u.name for u in req.users] if req.users else sorted(known)
    results = []
    for name in java_hash_order(wanted):  # Kafka answers from a HashMap of the names
        if wanted.count(name) > 1:
            results.append(_result(name, ErrorCode.DUPLICATE_RESOURCE, "Cannot describe SCRAM credentials for the "
                                   f"same user twice in a single request: {name}"))
        elif name not in known:
            results.append(_result(name, ErrorCode.RESOURCE_NOT_FOUND,
                                   f"Attempt to describe a user credential that does not exist: {name}"))
        else:
            results.append({**_result(name, ErrorCode.NONE, ""), "credential_infos": [  # "" as Kafka
                {"mechanism": MECHANISM_CODES[m], "iterations": i} for m, i in sorted(known[name].items())]})
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": "", "results": results}


def _result(user: str, code: ErrorCode, message: str | None) -> dict:
    return {"user": user, "error_code": int(code), "error_message": message, "credential_infos": []}


def _check(name: str, iterations: int | None, item) -> tuple[ErrorCode, str] | None:
    if not valid_username(name):
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "username must not be empty"
    if iterations is not None and not item.salted_password:  # an empty salt is taken, as Kafka takes it
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "the salted password must not be empty"
    return None


def _first_look(name: str, mechanism: int, iterations: int | None, users) -> tuple[ErrorCode, str] | None:
    """Kafka's look at one change, in the request's order, before the rest: its mechanism, an
    upsertion's iterations, a deletion's credential (Kafka's texts)."""
    if mechanism not in MECHANISM_NAMES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    if iterations is not None and iterations < MIN_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if iterations is not None and iterations > MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    if iterations is None and MECHANISM_NAMES[mechanism] not in users.get(name, {}):
        return ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
    return None


def handle_alter_user_scram_credentials(req, ctx):
    security = ctx.engines.security
    if not may_manage(ctx, ALTER):  # refused whole: every user named, sorted (Kafka's error response)
        names = sorted({d.name for d in req.deletions} | {u.name for u in req.upsertions})
        return {"throttle_time_ms": 0, "results": [
            {"user": n, "error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
             "error_message": ctx.needs_permission("ALTER")} for n in names]}
    errors: dict[str, tuple[ErrorCode, str]] = {}
    users = security.describe_credentials()  # user -> {mechanism name: iterations}
    items = [(d.name, d.mechanism, None, d) for d in req.deletions] + \
            [(u.name, u.mechanism, u.iterations, u) for u in req.upsertions]
    order = list(dict.fromkeys(name for name, *_ in items))
    seen: set[str] = set()
    # as Kafka, change by change (deletions, then upsertions): a user named again, then the
    # change's mechanism, iterations and a deletion's credential; then what is left is checked whole
    for name, mechanism, iterations, _ in items:
        if name in errors:
            continue
        if name in seen:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")
        elif (problem := _first_look(name, mechanism, iterations, users)) is not None:
            errors[name] = problem
        seen.add(name)
    for name, mechanism, iterations, item in items:
        if name not in errors and (problem := _check(name, iterations, item)):
            errors[name] = problem
    good = [(n, m, i, item) for n, m, i, item in items if n not in errors]

    def edit(stored):
        for name, mechanism, iterations, item in good:
            mech = MECHANISM_NAMES[mechanism]
            if iterations is None:
                stored.get(name, {}).pop(mech, None)
                if name in stored and not stored[name]:
                    del stored[name]
            else:
                stored.setdefault(name, {})[mech] = ScramCredential.from_salted_password(
                    HASHES[mech], item.salted_password, item.salt, iterations)

    if good:
        security.change_credentials(edit)
        log.info("scram_credentials_altered", principal=ctx.session.principal,
                 users=sorted({n for n, *_ in good}))
    results = [{"user": n, "error_code": int(errors[n][0]) if n in errors else 0,
                "error_message": errors[n][1] if n in errors else None} for n in order]
    return {"throttle_time_ms": 0, "results": results}
