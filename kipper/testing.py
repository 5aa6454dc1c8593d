"""An embedded kipper broker for test suites: the real broker on an ephemeral loopback port.

``EmbeddedBroker`` builds the broker with the composition root ``kipper broker`` uses
(``BrokerServer``, nothing stubbed) and runs it in a background thread with its own event
loop, or, with ``subprocess=True``, in a child process driven through a pipe. Either way a
test gets ``bootstrap_servers``, ``reset()`` (every topic, group, producer state and
transaction gone, without a restart) and ``stop()``. The pytest fixtures built on it are in
``kipper.pytest_plugin``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess as _subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

__all__ = ["EmbeddedBroker", "unique_name"]

LOOPBACK = "PLAINTEXT://127.0.0.1:0"


def unique_name(prefix: str = "topic") -> str:
    """A legal, unique topic or group name that starts with ``prefix``."""
    clean = "".join(c if c.isalnum() or c in "._-" else "-" for c in prefix)[:200].strip("-.") or "topic"
    return f"{clean}-{uuid.uuid4().hex[:10]}"


class EmbeddedBroker:
    """A real kipper broker for tests. Use it as a context manager (``with`` or
    ``async with``) or call ``start()`` and ``stop()``.

    ``overrides`` are broker properties with Kafka's names (``{"num.partitions": "3"}``);
    by default the broker listens on ``PLAINTEXT://127.0.0.1:0``. Environment variables
    (``KIPPER_*``) are not read: a test's broker is what the test says.
    """

    def __init__(self, overrides: Mapping[str, Any] | None = None, *, subprocess: bool = False,
                 start_timeout: float = 30.0):
        self.overrides = {k: str(v) for k, v in (overrides or {}).items()}
        self.overrides.setdefault("listeners", LOOPBACK)
        self.subprocess = subprocess
        self.start_timeout = start_timeout
        self._runner: _ThreadRunner | _ProcessRunner | None = None
        self._bootstrap: str | None = None

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> "EmbeddedBroker":
        """Returns once the broker accepts connections. Raises on a bad configuration."""
        if self._runner is not None:
            raise RuntimeError("the broker is already started")
        runner = _ProcessRunner(self.overrides) if self.subprocess else _ThreadRunner(self.overrides)
        self._bootstrap = runner.start(self.start_timeout)
        self._runner = runner
        return self

    def stop(self) -> None:
        """Stops the broker: connections are closed and everything it held is gone."""
        runner, self._runner = self._runner, None
        if runner is not None:
            runner.stop()

    def reset(self) -> None:
        """Deletes every topic, group, committed offset, producer state and transaction,
        for isolation between tests; listeners, credentials and client quotas stay.
        Clients of the previous test should be closed first: what they still hold (a
        producer id, a group generation) refers to state that is gone."""
        self._require().reset()

    async def areset(self) -> None:
        """``reset()`` for asyncio code: the caller's loop keeps running meanwhile."""
        await asyncio.get_running_loop().run_in_executor(None, self.reset)

    def call(self, fn: Callable[[Any], Any], timeout: float = 30.0) -> Any:
        """``fn(engines)`` on the broker's event loop, its result returned here: a look at
        the engines (``kipper.broker.composition.Engines``) from a test. Thread mode only."""
        runner = self._require()
        if not isinstance(runner, _ThreadRunner):
            raise RuntimeError("call() needs the thread mode: a subprocess broker's engines are in another process")
        return runner._call(lambda: fn(runner.server.engines), timeout)

    @property
    def metrics_url(self) -> str | None:
        """``http://host:port`` of /metrics, /healthz and /readyz when metrics.http.listener is set."""
        return self._require().metrics_url

    @property
    def schema_registry_url(self) -> str:
        """``http://host:port`` of the broker's Schema Registry (schema.registry.listeners),
        for a client's ``url``; raises when the broker serves none."""
        url = self._require().schema_registry_url
        if url is None:
            raise RuntimeError("this broker serves no Schema Registry: set schema.registry.listeners "
                               "(the kipper[schema-registry] extra provides its libraries)")
        return url

    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` for a client's ``bootstrap.servers``."""
        if self._bootstrap is None:
            raise RuntimeError("the broker is not started")
        return self._bootstrap

    @property
    def port(self) -> int:
        return int(self.bootstrap_servers.rsplit(":", 1)[1])

    @property
    def running(self) -> bool:
        return self._runner is not None

    def log_text(self) -> str:
        """What a subprocess broker logged (the thread mode logs through the process' structlog)."""
        runner = self._require()
        return runner.log_text() if isinstance(runner, _ProcessRunner) else ""

    def _require(self):
        if self._runner is None:
            raise RuntimeError("the broker is not started")
        return self._runner

    # --- topics, through the Kafka protocol like any client ---------------------------------

    def create_topic(self, name: str | None = None, partitions: int = 1,
                     configs: Mapping[str, Any] | None = None) -> str:
        """Creates a topic (a unique name when ``name`` is None) and returns its name."""
        from kipper.client import admin
        from kipper.client.blocking import connect_any
        from kipper.protocol.errors import ErrorCode, KafkaError

        name = name or unique_name()
        new = admin.NewTopic(name, partitions, 1, {k: str(v) for k, v in (configs or {}).items()})
        with connect_any(self.bootstrap_servers) as conn:
            result = admin.create_topics(conn, [new]).topics[0]
        if result.error_code:
            raise KafkaError(ErrorCode(result.error_code), result.error_message or f"cannot create {name}")
        return name

    def delete_topics(self, names: Iterable[str]) -> None:
        from kipper.client import admin
        from kipper.client.blocking import connect_any

        names = list(names)
        if names:
            with connect_any(self.bootstrap_servers) as conn:
                admin.delete_topics(conn, names)

    # --- context managers ------------------------------------------------------------------------

    def __enter__(self) -> "EmbeddedBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    async def __aenter__(self) -> "EmbeddedBroker":
        await asyncio.get_running_loop().run_in_executor(None, self.start)
        return self

    async def __aexit__(self, *exc) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.stop)

    def __repr__(self) -> str:
        mode = "subprocess" if self.subprocess else "thread"
        return f"EmbeddedBroker({self._bootstrap or 'not started'}, {mode})"


def _load_config(overrides: Mapping[str, str]):
    from kipper.broker import config as cfg

    return cfg.load(None, overrides, environ={})


class _ThreadRunner:
    """The broker's own event loop in a daemon thread; other threads reach the engines
    only through ``_call``, which runs a function on that loop and waits for it."""

    def __init__(self, overrides: Mapping[str, str]):
        self.overrides = overrides
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server = None
        self.thread: threading.Thread | None = None
        self._started: concurrent.futures.Future = concurrent.futures.Future()

    def start(self, timeout: float) -> str:
        from kipper.broker.server import BrokerServer

        config = _load_config(self.overrides)  # a bad key raises here, in the caller's thread
        self.thread = threading.Thread(target=self._run, args=(BrokerServer, config),
                                       name="kipper-embedded-broker", daemon=True)
        self.thread.start()
        return self._started.result(timeout)

    def _run(self, server_class, config) -> None:
        from kipper.broker.server import loop_factory

        loop = self.loop = loop_factory()
        asyncio.set_event_loop(loop)
        try:
            self.server = server = server_class(config)
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

    def _call(self, fn: Callable[[], Any], timeout: float = 30.0) -> Any:
        done: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                done.set_result(fn())
            except BaseException as exc:
                done.set_exception(exc)
        self.loop.call_soon_threadsafe(run)
        return done.result(timeout)

    def reset(self) -> None:
        self._call(self.server.reset)

    @property
    def schema_registry_url(self) -> str | None:
        return self.server.schema_registry_url

    @property
    def metrics_url(self) -> str | None:
        http = self.server.metrics_http
        if http is None:
            return None
        host = http.host if http.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
        return f"http://{host}:{http.port}"

    def stop(self) -> None:
        if self.thread is None or not self.thread.is_alive():
            return
        self.loop.call_soon_threadsafe(self.server.request_stop)
        self.thread.join(30)


class _ProcessRunner:
    """``python -m kipper.testing``: the same broker in a child process. It prints one JSON
    line when it is ready and then answers commands on stdin ("reset"), one line each;
    closing stdin stops it. Its log goes to a temporary file."""

    def __init__(self, overrides: Mapping[str, str]):
        self.overrides = overrides
        self.proc: _subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="kipper-embedded-", suffix=".log", delete=False)
        self._lock = threading.Lock()
        self.metrics_url: str | None = None
        self.schema_registry_url: str | None = None

    def start(self, timeout: float) -> str:
        _load_config(self.overrides)  # a bad key raises here, as in the thread mode
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = _subprocess.Popen([sys.executable, "-m", "kipper.testing", json.dumps(self.overrides)],
                                      stdin=_subprocess.PIPE, stdout=_subprocess.PIPE, stderr=self._log,
                                      env=env, text=True)
        reply = self._reply(timeout)
        if reply is None or "bootstrap_servers" not in reply:
            self.stop()
            raise RuntimeError(f"the broker subprocess did not start:\n{self.log_text()}")
        self.metrics_url = reply.get("metrics_url")
        self.schema_registry_url = reply.get("schema_registry_url")
        return reply["bootstrap_servers"]

    def _reply(self, timeout: float) -> dict | None:
        box: list = []
        reader = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        line = box[0] if box else ""
        return json.loads(line) if line.strip() else None

    def reset(self) -> None:
        with self._lock:
            self.proc.stdin.write("reset\n")
            self.proc.stdin.flush()
            reply = self._reply(30.0)
        if reply is None or not reply.get("ok"):
            raise RuntimeError(f"reset failed: {reply and reply.get('error')}\n{self.log_text()}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(30)
        except _subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def log_text(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")


def _serve_on_stdin(overrides: dict) -> int:
    """The child of ``subprocess=True``: the thread-mode broker, driven by stdin lines."""
    from kipper.broker import logging_setup

    config = _load_config(overrides)
    logging_setup.configure(config["log.level"], config["log.format"])
    runner = _ThreadRunner(overrides)
    bootstrap = runner.start(60.0)
    print(json.dumps({"bootstrap_servers": bootstrap, "metrics_url": runner.metrics_url,
                      "schema_registry_url": runner.schema_registry_url}), flush=True)
    try:
        for line in sys.stdin:
            if line.strip() == "reset":
                try:
                    runner.reset()
                    print(json.dumps({"ok": True}), flush=True)
                except Exception as exc:
                    print(json.dumps({"ok": False, "error": str(exc)}), flush=True)
    finally:
        runner.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(_serve_on_stdin(json.loads(sys.argv[1])))
