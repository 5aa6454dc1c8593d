"""StreamsGroupHeartbeat's checks and answers (Kafka's GroupCoordinatorService and
GroupMetadataManager.streamsGroupHeartbeat), as functions of the request.

``validate`` is the service-level check of the request alone; the rest shapes
answers: task lists, statuses, the endpoints of Interactive Queries. The
decisions are the coordinator's (coordinator.py).
"""

from __future__ import annotations

from kipper.broker.groups.streams.model import (
    JOIN_EPOCH, STATIC_LEAVE_EPOCH, Assigned, StreamsGroup, StreamsMember, task_set,
)
from kipper.broker.config_values import java_hash_order
from kipper.protocol.errors import ErrorCode


class HeartbeatError(Exception):
    """A heartbeat refused with a Kafka error code and message."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> HeartbeatError:
    return HeartbeatError(ErrorCode.INVALID_REQUEST, message)


def validate(req) -> None:
    """Kafka's throwIfStreamsGroupHeartbeatRequestIsUsingUnsupportedFeatures and
    throwIfStreamsGroupHeartbeatRequestIsInvalid, in their order."""
    topology = req.get("topology")
    if topology is not None and any(s.source_topic_regex for s in topology.subtopologies):
        raise invalid("Regular expressions for source topics are not supported yet.")
    for value, name in ((req.member_id, "MemberId"), (req.group_id, "GroupId"),
                        (req.get("instance_id"), "InstanceId"), (req.get("rack_id"), "RackId")):
        if value == "":
            raise invalid(f"{name} can't be empty.")
    epoch = req.member_epoch
    tasks = (req.get("active_tasks"), req.get("standby_tasks"), req.get("warmup_tasks"))
    if epoch == JOIN_EPOCH:
        if req.rebalance_timeout_ms == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        for held, name in zip(tasks, ("ActiveTasks", "StandbyTasks", "WarmupTasks")):
            if held is None or held:  # null is not empty (Kafka's throwIfNotEmptyCollection)
                raise invalid(f"{name} must be empty when (re-)joining.")
        if topology is None:
            raise invalid("Topology must be non-null when (re-)joining.")
        for s in topology.subtopologies:
            for t in s.state_changelog_topics:
                if t.partitions != 0:
                    raise HeartbeatError(ErrorCode.STREAMS_INVALID_TOPOLOGY,
                                         f"Changelog topic {t.name} must have an undefined partition count, "
                                         f"but it is set to {t.partitions}.")
    elif epoch == STATIC_LEAVE_EPOCH:
        if req.get("instance_id") is None:
            raise invalid("InstanceId can't be null.")
    elif epoch < STATIC_LEAVE_EPOCH:
        raise invalid(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")
    if any(t is not None for t in tasks) and any(t is None for t in tasks):
        raise invalid("If one task-type is non-null, all must be non-null.")
    if epoch != JOIN_EPOCH and topology is not None:
        raise invalid("Topology can only be provided when (re-)joining.")


def owned_tasks(req) -> Assigned | None:
    """What the member reports it owns: None unless all three lists are there."""
    lists = (req.get("active_tasks"), req.get("standby_tasks"), req.get("warmup_tasks"))
    if any(t is None for t in lists):
        return None
    active, standby, warmup = (task_set((t.subtopology_id, p) for t in ts for p in t.partitions) for ts in lists)
    return Assigned({sid: {p: 0 for p in ps} for sid, ps in active.items()}, standby, warmup)


def check_epoch(member: StreamsMember, epoch: int, req) -> None:
    """Kafka's throwIfStreamsGroupMemberEpochIsInvalid: the previous epoch is accepted when
    the member owns no more than it was given (the answer that moved it on may be lost)."""
    if epoch == JOIN_EPOCH:
        return
    current = member.member_epoch
    if epoch > current:
        raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH,
                             f"The streams group member has a greater member epoch ({epoch}) than the one "
                             f"known by the group coordinator ({current}). The member must abandon all its "
                             "partitions and rejoin.")
    if epoch < current:
        a = member.assigned

        def within(listed, held) -> bool:
            return listed is not None and all(
                t.subtopology_id in held and set(t.partitions) <= set(held[t.subtopology_id]) for t in listed)
        if (epoch != member.previous_epoch or not within(req.get("active_tasks"), a.active)
                or not within(req.get("standby_tasks"), a.standby) or not within(req.get("warmup_tasks"), a.warmup)):
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The streams group member has a smaller member epoch ({epoch}) than the one "
                                 f"known by the group coordinator ({current}). The member must abandon all its "
                                 "partitions and rejoin.")


def check_owned_tasks(configured, req) -> None:
    """Kafka's throwIfRequestContainsInvalidTasks, once the topology is validated."""
    for listed in (req.get("active_tasks"), req.get("standby_tasks"), req.get("warmup_tasks")):
        for t in listed or ():
            sub = configured.subtopologies.get(t.subtopology_id)
            if sub is None:
                raise invalid(f"Subtopology {t.subtopology_id} does not exist in the topology.")
            for p in t.partitions:
                if not 0 <= p < sub.tasks:
                    raise invalid(f"Task {p} for subtopology {t.subtopology_id} is invalid. "
                                  f"Number of tasks for this subtopology: {sub.tasks}")


def task_ids(tasks: dict) -> list[dict]:
    """A heartbeat answer's task list, subtopologies in a java.util.HashMap's order as Kafka's."""
    return [{"subtopology_id": sid, "partitions": sorted(tasks[sid])} for sid in java_hash_order(list(tasks))]


def error_body(code: ErrorCode, message: str | None = None) -> dict:
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message, "member_id": "",
            "member_epoch": 0, "heartbeat_interval_ms": 0, "task_offset_interval_ms": 0, "status": []}


def endpoints(group: StreamsGroup, member_id: str, partition_count) -> list[dict]:
    """PartitionsByUserEndpoint: for each member with an Interactive Queries endpoint, the
    source partitions of its active tasks and of its standby and warm-up tasks (Kafka's
    EndpointToPartitionsManager); the member asking comes last."""
    configured = group.configured

    def partitions(tasks: dict) -> list[dict]:
        out = []
        for sid in java_hash_order(list(tasks)):
            sub = configured.subtopologies.get(sid) if configured and configured.subtopologies else None
            if sub is None:
                continue
            for topic in java_hash_order(sorted(sub.source_topics | set(sub.repartition_source))):
                count = partition_count(topic) or 0
                ps = sorted(p for p in tasks[sid] if p < count)
                if ps:
                    out.append({"topic": topic, "partitions": ps})
        return out
    order = [m for m in group.members if m != member_id] + ([member_id] if member_id in group.members else [])
    out = []
    for mid in order:
        m = group.members[mid]
        if m.user_endpoint is None:
            continue
        standby = {sid: set(m.assigned.standby.get(sid, ())) | set(m.assigned.warmup.get(sid, ()))
                   for sid in set(m.assigned.standby) | set(m.assigned.warmup)}
        out.append({"user_endpoint": {"host": m.user_endpoint[0], "port": m.user_endpoint[1]},
                    "active_partitions": partitions(m.assigned.active), "standby_partitions": partitions(standby)})
    return out
