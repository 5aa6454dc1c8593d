"""Our Java programs (tests/java/) compiled against the fetched Kafka jars, and Kafka's tools
run many at a time in one JVM (issue 30).

The sources are ours; the classes go to a cache outside the repository
(``${KIPPER_CACHE:-~/.cache/kipper}/java-programs/<hash>``), compiled again only when a
source or the Kafka version changes. ``ToolServer`` keeps one JVM per broker that runs Kafka's
tools' main classes one after another (tests/java/kipper/ecosystem/ToolServer.java says how
that stays faithful), so a suite of tool checks pays for one JVM start, not one per command.
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from scripts import kafka_reference as kref
from tests.support import requires
from tests.support.broker import ROOT

SOURCES = ROOT / "tests" / "java"
TOOLS_LOG4J = SOURCES / "log4j2-tools.properties"
# what javac compiles against: everything our programs import
COMPILE_SETS = ("tools", "streams")


def require_javac() -> str:
    java = kref.java_binary()
    javac = Path(java).with_name("javac")
    if not javac.exists():
        requires.unavailable(f"our Java programs need a JDK (javac), not only a runtime: {javac} is missing")
    return str(javac)


def classpath(*sets: str) -> str:
    seen: list[str] = []
    for name in sets:
        for jar in kref.classpath(name).split(os.pathsep):
            if jar not in seen:
                seen.append(jar)
    return os.pathsep.join(seen)


def compiled_classes() -> Path:
    """The directory of our compiled classes, compiling them the first time."""
    sources = sorted(SOURCES.rglob("*.java"))
    digest = hashlib.sha256(kref.kafka_version().encode())
    for src in sources:
        digest.update(str(src.relative_to(SOURCES)).encode() + b"\0" + src.read_bytes())
    out = kref.cache_root() / "java-programs" / digest.hexdigest()[:16]
    stamp = out / ".complete"
    if stamp.exists():
        return out
    javac = require_javac()
    build = Path(tempfile.mkdtemp(prefix="build-", dir=out.parent if out.parent.exists() else None))
    cmd = [javac, "-nowarn", "-encoding", "UTF-8", "--release", "17", "-cp", classpath(*COMPILE_SETS),
           "-d", str(build), *map(str, sources)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"javac failed:\n{done.stdout}{done.stderr}")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        build.rename(out)
    except OSError:  # another session compiled the same sources meanwhile
        pass
    stamp.touch()
    return out


def compiled_plugin(source: str, *sets: str) -> Path:
    """One of our sources (``source`` relative to tests/java/) compiled on its own against
    ``sets`` (e.g. a broker plugin for the Kafka reference), into the same cache."""
    src = SOURCES / source
    digest = hashlib.sha256(kref.kafka_version().encode() + src.read_bytes()).hexdigest()[:16]
    out = kref.cache_root() / "java-programs" / f"plugin-{src.stem}-{digest}"
    if (out / ".complete").exists():
        return out
    build = Path(tempfile.mkdtemp(prefix="build-plugin-"))
    done = subprocess.run([require_javac(), "-nowarn", "-encoding", "UTF-8", "--release", "17",
                           "-cp", classpath(*sets), "-d", str(build), str(src)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"javac failed:\n{done.stdout}{done.stderr}")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        build.rename(out)
    except OSError:  # compiled meanwhile by another session
        pass
    (out / ".complete").touch()
    return out


def java_command(main: str, *sets: str, heap: str = "256m", properties: dict[str, str] | None = None) -> list[str]:
    cp = os.pathsep.join([str(compiled_classes()), classpath(*sets)])
    props = [f"-D{k}={v}" for k, v in {"log4j2.configurationFile": str(TOOLS_LOG4J), **(properties or {})}.items()]
    # a small machine: one JIT compiler thread tier, no class data sharing surprises
    return [kref.java_binary(), f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", *props, "-cp", cp, main]


@dataclass
class ToolResult:
    exit: int
    stdout: str
    stderr: str
    seconds: float


class ToolServer:
    """One JVM that runs Kafka's tools on request (tests/java/kipper/ecosystem/ToolServer.java)."""

    def __init__(self, name: str, log_dir: Path):
        self.name = name
        self.log_path = log_dir / f"tool-server-{name}.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(java_command("kipper.ecosystem.ToolServer", "tools"), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1)
        self._pending: str | None = None

    def submit(self, tool: str, args: list[str], stdin: str | None = None) -> None:
        """Start a tool by its bin/ name (kafka-topics, ...) or main class; ``result`` collects it."""
        request = {"main": kref.TOOLS.get(tool, tool), "args": list(args)}
        if stdin is not None:
            request["stdin"] = stdin
        self._send(request, f"{tool} {' '.join(args)}")

    def result(self, timeout: float = 120.0) -> ToolResult:
        assert self._pending is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    tool, self._pending = self._pending, None
                    self.close()
                    raise TimeoutError(f"{tool} did not finish within {timeout:.0f}s on {self.name}")
                line = self.proc.stdout.readline()
                if not line:
                    tool, self._pending = self._pending, None
                    raise RuntimeError(f"the tool JVM for {self.name} ended during {tool}:\n{self.log_tail()}")
                if line.startswith("@@result "):
                    break
                self._log.write(line)  # something printed to the JVM's own stdout
        self._pending = None
        answer = json.loads(line[len("@@result "):])
        return ToolResult(answer["exit"], answer["stdout"], answer["stderr"], answer["seconds"])

    def submit_background(self, name: str, main: str, args: list[str]) -> None:
        """Start one of our programs in a thread of the JVM (a group member kept alive)."""
        self._send({"background": name, "main": main, "args": list(args)}, f"background {name}")
        self.result(30)

    def join(self, name: str, timeout: float = 60.0) -> ToolResult:
        self._send({"join": name, "timeout_ms": int(timeout * 1000)}, f"join {name}")
        return self.result(timeout + 10)

    def _send(self, request: dict, label: str) -> None:
        assert self._pending is None, "one invocation at a time"
        if self.proc.poll() is not None:  # (a tool that called System.exit itself, as argparse4j does)
            raise RuntimeError(f"the tool JVM for {self.name} has ended (exit {self.proc.returncode}): "
                               f"{label} cannot run:\n{self.log_tail()}")
        self._log.write(f"\n=== {label}\n")
        self._log.flush()
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        self._pending = label

    def run(self, tool: str, args: list[str], stdin: str | None = None, timeout: float = 120.0) -> ToolResult:
        self.submit(tool, args, stdin)
        return self.result(timeout)

    def log_tail(self, lines: int = 40) -> str:
        self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
