"""The sticky task assignor of streams groups (Kafka's StickyTaskAssignor, named "sticky").

Tasks are spread over processes (a Kafka Streams instance, which may run several
members, one per stream thread) and then over the members of a process, by load.
Active tasks first: each goes back to the member that runs it now while that member
is under its share (tasks / members, rounded up), then to a member that holds it as
a standby, then to the least loaded process in subtopology order. Standby tasks
(``num.standby.replicas`` per stateful task) never land on a process that already
has the task; they prefer the previous active owner, then previous standbys (ranked
by how caught up their state is), then the least loaded process. The assignor gives
out no warm-up tasks: in Kafka 4.4 the refinement that would add them hands the
target through unchanged. Ties that Kafka breaks by hash order are broken here by
member and process order, so the spread is the same and the names may differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Task = tuple[str, int]


@dataclass(frozen=True)
class MemberSpec:
    process_id: str
    active: frozenset = frozenset()   # (subtopology, partition) it runs now
    standby: frozenset = frozenset()
    task_offsets: dict = field(default_factory=dict)  # task -> reported changelog offset sum


@dataclass
class _Process:
    process_id: str
    order: int
    counts: dict[str, int] = field(default_factory=dict)   # member -> tasks of any kind
    active: dict[str, set] = field(default_factory=dict)
    standby: dict[str, set] = field(default_factory=dict)
    tasks: set = field(default_factory=set)
    task_count: int = 0

    @property
    def load(self) -> float:
        return self.task_count / len(self.counts) if self.counts else -1.0

    def add(self, member_id: str, task: Task, active: bool) -> int:
        self.task_count += 1
        self.tasks.add(task)
        (self.active if active else self.standby).setdefault(member_id, set()).add(task)
        self.counts[member_id] += 1
        return self.counts[member_id]

    def add_to_least_loaded(self, task: Task, active: bool) -> int:
        if not self.counts:
            return -1
        member = min(self.counts, key=lambda m: (self.counts[m], m))
        return self.add(member, task, active)


class _State:
    def __init__(self, members: dict[str, MemberSpec], subtopologies, standby_replicas: int):
        self.standby_replicas = standby_replicas
        self.total_active = sum(n for _, n, _ in subtopologies)
        self.total = self.total_active + sum(n * standby_replicas for _, n, stateful in subtopologies if stateful)
        self.with_active_capacity = self.with_capacity = len(members)
        self.active_per_member = _per_member(self.total_active, len(members))
        self.tasks_per_member = _per_member(self.total, len(members))
        self.processes: dict[str, _Process] = {}
        self.prev_active: dict[Task, tuple[str, str]] = {}  # task -> (process, member)
        candidates: dict[Task, list] = {}
        for member_id in sorted(members):
            spec = members[member_id]
            proc = self.processes.setdefault(spec.process_id, _Process(spec.process_id, len(self.processes)))
            proc.counts[member_id] = 0
            for task in sorted(spec.active):
                self.prev_active[task] = (spec.process_id, member_id)
            for task in sorted(spec.standby):
                candidates.setdefault(task, []).append((0, -spec.task_offsets.get(task, 0), spec.process_id, member_id))
            for task, offset in sorted(spec.task_offsets.items()):
                if task not in spec.standby:
                    candidates.setdefault(task, []).append((1, -offset, spec.process_id, member_id))
        # a stable sort, as Kafka's: previous standbys first, then the most caught up
        self.prev_standby = {task: [(p, m) for _, _, p, m in sorted(c, key=lambda c: (c[0], c[1]))]
                             for task, c in candidates.items()}

    def took(self, count: int, active: bool) -> None:
        """Kafka's maybeUpdateActiveTasksPerMember / maybeUpdateTotalTasksPerMember: a member
        that reached its share leaves the others a smaller one."""
        if active and count == self.active_per_member:
            self.with_active_capacity -= 1
            self.total_active -= count
            self.active_per_member = _per_member(self.total_active, self.with_active_capacity)
        if count == self.tasks_per_member:
            self.with_capacity -= 1
            self.total -= count
            self.tasks_per_member = _per_member(self.total, self.with_capacity)

    def least_loaded(self, excluded=()) -> _Process | None:
        choices = [p for pid, p in self.processes.items() if pid not in excluded]
        return min(choices, key=lambda p: (p.load, p.order)) if choices else None

    def prev_with_least_load(self, members, task: Task | None) -> tuple[str, str] | None:
        chosen, chosen_process_load, chosen_member_load = None, float("inf"), float("inf")
        for process_id, member_id in members or ():
            proc = self.processes[process_id]
            if task is not None and task in proc.tasks:
                continue  # a process never holds a task twice
            load, member_load = proc.load, proc.counts[member_id]
            if chosen is None or (load < chosen_process_load and member_load < chosen_member_load):
                chosen, chosen_process_load, chosen_member_load = (process_id, member_id), load, member_load
        return chosen


def _per_member(tasks: int, members: int) -> int:
    return 0 if members == 0 else -(-tasks // members)


def assign(members: dict[str, MemberSpec], subtopologies, standby_replicas: int) -> dict[str, tuple]:
    """``subtopologies``: (id, number of tasks, stateful) in id order. Returns member id ->
    (active tasks, standby tasks), each a dict of subtopology -> frozenset of partitions."""
    state = _State(members, subtopologies, standby_replicas)
    if members:
        _assign_active(state, [(sid, p) for sid, n, _ in subtopologies for p in range(n)])
        if standby_replicas > 0:
            _assign_standby(state, [(sid, p) for sid, n, stateful in subtopologies if stateful for p in range(n)])
    out = {}
    for member_id in members:
        proc = state.processes[members[member_id].process_id]
        out[member_id] = (_compact(proc.active.get(member_id, ())), _compact(proc.standby.get(member_id, ())))
    return out


def _compact(tasks) -> dict:
    out: dict[str, set] = {}
    for sid, p in tasks:
        out.setdefault(sid, set()).add(p)
    return {sid: frozenset(ps) for sid, ps in out.items()}


def _assign_active(state: _State, tasks: list[Task]) -> None:
    left = []
    for task in sorted(tasks, key=lambda t: (t[1], t[0])):  # partition first: range-like pairs stay
        prev = state.prev_active.get(task)
        if prev is not None and state.processes[prev[0]].counts[prev[1]] < state.active_per_member:
            state.took(state.processes[prev[0]].add(prev[1], task, True), True)
        else:
            left.append(task)
    rest = []
    for task in left:
        prev = state.prev_with_least_load(state.prev_standby.get(task), None)
        if prev is not None and state.processes[prev[0]].counts[prev[1]] < state.active_per_member:
            state.took(state.processes[prev[0]].add(prev[1], task, True), True)
        else:
            rest.append(task)
    for task in sorted(rest):  # by subtopology: a first assignment is range-like
        state.took(state.least_loaded().add_to_least_loaded(task, True), True)


def _assign_standby(state: _State, tasks: list[Task]) -> None:
    to_least_loaded: list[tuple[Task, int]] = []
    for task in sorted(tasks, key=lambda t: (t[1], t[0]), reverse=True):
        for i in range(state.standby_replicas):
            prev = state.prev_active.get(task)
            if prev is not None:
                proc = state.processes[prev[0]]
                if task not in proc.tasks and proc.counts[prev[1]] < state.tasks_per_member:
                    state.took(proc.add(prev[1], task, False), False)
                    continue
            prev = state.prev_with_least_load(state.prev_standby.get(task), task)
            if prev is not None and state.processes[prev[0]].counts[prev[1]] < state.tasks_per_member:
                state.took(state.processes[prev[0]].add(prev[1], task, False), False)
                continue
            to_least_loaded.append((task, state.standby_replicas - i))
            break
    for task, remaining in sorted(to_least_loaded, key=lambda t: t[0], reverse=True):
        for _ in range(remaining):
            if not _standby_to_least_loaded(state, task):
                break  # Kafka logs that there is not enough capacity for the standbys asked for


def _standby_to_least_loaded(state: _State, task: Task) -> bool:
    tried: set[str] = set()
    while (proc := state.least_loaded(tried)) is not None:
        if task not in proc.tasks:
            count = proc.add_to_least_loaded(task, False)
            if count != -1:
                state.took(count, False)
                return True
            return False
        tried.add(proc.process_id)
    return False
