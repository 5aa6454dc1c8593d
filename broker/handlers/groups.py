"""Classic group APIs: JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
DescribeGroups and ListGroups, over the ClassicGroupCoordinator engine."""

from __future__ import annotations

from kipper.broker.handlers.util import Deferred


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def handle_join_group(req, ctx):
    d = Deferred()
    ctx.broker.groups.join(req, version=ctx.api_version, client_id=ctx.client_id or "",
                           client_host=_host(ctx), now=ctx.now, reply=d.reply)
    return d.result()


def handle_sync_group(req, ctx):
    d = Deferred()
    ctx.broker.groups.classic.sync(req, now=ctx.now, reply=d.reply)
    return d.result()


def handle_heartbeat(req, ctx):
    return ctx.broker.groups.classic.heartbeat(req, now=ctx.now)


def handle_leave_group(req, ctx):
    if ctx.api_version >= 3:
        identities = [(m.member_id, m.group_instance_id) for m in req.members]
    else:
        identities = [(req.member_id, None)]
    code, members = ctx.broker.groups.classic.leave(req.group_id, identities, now=ctx.now)
    if ctx.api_version < 3 and members:
        return {"error_code": members[0]["error_code"]}
    return {"error_code": int(code), "members": members}


def handle_describe_groups(req, ctx):
    return {"groups": [ctx.broker.groups.classic.describe(g) for g in req.groups]}


def handle_list_groups(req, ctx):
    states = set(req.get("states_filter") or ())
    types = {t.lower() for t in (req.get("types_filter") or ())}
    return {"error_code": 0, "groups": ctx.broker.groups.list_groups(states, types)}
