"""Reconciliation of one member toward its target assignment (KIP-848).

A member moves between three states; the rule that keeps a partition from
having two owners is that a partition is only given to a member once no other
member holds it (assigned, or still pending revocation):

    STABLE                 at the target epoch, owns its whole target
    UNREVOKED_PARTITIONS   must give partitions up first; stays at its epoch until
                           a heartbeat no longer lists them in TopicPartitions
    UNRELEASED_PARTITIONS  at the target epoch, but part of its target is still
                           held by others; it gets those once they are released

``reconcile`` is Kafka's CurrentAssignmentBuilder: a pure function from the
member's current assignment, the target, what the member reports owning and who
holds each partition, to the member's next assignment.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Callable

from kipper.broker.groups.consumer.assignors import Assignment

STABLE = "STABLE"
UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"

# What a member in each state waits for before it can move on.
WAITS_FOR = {
    STABLE: "a new target assignment (a higher assignment epoch)",
    UNREVOKED_PARTITIONS: "a heartbeat whose TopicPartitions no longer lists the revoked partitions",
    UNRELEASED_PARTITIONS: "the previous owners to release the rest of its target",
}


@dataclass(frozen=True)
class MemberAssignment:
    state: str = STABLE
    member_epoch: int = 0
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state == STABLE and self.member_epoch == target_epoch

    def held(self):
        """Every (topic id, partition) this member holds: assigned or being revoked."""
        for assignment in (self.assigned, self.pending_revocation):
            for tid, parts in assignment.items():
                for p in parts:
                    yield tid, p


def owns_any(owned: Assignment | None, partitions: Assignment) -> bool:
    """Does the member (by its last report) still own any of ``partitions``?
    Unknown (the heartbeat did not say) counts as yes."""
    if owned is None:
        return True
    return any(owned.get(tid, frozenset()) & parts for tid, parts in partitions.items())


def reconcile(current: MemberAssignment, *, target_epoch: int, target: Assignment,
              subscribed: frozenset[uuid.UUID], owned: Assignment | None,
              holder: Callable[[uuid.UUID, int], str | None], member_id: str) -> MemberAssignment:
    if current.state == STABLE:
        if current.member_epoch == target_epoch:
            return current
    elif current.state == UNREVOKED_PARTITIONS:
        if owns_any(owned, current.pending_revocation):
            return current
    return _next(current, target_epoch, target, subscribed, owned, holder, member_id)


def _next(current, target_epoch, target, subscribed, owned, holder, member_id) -> MemberAssignment:
    assigned: dict[uuid.UUID, frozenset[int]] = {}
    revoking: dict[uuid.UUID, frozenset[int]] = {}
    to_assign: dict[uuid.UUID, frozenset[int]] = {}
    unreleased = False
    for tid in set(target) | set(current.assigned):
        wanted = target.get(tid, frozenset()) if tid in subscribed else frozenset()
        have = current.assigned.get(tid, frozenset())
        keep = have & wanted
        gone = have - keep
        free = set()
        for p in wanted - keep:
            who = holder(tid, p)
            # a partition this member is itself revoking is not held by someone else
            if who is None or who == member_id:
                free.add(p)
            else:
                unreleased = True
        if keep:
            assigned[tid] = keep
        if gone:
            revoking[tid] = gone
        if free:
            to_assign[tid] = frozenset(free)
    if revoking and owns_any(owned, revoking):
        # revocation before assignment: stay at this epoch until the member lets go
        return MemberAssignment(UNREVOKED_PARTITIONS, current.member_epoch, assigned, revoking)
    for tid, parts in to_assign.items():
        assigned[tid] = assigned.get(tid, frozenset()) | parts
    state = UNRELEASED_PARTITIONS if unreleased else STABLE
    return MemberAssignment(state, target_epoch, assigned, {})
