"""What is read of streams groups: StreamsGroupDescribe and ListGroups rows, and the
checks of offset commits and fetches by their members (Kafka's StreamsGroup
asDescribedGroup, validateOffsetCommit and validateOffsetFetch)."""

from __future__ import annotations

from kipper.broker.groups.streams.model import StreamsGroup, StreamsMember, Target
from kipper.broker.groups.streams.topology import describe as describe_topology
from kipper.protocol.errors import ErrorCode

PROTOCOL_TYPE = "streams"


def _ids(tasks: dict) -> list[dict]:
    return [{"subtopology_id": sid, "partitions": sorted(ps)} for sid, ps in sorted(tasks.items())]


def _offsets(offsets: dict) -> list[dict]:
    return [{"subtopology_id": sid, "partition": p, "offset": o} for (sid, p), o in sorted(offsets.items())]


def _member(group: StreamsGroup, m: StreamsMember) -> dict:
    target = group.target.get(m.member_id, Target())
    offsets, end_offsets = group.task_offsets.get(m.member_id, ({}, {}))
    return {
        "member_id": m.member_id, "member_epoch": m.member_epoch, "instance_id": m.instance_id,
        "rack_id": m.rack_id, "client_id": m.client_id, "client_host": m.client_host,
        "topology_epoch": m.topology_epoch, "process_id": m.process_id,
        "user_endpoint": None if m.user_endpoint is None else {"host": m.user_endpoint[0], "port": m.user_endpoint[1]},
        "client_tags": [{"key": k, "value": v} for k, v in m.client_tags],
        "task_offsets": _offsets(offsets), "task_end_offsets": _offsets(end_offsets),
        "assignment": {"active_tasks": _ids(m.assigned.active), "standby_tasks": _ids(m.assigned.standby),
                       "warmup_tasks": _ids(m.assigned.warmup)},
        "target_assignment": {"active_tasks": _ids(target.active), "standby_tasks": _ids(target.standby),
                              "warmup_tasks": _ids(target.warmup)},
        "is_classic": False,
    }


def describe(group: StreamsGroup | None, group_id: str, assignor: str, held_elsewhere: bool = False) -> dict:
    """One group of StreamsGroupDescribe (v1's topology description is never stored here:
    NOT_REQUESTED or NOT_STORED, as on a Kafka without the topology-description plugin)."""
    if group is None:
        message = f"Group {group_id} is not a streams group." if held_elsewhere else f"Group {group_id} not found."
        return {"error_code": int(ErrorCode.GROUP_ID_NOT_FOUND), "error_message": message, "group_id": group_id,
                "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "topology": None, "members": []}
    return {"error_code": 0, "error_message": None, "group_id": group_id, "group_state": group.state,
            "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
            "topology": describe_topology(group.topology, group.configured),
            "members": [_member(group, m) for m in group.members.values()], "assignor_name": assignor}


def listed(group: StreamsGroup) -> dict:
    return {"group_id": group.group_id, "protocol_type": PROTOCOL_TYPE, "group_state": group.state,
            "group_type": PROTOCOL_TYPE}


def validate_commit(group: StreamsGroup, member_id: str, epoch: int, instance_id: str | None, partitions,
                    *, transactional: bool, api_version: int) -> ErrorCode:
    """OffsetCommit or TxnOffsetCommit into a streams group. ``partitions``: the (topic,
    partition) pairs committed. An older member epoch is accepted for a task the member
    was given at that epoch or before (it may not have seen its newer epoch yet)."""
    if epoch < 0 and not group.members:
        return ErrorCode.NONE  # admin tools commit while the group is empty
    if transactional and epoch == -1 and member_id == "" and instance_id is None:
        return ErrorCode.NONE  # older transactional clients say nothing about themselves
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if not transactional and api_version < 9:
        return ErrorCode.UNSUPPORTED_VERSION
    if epoch == member.member_epoch:
        return ErrorCode.NONE
    if epoch > member.member_epoch or group.topology is None:
        return ErrorCode.STALE_MEMBER_EPOCH
    by_topic = group.topology.source_topic_map()
    for topic, partition in partitions:
        sid = by_topic.get(topic)
        if sid is None:
            return ErrorCode.STALE_MEMBER_EPOCH
        given = member.assigned.active.get(sid, {}).get(partition)
        if given is None:
            given = member.pending_revocation.active.get(sid, {}).get(partition)
        if given is None or epoch < given:
            return ErrorCode.STALE_MEMBER_EPOCH
    return ErrorCode.NONE


def validate_fetch(group: StreamsGroup, member_id: str | None, epoch: int) -> ErrorCode:
    if member_id is None and epoch < 0:
        return ErrorCode.NONE
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    return ErrorCode.NONE if epoch == member.member_epoch else ErrorCode.STALE_MEMBER_EPOCH


def subscribed_to(group: StreamsGroup, topic: str) -> bool:
    """OffsetDelete: a group with members consumes its topology's source topics."""
    if not group.members or group.topology is None:
        return False
    return topic in group.topology.source_topic_map()
