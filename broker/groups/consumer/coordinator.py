"""Consumer groups of the next-generation protocol (KIP-848, ConsumerGroupHeartbeat), sans-I/O.

Members join with member epoch 0 and heartbeat with the epoch they were given;
there is no JoinGroup/SyncGroup barrier. A membership or subscription change, or
a change of a subscribed topic, bumps the group epoch; the next heartbeat then
computes a new target assignment with a server-side assignor (``uniform`` or
``range``), and every member is reconciled toward its target on its own
heartbeats, giving partitions up before anyone else receives them
(``reconcile.py``). ``tick(now)`` fences members whose session or rebalance
timeout ran out. Errors are Kafka's: FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID,
UNSUPPORTED_ASSIGNOR, GROUP_MAX_SIZE_REACHED, INVALID_REGULAR_EXPRESSION, ...
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import replace

import structlog

from kipper.broker.groups.consumer.assignors import ASSIGNORS, Assignment
from kipper.broker.groups.consumer.model import (
    JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH, ConsumerGroup, ConsumerMember,
)
from kipper.broker.groups.consumer.reconcile import MemberAssignment, UNREVOKED_PARTITIONS, reconcile
from kipper.broker.groups.consumer.settings import ConsumerGroupSettings
from kipper.broker.groups.consumer.subscription import (
    regex_problem, subscribed_ids, subscribed_topics, subscription_metadata,
)
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

PROTOCOL_TYPE = "consumer"


class HeartbeatError(Exception):
    """A heartbeat refused with a Kafka error code; caught in ``heartbeat`` only."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message


def _response(code: ErrorCode, message: str | None = None, *, member_id: str | None = None,
              member_epoch: int = 0, heartbeat_interval_ms: int = 0, assignment=None) -> dict:
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message,
            "member_id": member_id, "member_epoch": member_epoch,
            "heartbeat_interval_ms": heartbeat_interval_ms, "assignment": assignment}


def _new_member_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def _owned(topic_partitions) -> Assignment | None:
    if topic_partitions is None:
        return None
    out: dict[uuid.UUID, frozenset[int]] = {}
    for tp in topic_partitions:
        out[tp.topic_id] = out.get(tp.topic_id, frozenset()) | frozenset(tp.partitions)
    return out


def _is_subset(owned: Assignment | None, assigned: Assignment) -> bool:
    if owned is None:
        return False
    return all(parts <= assigned.get(tid, frozenset()) for tid, parts in owned.items())


def _wire(assignment: Assignment) -> dict:
    return {"topic_partitions": [{"topic_id": tid, "partitions": sorted(parts)}
                                 for tid, parts in sorted(assignment.items(), key=lambda kv: str(kv[0]))]}


