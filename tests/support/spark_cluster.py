"""A real Spark standalone cluster on loopback: one master and N workers
started with pyspark's own ``spark-class`` launcher, as docker-compose.yml and
a platform team start theirs.

The workers run with a PATH that leaves this virtualenv out, so the only
Python on it that has kipper is the one an application ships to them
(``--archives``, spark_jobs/pack_env.py). ``apps()`` reads the master's JSON
status page, which is how a test learns that the master registered an
application.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from kipper.testing.lifeline import tied
from tests.support.broker import ROOT, free_port

VENV_BIN = Path(sys.executable).parent


def spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def outside_env() -> dict:
    """The environment of a machine that is not this virtualenv: its bin off PATH,
    no PYSPARK_PYTHON, no VIRTUAL_ENV, Spark on loopback."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "PYTHONPATH", "SPARK_CONF_DIR")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and Path(p).resolve() != VENV_BIN.resolve())
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


class SparkStandaloneCluster:
    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1g"):
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.port = free_port()
        self.webui_port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="kipper-spark-cluster-"))
        self.procs: list[subprocess.Popen] = []

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def worker_dir(self, i: int) -> Path:
        return self.dir / f"worker-{i}"

    def _start(self, name: str, *args: str) -> subprocess.Popen:
        env = outside_env()
        env["SPARK_LOG_DIR"] = str(self.dir)
        env["SPARK_CONF_DIR"] = str(ROOT / "spark_jobs")  # warnings only
        log = open(self.dir / f"{name}.log", "wb")
        proc = subprocess.Popen(tied([str(spark_class()), *args]), env=env, stdout=log, stderr=subprocess.STDOUT,
                                cwd=self.dir, start_new_session=True)
        self.procs.append(proc)
        return proc

    def start(self, timeout: float = 90.0) -> "SparkStandaloneCluster":
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.webui_port))
        self._wait(lambda s: True, timeout, "the master did not answer")
        for i in range(self.workers):
            self.worker_dir(i).mkdir(parents=True)
            self._start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                        "--cores", str(self.cores), "--memory", self.memory, "--port", "0",
                        "--webui-port", "0", "--work-dir", str(self.worker_dir(i)))
        self._wait(lambda s: s.get("aliveworkers") == self.workers, timeout, "the workers did not register")
        return self

    def status(self) -> dict:
        """The master's JSON status. Its web UI answers every path it has not attached yet with the HTML
        front page (CI met that while the master started), so an answer that is not this master's JSON
        is a ValueError: not ready."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.webui_port}/json/", timeout=5) as r:
            body = r.read()
        try:
            status = json.loads(body)
        except ValueError:
            raise ValueError(f"not JSON: {body[:60]!r}") from None
        if not isinstance(status, dict) or status.get("url") != self.url:
            raise ValueError(f"not this master's status: {str(status)[:120]}")
        return status

    def apps(self) -> list[dict]:
        s = self.status()
        return s.get("activeapps", []) + s.get("completedapps", [])

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"{what}: a process exited with {p.returncode}:\n{self.logs()}")
            try:
                if ready(self.status()):
                    return
            except (OSError, ValueError) as e:
                last = f"{type(e).__name__}: {e}"
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"{what} within {timeout:g} s (last: {last}):\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.dir.glob("*.log")))

    def stop(self) -> None:
        for p in reversed(self.procs):  # workers first: they stop their executors
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self.procs.clear()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
