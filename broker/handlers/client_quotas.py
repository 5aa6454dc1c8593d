"""AlterClientQuotas and DescribeClientQuotas (KIP-546) for the user entity.

Checks live in broker/quota/client_quotas.py; this file decodes, asks who may
manage quotas (super.users), and builds the per-entity answers.
"""

from __future__ import annotations

import structlog

from kipper.broker.quota.client_quotas import (
    MATCH_DEFAULT, MATCH_EXACT, MATCH_SPECIFIED, USER, Op, check_entity, check_op,
)
from kipper.broker.acl.model import ALTER_CONFIGS, CLUSTER, CLUSTER_NAME, DESCRIBE_CONFIGS
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)



def may_manage(ctx, operation: int) -> bool:
    """With an authorizer, the operation on the cluster; without one, super.users (or
    everyone when that list is empty), as before ACLs existed."""
    if ctx.engines.acls.enabled:
        return ctx.authorize(operation, CLUSTER, CLUSTER_NAME)
    return ctx.engines.security.may_manage(ctx.session.principal)

def _entity(user) -> list[dict]:
    return [{"entity_type": USER, "entity_name": user}]


def handle_alter_client_quotas(req, ctx):
    engines = ctx.engines
    allowed = may_manage(ctx, DESCRIBE_CONFIGS)
    results, changes = [], []
    for entry in req.entries:
        entity = [dict(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity]
        code, message, user = check_entity(entity)
        if not allowed:
            code, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "not a super user"
        ops = [Op(o.key, o.value, o.remove) for o in entry.ops]
        for op in ops:
            if code == ErrorCode.NONE:
                code, message = check_op(op)
        if code == ErrorCode.NONE and len({o.key for o in ops}) != len(ops):
            code, message = ErrorCode.INVALID_REQUEST, "a quota key appears twice"
        if code == ErrorCode.NONE:
            changes.append((user, ops))
        results.append({"error_code": int(code), "error_message": message, "entity": entity})
    if changes and not req.validate_only:
        engines.quotas.store.apply(changes)
        log.info("client_quotas_altered", principal=ctx.session.principal,
                 entities=[u if u is not None else "<default>" for u, _ in changes])
    return {"throttle_time_ms": 0, "entries": results}


def handle_describe_client_quotas(req, ctx):
    engines = ctx.engines
    if not may_manage(ctx, ALTER_CONFIGS):
        return _describe_error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "not a super user")
    components = []
    for c in req.components:
        if c.entity_type != USER:
            return _describe_error(ErrorCode.INVALID_REQUEST,
                                   f"unsupported entity type '{c.entity_type}': kipper has user quotas only")
        if c.match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
            return _describe_error(ErrorCode.INVALID_REQUEST, f"unknown match type {c.match_type}")
        if (c.match_type == MATCH_EXACT) != (c.match is not None):
            return _describe_error(ErrorCode.INVALID_REQUEST, "match is given exactly for match type 0")
        components.append({"entity_type": c.entity_type, "match_type": c.match_type, "match": c.match})
    entries = [{"entity": _entity(user), "values": [{"key": k, "value": v} for k, v in sorted(values.items())]}
               for user, values in engines.quotas.store.describe(components, req.strict)]
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "entries": entries}


def _describe_error(code: ErrorCode, message: str) -> dict:
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message, "entries": None}
