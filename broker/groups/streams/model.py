"""What a streams group (KIP-1071) is made of: members, epochs, the topology, the
target assignment and which process runs each task.

A task is (subtopology id, partition). A member holds active tasks, each with the
epoch in which it was given it (offset commits with an older member epoch are
checked against it), and standby and warm-up tasks. The group state is derived:
Empty without members, NotReady until the topology of its current epoch is
validated against the topics, Assigning while the group epoch is ahead of the
target's, Reconciling while a member has not reached the target, Stable otherwise.
State changes only through the records of broker/groups/streams/records.py, which
the coordinator writes and replays, as Kafka's GroupMetadataManager does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

EMPTY, NOT_READY, ASSIGNING, RECONCILING, STABLE, DEAD = (
    "Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead")
JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH = 0, -1, -2  # KIP-1071 member epochs (as KIP-848)

# member states as Kafka stores them (StreamsGroupCurrentMemberAssignmentValue.State)
MEMBER_STABLE, UNREVOKED_TASKS, UNRELEASED_TASKS, MEMBER_UNKNOWN = 1, 2, 3, 127

TaskSet = dict  # subtopology id -> frozenset of partitions
TaskEpochs = dict  # subtopology id -> {partition: assignment epoch}


def task_set(pairs) -> TaskSet:
    """``pairs``: (subtopology, partition); empty subtopologies are left out."""
    out: dict[str, set[int]] = {}
    for sid, p in pairs:
        out.setdefault(sid, set()).add(p)
    return {sid: frozenset(ps) for sid, ps in out.items()}


def pairs(tasks) -> set[tuple[str, int]]:
    """The (subtopology, partition) pairs of a TaskSet or TaskEpochs."""
    return {(sid, p) for sid, ps in tasks.items() for p in ps}


@dataclass(frozen=True)
class Target:
    """A target assignment (Kafka's TasksTuple): no epochs."""

    active: TaskSet = field(default_factory=dict)
    standby: TaskSet = field(default_factory=dict)
    warmup: TaskSet = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)


@dataclass(frozen=True)
class Assigned:
    """What a member holds or must give up (Kafka's TasksTupleWithEpochs)."""

    active: TaskEpochs = field(default_factory=dict)
    standby: TaskSet = field(default_factory=dict)
    warmup: TaskSet = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)

    def as_target(self) -> Target:
        return Target({sid: frozenset(ps) for sid, ps in self.active.items()}, self.standby, self.warmup)

    def holds_any(self, other: "Assigned") -> bool:
        """Does this (what a member reports it owns) still hold a task of ``other``?"""
        return bool(pairs(self.active) & pairs(other.active) or pairs(self.standby) & pairs(other.standby)
                    or pairs(self.warmup) & pairs(other.warmup))

    def epochs_reset(self) -> "Assigned":
        return replace(self, active={sid: {p: 0 for p in ps} for sid, ps in self.active.items()})


NOTHING = Assigned()


@dataclass(frozen=True)
class StreamsMember:
    """A member as its records describe it (metadata + current assignment)."""

    member_id: str
    member_epoch: int = 0
    previous_epoch: int = 0
    state: int = MEMBER_STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: tuple[str, int] | None = None
    client_tags: tuple[tuple[str, str], ...] = ()
    assigned: Assigned = NOTHING
    pending_revocation: Assigned = NOTHING

    def reconciled_to(self, epoch: int) -> bool:
        return self.state == MEMBER_STABLE and self.member_epoch == epoch

    def metadata(self) -> tuple:
        """What the member metadata record holds; a change of it is written."""
        return (self.instance_id, self.rack_id, self.client_id, self.client_host, self.rebalance_timeout_ms,
                self.topology_epoch, self.process_id, self.user_endpoint, self.client_tags)

    def epoch_relevant(self) -> tuple:
        """What bumps the group epoch when a static member rejoins (KIP-1071): its topology
        epoch, rack, client tags and process."""
        return (self.topology_epoch, self.rack_id, self.client_tags, self.process_id)


