"""ShareGroupHeartbeat and ShareGroupDescribe (KIP-932), over the share-group coordinator."""

from __future__ import annotations

from kipper.protocol.acl import GROUP_OPERATIONS, NOT_PROVIDED


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def handle_share_group_heartbeat(req, ctx):
    return ctx.broker.groups.share_heartbeat(req, client_id=ctx.client_id or "",
                                             client_host=_host(ctx), now=ctx.now)


def handle_share_group_describe(req, ctx):
    coordinator = ctx.broker.share.coordinator
    ops = GROUP_OPERATIONS if req.include_authorized_operations else NOT_PROVIDED
    return {"throttle_time_ms": 0, "groups": [{**coordinator.describe(g), "authorized_operations": ops}
                                              for g in req.group_ids]}
