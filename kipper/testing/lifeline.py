"""Children that die with the test process that started them.

A test run that is killed (the watchdog's exit, a CI job's time limit, SIGKILL) runs no fixture
teardown, so a Kafka JVM or a Spark cluster it started would live on, holding ports and memory,
until the machine restarts. ``tied(command)`` wraps a command so that, on Linux, the kernel sends
it SIGKILL when the process that started it ends (``prctl(PR_SET_PDEATHSIG)``, kept across the
``exec`` of the real command, so the ``Popen`` is the real process and signals sent to it reach it).

The kernel ties the child to the *thread* that started it, not to its process: only a command
started from the main thread is tied; from another thread (a pool that starts several JVMs at
once) ``tied`` gives the command back as it is. Elsewhere than Linux too.

    python -m kipper.testing.lifeline PARENT_PID COMMAND...

is the wrapper: it sets the signal, leaves at once if PARENT_PID is already gone, then runs COMMAND
in its own place.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1


def tied(command: list[str]) -> list[str]:
    """``command`` wrapped so that it is killed when this process ends (see the module's text)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return list(command)
    return [sys.executable, "-m", "kipper.testing.lifeline", str(os.getpid()), *command]


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: python -m kipper.testing.lifeline PARENT_PID COMMAND...", file=sys.stderr)
        return 2
    parent, command = int(argv[0]), argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        print(f"lifeline: prctl failed: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
    if os.getppid() != parent:  # the parent ended before the signal was set
        return 1
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"lifeline: cannot run {command[0]}: {exc}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
