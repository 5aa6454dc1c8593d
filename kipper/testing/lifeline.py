"""Children that die with the test process that started them.

A test run that is killed (the watchdog's exit, a CI job's time limit, SIGKILL) runs no fixture
teardown, so a Kafka JVM, a Spark cluster or a ``kipper broker`` it started would live on,
holding ports and memory, until the machine restarts. ``tied(command)`` wraps a command so that,
on Linux, the kernel sends it SIGKILL when the process that started it ends
(``prctl(PR_SET_PDEATHSIG)``, kept across the ``exec`` of the real command, so the ``Popen`` is
the real process and signals sent to it reach it).

The kernel ties the child to the *thread* that started it, not to its process: only a command
started from the main thread is tied; from another thread (a pool that starts several JVMs at
once) ``tied`` gives the command back as it is. Elsewhere than Linux too.

The wrapper is a few lines run by ``python -S -c`` (about 20 ms): it sets the signal, leaves at
once if its parent is already gone, then runs the command in its own place.
"""

from __future__ import annotations

import os
import sys
import threading

WRAPPER = """\
import ctypes, os, signal, sys
parent, command = int(sys.argv[1]), sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(1, signal.SIGKILL) != 0:  # PR_SET_PDEATHSIG
    print('lifeline: prctl failed:', os.strerror(ctypes.get_errno()), file=sys.stderr)
if os.getppid() != parent:  # the parent ended before the signal was set
    sys.exit(1)
try:
    os.execvp(command[0], command)
except OSError as exc:
    print('lifeline: cannot run', command[0], exc, file=sys.stderr)
    sys.exit(127)
"""


def tied(command: list[str]) -> list[str]:
    """``command`` wrapped so that it is killed when this process ends (see the module's text)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return list(command)
    return [sys.executable, "-S", "-c", WRAPPER, str(os.getpid()), *command]