@dataclass
class StreamsGroup:
    group_id: str
    group_epoch: int = 1  # Kafka starts a streams group at epoch 1 (and its target at 1)
    metadata_hash: int = 0
    validated_topology_epoch: int = -1
    last_assignment_configs: dict[str, str] = field(default_factory=dict)
    assignment_epoch: int = 1
    assignment_timestamp: int = 0
    topology: object = None                 # topology.Topology, from the topology record
    members: dict[str, StreamsMember] = field(default_factory=dict)
    target: dict[str, Target] = field(default_factory=dict)  # member id -> target assignment
    # --- derived from the records, kept in memory only -----------------------------------------
    static_members: dict[str, str] = field(default_factory=dict)   # instance id -> member id
    active_owner: dict[tuple[str, int], str] = field(default_factory=dict)  # task -> process id
    standby_owners: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    warmup_owners: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    configured: object = None               # topology.Configured, cached until the topics change
    metadata_refresh_deadline: int = 0      # when the topics are looked at again (Kafka: 10 s)
    metadata_refresh_epoch: int = 0
    initial_delay_deadline: int | None = None  # group.streams.initial.rebalance.delay.ms
    shutdown_requested_by: str | None = None
    endpoint_information_epoch: int = 0
    task_offsets: dict[str, tuple[dict, dict]] = field(default_factory=dict)  # member -> (offsets, end offsets)
    session_deadlines: dict[str, int] = field(default_factory=dict)
    rebalance_deadlines: dict[str, tuple[int, int]] = field(default_factory=dict)  # member -> (deadline, epoch)

    @property
    def state(self) -> str:
        if not self.members:
            return EMPTY
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return ASSIGNING
        if any(not m.reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return RECONCILING
        return STABLE

    def static_member(self, instance_id: str | None) -> StreamsMember | None:
        member_id = self.static_members.get(instance_id) if instance_id is not None else None
        return self.members.get(member_id) if member_id is not None else None

    # --- the members' tasks by process (Kafka's currentActiveTaskToProcessId and friends) -------

    def put_member(self, member: StreamsMember) -> None:
        old = self.members.get(member.member_id)
        if old is not None:
            self._unindex(old)
            if old.instance_id is not None and self.static_members.get(old.instance_id) == old.member_id:
                del self.static_members[old.instance_id]
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        self._index(member)

    def drop_member(self, member_id: str) -> None:
        old = self.members.pop(member_id, None)
        if old is None:
            return
        self._unindex(old)
        if old.instance_id is not None and self.static_members.get(old.instance_id) == member_id:
            del self.static_members[old.instance_id]
        self.task_offsets.pop(member_id, None)
        self.session_deadlines.pop(member_id, None)
        self.rebalance_deadlines.pop(member_id, None)
        if not self.members:
            self.shutdown_requested_by = None

    def _index(self, m: StreamsMember) -> None:
        for tasks in (m.assigned, m.pending_revocation):
            for task in pairs(tasks.active):
                self.active_owner[task] = m.process_id
            for task in pairs(tasks.standby):
                self.standby_owners.setdefault(task, set()).add(m.process_id)
            for task in pairs(tasks.warmup):
                self.warmup_owners.setdefault(task, set()).add(m.process_id)

    def _unindex(self, m: StreamsMember) -> None:
        for tasks in (m.assigned, m.pending_revocation):
            for task in pairs(tasks.active):
                if self.active_owner.get(task) == m.process_id:
                    del self.active_owner[task]
            for owners, held in ((self.standby_owners, tasks.standby), (self.warmup_owners, tasks.warmup)):
                for task in pairs(held):
                    procs = owners.get(task)
                    if procs is not None:
                        procs.discard(m.process_id)
                        if not procs:
                            del owners[task]
