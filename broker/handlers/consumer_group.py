"""ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848), over the consumer-group coordinator."""

from __future__ import annotations

from kipper.broker.acl.model import DESCRIBE, GROUP, NOT_PROVIDED, READ
from kipper.broker.features import GROUP_VERSION
from kipper.protocol.errors import ErrorCode

UNSUPPORTED = int(ErrorCode.UNSUPPORTED_VERSION)


def _enabled(ctx) -> bool:
    """group.version 1 turns KIP-848 groups on; below it Kafka answers UNSUPPORTED_VERSION."""
    return ctx.engines.features.finalized_level(GROUP_VERSION) >= 1


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def handle_consumer_group_heartbeat(req, ctx):
    if not _enabled(ctx):
        return {"throttle_time_ms": 0, "error_code": UNSUPPORTED, "error_message": None, "member_id": None,
                "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
    if not ctx.authorize(READ, GROUP, req.group_id):
        # (Kafka's error response: no member, epoch 0)
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED),
                "error_message": None, "member_id": None, "member_epoch": 0,
                "heartbeat_interval_ms": 0, "assignment": None}
    return ctx.engines.groups.consumer_heartbeat(req, version=ctx.api_version,
                                                client_id=ctx.client_id or "",
                                                client_host=_host(ctx), now=ctx.now)


def handle_consumer_group_describe(req, ctx):
    groups = ctx.engines.groups
    if not _enabled(ctx):
        return {"throttle_time_ms": 0, "groups": [
            {**_denied(g), "error_code": UNSUPPORTED, "group_epoch": 0, "assignment_epoch": 0}
            for g in req.group_ids]}
    return {"throttle_time_ms": 0, "groups": [
        _with_operations(groups.consumer_describe(g), ctx, g, req.include_authorized_operations)
        if ctx.authorize(DESCRIBE, GROUP, g) else _denied(g)
        for g in req.group_ids]}


def _denied(group_id: str) -> dict:
    return {"error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED), "error_message": None,
            "group_id": group_id, "group_state": "", "group_epoch": -1, "assignment_epoch": -1,
            "assignor_name": "", "members": []}


def _with_operations(described: dict, ctx, group_id: str, wanted: bool) -> dict:
    """A group's answer with its authorized operations when asked for, and only for a group
    that was found (Kafka leaves the field unset, INT_MIN, on an error)."""
    found = described["error_code"] == 0
    ops = ctx.authorized_operations(GROUP, group_id) if wanted and found else NOT_PROVIDED
    return {**described, "authorized_operations": ops}
