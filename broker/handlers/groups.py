"""Classic group APIs: JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
DescribeGroups and ListGroups, over the ClassicGroupCoordinator engine."""

from __future__ import annotations

from kipper.broker.handlers.util import Deferred


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def handle_join_group(req, ctx):
    d = Deferred()
    ctx.state.groups.join(req, version=ctx.api_version, client_id=ctx.client_id or "",
                          client_host=_host(ctx), now=ctx.now, reply=d.reply)
    return d.result()


def handle_sync_group(req, ctx):
    d = Deferred()
    ctx.state.groups.sync(req, now=ctx.now, reply=d.reply)
    return d.result()


def handle_heartbeat(req, ctx):
    return ctx.state.groups.heartbeat(req, now=ctx.now)


def handle_leave_group(req, ctx):
    if ctx.api_version >= 3:
        identities = [(m.member_id, m.group_instance_id) for m in req.members]
    else:
        identities = [(req.member_id, None)]
    code, members = ctx.state.groups.leave(req.group_id, identities, now=ctx.now)
    if ctx.api_version < 3 and members:
        return {"error_code": members[0]["error_code"]}
    return {"error_code": int(code), "members": members}


def handle_describe_groups(req, ctx):
    return {"groups": [ctx.state.groups.describe(g) for g in req.groups]}


def handle_list_groups(req, ctx):
    states = set(req.get("states_filter") or ())
    types = {t.lower() for t in (req.get("types_filter") or ())}
    out = []
    for group in ctx.state.groups.groups.values():
        if states and group.state not in states:
            continue
        if types and "classic" not in types:
            continue
        out.append({"group_id": group.group_id, "protocol_type": group.protocol_type or "",
                    "group_state": group.state, "group_type": "classic"})
    for hook in ctx.state.extensions.get("list_groups", ()):
        out.extend(g for g in hook() if (not states or g["group_state"] in states)
                   and (not types or g["group_type"] in types))
    return {"error_code": 0, "groups": out}
