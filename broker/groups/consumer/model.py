"""What a consumer group (KIP-848) is made of: members, epochs, the target
assignment and who holds each partition.

The group state is derived, never set: Empty without members, Assigning while
the group epoch is ahead of the target's (assignment) epoch, Reconciling while
a member is not yet stable at the assignment epoch, Stable otherwise.
``holders`` is the single place that says who holds a partition; ``set_assignment``
is the only way to change a member's assignment and refuses to give a partition
a second holder (that would be a bug, not a client error).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from kipper.broker.groups.consumer.assignors import Assignment
from kipper.broker.groups.consumer.reconcile import MemberAssignment

EMPTY, ASSIGNING, RECONCILING, STABLE, DEAD = "Empty", "Assigning", "Reconciling", "Stable", "Dead"
JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH = 0, -1, -2  # KIP-848 member epochs


@dataclass
class ConsumerMember:
    member_id: str
    client_id: str = ""
    client_host: str = ""
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = 300000
    server_assignor: str | None = None
    subscribed_names: tuple[str, ...] = ()
    subscribed_regex: str | None = None
    assignment: MemberAssignment = field(default_factory=MemberAssignment)
    previous_epoch: int = 0
    session_deadline: int = 0
    rebalance_deadline: int | None = None  # set while UNREVOKED_PARTITIONS
    classic: object = None  # a classic-protocol member (JoinGroup/SyncGroup): its ClassicProtocol

    @property
    def member_epoch(self) -> int:
        return self.assignment.member_epoch

    @property
    def state(self) -> str:
        return self.assignment.state


@dataclass
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)    # member id -> target
    holders: dict[tuple[uuid.UUID, int], str] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)   # instance id -> member id
    subscription_metadata: tuple = ()  # (name, topic id, partitions) of every subscribed topic
    assignor: str | None = None        # the one that computed the current target

    @property
    def state(self) -> str:
        if not self.members:
            return EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        if any(not m.assignment.is_reconciled_to(self.assignment_epoch)
               for m in self.members.values()):
            return RECONCILING
        return STABLE

    def holder(self, topic_id: uuid.UUID, partition: int) -> str | None:
        return self.holders.get((topic_id, partition))

    def set_assignment(self, member: ConsumerMember, new: MemberAssignment) -> None:
        old = member.assignment
        if new == old:
            return
        for tp in old.held():
            if self.holders.get(tp) == member.member_id:
                del self.holders[tp]
        for tp in new.held():
            other = self.holders.get(tp)
            if other is not None and other != member.member_id:
                raise AssertionError(f"group {self.group_id}: {tp} is held by {other}, "
                                     f"cannot give it to {member.member_id}")
            self.holders[tp] = member.member_id
        if new.member_epoch != old.member_epoch:
            member.previous_epoch = old.member_epoch
        member.assignment = new

    def add(self, member: ConsumerMember) -> None:
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for tp in member.assignment.held():
            self.holders[tp] = member.member_id

    def remove(self, member: ConsumerMember) -> None:
        """Drop a member and release everything it holds."""
        for tp in member.assignment.held():
            if self.holders.get(tp) == member.member_id:
                del self.holders[tp]
        del self.members[member.member_id]
        self.target.pop(member.member_id, None)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member.member_id:
            del self.static_members[member.instance_id]

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return self.members.get(member_id) if member_id is not None else None
