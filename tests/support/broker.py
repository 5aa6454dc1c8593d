"""The brokers tests run against: ``kipper.testing``'s embedded broker, or the real
``python -m kipper broker`` as a subprocess.

``make_broker`` gives the embedded broker (a thread of the test process, started in
milliseconds) with the ``bootstrap``/``port`` the tests use, or a ``BrokerProcess``
when ``BROKER_UNDER_TEST=subprocess`` is set, to run the suite the old way for
comparison. ``BrokerProcess`` stays for the tests where the process is the point: the
command line, signals, crashes, logs, GIL-heavy clients. It listens on a free loopback
port; ``start`` returns once it answers an ApiVersions request. Its stderr is kept in a
file so a test can read what was logged.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kipper.testing import EmbeddedBroker
from kipper.testing.lifeline import tied

ROOT = Path(__file__).resolve().parents[2]


# share-group settings for tests that restart a durable broker: records from the start, and
# sessions short enough to expire within a test yet long enough to outlive a restart
SHARE_QUICK = {"group.share.auto.offset.reset": "earliest",
               "group.share.min.session.timeout.ms": "6000", "group.share.session.timeout.ms": "6000",
               "group.share.min.heartbeat.interval.ms": "1000", "group.share.heartbeat.interval.ms": "1000"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BrokerProcess:
    def __init__(self, overrides: dict[str, str] | None = None, *, config_file: str | None = None,
                 port: int | None = None, advertise: tuple[str, int] | None = None,
                 listeners: str | None = None, extra_args: list[str] | None = None,
                 checkout: str | Path | None = None):
        """``checkout``: another kipper checkout to run instead of this one (a baseline to
        compare), with its own ``.venv`` if it has one."""
        self.port = port or free_port()
        self.checkout = Path(checkout) if checkout else ROOT
        own = self.checkout / ".venv" / "bin" / "python"
        self.python = str(own) if checkout and own.exists() else sys.executable
        self.overrides = dict(overrides or {})
        if listeners is None:
            self.overrides.setdefault("listeners", f"PLAINTEXT://127.0.0.1:{self.port}")
        else:
            self.overrides["listeners"] = listeners
        if advertise is not None:
            self.overrides["advertised.listeners"] = f"PLAINTEXT://{advertise[0]}:{advertise[1]}"
        self.config_file = config_file
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="kipper-broker-", suffix=".log", delete=False)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        cmd = [self.python, "-m", "kipper", "broker"]
        if self.config_file:
            cmd += ["--config", self.config_file]
        for k, v in self.overrides.items():
            cmd += ["--override", f"{k}={v}"]
        return cmd + self.extra_args

    def start(self, timeout: float = 20.0) -> "BrokerProcess":
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(tied(self.command()), cwd=self.checkout, stdout=self._log, stderr=self._log,
                                     env=env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited with {self.proc.returncode}:\n{self.log_text()}")
            if self.ready():
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"broker did not start within {timeout}s:\n{self.log_text()}")

    def ready(self) -> bool:
        from kipper.client.blocking import BlockingConnection

        try:
            with BlockingConnection("127.0.0.1", self.port, timeout=1.0) as conn:
                conn.negotiate()
            return True
        except OSError:
            return False

    def stop(self, timeout: float = 10.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self) -> int | None:
        """SIGKILL: nothing is flushed, closed or checkpointed (a crash)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode

    def restart(self, timeout: float = 30.0) -> "BrokerProcess":
        """Start again on the same port with the same settings (and log.dirs)."""
        self.stop()
        return self.start(timeout)

    def log_text(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class EmbeddedTestBroker(EmbeddedBroker):
    """The embedded broker under the names BrokerProcess uses."""

    @property
    def bootstrap(self) -> str:
        return self.bootstrap_servers


def subprocess_brokers() -> bool:
    return os.environ.get("BROKER_UNDER_TEST", "").strip().lower() == "subprocess"


def make_broker(overrides: dict[str, str] | None = None) -> EmbeddedTestBroker | BrokerProcess:
    """A broker to ``start()`` (or use in ``with``): embedded unless BROKER_UNDER_TEST=subprocess."""
    if subprocess_brokers():
        return BrokerProcess(overrides)
    return EmbeddedTestBroker(overrides)
