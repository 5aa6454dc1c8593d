"""OffsetCommit and OffsetFetch for classic groups (and simple, member-less ones).

OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for a partition
an open transaction has staged an offset for (TxnOffsetCommit, KIP-447).
"""

from __future__ import annotations

from kipper.protocol.errors import ErrorCode

MAX_METADATA = 4096  # Kafka's offset.metadata.max.bytes default


def handle_offset_commit(req, ctx):
    broker = ctx.broker
    error = broker.groups.validate_commit(req.group_id, req.get("member_id", ""),
                                          req.get("generation_id_or_member_epoch", -1),
                                          req.get("group_instance_id"), ctx.api_version)
    out = []
    commits = []
    for t in req.topics:
        topic = broker.topics.get(t.name)
        parts = []
        for p in t.partitions:
            code = error
            if code == ErrorCode.NONE:
                if topic is None or not 0 <= p.partition_index < len(topic.partitions):
                    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                elif p.committed_metadata is not None and len(p.committed_metadata) > MAX_METADATA:
                    code = ErrorCode.OFFSET_METADATA_TOO_LARGE
                else:
                    commits.append((t.name, p.partition_index, p.committed_offset,
                                    p.get("committed_leader_epoch", -1), p.committed_metadata))
            parts.append({"partition_index": p.partition_index, "error_code": int(code)})
        out.append({"name": t.name, "partitions": parts})
    if commits:  # journaled, then applied; a commit that failed makes no group
        broker.offsets.commit_all(req.group_id, commits, ctx.now)
        broker.groups.ensure_simple_group(req.group_id)
    return {"throttle_time_ms": 0, "topics": out}


def _fetch_group(broker, group_id: str, topics, require_stable: bool = False) -> list[dict]:
    stored = broker.offsets.group_offsets(group_id)
    if topics is None:
        by_topic: dict[str, list[int]] = {}
        for (topic, partition) in sorted(stored):
            by_topic.setdefault(topic, []).append(partition)
        wanted = list(by_topic.items())
    else:
        wanted = [(t.name, list(t.partition_indexes)) for t in topics]
    out = []
    for name, partitions in wanted:
        rows = []
        for index in partitions:
            c = stored.get((name, index))
            if require_stable and broker.offsets.has_pending(group_id, name, index):
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


def _check_members(broker, groups, response: dict) -> dict:
    """OffsetFetch v9+ by a consumer-group member (KIP-848): an unknown member or a
    stale member epoch fails its group, as Kafka's validateOffsetFetch does."""
    for g, out in zip(groups, response["groups"]):
        code = broker.groups.validate_fetch(g.group_id, g.get("member_id"), g.get("member_epoch", -1))
        if code != ErrorCode.NONE:
            out["error_code"], out["topics"] = int(code), []
    return response


def handle_offset_fetch(req, ctx):
    broker = ctx.broker
    stable = req.get("require_stable", False)
    if ctx.api_version >= 8:
        return _check_members(broker, req.groups, {"throttle_time_ms": 0, "groups": [
            {"group_id": g.group_id, "topics": _fetch_group(broker, g.group_id, g.topics, stable),
             "error_code": 0} for g in req.groups]})
    return {"throttle_time_ms": 0, "error_code": 0,
            "topics": _fetch_group(broker, req.group_id, req.topics, stable)}
