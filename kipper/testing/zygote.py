"""The zygote: one process per test process that has imported the broker and compiled its
schemas once, and forks a ready broker for each ``EmbeddedBroker`` a test starts.

A broker in its own process cannot be frozen by its test: a C client that waits on the
broker while it holds the GIL (confluent-kafka's close during a rebalance) would stop a
broker thread of the same process with it. Starting a Python process costs a few hundred
milliseconds of imports; forking one that has done them costs a few. While idle, the
zygote compiles the message schemas, so later forks answer their first requests without
compiling them. The test process
connects to the zygote's Unix socket; the zygote forks, and the child takes that
connection as its control socket (kipper/testing/child.py). Nothing of the test process is
inherited: the zygote was started from a clean interpreter, and it never runs a thread or
an event loop, so a fork of it is a sound copy.

The zygote ends when its stdin ends (the test process exited or closed it); each broker
ends when its control socket does. Where there is no ``os.fork`` (Windows), a broker is a
fresh ``python -m kipper.testing child`` that connects back over loopback instead.
"""

from __future__ import annotations

import atexit
import os
import random
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

FORKS = hasattr(os, "fork") and hasattr(socket, "AF_UNIX")


class Zygote:
    """The test process's handle on its zygote (one per process id, started on first use)."""

    _lock = threading.Lock()
    _shared: "Zygote | None" = None

    @classmethod
    def shared(cls) -> "Zygote":
        with cls._lock:
            z = cls._shared
            if z is None or z.owner != os.getpid() or not z.alive():
                z = cls._shared = cls()
                atexit.register(z.close)
            return z

    def __init__(self):
        self.owner = os.getpid()
        self.dir = tempfile.mkdtemp(prefix="kipper-zygote-")
        self.path = os.path.join(self.dir, "fork.sock")
        self.log = os.path.join(self.dir, "zygote.log")
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "kipper.testing", "zygote", self.path],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self._ready = False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout: float) -> None:
        if self._ready:
            return
        box: list = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        if not box or box[0].strip() != b"ready":
            text = Path(self.log).read_text(errors="replace")
            self.close()
            raise RuntimeError(f"kipper's broker zygote did not start within {timeout}s:\n{text}")
        self._ready = True

    def fork(self, timeout: float) -> socket.socket:
        """A connection to a new broker process: its control socket."""
        self.wait_ready(timeout)
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(timeout)
        conn.connect(self.path)
        return conn

    def close(self) -> None:
        proc = self.proc
        if proc.poll() is None:
            try:
                proc.stdin.close()
                proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def prestart() -> None:
    """Start this process's zygote now, without waiting for it: the first broker a test asks
    for is then a fork away (the pytest plugin calls it when a test uses a kipper fixture)."""
    if FORKS:
        Zygote.shared()


def launch(timeout: float) -> socket.socket:
    """The control socket of a new broker process: forked by the zygote, or spawned."""
    if FORKS:
        return Zygote.shared().fork(timeout)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(timeout)
    port = listener.getsockname()[1]
    subprocess.Popen([sys.executable, "-m", "kipper.testing", "child", str(port)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        conn, _ = listener.accept()
    finally:
        listener.close()
    conn.settimeout(timeout)
    return conn


# --- the zygote process ---------------------------------------------------------------------

def preload() -> None:
    """Everything a broker needs before it can listen, done once for all its forks."""
    import encodings.idna  # noqa: F401  (a listener's host name is encoded with it)
    import gc

    import kipper.broker.server  # noqa: F401  (the broker, its engines and handlers)
    import kipper.testing.child  # noqa: F401
    from kipper.broker import config, logging_setup  # noqa: F401

    try:
        import uvloop  # noqa: F401
    except ImportError:
        pass
    from kipper.broker.schema_registry import formats

    if not formats.missing_libraries():  # the Schema Registry's shell and engine (its libraries: when idle)
        import kipper.broker.registry_http.server  # noqa: F401
        import kipper.broker.schema_registry.service  # noqa: F401
    gc.collect()
    gc.freeze()  # shared with every fork, page for page, and never scanned again


def _schemas():
    """The APIs' schemas, compiled one API at a time while the zygote is idle: later forks
    find more of them compiled (each compiles the rest on first use, as `kipper broker`)."""
    from kipper.broker.schema_registry import formats
    from kipper.protocol.messages import APIS

    # first in the list, so last to run: the Schema Registry's schema libraries
    registry = [formats.preload] if not formats.missing_libraries() else []
    return registry + [api.compile_supported for api in APIS.values()]


def main(path: str) -> int:
    preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forks are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a test run's Ctrl-C ends it through stdin
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ)
    idle_work = _schemas()
    while True:
        events = sel.select(0 if idle_work else None)
        if not events and idle_work:
            idle_work.pop()()
        for key, _ in events:
            if key.fileobj is listener:
                conn, _ = listener.accept()
                if os.fork() == 0:
                    sel.close()
                    listener.close()
                    _become_broker(conn)
                conn.close()
            elif not os.read(sys.stdin.fileno(), 4096):
                return 0


def _become_broker(conn: socket.socket) -> None:
    """In a fresh fork: this process is the broker the connection asks for, until it ends."""
    from kipper.testing import child

    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)  # the zygote's stdin is the test process's pipe, not ours
        os.close(devnull)
        random.seed()
        conn.settimeout(30)
        code = child.serve(conn, child.read_request(conn))
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        os._exit(code)


def spawned(port: int) -> int:
    """``python -m kipper.testing child PORT``: a broker process without a zygote."""
    from kipper.testing import child

    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    return child.serve(conn, child.read_request(conn))


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Has the process gone within ``timeout``? (It is not our child: polled.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        time.sleep(0.01)
    return False
