"""Stops a Spark job that cannot run, instead of letting it wait forever.

Two signs, read from Spark's own status store once a second: no task has
started within a bound (no executor, or none able to take the work), or every
executor the job had is gone (Spark relaunches executors that die on start and
requeues their tasks without counting a failure, so such a job never ends by
itself). The job group is cancelled and the cause, in Spark's words, is kept
for one error line. ``stall_cause`` is the decision, a pure function of
snapshots; ``Watchdog`` is the thread that feeds it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

# a task attempt counts as started once it has been running this long: attempts on an
# executor that dies while starting are launched and lost within a second or so
RUNNING_S = 2.0
LOST_SAMPLES = 2          # consecutive samples with every executor gone
NO_RESOURCES = ("Initial job has not accepted any resources; check your cluster UI to ensure "
                "that workers are registered and have sufficient resources")  # Spark's own warning
REASON_CHARS = 400


@dataclass(frozen=True)
class Executor:
    id: str
    active: bool
    remove_reason: str | None = None


@dataclass(frozen=True)
class Snapshot:
    executors: tuple[Executor, ...]   # the driver left out
    task_started: bool                # a task succeeded, or has run for RUNNING_S


def _reason(executors) -> str:
    lost = [e for e in executors if not e.active]
    last = next((e for e in reversed(lost) if e.remove_reason), None)
    text = f"{len(lost)} executor(s) lost"
    if last is not None:
        reason = " ".join(last.remove_reason.split())
        if len(reason) > REASON_CHARS:
            reason = reason[:REASON_CHARS] + "..."
        text += f"; executor {last.id}: {reason}"
    return text


def stall_cause(snap: Snapshot, waited_s: float, first_task_timeout_s: float, lost_streak: int) -> str | None:
    """Why the job should be stopped now, or None. ``lost_streak`` counts the
    consecutive samples (this one included) in which every executor was gone."""
    if snap.executors and lost_streak >= LOST_SAMPLES:
        return f"Spark lost every executor ({_reason(snap.executors)})"
    if not snap.task_started and waited_s >= first_task_timeout_s:
        if not snap.executors:
            detail = f"no executor registered; Spark: {NO_RESOURCES}"
        elif any(e.active for e in snap.executors):
            active = sum(e.active for e in snap.executors)
            detail = f"{active} executor(s) registered, none ran a task"
            if any(not e.active for e in snap.executors):
                detail += f"; {_reason(snap.executors)}"
        else:
            detail = _reason(snap.executors)
        return f"no Spark task started within {first_task_timeout_s:g} s ({detail})"
    return None


def snapshot(sc, now_ms: float) -> Snapshot:
    """What Spark's status store says now (the UI's data; it exists with the UI off)."""
    store = sc._jsc.sc().statusStore()
    seq = store.executorList(False)
    executors = []
    for i in range(seq.size()):
        e = seq.apply(i)
        if e.id() == "driver":
            continue
        reason = e.removeReason()
        executors.append(Executor(e.id(), bool(e.isActive()), reason.get() if reason.isDefined() else None))
    started = False
    for stage in sc.statusTracker().getActiveStageIds():
        attempt = store.lastStageAttempt(stage).attemptId()
        tasks = store.taskList(stage, attempt, 10_000)
        for i in range(tasks.size()):
            t = tasks.apply(i)
            status = t.status()
            if status == "SUCCESS" or (status == "RUNNING"
                                       and now_ms - t.launchTime().getTime() >= RUNNING_S * 1000):
                started = True
                break
        if started:
            break
    return Snapshot(tuple(executors), started)


class Watchdog(threading.Thread):
    """Watches the jobs of ``group`` (set with sc.setJobGroup on the submitting
    thread) and cancels them when ``stall_cause`` says so; ``cause`` keeps why."""

    def __init__(self, sc, group: str, first_task_timeout_s: float, interval_s: float = 1.0):
        super().__init__(name="spark-watchdog", daemon=True)
        self.sc = sc
        self.group = group
        self.first_task_timeout_s = first_task_timeout_s
        self.interval_s = interval_s
        self.cause: str | None = None
        self.done = threading.Event()

    def run(self) -> None:
        started = time.monotonic()
        lost_streak = 0
        seen_task = False
        while not self.done.wait(self.interval_s):
            try:
                snap = snapshot(self.sc, time.time() * 1000)
            except Exception:  # the context is stopping
                return
            seen_task = seen_task or snap.task_started
            snap = Snapshot(snap.executors, seen_task)
            lost_streak = lost_streak + 1 if snap.executors and not any(e.active for e in snap.executors) else 0
            cause = stall_cause(snap, time.monotonic() - started, self.first_task_timeout_s, lost_streak)
            if cause is not None:
                self.cause = cause
                try:
                    self.sc.cancelJobGroup(self.group)
                except Exception:
                    pass
                return

    def __enter__(self) -> "Watchdog":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
