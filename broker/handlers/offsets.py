"""OffsetCommit and OffsetFetch for classic groups (and simple, member-less ones).

OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for a partition
an open transaction has staged an offset for (TxnOffsetCommit, KIP-447).

With an authorizer (Kafka's rules): a commit needs READ on the group and on each
topic, a fetch DESCRIBE on the group and on each topic; a fetch of all a group's
offsets leaves out the topics the principal may not describe.
"""

from __future__ import annotations

from kipper.broker.acl.model import DESCRIBE, GROUP, READ, TOPIC
from kipper.protocol.errors import ErrorCode

MAX_METADATA = 4096  # Kafka's offset.metadata.max.bytes default


BROKER_SIDE = frozenset({ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                         ErrorCode.UNKNOWN_TOPIC_ID})


def answered(out: list[dict], merge: bool) -> list[dict]:
    """A commit's topics as asked; but when the broker answered some partitions itself (an
    unknown or unauthorized topic), Kafka's response builder merges those with the
    coordinator's answer by topic (name, or id where the name is unknown), and a topic named
    twice is one. A topic that names no partition has no answer, unless the broker answered
    the topic itself (``kept``: unknown or unauthorized, its entry made before its partitions)."""
    if merge:
        merged: dict = {}
        for row in out:
            key = row["name"] or row.get("topic_id")
            if key in merged:
                merged[key]["partitions"] += row["partitions"]
                merged[key]["kept"] = merged[key].get("kept") or row.get("kept")
            else:
                merged[key] = dict(row, partitions=list(row["partitions"]))
        out = list(merged.values())
    return [{k: v for k, v in row.items() if k != "kept"} for row in out if row["partitions"] or row.get("kept")]


def as_asked(out: list[dict]) -> list[dict]:
    """A commit refused whole (Kafka's getErrorResponse): every topic as asked, unmerged."""
    return [{k: v for k, v in row.items() if k != "kept"} for row in out]


def broker_answered(out: list[dict]) -> bool:
    """Whether the broker answered some topic or partition itself (see answered)."""
    return any(row.get("kept") or any(r["error_code"] in BROKER_SIDE for r in row["partitions"]) for row in out)


def handle_offset_commit(req, ctx):
    """As Kafka's KafkaApis then GroupCoordinator: the group's authorization, then each
    topic's, then unknown topics and partitions (the broker's own checks), then what the
    coordinator says of the member (its generation or epoch), then each offset."""
    engines = ctx.engines
    group_denied = not ctx.authorize(READ, GROUP, req.group_id)
    error = ErrorCode.NONE if group_denied else engines.groups.validate_commit(
        req.group_id, req.get("member_id", ""), req.get("generation_id_or_member_epoch", -1),
        req.get("group_instance_id"), ctx.api_version,
        [(t.name, p.partition_index) for t in req.topics for p in t.partitions])
    out = []
    commits = []
    reached = False  # a partition the broker's own checks let through to the coordinator
    for t in req.topics:
        name = t.name
        topic = engines.topics.get(name)
        readable = not group_denied and ctx.authorize(READ, TOPIC, name)
        parts = []
        for p in t.partitions:
            if group_denied:
                code = ErrorCode.GROUP_AUTHORIZATION_FAILED
            elif not readable:
                code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif topic is None or not 0 <= p.partition_index < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif error != ErrorCode.NONE:
                code, reached = error, True
            elif p.committed_metadata is not None and len(p.committed_metadata) > MAX_METADATA:
                code, reached = ErrorCode.OFFSET_METADATA_TOO_LARGE, True
            else:
                code = ErrorCode.NONE
                commits.append((name, p.partition_index, p.committed_offset,
                                p.get("committed_leader_epoch", -1), p.committed_metadata))
            parts.append({"partition_index": p.partition_index, "error_code": int(code)})
        out.append({"name": name, "partitions": parts, "kept": not group_denied and (not readable or topic is None)})
    if commits:  # journaled, then applied
        engines.offsets.commit_all(req.group_id, commits, ctx.now)
        engines.groups.ensure_simple_group(req.group_id)
    elif reached and error == ErrorCode.NONE:
        # Kafka's coordinator made a missing (simple) group before it refused each offset; as
        # nothing was written only its later writes see it (none when the broker's own checks
        # refused every partition)
        engines.groups.commit_refused(req.group_id)
    if group_denied:  # Kafka's error response: every topic as asked, one of no partition too
        return {"throttle_time_ms": 0, "topics": as_asked(out)}
    return {"throttle_time_ms": 0, "topics": answered(out, broker_answered(out))}


