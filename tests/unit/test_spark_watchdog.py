"""The decision that stops a Spark job which cannot run (spark_jobs/watchdog.py):
a pure function of what Spark's status store says, so no cluster is needed."""

from __future__ import annotations

from kipper.spark_jobs.watchdog import LOST_SAMPLES, NO_RESOURCES, Executor, Snapshot, stall_cause

BIND = ("Unable to create executor due to bind(..) failed with error(-98): Address already in use: "
        "Service 'org.apache.spark.network.netty.NettyBlockTransferService' failed after 0 retries")


def test_a_running_job_is_left_alone():
    snap = Snapshot((Executor("0", True), Executor("1", True)), task_started=True)
    assert stall_cause(snap, 3600, 60, 0) is None


def test_no_executor_within_the_bound_names_sparks_own_warning():
    snap = Snapshot((), task_started=False)
    assert stall_cause(snap, 59.9, 60, 0) is None
    assert stall_cause(snap, 60, 60, 0) == f"no Spark task started within 60 s (no executor registered; Spark: {NO_RESOURCES})"


def test_executors_registered_but_no_task_started_within_the_bound():
    snap = Snapshot((Executor("0", True), Executor("1", False, "Command exited with code 1")), task_started=False)
    cause = stall_cause(snap, 61, 60, 0)
    assert cause.startswith("no Spark task started within 60 s (1 executor(s) registered, none ran a task; "
                            "1 executor(s) lost; executor 1: Command exited with code 1")


def test_every_executor_lost_for_two_samples_stops_at_once_with_the_last_reason():
    lost = Snapshot((Executor("0", False, "first"), Executor("1", False, BIND)), task_started=False)
    assert stall_cause(lost, 5, 60, LOST_SAMPLES - 1) is None  # one sample may fall between two executors
    assert stall_cause(lost, 5, 60, LOST_SAMPLES) == f"Spark lost every executor (2 executor(s) lost; executor 1: {BIND})"
    # also once tasks had started: their retries would send the same records again
    ran = Snapshot(lost.executors, task_started=True)
    assert stall_cause(ran, 500, 60, LOST_SAMPLES).startswith("Spark lost every executor")


def test_a_long_reason_is_cut_to_one_readable_line():
    snap = Snapshot((Executor("7", False, "x\n" * 1000),), task_started=False)
    cause = stall_cause(snap, 1, 60, LOST_SAMPLES)
    assert "\n" not in cause and cause.endswith("...)") and len(cause) < 500
