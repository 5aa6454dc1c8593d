"""Moving a streams-group member toward its target (Kafka's streams CurrentAssignmentBuilder).

```
STABLE ──new target, tasks to give up──> UNREVOKED_TASKS ──member reports them gone──┐
  ^  └──new target, a task still held elsewhere──> UNRELEASED_TASKS                   │
  └──────────── everything it should have is free, nothing to give up <────────────────┘
```

An active task has one owner in the group: it is given only once its previous owner
has reported it revoked. A process never runs a task twice, so a standby or warm-up
task waits for another member of the same process to let the task go. A member's own
task changes role in place: an active task demoted to a standby keeps its state (the
standby is granted at once while the active one is revoked), and a standby promoted to
active stays until the active task is granted. A member that must revoke keeps its
epoch; tasks it gains carry the epoch of the target they come from.
"""

from __future__ import annotations

from dataclasses import replace

from kipper.broker.groups.streams.model import (
    MEMBER_STABLE, MEMBER_UNKNOWN, NOTHING, UNRELEASED_TASKS, UNREVOKED_TASKS, Assigned, StreamsMember, Target,
)


def _add(tasks: dict, sid: str, p: int, value=None) -> None:
    if value is None:
        tasks.setdefault(sid, set()).add(p)
    else:
        tasks.setdefault(sid, {})[p] = value


def _drop(tasks: dict, sid: str, p: int) -> None:
    held = tasks.get(sid)
    if held is not None and p in held:
        if isinstance(held, dict):
            del held[p]
        else:
            held.discard(p)
        if not held:
            del tasks[sid]


def _has(tasks: dict, sid: str, p: int) -> bool:
    return p in tasks.get(sid, ())


def _frozen(tasks: dict) -> dict:
    return {sid: frozenset(ps) for sid, ps in tasks.items() if ps}


