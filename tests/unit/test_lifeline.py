"""kipper.testing.lifeline: a child started through ``tied`` dies when the process that started
it is SIGKILLed (the watchdog's exit or a CI time limit runs no teardown), and an untied one
lives on, so the test can fail. Real processes, Linux only."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kipper.testing.lifeline import tied

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

PARENT = """
import subprocess, sys, time
from kipper.testing.lifeline import tied
command = ['sleep', '120']
child = subprocess.Popen(tied(command) if sys.argv[1] == 'tied' else command)
print(child.pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _child_after_parent_killed(mode: str, wait: float) -> bool:
    """Whether the child still runs ``wait`` seconds (at most) after its parent's SIGKILL."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, mode], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    deadline = time.monotonic() + 10
    while not _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + wait
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(child)
    if alive:
        os.kill(child, 9)
    return alive


def test_a_tied_child_dies_with_the_process_that_started_it():
    assert not _child_after_parent_killed("tied", wait=10)


def test_an_untied_child_outlives_it():
    assert _child_after_parent_killed("untied", wait=1)


def test_the_real_command_is_the_process_so_its_signals_reach_it():
    proc = subprocess.Popen(tied([sys.executable, "-c", "import time; time.sleep(60)"]))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{proc.pid}/cmdline") as f:
            if "lifeline" not in f.read():
                break
        time.sleep(0.02)
    proc.kill()
    assert proc.wait(timeout=10) == -9


def test_a_command_started_from_another_thread_is_left_as_it_is():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(tied, ["sleep", "1"]).result() == ["sleep", "1"]
    assert tied(["sleep", "1"])[-2:] == ["sleep", "1"] and len(tied(["sleep", "1"])) == 7
