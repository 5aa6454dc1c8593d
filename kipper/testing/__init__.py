"""An embedded kipper broker for test suites: the real broker on an ephemeral loopback port.

``EmbeddedBroker`` builds the broker with the composition root ``kipper broker`` uses
(``BrokerServer``, nothing stubbed). By default it runs in a process of its own, forked
from a zygote that has imported the broker once (kipper/testing/zygote.py), so it is
ready in milliseconds and no client of the test can freeze it. ``mode="thread"`` runs it
in a daemon thread of the test process instead, for pure-Python clients and for
``call()``. Either way a test gets ``bootstrap_servers``, ``reset()``, ``faults`` (errors,
delays, lost answers and closed connections for chosen requests, and request counts:
kipper/testing/faults.py) and ``stop()``. The pytest fixtures built on it are in
``kipper.pytest_plugin``.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Callable, Iterable, Mapping

from kipper.testing.faults import FaultError, Faults
from kipper.testing.runners import ProcessRunner, ThreadRunner

__all__ = ["EmbeddedBroker", "FaultError", "Faults", "MODES", "unique_name"]

LOOPBACK = "PLAINTEXT://127.0.0.1:0"
MODES = ("process", "thread")


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

    ``mode="process"`` (the default) runs the broker in a process of its own, forked ready
    from the zygote. ``mode="thread"`` runs it in a thread of the test process: the
    broker then shares the GIL with the test, and a C client that blocks while holding
    the GIL (confluent-kafka closing a consumer in a rebalance, librdkafka's destroy)
    freezes the broker and the test together, for good. Use it for pure-Python clients
    (kafka-python, aiokafka, kipper's own) and for ``call()``. (``subprocess=True`` or
    ``False`` is the older spelling of the two modes.)
    """

    def __init__(self, overrides: Mapping[str, Any] | None = None, *, mode: str | None = None,
                 subprocess: bool | None = None, start_timeout: float = 30.0):
        if mode is None:
            mode = "process" if subprocess is None or subprocess else "thread"
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.overrides = {k: str(v) for k, v in (overrides or {}).items()}
        self.overrides.setdefault("listeners", LOOPBACK)
        self.mode = mode
        self.start_timeout = start_timeout
        self._runner: ThreadRunner | ProcessRunner | None = None
        self._bootstrap: str | None = None
        self.faults = Faults(self._command)

    @property
    def subprocess(self) -> bool:
        return self.mode == "process"

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> "EmbeddedBroker":
        """Returns once the broker accepts connections. Raises on a bad configuration."""
        if self._runner is not None:
            raise RuntimeError("the broker is already started")
        runner = ProcessRunner(self.overrides) if self.mode == "process" else ThreadRunner(self.overrides)
        self._bootstrap = runner.start(self.start_timeout)
        self._runner = runner
        return self

    def stop(self) -> None:
        """Stops the broker: connections are closed and everything it held is gone (or,
        with ``log.dirs``, on disk)."""
        runner, self._runner = self._runner, None
        if runner is not None:
            runner.stop()

    def kill(self) -> None:
        """SIGKILL the broker process: a crash, nothing flushed, closed or checkpointed.
        Process mode only; ``start()`` again brings up a new broker (with the same
        ``log.dirs``, it recovers what they hold; the port is a new one unless fixed)."""
        runner = self._require()
        if not isinstance(runner, ProcessRunner):
            raise RuntimeError("kill() needs mode='process': a thread broker shares the test's process")
        runner.kill()
        self._runner = None
        runner.stop()

    def reset(self) -> None:
        """Deletes every topic, group, committed offset, producer state and transaction,
        and clears the faults and request counts, for isolation between tests; listeners,
        credentials and client quotas stay. Clients of the previous test should be closed
        first: what they still hold (a producer id, a group generation) refers to state
        that is gone. Needs an in-memory broker (no ``log.dirs``)."""
        reply = self._command({"op": "reset"})
        if not reply.get("ok"):
            raise RuntimeError(f"reset failed: {reply.get('error')}")

    async def areset(self) -> None:
        """``reset()`` for asyncio code: the caller's loop keeps running meanwhile."""
        await asyncio.get_running_loop().run_in_executor(None, self.reset)

    def call(self, fn: Callable[..., Any], *args: Any, timeout: float = 30.0) -> Any:
        """``fn(engines, *args)`` on the broker's event loop, its result returned here: a
        look at the engines (``kipper.broker.composition.Engines``) from a test. In the
        process mode ``fn`` and ``args`` travel pickled, so ``fn`` must be a module-level
        function and the result picklable; a lambda or a closure needs the thread mode."""
        return self._require().run(fn, args, timeout)

    def _command(self, command: dict) -> dict:
        return self._require().command(command)

    @property
    def metrics_url(self) -> str | None:
        """``http://host:port`` of /metrics, /healthz and /readyz when metrics.http.listener is set."""
        return self._require().metrics_url

    @property
    def schema_registry_url(self) -> str:
        """``http://host:port`` of the broker's Schema Registry (schema.registry.listeners),
        reported at start like ``bootstrap_servers``; raises when the broker serves none."""
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
        """What a process broker logged (the thread mode logs through the process' structlog)."""
        return self._require().log_text()

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
        return f"EmbeddedBroker({self._bootstrap or 'not started'}, {self.mode})"
