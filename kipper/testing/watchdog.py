"""A per-test watchdog that needs no GIL: a test that hangs ends its process with every
thread's stack, instead of a CI job that stands still until it is killed.

pytest-timeout's timer is a Python thread (or a signal handler, which also runs Python), so
a test stuck in C code that holds the GIL (a client library waiting on a socket) stops it
too. ``faulthandler.dump_traceback_later`` is a C thread: it writes the stacks and ends the
process without the GIL. It is armed for each test (setup, call and teardown) at the
test's limit: pytest-timeout's timeout plus a margin (``kafka_watchdog = timeout``), or a
number of seconds.

Where the stacks go: under pytest-xdist each worker writes them to a file of its own, and
the controller puts them in the report of the test that crashed the worker; in a single
process they go to the terminal's stderr (not pytest's capture, which dies with the
process).
"""

from __future__ import annotations

import faulthandler
import os
import sys
import tempfile
from pathlib import Path

DIR_VARIABLE = "PYTEST_KIPPER_WATCHDOG_DIR"  # (not KIPPER_*: those are broker settings)


def parse_setting(value: str) -> float | str | None:
    """``off`` (or empty), ``timeout``, or a number of seconds."""
    text = (value or "").strip().lower()
    if text in ("", "off", "0", "false", "no"):
        return None
    if text == "timeout":
        return "timeout"
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(f"kafka_watchdog must be off, timeout or a number of seconds, not {value!r}") from None
    if seconds <= 0:
        raise ValueError(f"kafka_watchdog seconds must be positive, not {value!r}")
    return seconds


def pytest_timeout_of(item) -> float | None:
    """The test's pytest-timeout limit, if pytest-timeout is installed and sets one."""
    try:
        import pytest_timeout
        settings = pytest_timeout._get_item_settings(item)
    except (ImportError, AttributeError, TypeError):
        marker = item.get_closest_marker("timeout")
        if marker is not None and marker.args:
            return float(marker.args[0])
        try:
            return float(item.config.getini("timeout") or 0) or None
        except ValueError:
            return None
    return settings.timeout or None


class Watchdog:
    def __init__(self, config, setting: float | str, margin: float):
        self.setting = setting
        self.margin = margin
        # (from the config, not the environment: a suite run by a test inside an xdist worker
        # inherits PYTEST_XDIST_WORKER without being one)
        self.worker = getattr(config, "workerinput", {}).get("workerid")
        if self.worker is not None:
            folder = Path(os.environ.get(DIR_VARIABLE) or tempfile.gettempdir())
            self.out = open(folder / f"{self.worker}.txt", "w")
        else:
            self.out = os.fdopen(os.dup(_terminal_stderr(config)), "w")

    def limit(self, item) -> float | None:
        if self.setting == "timeout":
            timeout = pytest_timeout_of(item)
            return None if timeout is None else timeout + self.margin
        return float(self.setting)

    def arm(self, item) -> None:
        seconds = self.limit(item)
        if seconds is None:
            return
        if self.worker is not None:  # (on a terminal, faulthandler's own "Timeout" line says it)
            self.out.write(f"kipper watchdog: {item.nodeid} ran over {seconds:g} s (a hang): the stacks of "
                           f"every thread follow, and the worker ends\n")
            self.out.flush()
        faulthandler.dump_traceback_later(seconds, exit=True, file=self.out)

    def disarm(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        if self.worker is not None:  # only a hang's stacks stay in the file
            self.out.seek(0)
            self.out.truncate()


def _terminal_stderr(config) -> int:
    """The stderr pytest found at start, before its capture took file descriptor 2."""
    capman = config.pluginmanager.getplugin("capturemanager")
    err = getattr(getattr(capman, "_global_capturing", None), "err", None)
    saved = getattr(err, "targetfd_save", None)
    return saved if isinstance(saved, int) else sys.__stderr__.fileno()


def controller_dir() -> str:
    """A fresh folder for the workers of this run to write their stacks to, set before they
    start (a run inside another run's worker gets its own, not the outer run's)."""
    folder = os.environ[DIR_VARIABLE] = tempfile.mkdtemp(prefix="kipper-watchdog-")
    return folder


def stacks_of(worker_id: str) -> str:
    """What a crashed worker's watchdog wrote, if anything."""
    folder = os.environ.get(DIR_VARIABLE)
    if not folder:
        return ""
    path = Path(folder) / f"{worker_id}.txt"
    return path.read_text(errors="replace") if path.exists() else ""
