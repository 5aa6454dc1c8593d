"""Classic-protocol members inside a KIP-848 consumer group (Kafka's mixed groups).

During an online migration (``group.consumer.migration.policy``) a consumer
group holds members of both protocols. A classic member still speaks JoinGroup,
SyncGroup, Heartbeat and LeaveGroup, but the broker assigns it like any other
member: its JoinGroup (subscription and owned partitions from the
ConsumerProtocolSubscription) moves it toward its target with the same
``reconcile``, the answer comes at once with its member epoch as the generation,
and SyncGroup hands it its partitions as a ConsumerProtocolAssignment. A
Heartbeat answers REBALANCE_IN_PROGRESS while the member is behind its target,
so it rejoins. Revocation before assignment holds across protocols: an eager
member gives everything up before it rejoins; a cooperative one lists what it
still owns, and keeps its epoch until a rejoin no longer lists it.

Static members (``group.instance.id``) keep their identity across the protocols, as
in Kafka's GroupMetadataManager: a JoinGroup without a member id for an instance id
the group knows replaces that member (of either protocol) and takes over its
assignment; a request from the member it replaced gets FENCED_INSTANCE_ID.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace

import structlog

from kipper.broker.groups.consumer.model import ConsumerGroup, ConsumerMember
from kipper.broker.groups.consumer.reconcile import reconcile
from kipper.broker.groups.consumer.subscription import subscribed_ids
from kipper.broker.groups.consumer_protocol import encode_assignment, parse_subscription
from kipper.protocol.errors import ErrorCode

log = structlog.get_logger(__name__)

PROTOCOL_TYPE = "consumer"


@dataclass
class ClassicProtocol:
    """What a classic member said in its JoinGroup, kept to answer it and to turn
    the group back into a classic group."""
    protocols: list  # [(name, metadata)]
    session_timeout_ms: int

    @property
    def protocol_name(self) -> str:
        return self.protocols[0][0] if self.protocols else ""


def _error(code: ErrorCode, **extra) -> dict:
    return {"error_code": int(code), **extra}


def ids_of(topics, by_name: dict[str, list[int]]) -> dict:
    """Partitions by topic name -> by topic id (unknown topics left out)."""
    out = {}
    for name, parts in by_name.items():
        topic = topics.get(name)
        if topic is not None:
            out[topic.topic_id] = frozenset(p for p in parts if 0 <= p < len(topic.partitions))
    return out


def names_of(topics, assignment: dict) -> dict[str, list[int]]:
    out = {}
    for tid, parts in assignment.items():
        topic = topics.by_id(tid)
        if topic is not None and parts:
            out[topic.name] = sorted(parts)
    return out


class ClassicMembers:
    def __init__(self, engine):
        """``engine``: the ConsumerGroupCoordinator whose groups these members are in."""
        self.engine = engine
        self.pending: dict[tuple[str, str], int] = {}  # KIP-394 ids handed out -> deadline

    # --- JoinGroup --------------------------------------------------------------------------

    def join(self, group: ConsumerGroup, req, *, version: int, client_id: str, client_host: str,
             now: int) -> dict:
        engine = self.engine
        if req.protocol_type != PROTOCOL_TYPE:
            return _error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)  # (thrown on Kafka: no member id)
        protocols = [(p.name, bytes(p.metadata)) for p in req.protocols]
        parsed = next((parse_subscription(meta) for _, meta in protocols
                       if parse_subscription(meta) is not None), None)
        if parsed is None:
            return _error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        topics, owned_names = parsed
        member_id = req.member_id
        instance_id = req.get("group_instance_id")
        session = req.session_timeout_ms
        static = group.static_member(instance_id) if instance_id is not None else None
        if not member_id:
            if len(group.members) >= engine.settings.max_size and static is None:
                return _error(ErrorCode.GROUP_MAX_SIZE_REACHED)
            member_id = f"{client_id or 'member'}-{uuid.uuid4()}"
            if instance_id is not None:  # a static member needs no second round trip
                if static is not None:
                    self._replace(group, static, member_id)
            elif version >= 4:  # KIP-394: the member rejoins with the id
                self.pending[(group.group_id, member_id)] = now + session
                return _error(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id, generation_id=-1)
        elif instance_id is not None:
            if static is None:
                return _error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
            if static.member_id != member_id:
                return _error(ErrorCode.FENCED_INSTANCE_ID, member_id=member_id)
        member = group.members.get(member_id)
        new = member is None
        if new:
            if (version >= 4 and instance_id is None
                    and self.pending.pop((group.group_id, member_id), None) is None):
                return _error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
            member = ConsumerMember(member_id, instance_id=instance_id)
        elif member.classic is None and static is None:
            return _error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
        member.classic = ClassicProtocol(protocols, session)
        member.client_id, member.client_host = client_id, client_host
        timeout = req.get("rebalance_timeout_ms", -1)
        member.rebalance_timeout_ms = timeout if timeout and timeout > 0 else session
        names = tuple(sorted(set(topics)))
        bump = new or names != member.subscribed_names
        member.subscribed_names = names
        if new:
            group.add(member)
            log.info("consumer_classic_member_joined", group_id=group.group_id, member_id=member_id,
                     members=len(group.members))
        engine.refresh(group, bump)
        self._reconcile(group, member, ids_of(engine.topics, owned_names), now)
        return {"error_code": 0, "generation_id": member.member_epoch,
                "protocol_type": PROTOCOL_TYPE, "protocol_name": member.classic.protocol_name,
                "leader": "", "member_id": member_id, "skip_assignment": False, "members": []}

    def _replace(self, group: ConsumerGroup, static: ConsumerMember, member_id: str) -> None:
        """A static member rejoins under a new member id: it takes over the member it
        replaces (either protocol), its partitions included; that one is fenced."""
        target = group.target.get(static.member_id, {})
        group.remove(static)
        member = replace(static, member_id=member_id, previous_epoch=0, rebalance_deadline=None,
                         assignment=replace(static.assignment, member_epoch=0))
        group.add(member)
        group.target[member_id] = target
        log.info("consumer_static_member_replaced", group_id=group.group_id, protocol="classic",
                 instance_id=static.instance_id, member_id=member_id, replaced=static.member_id)

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember, owned, now: int) -> None:
        engine = self.engine
        after = reconcile(member.assignment, target_epoch=group.assignment_epoch,
                          target=group.target.get(member.member_id, {}),
                          subscribed=subscribed_ids(member, engine.topics), owned=owned,
                          holder=group.holder, member_id=member.member_id)
        engine.set_assignment(group, member, after, now)
        member.session_deadline = now + member.classic.session_timeout_ms

    # --- SyncGroup, Heartbeat, LeaveGroup ------------------------------------------------------

    def _member(self, group: ConsumerGroup, member_id: str, generation: int,
                instance_id: str | None = None):
        if instance_id is not None:
            static = group.static_member(instance_id)
            if static is not None and static.member_id != member_id:
                log.info("static_member_fenced", group_id=group.group_id, member_id=member_id,
                         instance_id=instance_id, current=static.member_id)
                return None, ErrorCode.FENCED_INSTANCE_ID
        member = group.members.get(member_id)
        if member is None or member.classic is None:
            return None, ErrorCode.UNKNOWN_MEMBER_ID
        if generation != member.member_epoch:
            return None, ErrorCode.ILLEGAL_GENERATION
        return member, ErrorCode.NONE

    def sync(self, group: ConsumerGroup, req, now: int) -> dict:
        member, code = self._member(group, req.member_id, req.generation_id, req.get("group_instance_id"))
        if member is None:
            return _error(code)
        member.session_deadline = now + member.classic.session_timeout_ms
        assigned = names_of(self.engine.topics, member.assignment.assigned)
        return {"error_code": 0, "protocol_type": PROTOCOL_TYPE,
                "protocol_name": req.get("protocol_name") or member.classic.protocol_name,
                "assignment": encode_assignment(assigned)}

    def heartbeat(self, group: ConsumerGroup, req, now: int) -> dict:
        member, code = self._member(group, req.member_id, req.generation_id, req.get("group_instance_id"))
        if member is None:
            return _error(code)
        member.session_deadline = now + member.classic.session_timeout_ms
        self.engine.refresh(group, False)
        if not member.assignment.is_reconciled_to(group.assignment_epoch):
            return _error(ErrorCode.REBALANCE_IN_PROGRESS)  # rejoin to move toward the target
        return _error(ErrorCode.NONE)

    def leave(self, group: ConsumerGroup, identities, now: int) -> list[dict]:
        results = []
        for member_id, instance_id in identities:
            member = group.members.get(member_id)
            if instance_id:
                member = group.static_member(instance_id)
                if member is not None and member_id and member.member_id != member_id:
                    results.append({"member_id": member_id, "group_instance_id": instance_id,
                                    "error_code": int(ErrorCode.FENCED_INSTANCE_ID)})
                    continue
            if member is None or member.classic is None:
                results.append({"member_id": member_id, "group_instance_id": instance_id,
                                "error_code": int(ErrorCode.UNKNOWN_MEMBER_ID)})
                continue
            self.engine.fence(group, member, "left the group")
            results.append({"member_id": member.member_id, "group_instance_id": instance_id,
                            "error_code": 0})
        return results

    def tick(self, now: int) -> None:
        for key, deadline in list(self.pending.items()):
            if now >= deadline:
                del self.pending[key]
