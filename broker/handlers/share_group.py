"""ShareGroupHeartbeat and ShareGroupDescribe (KIP-932), over the share-group coordinator."""

from __future__ import annotations

from kipper.broker.acl.model import DESCRIBE, GROUP, NOT_PROVIDED, READ
from kipper.broker.features import SHARE_VERSION
from kipper.protocol.errors import ErrorCode

UNSUPPORTED = int(ErrorCode.UNSUPPORTED_VERSION)
UNSUPPORTED_MESSAGE = "The version of API is not supported."


def share_groups_enabled(ctx) -> bool:
    """share.version 1 turns share groups on; below it Kafka answers UNSUPPORTED_VERSION."""
    return ctx.engines.features.finalized_level(SHARE_VERSION) >= 1


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def handle_share_group_heartbeat(req, ctx):
    if not share_groups_enabled(ctx):
        return {"throttle_time_ms": 0, "error_code": UNSUPPORTED, "error_message": None, "member_id": None,
                "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
    if not ctx.authorize(READ, GROUP, req.group_id):
        # (Kafka's error response: no member, epoch 0)
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED),
                "error_message": None, "member_id": None, "member_epoch": 0,
                "heartbeat_interval_ms": 0, "assignment": None}
    return ctx.engines.groups.share_heartbeat(req, client_id=ctx.client_id or "",
                                             client_host=_host(ctx), now=ctx.now)


def handle_share_group_describe(req, ctx):
    if not share_groups_enabled(ctx):
        return {"throttle_time_ms": 0, "groups": [
            {"error_code": UNSUPPORTED, "error_message": None, "group_id": g, "group_state": "",
             "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
             "authorized_operations": NOT_PROVIDED} for g in req.group_ids]}
    return {"throttle_time_ms": 0, "groups": [_describe(ctx, g, req.include_authorized_operations)
                                              for g in req.group_ids]}


def _describe(ctx, group_id: str, with_operations: bool) -> dict:
    if not ctx.authorize(DESCRIBE, GROUP, group_id):
        return {"error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED), "error_message": None,
                "group_id": group_id, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                "assignor_name": "", "members": []}  # (Kafka's: the epochs at their defaults)
    if not group_id:  # the coordinator's first check, as Kafka's
        return {"error_code": int(ErrorCode.INVALID_GROUP_ID), "error_message": None,
                "group_id": group_id, "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                "assignor_name": "", "members": []}
    return _with_operations(ctx.engines.groups.share_describe(group_id), ctx, group_id, with_operations)


def _with_operations(described: dict, ctx, group_id: str, wanted: bool) -> dict:
    """A group's answer with its authorized operations when asked for, and only for a group
    that was found (Kafka leaves the field unset, INT_MIN, on an error)."""
    found = described["error_code"] == 0
    ops = ctx.authorized_operations(GROUP, group_id) if wanted and found else NOT_PROVIDED
    return {**described, "authorized_operations": ops}
