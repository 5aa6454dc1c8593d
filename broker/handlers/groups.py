"""Group APIs: JoinGroup, SyncGroup, Heartbeat, LeaveGroup and DescribeGroups
over the ClassicGroupCoordinator engine; ListGroups, DeleteGroups and
OffsetDelete over the GroupCoordinator, for every kind of group."""

from __future__ import annotations

from kipper.broker.groups.classic_model import PROTOCOL_NAMED_TWICE
from kipper.broker.handlers.replies import NO_RESPONSE, Deferred, Reply
from kipper.broker.acl.model import (
    CLUSTER, CLUSTER_NAME, DELETE, DESCRIBE, GROUP, NOT_PROVIDED, READ, TOPIC,
)
from kipper.broker.groups.classic_model import DEAD
from kipper.broker.groups.coordinator import CLASSIC
from kipper.protocol.errors import ErrorCode

JOIN_GROUP = 11


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def _refused(req, ctx) -> dict | None:
    """READ on the group, which Kafka asks of every member request, then (but for JoinGroup,
    whose engine answers it) an empty group id, the coordinator's first check; a refusal
    touches no group (a refused join creates none)."""
    if not ctx.authorize(READ, GROUP, req.group_id):
        code = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif not req.group_id and ctx.api_key != JOIN_GROUP:
        code = ErrorCode.INVALID_GROUP_ID
    else:
        return None
    return {"throttle_time_ms": 0, "error_code": int(code), "generation_id": -1, "members": []}


def handle_join_group(req, ctx):
    if (refused := _refused(req, ctx)) is not None:  # (Kafka's error response: no member, no protocol)
        return {**refused, "member_id": "", "leader": "", "protocol_name": None if ctx.api_version >= 7 else ""}
    version = ctx.api_version
    d = Deferred()

    def reply(body: dict) -> None:
        if body is PROTOCOL_NAMED_TWICE:  # Kafka fails inside and closes the connection
            names = [p.name for p in req.protocols]
            return d.reply(Reply(NO_RESPONSE, abort=f"JoinGroup names a protocol more than once: {names}"))
        if version >= 7 and not body.get("protocol_name"):
            # Kafka's failed JoinGroup, or one whose protocol is named "": a null protocol name
            body = {**body, "protocol_name": None}
        d.reply(body)
    ctx.engines.groups.join(req, version=version, client_id=ctx.client_id or "",
                            client_host=_host(ctx), now=ctx.now, reply=reply)
    return d.result()


def handle_sync_group(req, ctx):
    if ctx.api_version >= 5 and (req.get("protocol_type") is None or req.get("protocol_name") is None):
        # Kafka's first check: from v5 both are mandatory (before authorization and the group)
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
                "protocol_type": None, "protocol_name": None, "assignment": b""}
    if (refused := _refused(req, ctx)) is not None:
        return refused
    d = Deferred()
    ctx.engines.groups.sync(req, now=ctx.now, reply=d.reply)
    return d.result()


def handle_heartbeat(req, ctx):
    if (refused := _refused(req, ctx)) is not None:
        return refused
    return ctx.engines.groups.heartbeat(req, now=ctx.now)


def handle_leave_group(req, ctx):
    if (refused := _refused(req, ctx)) is not None:
        return refused
    if ctx.api_version >= 3:
        identities = [(m.member_id, m.group_instance_id) for m in req.members]
    else:
        identities = [(req.member_id, None)]
    code, members = ctx.engines.groups.leave(req.group_id, identities, now=ctx.now)
    if ctx.api_version < 3 and members:
        return {"error_code": members[0]["error_code"]}
    return {"error_code": int(code), "members": members}


def handle_describe_groups(req, ctx):
    with_ops = req.get("include_authorized_operations")
    return {"groups": [_with_operations(ctx, _describe_classic(ctx, g), with_ops)
                       if ctx.authorize(DESCRIBE, GROUP, g) else
                       {"error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED), "group_id": g,
                        "group_state": "", "protocol_type": "", "protocol_data": "", "members": [],
                        "authorized_operations": NOT_PROVIDED}
                       for g in req.groups]}


