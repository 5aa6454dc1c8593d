"""The two ways an ``EmbeddedBroker`` runs: in a process of its own (the default: forked by
the zygote, kipper/testing/zygote.py, and driven through its control socket) or in a
daemon thread of the test process with its own event loop. Both answer the same
commands (kipper/testing/control.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import pickle
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping


def load_config(overrides: Mapping[str, str]):
    """The broker's configuration, checked in the test's own process: a bad key raises here."""
    from kipper.broker import config as cfg

    return cfg.load(None, overrides, environ={})


class ThreadRunner:
    """The broker's own event loop in a daemon thread; other threads reach the engines
    only through ``call``, which runs a function on that loop and waits for it."""

    mode = "thread"

    def __init__(self, overrides: Mapping[str, str]):
        self.overrides = overrides
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server = None
        self.control = None
        self.thread: threading.Thread | None = None
        self._started: concurrent.futures.Future = concurrent.futures.Future()

    def start(self, timeout: float) -> str:
        config = load_config(self.overrides)
        self.thread = threading.Thread(target=self._run, args=(config,), name="kipper-embedded-broker", daemon=True)
        self.thread.start()
        return self._started.result(timeout)

    def _run(self, config) -> None:
        from kipper.broker.faults.plan import FaultPlan
        from kipper.broker.server import BrokerServer, loop_factory
        from kipper.testing.control import Control

        loop = self.loop = loop_factory()
        asyncio.set_event_loop(loop)
        try:
            plan = FaultPlan()
            self.server = server = BrokerServer(config, faults=plan)
            self.control = Control(server, plan)
            loop.run_until_complete(server.start())
        except BaseException as exc:  # reported to start()'s caller
            self._started.set_exception(exc)
            loop.close()
            return
        host, port = server.engines.advertised[server.bound[0][0].name]
        self._started.set_result(f"{host}:{port}")
        try:
            loop.run_until_complete(server.wait_stopped())
            loop.run_until_complete(server.stop())
        finally:
            loop.close()

    def call(self, fn: Callable[[], Any], timeout: float = 30.0) -> Any:
        done: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(fn())
            except BaseException as exc:
                done.set_exception(exc)
        self.loop.call_soon_threadsafe(run)
        return done.result(timeout)

    def command(self, command: dict, timeout: float = 30.0) -> dict:
        return self.call(lambda: self.control.handle(command), timeout)

    def run(self, fn: Callable, args: tuple, timeout: float = 30.0) -> Any:
        """``fn(engines, *args)`` on the broker's loop: any callable, a lambda too."""
        return self.call(lambda: fn(self.server.engines, *args), timeout)

    @property
    def metrics_url(self) -> str | None:
        from kipper.testing.control import metrics_url

        return metrics_url(self.server)

    @property
    def schema_registry_url(self) -> str | None:
        return self.server.schema_registry_url

    def log_text(self) -> str:
        return ""  # the thread mode logs through the test process' structlog

    def stop(self) -> None:
        if self.thread is None or not self.thread.is_alive():
            return
        self.loop.call_soon_threadsafe(self.server.request_stop)
        self.thread.join(30)


class ProcessRunner:
    """A broker process of its own, driven through its control socket: one JSON line a
    command, one a reply. Its log goes to a temporary file (``log_text``)."""

    mode = "process"

    def __init__(self, overrides: Mapping[str, str]):
        self.overrides = dict(overrides)
        self.conn: socket.socket | None = None
        self.pid: int | None = None
        self.metrics_url: str | None = None
        self.schema_registry_url: str | None = None
        self._buffer = b""
        self._lock = threading.Lock()
        fd, self.log_path = tempfile.mkstemp(prefix="kipper-embedded-", suffix=".log")
        os.close(fd)

    def start(self, timeout: float) -> str:
        from kipper.testing.zygote import launch

        load_config(self.overrides)  # a bad key raises here, as in the thread mode
        self.conn = launch(timeout)
        request = {"overrides": self.overrides, "log": self.log_path, "path": sys.path}
        self.conn.sendall(json.dumps(request).encode() + b"\n")
        try:
            reply = self._reply(timeout)
        except (OSError, TimeoutError):
            reply = None
        if not reply or not reply.get("ok"):
            self._close()
            why = reply.get("error") if reply else f"no answer within {timeout}s"
            raise RuntimeError(f"the broker process did not start: {why}\n{self.log_text()}")
        self.pid = reply["pid"]
        self.metrics_url = reply.get("metrics_url")
        self.schema_registry_url = reply.get("schema_registry_url")
        return reply["bootstrap_servers"]

    def _reply(self, timeout: float) -> dict | None:
        """The next line from the broker; None if its socket ended (the process is gone)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the broker process did not answer within {timeout}s")
            self.conn.settimeout(left)
            try:
                chunk = self.conn.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def command(self, command: dict, timeout: float = 30.0) -> dict:
        with self._lock:
            if self.conn is None:
                raise RuntimeError("the broker is stopped")
            try:
                self.conn.sendall(json.dumps(command).encode() + b"\n")
                reply = self._reply(timeout)
            except OSError:
                reply = None
        if reply is None:
            raise RuntimeError(f"the broker process is gone\n{self.log_text()}")
        return reply

    def run(self, fn: Callable, args: tuple, timeout: float = 30.0) -> Any:
        """``fn(engines, *args)`` in the broker process: ``fn`` goes by reference (pickle),
        so it must be a module-level function; the result comes back pickled."""
        from kipper.testing.control import pack, unpack

        if getattr(fn, "__module__", None) == "__main__":
            raise TypeError("call() of a process broker imports fn by its module, and a script's __main__ "
                            "is not importable there: define it in a module, or use EmbeddedBroker(mode='thread')")
        try:
            call = pack((fn, args))
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise TypeError(f"call() of a process broker needs a module-level function and picklable "
                            f"arguments ({exc}); a lambda or a closure needs EmbeddedBroker(mode='thread')") from None
        reply = self.command({"op": "call", "call": call}, timeout)
        if not reply.get("ok"):
            raise RuntimeError(f"call() failed in the broker process:\n{reply.get('traceback') or reply.get('error')}")
        return unpack(reply["result"])

    def stop(self, timeout: float = 30.0) -> None:
        """Stops the broker and returns once its process has ended (its ports are free)."""
        with self._lock:
            if self.conn is None:
                return
            try:
                self.conn.sendall(b'{"op": "stop"}\n')
                while self._reply(timeout) is not None:  # its reply, then the socket's end
                    pass
            except (OSError, TimeoutError):
                self.kill()
            self._close()
        from kipper.testing.zygote import wait_for_exit

        if self.pid is not None and not wait_for_exit(self.pid, 5):
            self.kill()

    def kill(self) -> None:
        """SIGKILL: the broker ends at once, nothing flushed or closed (a crash)."""
        from kipper.testing.zygote import wait_for_exit

        if self.pid is not None:
            try:
                os.kill(self.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            except ProcessLookupError:
                pass
            wait_for_exit(self.pid, 10)

    def _close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def log_text(self) -> str:
        return Path(self.log_path).read_text(errors="replace")