class Reconciler:
    """One member against its target. ``active_process(task)`` is the process running an
    active task (None: nobody); ``standby_processes(task)`` / ``warmup_processes(task)`` the
    processes holding it as a standby / warm-up."""

    def __init__(self, member: StreamsMember, target_epoch: int, target: Target, *, active_process,
                 standby_processes, warmup_processes, owned: Assigned | None):
        self.member = member
        self.target_epoch = target_epoch
        self.target = target
        self.active_process = active_process
        self.standby_processes = standby_processes
        self.warmup_processes = warmup_processes
        self.owned = owned  # None: the heartbeat did not say what the member owns

    def next(self) -> StreamsMember:
        m = self.member
        if m.state == MEMBER_STABLE:
            return self._compute(m.member_epoch) if m.member_epoch != self.target_epoch else m
        if m.state == UNREVOKED_TASKS:
            if self._not_released(m.pending_revocation):
                return m
            return self._compute(m.member_epoch + 1)
        if m.state == UNRELEASED_TASKS:
            return self._compute(m.member_epoch)
        # a state this broker does not know (MEMBER_UNKNOWN): the coordinator fenced the member
        # unless it reported owning nothing; it starts again from the target
        return self._compute(self.target_epoch)

    def _not_released(self, pending: Assigned) -> bool:
        """Revocation is acknowledged: only a heartbeat that lists what the member owns,
        without the tasks, proves they are gone."""
        return self.owned is None or self.owned.holds_any(pending)

    # --- which tasks may be granted ------------------------------------------------------------

    def _mine_elsewhere(self, processes, mine: dict, sid: str, p: int) -> bool:
        """Held in that role on this member's process by another of its members."""
        return self.member.process_id in processes((sid, p)) and not _has(mine, sid, p)

    def _active_unreleased(self, sid: str, p: int) -> bool:
        a = self.member.assigned
        return (self.active_process((sid, p)) is not None
                or self._mine_elsewhere(self.standby_processes, a.standby, sid, p)
                or self._mine_elsewhere(self.warmup_processes, a.warmup, sid, p))

    def _standby_unreleased(self, sid: str, p: int) -> bool:
        a, proc = self.member.assigned, self.member.process_id
        return ((self.active_process((sid, p)) == proc and not _has(a.active, sid, p))
                or proc in self.standby_processes((sid, p))
                or self._mine_elsewhere(self.warmup_processes, a.warmup, sid, p))

    def _warmup_unreleased(self, sid: str, p: int) -> bool:
        a, proc = self.member.assigned, self.member.process_id
        return (self.active_process((sid, p)) == proc
                or self._mine_elsewhere(self.standby_processes, a.standby, sid, p)
                or proc in self.warmup_processes((sid, p)))

    @staticmethod
    def _difference(current: dict, target: dict, unreleased, epoch: int | None):
        """(kept, to revoke, to grant, some unreleased); ``epoch``: active tasks carry epochs."""
        kept: dict = {}
        revoke: dict = {}
        grant: dict = {}
        waiting = False
        for sid in set(current) | set(target):
            have, want = current.get(sid, ()), target.get(sid, frozenset())
            for p in have:
                value = have[p] if epoch is not None else None
                _add(kept if p in want else revoke, sid, p, value)
            for p in want:
                if p in have:
                    continue
                if unreleased(sid, p):
                    waiting = True
                else:
                    _add(grant, sid, p, epoch)
        return kept, revoke, grant, waiting

    def _compute(self, member_epoch: int) -> StreamsMember:
        a, t = self.member.assigned, self.target
        act_kept, act_revoke, act_grant, w1 = self._difference(a.active, t.active, self._active_unreleased,
                                                               self.target_epoch)
        sb_kept, sb_revoke, sb_grant, w2 = self._difference(a.standby, t.standby, self._standby_unreleased, None)
        wu_kept, wu_revoke, wu_grant, w3 = self._difference(a.warmup, t.warmup, self._warmup_unreleased, None)
        # an active task demoted to a standby: the standby is granted now, the active one revoked
        for sid, ps in a.active.items():
            for p in ps:
                if _has(sb_grant, sid, p):
                    _drop(sb_grant, sid, p)
                    _add(sb_kept, sid, p)
        # a standby turned warm-up, or back: no revocation needed, the task stays
        for held, revoke, grant, kept in ((a.standby, sb_revoke, wu_grant, wu_kept),
                                          (a.warmup, wu_revoke, sb_grant, sb_kept)):
            for sid, ps in held.items():
                for p in ps:
                    if _has(grant, sid, p):
                        _drop(grant, sid, p)
                        _add(kept, sid, p)
                        _drop(revoke, sid, p)
        # a standby or warm-up promoted to active is not revoked; it stays until the active is granted
        for held, revoke in ((a.standby, sb_revoke), (a.warmup, wu_revoke)):
            for sid, ps in held.items():
                for p in ps:
                    if p in t.active.get(sid, ()):
                        _drop(revoke, sid, p)
        pending = Assigned(act_revoke, _frozen(sb_revoke), _frozen(wu_revoke))
        revoking = not pending.is_empty() and self._not_released(pending)
        for held, kept in ((a.standby, sb_kept), (a.warmup, wu_kept)):
            for sid, ps in held.items():
                for p in ps:
                    promoted_now = not revoking and _has(act_grant, sid, p)
                    if p in t.active.get(sid, ()) and not promoted_now:
                        _add(kept, sid, p)
        kept_all = Assigned(act_kept, _frozen(sb_kept), _frozen(wu_kept))
        granting = Assigned(act_grant, _frozen(sb_grant), _frozen(wu_grant))
        unreleased = w1 or w2 or w3
        m = self.member
        if revoking:
            return self._moved(m, UNREVOKED_TASKS, member_epoch, kept_all, pending)
        if not granting.is_empty():
            return self._moved(m, UNRELEASED_TASKS if unreleased else MEMBER_STABLE, self.target_epoch,
                               _merge(kept_all, granting), NOTHING)
        return self._moved(m, UNRELEASED_TASKS if unreleased else MEMBER_STABLE, self.target_epoch,
                           kept_all, NOTHING)

    @staticmethod
    def _moved(m: StreamsMember, state: int, epoch: int, assigned: Assigned, pending: Assigned) -> StreamsMember:
        # Kafka's updateMemberEpoch: the previous epoch is the one the member had
        return replace(m, state=state, member_epoch=epoch, previous_epoch=m.member_epoch,
                       assigned=assigned, pending_revocation=pending)


def _merge(a: Assigned, b: Assigned) -> Assigned:
    active = {sid: dict(ps) for sid, ps in a.active.items()}
    for sid, ps in b.active.items():
        active.setdefault(sid, {}).update(ps)

    def union(x: dict, y: dict) -> dict:
        return {sid: frozenset(x.get(sid, ())) | frozenset(y.get(sid, ())) for sid in set(x) | set(y)}
    return Assigned(active, union(a.standby, b.standby), union(a.warmup, b.warmup))


__all__ = ["MEMBER_UNKNOWN", "Reconciler"]
