"""ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848), over the consumer-group coordinator."""

from __future__ import annotations

from kipper.protocol.acl import GROUP_OPERATIONS, NOT_PROVIDED


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def handle_consumer_group_heartbeat(req, ctx):
    return ctx.broker.groups.consumer_heartbeat(req, version=ctx.api_version,
                                                client_id=ctx.client_id or "",
                                                client_host=_host(ctx), now=ctx.now)


def handle_consumer_group_describe(req, ctx):
    groups = ctx.broker.groups
    ops = GROUP_OPERATIONS if req.include_authorized_operations else NOT_PROVIDED
    return {"throttle_time_ms": 0, "groups": [{**groups.consumer_describe(g), "authorized_operations": ops}
                                              for g in req.group_ids]}