def _fetch_group(ctx, group_id: str, topics, require_stable: bool = False) -> list[dict]:
    engines = ctx.engines
    stored = engines.offsets.group_offsets(group_id)
    if topics is None:
        by_topic: dict[str, list[int]] = {}
        for (topic, partition) in sorted(stored):
            by_topic.setdefault(topic, []).append(partition)
        wanted = [(name, parts) for name, parts in by_topic.items() if ctx.authorize(DESCRIBE, TOPIC, name)]
    else:
        wanted = [(t.name, list(t.partition_indexes)) for t in topics]
    out = []
    for name, partitions in wanted:
        rows = []
        describable = ctx.authorize(DESCRIBE, TOPIC, name)
        for index in partitions:
            c = stored.get((name, index))
            if not describable:
                rows.append({"partition_index": index, "committed_offset": -1,
                             "committed_leader_epoch": -1, "metadata": "",
                             "error_code": int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)})
            elif require_stable and engines.offsets.has_pending(group_id, name, index):
                rows.append({"partition_index": index, "committed_offset": -1,
                             "committed_leader_epoch": -1, "metadata": "",
                             "error_code": int(ErrorCode.UNSTABLE_OFFSET_COMMIT)})
            elif c is None:
                rows.append({"partition_index": index, "committed_offset": -1,
                             "committed_leader_epoch": -1, "metadata": "", "error_code": 0})
            else:
                rows.append({"partition_index": index, "committed_offset": c.offset,
                             "committed_leader_epoch": c.leader_epoch,
                             "metadata": c.metadata if c.metadata is not None else "",
                             "error_code": 0})
        out.append({"name": name, "partitions": rows})
    return out


def _check_members(engines, groups, response: dict) -> dict:
    """OffsetFetch v9+ by a consumer-group member (KIP-848): an unknown member or a
    stale member epoch fails its group, as Kafka's validateOffsetFetch does."""
    for g, out in zip(groups, response["groups"]):
        code = engines.groups.validate_fetch(g.group_id, g.get("member_id"), g.get("member_epoch", -1))
        if code != ErrorCode.NONE:
            out["error_code"], out["topics"] = int(code), []
    return response


def handle_offset_fetch(req, ctx):
    engines = ctx.engines
    stable = req.get("require_stable", False)
    denied = int(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if ctx.api_version >= 8:
        may = [ctx.authorize(DESCRIBE, GROUP, g.group_id) for g in req.groups]
        allowed = [g for g, ok in zip(req.groups, may) if ok]
        body = _check_members(engines, allowed, {"throttle_time_ms": 0, "groups": [
            {"group_id": g.group_id, "topics": _fetch_group(ctx, g.group_id, g.topics, stable),
             "error_code": 0} for g in allowed]})
        answered = iter(body["groups"])  # each entry answered in its place (a group named twice, twice)
        body["groups"] = [next(answered) if ok else {"group_id": g.group_id, "topics": [], "error_code": denied}
                          for g, ok in zip(req.groups, may)]
        return body
    if not ctx.authorize(DESCRIBE, GROUP, req.group_id):
        # Kafka's error response: v0-v1 have no top-level error, so each partition asked carries
        # it, each topic as asked
        return {"throttle_time_ms": 0, "error_code": denied, "topics": [
            {"name": t.name, "partitions": [{"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1,
                                             "metadata": "", "error_code": denied} for p in t.partition_indexes]}
            for t in ((req.topics or []) if ctx.api_version < 2 else [])]}
    return {"throttle_time_ms": 0, "error_code": 0,
            "topics": _fetch_group(ctx, req.group_id, req.topics, stable)}
