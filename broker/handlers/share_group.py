"""ShareGroupHeartbeat and ShareGroupDescribe (KIP-932), over the share-group coordinator."""

from __future__ import annotations

from kipper.broker.acl.model import DESCRIBE, GROUP, NOT_PROVIDED, READ
from kipper.protocol.errors import ErrorCode


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def handle_share_group_heartbeat(req, ctx):
    if not ctx.authorize(READ, GROUP, req.group_id):
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED),
                "error_message": None, "member_id": req.member_id, "member_epoch": -1,
                "heartbeat_interval_ms": 0, "assignment": None}
    return ctx.engines.groups.share_heartbeat(req, client_id=ctx.client_id or "",
                                             client_host=_host(ctx), now=ctx.now)


def handle_share_group_describe(req, ctx):
    return {"throttle_time_ms": 0, "groups": [_describe(ctx, g, req.include_authorized_operations)
                                              for g in req.group_ids]}


def _describe(ctx, group_id: str, with_operations: bool) -> dict:
    if not ctx.authorize(DESCRIBE, GROUP, group_id):
        return {"error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED), "error_message": None,
                "group_id": group_id, "group_state": "", "group_epoch": -1, "assignment_epoch": -1,
                "assignor_name": "", "members": []}
    if not group_id:  # the coordinator's first check, as Kafka's
        return {"error_code": int(ErrorCode.INVALID_GROUP_ID), "error_message": "Group ID can't be empty.",
                "group_id": group_id, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                "assignor_name": "", "members": []}
    return _with_operations(ctx.engines.share.describe(group_id), ctx, group_id, with_operations)


def _with_operations(described: dict, ctx, group_id: str, wanted: bool) -> dict:
    """A group's answer with its authorized operations when asked for, and only for a group
    that was found (Kafka leaves the field unset, INT_MIN, on an error)."""
    found = described["error_code"] == 0
    ops = ctx.authorized_operations(GROUP, group_id) if wanted and found else NOT_PROVIDED
    return {**described, "authorized_operations": ops}