def _with_operations(ctx, described: dict, asked: bool) -> dict:
    """KIP-430's bit field when asked, for a group described without error (Kafka leaves it
    "not provided" on a v6 GROUP_ID_NOT_FOUND)."""
    ops = ctx.authorized_operations(GROUP, described["group_id"]) if asked and not described["error_code"] \
        else NOT_PROVIDED
    return {**described, "authorized_operations": ops}


def _describe_classic(ctx, group_id: str) -> dict:
    """A group that is not a classic one is Dead; from v6 (KIP-1043) with GROUP_ID_NOT_FOUND
    and Kafka's message, which Kafka's Admin turns into GroupIdNotFoundException
    (kafka-consumer-groups --describe of an unknown group)."""
    groups = ctx.engines.groups
    described = groups.describe(group_id)
    if described["group_state"] != DEAD or ctx.api_version < 6:
        return described
    other = groups.kind_of(group_id) not in (None, CLASSIC)
    message = f"Group {group_id} is not a classic group." if other else f"Group {group_id} not found."
    return {**described, "error_code": int(ErrorCode.GROUP_ID_NOT_FOUND), "error_message": message}


def handle_list_groups(req, ctx):
    states = set(req.get("states_filter") or ())
    types = set(req.get("types_filter") or ())
    groups = ctx.engines.groups.list_groups(states, types)
    if not ctx.authorize(DESCRIBE, CLUSTER, CLUSTER_NAME):  # Kafka: only the groups one may describe
        groups = [g for g in groups if ctx.authorize(DESCRIBE, GROUP, g["group_id"])]
    return {"error_code": 0, "groups": groups}


def handle_delete_groups(req, ctx):
    results = []
    for group_id in dict.fromkeys(req.groups_names):  # a group named twice is one (Kafka's set)
        if not ctx.authorize(DELETE, GROUP, group_id):
            results.append({"group_id": group_id, "error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED),
                            "error_message": None})
            continue
        code = ctx.engines.groups.delete_group(group_id, ctx.now)
        results.append({"group_id": group_id, "error_code": int(code), "error_message": None})
    return {"throttle_time_ms": 0, "results": results}


def handle_offset_delete(req, ctx):
    """Kafka's order: READ on each topic, then whether the topic and partition exist (both
    answered per partition), then the group coordinator for the rest, whose group-level
    error (an unknown group...) answers the whole request. The answer is shaped as Kafka's
    KafkaApis builds it: the refusals one entry a topic name (an unreadable or unknown topic
    has one even if it names no partition), the coordinator's answer (one entry a request
    topic with a partition to delete) merged into them by name, or as it is if none."""
    if not ctx.authorize(DELETE, GROUP, req.group_id):
        return {"error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED), "throttle_time_ms": 0, "topics": []}
    if not req.group_id:
        return {"error_code": int(ErrorCode.INVALID_GROUP_ID), "throttle_time_ms": 0, "topics": []}
    topics = ctx.engines.topics
    refused: dict[str, list] = {}  # Kafka's OffsetDeleteResponse.Builder: one entry a topic name
    valid = []  # (name, [partition]) a request topic, for the coordinator
    for t in req.topics:
        indexes = [p.partition_index for p in t.partitions]
        readable = ctx.authorize(READ, TOPIC, t.name)
        if not readable or topics.get(t.name) is None:  # (an entry even if it names no partition)
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if readable else ErrorCode.TOPIC_AUTHORIZATION_FAILED
            refused.setdefault(t.name, []).extend((i, code) for i in indexes)
            continue
        known = []
        for i in indexes:
            if topics.partition(t.name, i) is None:
                refused.setdefault(t.name, []).append((i, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                known.append(i)
        if known:
            valid.append((t.name, known))
    code, deleted = ctx.engines.groups.delete_offsets(req.group_id, valid, ctx.now)
    if code != ErrorCode.NONE:
        return {"error_code": int(code), "throttle_time_ms": 0, "topics": []}
    if refused:  # the coordinator's answer merged in by name (Builder.merge); else taken as it is
        for name, parts in deleted:
            refused.setdefault(name, []).extend(parts)
        deleted = list(refused.items())
    return {"error_code": 0, "throttle_time_ms": 0, "topics": [
        {"name": name, "partitions": [{"partition_index": i, "error_code": int(e)} for i, e in parts]}
        for name, parts in deleted]}
