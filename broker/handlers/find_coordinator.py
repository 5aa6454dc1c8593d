"""FindCoordinator: this broker coordinates every group, transaction and share group."""

from __future__ import annotations

from kipper.broker.acl.model import DESCRIBE, TRANSACTIONAL_ID
from kipper.broker.acl.model import GROUP as ACL_GROUP
from kipper.protocol.errors import ErrorCode, kafka_text

GROUP, TRANSACTION, SHARE = 0, 1, 2


def _coordinator(key: str, key_type: int, ctx) -> dict:
    host, port = ctx.engines.advertised_address(ctx.session.listener)
    if key_type not in (GROUP, TRANSACTION, SHARE):
        return {"key": key, "error_code": int(ErrorCode.INVALID_REQUEST),
                "error_message": f"unknown key type {key_type}", "node_id": -1, "host": "", "port": -1}
    if not key:
        return {"key": key, "error_code": int(ErrorCode.INVALID_REQUEST),
                "error_message": "empty coordinator key", "node_id": -1, "host": "", "port": -1}
    if key_type == TRANSACTION and not ctx.authorize(DESCRIBE, TRANSACTIONAL_ID, key):
        return {"key": key, "error_code": int(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
                "error_message": None, "node_id": -1, "host": "", "port": -1}
    if key_type != TRANSACTION and not ctx.authorize(DESCRIBE, ACL_GROUP, key):
        return {"key": key, "error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED),
                "error_message": None, "node_id": -1, "host": "", "port": -1}
    return {"key": key, "error_code": 0, "error_message": None, "node_id": ctx.engines.node_id,
            "host": host, "port": port}


def handle_find_coordinator(req, ctx):
    key_type = req.get("key_type", GROUP)
    if ctx.api_version >= 4:
        coordinators = [_coordinator(k, key_type, ctx) for k in req.coordinator_keys]
        for c in coordinators:  # Kafka never sets a v4+ coordinator's message: its default, ""
            c["error_message"] = ""
        return {"throttle_time_ms": 0, "coordinators": coordinators}
    one = _coordinator(req.key, key_type, ctx)
    one.pop("key")
    one["throttle_time_ms"] = 0
    # before v4, Kafka's error.message(): the error's text, or NONE
    one["error_message"] = kafka_text(one["error_code"]) if one["error_code"] else "NONE"
    return one
