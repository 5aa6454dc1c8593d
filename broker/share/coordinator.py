"""Share-group membership (ShareGroupHeartbeat, KIP-932), sans-I/O.

Members join with member epoch 0, heartbeat with the epoch they were given and
leave with -1. The simple assignor gives every member every partition of the
topics it subscribes to, so an assignment only changes when a subscription or
a topic changes; each change bumps the group epoch and the member's epoch.
``tick(now)`` removes members whose session timed out. Methods return events
("left" or "timed_out", group, member) / ("assigned", group, topic, partition)
for the caller, which ends share sessions and loads share-partitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import structlog

from kipper.broker.share.group_settings import GroupShareSettings
from kipper.broker.share.settings import ShareSettings
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

EMPTY, STABLE, DEAD = "Empty", "Stable", "Dead"
JOIN_EPOCH, LEAVE_EPOCH = 0, -1
ASSIGNOR = "simple"
LEFT, TIMED_OUT = "left", "timed_out"  # why a member went: a leave heartbeat, or its session ran out


@dataclass
class ShareMember:
    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None = None
    member_epoch: int = 0
    previous_epoch: int = -1
    subscribed: tuple[str, ...] = ()
    assignment: dict = field(default_factory=dict)  # topic name -> (topic id, [partitions])
    deadline: int = 0


@dataclass
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    empty_since: int = 0

    @property
    def state(self) -> str:
        return STABLE if self.members else EMPTY


def _refused(req) -> str | None:
    """What Kafka's GroupMetadataManager refuses in a share heartbeat before looking at the
    group: an empty group or rack id, an epoch below -1, a join without subscriptions."""
    if not req.group_id:
        return "GroupId can't be empty."
    if req.get("rack_id") == "":
        return "RackId can't be empty."
    if req.member_epoch < LEAVE_EPOCH:
        return "MemberEpoch is invalid."
    if req.member_epoch == JOIN_EPOCH and req.member_id and not req.get("subscribed_topic_names"):
        return "SubscribedTopicNames must be set in first request."
    return None


def _error(code: ErrorCode, message: str | None = None, member_id: str | None = None) -> dict:
    """Kafka's error answer leaves MemberId null and MemberEpoch 0 (``member_id`` is kept
    only for the successful leave)."""
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message,
            "member_id": member_id if code == ErrorCode.NONE else None,
            "member_epoch": -1 if code == ErrorCode.NONE else 0, "heartbeat_interval_ms": 0,
            "assignment": None}


MEMBER_ID_MOST = 36  # characters of a share member's id (Kafka refuses longer ones)


class ShareGroupCoordinator:
    def __init__(self, settings: ShareSettings, topics, group_settings: GroupShareSettings | None = None):
        """``group_settings`` gives each group's share.session.timeout.ms and
        share.heartbeat.interval.ms (group configs over the broker keys)."""
        self.settings = settings
        self.topics = topics
        self.per_group = group_settings or GroupShareSettings(settings)
        self.groups: dict[str, ShareGroup] = {}

    def is_member(self, group_id: str, member_id: str) -> bool:
        group = self.groups.get(group_id)
        return group is not None and member_id in group.members

    def active_groups(self) -> int:
        return sum(1 for g in self.groups.values() if g.members)

    def _assignment(self, member: ShareMember) -> dict:
        out = {}
        for name in member.subscribed:
            topic = self.topics.get(name)
            if topic is not None:
                out[name] = (topic.topic_id, list(range(len(topic.partitions))))
        return out

    # --- ShareGroupHeartbeat --------------------------------------------------------------

    def heartbeat(self, req, *, client_id: str, client_host: str, now: int,
                  held_elsewhere: bool = False) -> tuple[dict, list]:
        """``held_elsewhere``: a consumer group, or a classic group with members, holds
        the id (the GroupCoordinator knows)."""
        s = self.settings
        group_id = req.group_id
        member_id = req.member_id
        epoch = req.member_epoch
        events: list = []
        if not member_id or len(member_id) > MEMBER_ID_MOST:
            # KIP-1082: a member names itself (a UUID's text at most), at every epoch, checked
            # first (no text, as Kafka)
            return _error(ErrorCode.INVALID_REQUEST), events
        refused = _refused(req)
        if refused is not None:  # Kafka refuses the request itself (the heartbeat's own checks)
            return _error(ErrorCode.INVALID_REQUEST, refused, member_id), events
        if held_elsewhere:
            return _error(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.",
                          member_id), events
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group is not None else None
        if epoch == LEAVE_EPOCH:
            if member is None:  # with Kafka's text, as for any other epoch
                return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.",
                              member_id), events
            self._remove(group, member, now, LEFT, events)
            out = _error(ErrorCode.NONE, None, member_id)
            return out, events
        if epoch == JOIN_EPOCH:
            subscribed = req.get("subscribed_topic_names")
            if group is None or not group.members:
                if self.active_groups() >= s.max_groups:
                    return _error(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                  f"The share group limit (group.share.max.groups={s.max_groups}) "
                                  "is reached.", member_id), events
            if member is None and group is not None and len(group.members) >= s.max_size:
                return _error(ErrorCode.GROUP_MAX_SIZE_REACHED,
                              f"Group {group_id} has reached its maximum size "
                              f"(group.share.max.size={s.max_size}).", member_id), events
            if group is None:
                group = self.groups[group_id] = ShareGroup(group_id)
            if member is None:
                member = ShareMember(member_id, client_id, client_host)
                group.members[member.member_id] = member
                log.info("share_member_joined", group_id=group_id, member_id=member.member_id,
                         members=len(group.members))
            member.assignment = {}  # a join always gets the full assignment again
        else:
            if member is None:
                return _error(ErrorCode.UNKNOWN_MEMBER_ID,
                              f"Member {member_id} is not a member of group {group_id}.",
                              member_id), events
            if epoch not in (member.member_epoch, member.previous_epoch):  # Kafka's messages
                side = "greater" if epoch > member.member_epoch else "smaller"
                return _error(ErrorCode.FENCED_MEMBER_EPOCH,
                              f"The share group member has a {side} member epoch ({epoch}) than the "
                              f"one known by the group coordinator ({member.member_epoch}). The "
                              "member must abandon all its partitions and rejoin.",
                              member_id), events
        member.deadline = now + self.per_group.session_timeout_ms(group_id)
        member.client_id = client_id
        member.client_host = client_host
        if req.get("rack_id") is not None:
            member.rack_id = req.rack_id
        subscribed = req.get("subscribed_topic_names")
        if subscribed is not None:
            member.subscribed = tuple(dict.fromkeys(subscribed))
        assignment = self._assignment(member)
        send = epoch != member.member_epoch
        if assignment != member.assignment or epoch == JOIN_EPOCH:
            group.group_epoch += 1
            member.previous_epoch = member.member_epoch
            member.member_epoch = group.group_epoch
            member.assignment = assignment
            send = True
            for name, (_, partitions) in assignment.items():
                events.extend(("assigned", group_id, name, p) for p in partitions)
        return {
            "throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "member_id": member.member_id, "member_epoch": member.member_epoch,
            "heartbeat_interval_ms": self.per_group.heartbeat_interval_ms(group_id),
            "assignment": self._assignment_body(member) if send else None,
        }, events

    @staticmethod
    def _assignment_body(member: ShareMember) -> dict:
        return {"topic_partitions": [{"topic_id": tid, "partitions": parts}
                                     for tid, parts in member.assignment.values()]}

    def _remove(self, group: ShareGroup, member: ShareMember, now: int, reason: str,
                events: list) -> None:
        del group.members[member.member_id]
        group.group_epoch += 1
        if not group.members:
            group.empty_since = now
        events.append((reason, group.group_id, member.member_id))
        log.info("share_member_removed", group_id=group.group_id, member_id=member.member_id,
                 reason=reason, members=len(group.members))

    def tick(self, now: int) -> list:
        events: list = []
        for group in list(self.groups.values()):
            for member in [m for m in group.members.values() if m.deadline <= now]:
                self._remove(group, member, now, TIMED_OUT, events)
        return events

    def ensure_group(self, group_id: str, now: int = 0) -> ShareGroup:
        """An empty share group: made by AlterShareGroupOffsets, as Kafka does, and at
        start for every group with share state in the log (kipper keeps no group records)."""
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = ShareGroup(group_id, empty_since=now)
        return group

    def offsets_altered(self, group_id: str) -> None:
        """AlterShareGroupOffsets named a topic: a group it made starts at epoch 1, and one
        that was there keeps its epoch (Kafka 4.4)."""
        group = self.groups.get(group_id)
        if group is not None and group.group_epoch == 0:
            group.group_epoch = 1

    def bump_epoch(self, group_id: str) -> None:
        """The group's share-partitions were altered or deleted (Kafka bumps the group epoch)."""
        group = self.groups.get(group_id)
        if group is not None:
            group.group_epoch += 1

    def delete_group(self, group_id: str) -> None:
        """DeleteGroups of a group without members (the GroupCoordinator checked)."""
        self.groups.pop(group_id, None)
        log.info("share_group_deleted", group_id=group_id)

    # --- ShareGroupDescribe / ListGroups ---------------------------------------------------

    def describe(self, group_id: str, held_elsewhere: bool = False) -> dict:
        """``held_elsewhere``: a group of another kind has the id."""
        group = None if held_elsewhere else self.groups.get(group_id)
        if group is None:
            why = "is not a share group" if held_elsewhere else "not found"
            return {"error_code": int(ErrorCode.GROUP_ID_NOT_FOUND),
                    "error_message": f"Group {group_id} {why}.", "group_id": group_id,
                    "group_state": "", "group_epoch": 0, "assignment_epoch": 0,  # as Kafka's
                    "assignor_name": "", "members": []}
        return {
            "error_code": 0, "error_message": None, "group_id": group_id,
            "group_state": group.state, "group_epoch": group.group_epoch,
            "assignment_epoch": group.group_epoch, "assignor_name": ASSIGNOR,
            "members": [{
                "member_id": m.member_id, "rack_id": m.rack_id, "member_epoch": m.member_epoch,
                "client_id": m.client_id, "client_host": m.client_host,
                "subscribed_topic_names": list(m.subscribed),
                "assignment": {"topic_partitions": [
                    {"topic_id": tid, "topic_name": name, "partitions": parts}
                    for name, (tid, parts) in m.assignment.items()]},
            } for m in group.members.values()],
        }

    def list_groups(self) -> list[dict]:
        return [{"group_id": g.group_id, "protocol_type": "share", "group_state": g.state,
                 "group_type": "share"} for g in self.groups.values()]
