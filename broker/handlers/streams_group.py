"""StreamsGroupHeartbeat (88) and StreamsGroupDescribe (89) of KIP-1071, over the
streams-group coordinator, with Kafka's KafkaApis checks around it: the
``streams.version`` feature, READ on the group, topology topics that are neither
internal nor invalid and that the member may DESCRIBE, and CREATE (on the cluster
or on each topic) for the internal topics the coordinator asks to create.
"""

from __future__ import annotations

from kipper.broker.acl.model import CLUSTER, CLUSTER_NAME, CREATE, DESCRIBE, GROUP, NOT_PROVIDED, READ, TOPIC
from kipper.broker.features import STREAMS_VERSION
from kipper.broker.groups.streams.heartbeat import error_body
from kipper.broker.groups.streams.topology import MISSING_INTERNAL_TOPICS
from kipper.broker.handlers.produce import INTERNAL_TOPICS
from kipper.broker.log.topics import validate_topic_name
from kipper.protocol.errors import ErrorCode


def streams_enabled(engines) -> bool:
    """Kafka 4.4 serves streams groups when the ``streams.version`` feature is finalized at
    level 1 or above (the level a new 4.4 cluster starts at); the APIs are advertised either
    way and answer UNSUPPORTED_VERSION without it. The one place that asks."""
    return engines.features.finalized_level(STREAMS_VERSION) >= 1


def _host(ctx) -> str:
    return "/" + ctx.session.peer.rsplit(":", 1)[0]


def _refused(code: ErrorCode, message: str | None = None) -> dict:
    return error_body(code, message)


def _topology_problem(req, ctx) -> dict | None:
    """KafkaApis' checks of the topics a joining member's topology names."""
    topology = req.get("topology")
    if topology is None:
        return None
    names: list[str] = []
    for s in topology.subtopologies:
        for t in (*s.source_topics, *s.repartition_sink_topics, *(i.name for i in s.repartition_source_topics),
                  *(i.name for i in s.state_changelog_topics)):
            if t not in names:
                names.append(t)
    internal = [t for t in names if t in INTERNAL_TOPICS]
    if internal:
        return _refused(ErrorCode.STREAMS_INVALID_TOPOLOGY, f"Use of Kafka internal topics {','.join(internal)} "
                        "in a Kafka Streams topology is prohibited.")
    bad = [t for t in names if validate_topic_name(t)]
    if bad:
        return _refused(ErrorCode.STREAMS_INVALID_TOPOLOGY, f"Topic names {','.join(bad)} are not valid topic names.")
    if any(not ctx.authorize(DESCRIBE, TOPIC, t) for t in names):
        return _refused(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return None


def handle_streams_group_heartbeat(req, ctx):
    engines = ctx.engines
    if not streams_enabled(engines):
        return _refused(ErrorCode.UNSUPPORTED_VERSION)
    if not ctx.authorize(READ, GROUP, req.group_id):
        return _refused(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if (problem := _topology_problem(req, ctx)) is not None:
        return problem
    result = engines.groups.streams_heartbeat(req, version=ctx.api_version, client_id=ctx.client_id or "",
                                              client_host=_host(ctx), now=ctx.now)
    body = result.body
    if not result.to_create:
        return body
    missing = next((s for s in body["status"] if s["status_code"] == MISSING_INTERNAL_TOPICS), None)
    unauthorized = [] if ctx.authorize(CREATE, CLUSTER, CLUSTER_NAME) else [
        t for t in result.to_create if not ctx.authorize(CREATE, TOPIC, t)]
    if unauthorized:
        detail = f"Unauthorized to CREATE on topics {', '.join(unauthorized)}."
        if missing is not None:
            missing["status_detail"] += "; " + detail
        else:
            body["status"].append({"status_code": MISSING_INTERNAL_TOPICS, "status_detail": detail})
        return body
    failed = engines.groups.streams_internal_topics(req.group_id, result.to_create, ctx.now)
    if failed and missing is not None:
        shown = ", ".join(f"{t} ({e})" for t, e in list(failed.items())[:3])
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        missing["status_detail"] += f"; Creation failed: {shown}{more}."
    return body


def handle_streams_group_describe(req, ctx):
    engines = ctx.engines
    if not streams_enabled(engines):
        return {"throttle_time_ms": 0, "groups": [
            {"error_code": int(ErrorCode.UNSUPPORTED_VERSION), "group_id": g} for g in req.group_ids]}
    denied = [{"error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED), "error_message": None, "group_id": g,
               "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "topology": None, "members": []}
              for g in req.group_ids if not ctx.authorize(DESCRIBE, GROUP, g)]
    described = []
    for g in req.group_ids:
        if not ctx.authorize(DESCRIBE, GROUP, g):
            continue
        if not g:  # the coordinator's first check, as Kafka's (and as for share and consumer groups)
            described.append({"error_code": int(ErrorCode.INVALID_GROUP_ID), "error_message": None, "group_id": g,
                              "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "topology": None,
                              "members": []})
            continue
        group = engines.groups.streams_describe(g)
        if group["error_code"] == 0:
            group["authorized_operations"] = (ctx.authorized_operations(GROUP, g)
                                              if req.include_authorized_operations else NOT_PROVIDED)
            if req.get("include_topology_description"):
                group["topology_description_status"] = 1  # NOT_STORED: no topology-description plugin
        described.append(_visible(group, ctx))
    return {"throttle_time_ms": 0, "groups": denied + described}


def _visible(group: dict, ctx) -> dict:
    """A group whose topology names a topic the client may not DESCRIBE is not shown."""
    topology = group.get("topology")
    if topology is None:
        return group
    topics = {t for s in topology["subtopologies"] or () for t in (
        *s["source_topics"], *s["repartition_sink_topics"], *(i["name"] for i in s["repartition_source_topics"]),
        *(i["name"] for i in s["state_changelog_topics"]))}
    if all(ctx.authorize(DESCRIBE, TOPIC, t) for t in topics):
        return group
    return {"error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), "group_id": group["group_id"],
            "error_message": "The described group uses topics that the client is not authorized to describe.",
            "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "topology": None, "members": []}
