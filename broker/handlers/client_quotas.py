"""AlterClientQuotas and DescribeClientQuotas (KIP-546): user, client-id and
(user, client-id) entities, named or default.

Checks live in broker/quota/entities.py (Kafka's); this file decodes, asks who may
manage quotas (super.users), and builds the per-entity answers.
"""

from __future__ import annotations

import structlog

from kipper.broker.config_values import java_hash_order, java_map_text, java_sized_capacity
from kipper.broker.quota.client_quotas import Op
from kipper.broker.quota.entities import check_entity, check_value, parse_filter
from kipper.broker.acl.model import ALTER_CONFIGS, CLUSTER, CLUSTER_NAME, DESCRIBE_CONFIGS
from kipper.protocol.errors import ErrorCode, kafka_text

log = structlog.get_logger(__name__)


def may_manage(ctx, operation: int) -> bool:
    """With an authorizer, the operation on the cluster; without one, super.users (or
    everyone when that list is empty), as before ACLs existed."""
    if ctx.engines.acls.enabled:
        return ctx.authorize(operation, CLUSTER, CLUSTER_NAME)
    return ctx.engines.security.may_manage(ctx.session.principal)


def _entity(entity) -> list[dict]:
    return [{"entity_type": t, "entity_name": n} for t, n in entity]


def _duplicate(entry) -> str:
    """Kafka's text for an entity it ignores: its ClientQuotaEntity's toString, whose map the
    request filled, sized to the entry's entity list."""
    named = java_map_text([(e.entity_type, e.entity_name) for e in entry.entity], len(entry.entity))
    return f"Ignoring duplicate entity ClientQuotaEntity(entries={named})"


def _check_entry(entry, entity_data: list, ops: list) -> tuple[ErrorCode, str | None, object]:
    if len({o.key for o in ops}) != len(ops):  # a key twice: the entity is ignored, before any check
        return ErrorCode.INVALID_REQUEST, _duplicate(entry), None
    code, message, entity = check_entity(entity_data)
    if code != ErrorCode.NONE:
        return code, message, None
    by_key = {op.key: op for op in ops}  # Kafka's controller checks them in its HashMap's order (sized to the ops)
    for key in java_hash_order(by_key, java_sized_capacity(len(ops), len(by_key))):
        op = by_key[key]
        if not op.remove:  # a removal is never checked: removing what is not there is a no-op
            code, message = check_value(entity, op.key, op.value)
            if code != ErrorCode.NONE:
                return code, message, None
    return ErrorCode.NONE, None, entity


def handle_alter_client_quotas(req, ctx):
    engines = ctx.engines
    allowed = may_manage(ctx, ALTER_CONFIGS)
    results, changes = [], []
    by_entity: dict[frozenset, dict] = {}  # Kafka's controller answers a map: one result per entity
    for entry in req.entries:
        named = {e.entity_type: e.entity_name for e in entry.entity}  # a type named twice: the last (Kafka's map)
        order = java_hash_order(named, java_sized_capacity(len(entry.entity), len(named)))  # as answered
        entity_data = [dict(entity_type=t, entity_name=named[t]) for t in order]
        ops = [Op(o.key, o.value, o.remove) for o in entry.ops]
        if not allowed:  # (refused before the controller: every entry answered, its entity as asked)
            results.append({"error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                            "error_message": kafka_text(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                            "entity": [dict(entity_type=e.entity_type, entity_name=e.entity_name)
                                       for e in entry.entity]})
            continue
        key = frozenset(named.items())
        if key in by_entity:  # the entity again: its result becomes a refusal (what it changed stays)
            by_entity[key].update(error_code=int(ErrorCode.INVALID_REQUEST), error_message=_duplicate(entry))
            continue
        code, message, entity = _check_entry(entry, entity_data, ops)
        if code == ErrorCode.NONE:
            changes.append((entity, ops))
        by_entity[key] = {"error_code": int(code), "error_message": message, "entity": entity_data}
        results.append(by_entity[key])
    if changes and not req.validate_only:
        engines.quotas.alter_client_quotas(changes)
        log.info("client_quotas_altered", principal=ctx.session.principal,
                 entities=[dict(e) for e, _ in changes])
    return {"throttle_time_ms": 0, "entries": results}


def handle_describe_client_quotas(req, ctx):
    engines = ctx.engines
    if not may_manage(ctx, DESCRIBE_CONFIGS):
        return _describe_error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    code, message, exact, specified = parse_filter(
        [{"entity_type": c.entity_type, "match_type": c.match_type, "match": c.match} for c in req.components])
    if code != ErrorCode.NONE:
        return _describe_error(code, message)
    entries = [{"entity": _entity(entity), "values": [{"key": k, "value": v} for k, v in sorted(values.items())]}
               for entity, values in engines.quotas.describe_client_quotas(exact, specified, req.strict)]
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": "", "entries": entries}  # "" as Kafka


def _describe_error(code: ErrorCode, message: str | None) -> dict:
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message, "entries": None}