class ConsumerGroupCoordinator:
    def __init__(self, settings: ConsumerGroupSettings, topics, group_configs=None):
        """``group_configs`` (broker/groups/configs.py) may override the session timeout
        and heartbeat interval per group (consumer.session.timeout.ms, ...)."""
        self.settings = settings
        self.topics = topics
        self.group_configs = group_configs
        self.groups: dict[str, ConsumerGroup] = {}
        self.rebalances = 0  # target assignments computed

    def owns(self, group_id: str) -> bool:
        return group_id in self.groups

    def release_for_classic(self, group_id: str) -> bool:
        """May ``group_id`` become a classic group? An empty consumer group gives its id
        up (Kafka converts it); one with members keeps it."""
        group = self.groups.get(group_id)
        if group is None:
            return True
        if group.members:
            return False
        del self.groups[group_id]
        log.info("consumer_group_deleted", group_id=group_id, reason="a classic member joined")
        return True

    def active_groups(self) -> set[str]:
        return {g for g, group in self.groups.items() if group.members}

    def delete_group(self, group_id: str) -> None:
        """DeleteGroups of an empty group (the GroupCoordinator checked it is)."""
        self.groups.pop(group_id, None)
        log.info("consumer_group_deleted", group_id=group_id, reason="DeleteGroups")

    def subscribed_to(self, group_id: str, topic: str) -> bool:
        """Does a member subscribe to ``topic``, by name or by its regex (OffsetDelete)?"""
        group = self.groups.get(group_id)
        if group is None:
            return False
        return any(topic in m.subscribed_names
                   or topic in subscribed_topics((), m.subscribed_regex, self.topics)
                   for m in group.members.values())

    # --- ConsumerGroupHeartbeat ---------------------------------------------------------

    def heartbeat(self, req, *, version: int, client_id: str, client_host: str, now: int,
                  held_elsewhere: bool = False) -> dict:
        """``held_elsewhere``: a classic group with members or a share group holds the id,
        so no consumer group may be created under it (the GroupCoordinator knows)."""
        try:
            self._validate(req, version)
            if req.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                return self._leave(req, now, held_elsewhere)
            return self._heartbeat(req, client_id, client_host, now, held_elsewhere)
        except HeartbeatError as exc:
            return _response(exc.code, exc.message)

    def refusal(self, req, version: int) -> dict | None:
        """The answer to a heartbeat Kafka refuses on its own, before any group is looked at
        (or converted), or None."""
        try:
            self._validate(req, version)
        except HeartbeatError as exc:
            return _response(exc.code, exc.message)
        return None

    def _validate(self, req, version: int) -> None:
        """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid."""
        def invalid(message):
            return HeartbeatError(ErrorCode.INVALID_REQUEST, message)
        epoch = req.member_epoch
        # KIP-1082 (v1+): the consumer generates its id; first of all, as Kafka checks
        if (version >= 1 or epoch > 0 or epoch == LEAVE_EPOCH) and not req.member_id:
            raise invalid("MemberId can't be empty.")
        if not req.group_id:
            raise invalid("GroupId can't be empty.")
        if req.get("instance_id") == "":
            raise invalid("InstanceId can't be empty.")
        if req.get("rack_id") == "":
            raise invalid("RackId can't be empty.")
        if epoch == JOIN_EPOCH:
            if req.rebalance_timeout_ms == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            if req.topic_partitions is None or req.topic_partitions:
                raise invalid("TopicPartitions must be empty when (re-)joining.")
            if req.subscribed_topic_names is None and req.get("subscribed_topic_regex") is None:
                raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                              "(re-)joining.")
        elif epoch == STATIC_LEAVE_EPOCH:  # (the member is found by its instance id: any member id)
            if req.get("instance_id") is None:
                raise invalid("InstanceId can't be null.")
        elif epoch < STATIC_LEAVE_EPOCH:
            raise invalid("MemberEpoch is invalid.")
        assignor = req.server_assignor
        if assignor is not None and assignor not in self.settings.assignors:
            raise HeartbeatError(ErrorCode.UNSUPPORTED_ASSIGNOR,
                                 f"ServerAssignor {assignor} is not supported. Supported assignors: "
                                 f"{', '.join(self.settings.assignors)}.")

    def _group_for(self, group_id: str, join: bool, held_elsewhere: bool) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if held_elsewhere:
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if not join:
            # Kafka answers GROUP_ID_NOT_FOUND, which librdkafka treats as fatal. Groups
            # live in memory here, so after a broker restart a member is told to rejoin.
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Consumer group {group_id} not found.")
        group = self.groups[group_id] = ConsumerGroup(group_id)
        return group

    @staticmethod
    def _check_epoch(member: ConsumerMember, epoch: int, owned: Assignment | None) -> None:
        current = member.member_epoch
        if epoch > current:
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a greater member epoch ({epoch}) than "
                                 f"the one known by the group coordinator ({current}). The member must "
                                 "abandon all its partitions and rejoin.")
        if epoch < current and (epoch != member.previous_epoch
                                or not _is_subset(owned, member.assignment.assigned)):
            # the previous epoch is accepted: the answer that bumped it may have been lost
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a smaller member epoch ({epoch}) than "
                                 f"the one known by the group coordinator ({current}). The member must "
                                 "abandon all its partitions and rejoin.")

    def _member_for(self, group: ConsumerGroup, req, owned) -> tuple[ConsumerMember, bool]:
        """(member, is new) for a heartbeat, after the epoch and static-membership checks."""
        member_id = req.member_id or _new_member_id()  # v0 may leave the id to the coordinator
        epoch = req.member_epoch
        instance_id = req.get("instance_id")
        s = self.settings
        if len(group.members) >= s.max_size and member_id not in group.members:
            raise HeartbeatError(ErrorCode.GROUP_MAX_SIZE_REACHED, "The consumer group has reached "
                                 f"its maximum capacity of {s.max_size} members.")
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                if epoch != JOIN_EPOCH:
                    raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                         f"Member {member_id} is not a member of group {group.group_id}.")
                return ConsumerMember(member_id), True
            self._check_epoch(member, epoch, owned)
            return member, False
        static = group.static_member(instance_id)
        if epoch != JOIN_EPOCH:
            if static is None:
                raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            if static.member_id != member_id:
                raise HeartbeatError(ErrorCode.FENCED_INSTANCE_ID,
                                     f"Static member {member_id} with instance id {instance_id} was "
                                     f"fenced by member {static.member_id}.")
            self._check_epoch(static, epoch, owned)
            return static, False
        if static is None:
            member = group.members.get(member_id)
            return (member, False) if member is not None else (ConsumerMember(member_id), True)
        if static.member_epoch != STATIC_LEAVE_EPOCH and static.classic is None:
            # (a classic static member never leaves with -2: a KIP-848 instance replaces it
            # at once, as Kafka does when one of the two uses the classic protocol)
            raise HeartbeatError(ErrorCode.UNRELEASED_INSTANCE_ID,
                                 f"Static member {member_id} with instance id {instance_id} cannot join "
                                 f"the group because the instance id is owned by {static.member_id} member.")
        # the static member comes back under a new member id and takes over its partitions
        target = group.target.get(static.member_id, {})
        group.remove(static)
        member = replace(static, member_id=member_id, previous_epoch=0, classic=None,
                         assignment=replace(static.assignment, member_epoch=0), rebalance_deadline=None)
        group.add(member)
        group.target[member_id] = target
        log.info("consumer_static_member_replaced", group_id=group.group_id, instance_id=instance_id,
                 member_id=member_id, replaced=static.member_id)
        return member, False

    def _heartbeat(self, req, client_id: str, client_host: str, now: int,
                   held_elsewhere: bool) -> dict:
        s = self.settings
        epoch = req.member_epoch
        owned = _owned(req.topic_partitions)
        existed = req.group_id in self.groups
        group = self._group_for(req.group_id, join=epoch == JOIN_EPOCH, held_elsewhere=held_elsewhere)
        member, new = self._member_for(group, req, owned)
        regex = req.get("subscribed_topic_regex")
        problem = regex_problem(regex) if regex and regex != member.subscribed_regex else None
        if problem:  # Kafka looks at a new regex once it has found the group and the member
            if not existed:
                del self.groups[req.group_id]  # (nothing of this heartbeat stays)
            raise HeartbeatError(ErrorCode.INVALID_REGULAR_EXPRESSION, problem)

        # 1. the member's own data; a new member or a new subscription bumps the group epoch
        bump = new
        names, regex = req.subscribed_topic_names, req.get("subscribed_topic_regex")
        if names is not None and tuple(sorted(set(names))) != member.subscribed_names:
            member.subscribed_names = tuple(sorted(set(names)))
            bump = True
        if regex is not None and (regex or None) != member.subscribed_regex:
            member.subscribed_regex = regex or None
            bump = True
        if req.get("instance_id") is not None and member.instance_id is None:
            member.instance_id = req.instance_id
        if req.get("rack_id") is not None:
            member.rack_id = req.rack_id
        if req.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = req.rebalance_timeout_ms
        if req.server_assignor is not None:
            member.server_assignor = req.server_assignor
        member.client_id, member.client_host = client_id, client_host
        if new:
            group.add(member)
            log.info("consumer_member_joined", group_id=group.group_id, member_id=member.member_id,
                     members=len(group.members))

        # 2. a change of the subscribed topics (created, deleted, grown) also bumps it
        self.refresh(group, bump)

        # 3. move the member toward its target
        before = member.assignment
        after = reconcile(before, target_epoch=group.assignment_epoch,
                          target=group.target.get(member.member_id, {}),
                          subscribed=subscribed_ids(member, self.topics), owned=owned,
                          holder=group.holder, member_id=member.member_id)
        self.set_assignment(group, member, after, now)
        member.session_deadline = now + self._per_group(group.group_id, "consumer.session.timeout.ms",
                                                        s.session_timeout_ms)

        full = epoch == JOIN_EPOCH or (req.rebalance_timeout_ms != -1 and owned is not None
                                       and (names is not None or regex is not None))
        send = full or after.assigned != before.assigned
        interval = self._per_group(group.group_id, "consumer.heartbeat.interval.ms",
                                   s.heartbeat_interval_ms)
        return _response(ErrorCode.NONE, member_id=member.member_id, member_epoch=member.member_epoch,
                         heartbeat_interval_ms=interval,
                         assignment=_wire(after.assigned) if send else None)

    def refresh(self, group: ConsumerGroup, bump: bool) -> None:
        """Bump the group epoch for a member change (``bump``) or a change of the
        subscribed topics, and compute a new target when the current one is stale."""
        metadata = subscription_metadata(group.members.values(), self.topics)
        if metadata != group.subscription_metadata:
            group.subscription_metadata = metadata
            bump = True
        if bump:
            group.group_epoch += 1
        if group.group_epoch > group.assignment_epoch:
            self._compute_target(group)

    def _per_group(self, group_id: str, key: str, default: int) -> int:
        configs = self.group_configs
        return default if configs is None else configs.get_int(group_id, key, default)

    def set_assignment(self, group: ConsumerGroup, member: ConsumerMember,
                        after: MemberAssignment, now: int) -> None:
        before = member.assignment
        if after == before:
            return
        group.set_assignment(member, after)
        if after.state == UNREVOKED_PARTITIONS:
            # it must let go within its rebalance timeout (max.poll.interval.ms) or be fenced
            member.rebalance_deadline = now + member.rebalance_timeout_ms
        else:
            member.rebalance_deadline = None

    def _preferred_assignor(self, group: ConsumerGroup) -> str:
        """The server assignor most members asked for; the default when none did."""
        votes: dict[str, int] = {}
        for m in group.members.values():
            if m.server_assignor is not None:
                votes[m.server_assignor] = votes.get(m.server_assignor, 0) + 1
        if not votes:
            return self.settings.default_assignor
        order = self.settings.assignors
        return max(votes, key=lambda name: (votes[name], -order.index(name)))

    def _compute_target(self, group: ConsumerGroup) -> None:
        name = self._preferred_assignor(group)
        partitions = {tid: count for _, tid, count in group.subscription_metadata}
        members = {mid: subscribed_ids(m, self.topics) for mid, m in group.members.items()}
        group.target = ASSIGNORS[name](members, partitions, group.target)
        group.assignment_epoch = group.group_epoch
        group.assignor = name
        self.rebalances += 1
        log.info("consumer_group_target_assignment", group_id=group.group_id,
                 epoch=group.group_epoch, assignor=name, members=len(members),
                 partitions=sum(partitions.values()))

    # --- leaving and fencing ------------------------------------------------------------

    def _leave(self, req, now: int, held_elsewhere: bool = False) -> dict:
        group_id, member_id, epoch = req.group_id, req.member_id, req.member_epoch
        group = self.groups.get(group_id)
        if group is None:  # (Kafka's words)
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group."
                                 if held_elsewhere else f"Group {group_id} not found.")
        instance_id = req.get("instance_id")
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                     f"Member {member_id} is not a member of group {group_id}.")
        else:
            member = group.static_member(instance_id)
            if member is None:
                raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            if member.member_id != member_id:
                raise HeartbeatError(ErrorCode.FENCED_INSTANCE_ID,
                                     f"Static member {member_id} with instance id {instance_id} was "
                                     f"fenced by member {member.member_id}.")
        if epoch == STATIC_LEAVE_EPOCH:
            # a static member going away for a while keeps its partitions until its session ends
            group.set_assignment(member, replace(member.assignment, member_epoch=STATIC_LEAVE_EPOCH,
                                                 pending_revocation={}))
            member.rebalance_deadline = None
            log.info("consumer_static_member_left_temporarily", group_id=group_id, member_id=member_id,
                     instance_id=instance_id)
        else:
            self.fence(group, member, "left the group")
        return _response(ErrorCode.NONE, member_id=member_id, member_epoch=epoch)

    def fence(self, group: ConsumerGroup, member: ConsumerMember, reason: str) -> None:
        group.remove(member)
        group.subscription_metadata = subscription_metadata(group.members.values(), self.topics)
        group.group_epoch += 1
        log.info("consumer_member_removed", group_id=group.group_id, member_id=member.member_id,
                 reason=reason, members=len(group.members), group_epoch=group.group_epoch)

    def tick(self, now: int) -> None:
        """Fence members whose session timed out, or that did not revoke in time."""
        for group in self.groups.values():
            for member in list(group.members.values()):
                if member.session_deadline <= now:
                    self.fence(group, member, "session timed out")
                elif member.rebalance_deadline is not None and member.rebalance_deadline <= now:
                    self.fence(group, member, "did not revoke its partitions within the rebalance timeout")

    # --- offsets ----------------------------------------------------------------------------

    def validate_commit(self, group_id: str, member_id: str, member_epoch: int, *,
                        api_version: int, transactional: bool = False) -> ErrorCode:
        """OffsetCommit (or TxnOffsetCommit) into a consumer group (Kafka's
        ConsumerGroup.validateOffsetCommit)."""
        group = self.groups[group_id]
        if member_epoch < 0 and not group.members:
            return ErrorCode.NONE  # admin tools may commit while the group is empty
        if transactional and not member_id:
            return ErrorCode.NONE  # older transactional clients do not say who they are
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member.classic is not None:  # a classic member commits with its generation
            return ErrorCode.NONE if member_epoch == member.member_epoch else ErrorCode.ILLEGAL_GENERATION
        if not transactional and api_version < 9:
            return ErrorCode.UNSUPPORTED_VERSION  # KIP-848 members commit with v9+
        if member_epoch != member.member_epoch:
            # a transactional commit with a stale epoch is an illegal generation in Kafka
            return ErrorCode.ILLEGAL_GENERATION if transactional else ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    def validate_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9+ from a consumer group (Kafka's ConsumerGroup.validateOffsetFetch)."""
        if member_id is None and member_epoch < 0:
            return ErrorCode.NONE  # admin clients
        member = self.groups[group_id].members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    # --- ConsumerGroupDescribe / ListGroups ---------------------------------------------------

    def _named(self, assignment: Assignment) -> dict:
        out = []
        for tid, parts in sorted(assignment.items(), key=lambda kv: str(kv[0])):
            topic = self.topics.by_id(tid)
            out.append({"topic_id": tid, "topic_name": topic.name if topic is not None else "",
                        "partitions": sorted(parts)})
        return {"topic_partitions": out}

    def describe(self, group_id: str, held_elsewhere: bool = False) -> dict:
        group = self.groups.get(group_id)
        if group is None:
            code = ErrorCode.INVALID_GROUP_ID if not group_id else ErrorCode.GROUP_ID_NOT_FOUND
            message = (None if not group_id  # (Kafka's INVALID_GROUP_ID here has no text)
                       else f"Group {group_id} is not a consumer group." if held_elsewhere
                       else f"Group {group_id} not found.")
            # Kafka's answer for a group it does not have: no state, epochs 0
            return {"error_code": int(code), "error_message": message, "group_id": group_id,
                    "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                    "assignor_name": "", "members": []}
        return {
            "error_code": 0, "error_message": None, "group_id": group_id,
            "group_state": group.state, "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "assignor_name": group.assignor or self._preferred_assignor(group),
            "members": [{
                "member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
                "subscribed_topic_names": list(m.subscribed_names),
                "subscribed_topic_regex": m.subscribed_regex or "",  # Kafka: "" when none
                "assignment": self._named(m.assignment.assigned),
                "target_assignment": self._named(group.target.get(m.member_id, {})),
            } for m in group.members.values()],
        }

    def list_groups(self) -> list[dict]:
        return [{"group_id": g.group_id, "protocol_type": PROTOCOL_TYPE, "group_state": g.state,
                 "group_type": PROTOCOL_TYPE} for g in self.groups.values()]
