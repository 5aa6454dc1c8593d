"""Apache Kafka as a reference, fetched and started by our own script (issues 29 and 30).

Resolves the newest Apache Kafka 4.x that Maven Central serves, copies an artifact set and
everything it needs into a cache outside the repository with Maven
(``${KIPPER_CACHE:-~/.cache/kipper}/kafka-<version>/<set>/lib``), and starts one combined
KRaft broker+controller on loopback ports chosen at run time. Only the standard library is
used, so the script runs before any venv exists. A second run downloads nothing: the
resolved version and each set's jars are stamped, and Maven then runs offline.

    scripts/kafka-reference version              # the Kafka version in use (resolved once)
    scripts/kafka-reference fetch [SET ...]      # download sets (default: broker)
    scripts/kafka-reference classpath SET        # a classpath, ':'-joined, for java -cp
    scripts/kafka-reference sets                 # the sets and the artifacts in each
    scripts/kafka-reference tool NAME [ARGS...]  # a Kafka tool, e.g. tool kafka-topics --list ...
    scripts/kafka-reference run [--property K=V ...]   # a broker in the foreground
    scripts/kafka-reference cluster --brokers 3  # a controller and 3 brokers (scripts/kafka_cluster.py)

A set is a name from ``SETS`` or any ``group:artifact[:version]`` (Kafka's version when
none is given). ``KIPPER_KAFKA_VERSION`` pins a version; ``KIPPER_CACHE`` moves the cache.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a file: scripts/kafka-reference
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kipper.testing.lifeline import tied  # noqa: E402
from scripts.kafka_fetch import (SETS, TOOLS, KafkaReferenceError, cache_root, classpath,  # noqa: E402
                                 fetch, java_binary, kafka_version, missing_tools, refresh_version,
                                 set_dir)

__all__ = ["SETS", "TOOLS", "KafkaReference", "KafkaReferenceError", "cache_root", "classpath", "fetch",
           "java_binary", "kafka_version", "missing_tools", "refresh_version", "set_dir"]


# --- the broker ----------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class KafkaReference:
    """One combined KRaft broker+controller on loopback.

    ``properties`` are added to (and override) the server.properties this writes;
    ``scram_users`` ({name: password}) get SCRAM-SHA-256 and -512 credentials at format time,
    and a SASL_PLAINTEXT listener (PLAIN with the same users, SCRAM) is opened beside
    PLAINTEXT when there are any. ``features`` are passed to the format (e.g. share.version=1).
    """

    workdir: Path | None = None
    properties: dict[str, str] = field(default_factory=dict)
    scram_users: dict[str, str] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    heap: str = "512m"
    # directories or jars added to the broker's classpath (a plugin of the tests', e.g. the
    # client-telemetry exporter tests/java/kipper/reference/TelemetrySink.java)
    extra_classpath: list[str] = field(default_factory=list)
    version: str | None = None
    port: int = 0
    sasl_port: int = 0
    controller_port: int = 0
    proc: subprocess.Popen | None = None
    _own_workdir: bool = False

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def sasl_bootstrap(self) -> str | None:
        return f"127.0.0.1:{self.sasl_port}" if self.sasl_port else None

    @property
    def log_file(self) -> Path:
        assert self.workdir is not None
        return self.workdir / "server.log"

    def server_properties(self) -> dict[str, str]:
        listeners = [f"PLAINTEXT://127.0.0.1:{self.port}"]
        protocols = ["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"]
        if self.scram_users:
            listeners.append(f"SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}")
            protocols.append("SASL_PLAINTEXT:SASL_PLAINTEXT")
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
            "listeners": ",".join([*listeners, f"CONTROLLER://127.0.0.1:{self.controller_port}"]),
            "advertised.listeners": ",".join(listeners),
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": ",".join(protocols),
            "log.dirs": str(self.workdir / "data"),
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "share.coordinator.state.topic.num.partitions": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
        }
        if self.scram_users:
            users = " ".join(f'user_{u}="{p}"' for u, p in self.scram_users.items())
            props.update({
                "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config":
                    f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};",
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config":
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            })
        props.update(self.properties)
        return props

    def _java(self, main: str, args: list[str], *, tie: bool = False, **kw) -> subprocess.Popen:
        """Kafka's ``main`` class; ``tie``: killed when this process ends (kipper.testing.lifeline)."""
        cp = os.pathsep.join([classpath("broker", self.version), *self.extra_classpath])
        log4j = self.workdir / "log4j2.properties"
        cmd = [java_binary(), f"-Xmx{self.heap}", f"-Xms{self.heap}", "-XX:+UseG1GC",
               "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true",
               f"-Dlog4j2.configurationFile={log4j}", f"-Dkafka.logs.dir={self.workdir}",
               "-cp", cp, main, *args]
        return subprocess.Popen(tied(cmd) if tie else cmd, **kw)

    def start(self, timeout: float = 90.0) -> "KafkaReference":
        if missing_tools():
            raise KafkaReferenceError(missing_tools())
        self.version = self.version or kafka_version()
        fetch("broker", self.version)
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="kafka-reference-"))
            self._own_workdir = True
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        self.controller_port = self.controller_port or free_port()
        if self.scram_users:
            self.sasl_port = self.sasl_port or free_port()
        (self.workdir / "log4j2.properties").write_text(_LOG4J2)
        config = self.workdir / "server.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in self.server_properties().items()))
        self._format(config)
        log = open(self.log_file, "ab")
        self.proc = self._java("kafka.Kafka", [str(config)], tie=True, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
        log.close()
        self._wait_ready(timeout)
        return self

    def _format(self, config: Path) -> None:
        if (self.workdir / "data" / "meta.properties").exists():
            return
        args = ["format", "--config", str(config), "--cluster-id", _cluster_id(), "--standalone"]
        for name, level in self.features.items():
            args += ["--feature", f"{name}={level}"]
        for user, password in self.scram_users.items():
            for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                args += ["--add-scram", f"{mechanism}=[name={user},password={password}]"]
        with open(self.workdir / "format.log", "wb") as out:
            proc = self._java("kafka.tools.StorageTool", args, stdout=out, stderr=subprocess.STDOUT)
            if proc.wait() != 0:
                raise KafkaReferenceError("kafka-storage format failed:\n"
                                          + (self.workdir / "format.log").read_text(errors="replace"))

    def _wait_ready(self, timeout: float) -> None:
        """Ready when the broker answers a Metadata request listing itself (registered and
        unfenced with its controller), which a plain TCP accept does not yet mean."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise KafkaReferenceError(f"Kafka exited with {self.proc.returncode}:\n{self.log_tail()}")
            if _metadata_lists_a_broker(self.port):
                return
            time.sleep(0.25)
        self.stop()
        raise KafkaReferenceError(f"Kafka did not start within {timeout:.0f}s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, timeout: float = 30.0) -> int | None:
        proc, self.proc = self.proc, None
        code = None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            code = proc.returncode
        if self._own_workdir and self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
        return code

    def __enter__(self) -> "KafkaReference":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


_LOG4J2 = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:kafka.logs.dir}/kafka.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.server.name = org.apache.kafka.server
logger.server.level = INFO
"""


def _cluster_id() -> str:
    """A random base64url uuid, the form kafka-storage random-uuid prints; never one that
    starts with "-" (Kafka's Uuid.randomUuid draws again too: kafka-storage would read it as
    an option, one format in 64)."""
    import base64
    import uuid

    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def _metadata_lists_a_broker(port: int) -> bool:
    """Metadata v1 (no topics requested: a null array) with the standard library alone."""
    import struct

    client = b"kipper-ref"
    body = struct.pack(">hhih", 3, 1, 1, len(client)) + client + struct.pack(">i", -1)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0) as s:
            s.sendall(struct.pack(">i", len(body)) + body)
            head = _recv_exactly(s, 4)
            payload = _recv_exactly(s, struct.unpack(">i", head)[0])
    except OSError:
        return False
    # correlation id, then the brokers array's length
    return len(payload) >= 8 and struct.unpack(">i", payload[4:8])[0] > 0


def _recv_exactly(s: socket.socket, n: int) -> bytes:
    chunks = b""
    while len(chunks) < n:
        chunk = s.recv(n - len(chunks))
        if not chunk:
            raise OSError("connection closed")
        chunks += chunk
    return chunks


# --- command line ----------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafka-reference", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("version", help="print the Kafka version in use (resolving it the first time)")
    sub.add_parser("refresh", help="resolve the newest Kafka 4.x again and print it")
    sub.add_parser("sets", help="list the artifact sets")
    p = sub.add_parser("fetch", help="download artifact sets into the cache")
    p.add_argument("sets", nargs="*", default=["broker"])
    p = sub.add_parser("classpath", help="print a set's classpath")
    p.add_argument("set", nargs="?", default="broker")
    p = sub.add_parser("tool", help="run one of Kafka's command-line tools")
    p.add_argument("name", choices=sorted(TOOLS))
    p.add_argument("args", nargs=argparse.REMAINDER)
    p = sub.add_parser("run", help="run a reference broker in the foreground until interrupted")
    p.add_argument("--property", "-p", action="append", default=[], metavar="K=V")
    p.add_argument("--scram-user", action="append", default=[], metavar="NAME=PASSWORD")
    p.add_argument("--feature", action="append", default=[], metavar="NAME=LEVEL")
    p.add_argument("--heap", default="512m")
    p = sub.add_parser("cluster", help="run a controller and N brokers in the foreground until interrupted")
    p.add_argument("--brokers", type=int, default=3)
    p.add_argument("--property", "-p", action="append", default=[], metavar="K=V")
    p.add_argument("--heap", default="512m")
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except KafkaReferenceError as exc:
        print(f"kafka-reference: {exc}", file=sys.stderr)
        return 2


def _run(args) -> int:
    if args.command == "version":
        print(kafka_version())
    elif args.command == "refresh":
        print(refresh_version())
    elif args.command == "sets":
        for name, coordinates in SETS.items():
            print(f"{name}: {' '.join(coordinates)}")
    elif args.command == "fetch":
        for name in args.sets:
            jars = fetch(name)
            print(f"{name}: {len(jars)} jars in {set_dir(name)}")
    elif args.command == "classpath":
        print(classpath(args.set))
    elif args.command == "tool":
        cmd = [java_binary(), "-Xmx256m", "-cp", classpath("tools"), TOOLS[args.name], *args.args]
        return subprocess.call(cmd)
    elif args.command == "cluster":
        from scripts.kafka_cluster import KafkaCluster

        cluster = KafkaCluster(args.brokers, dict(kv.split("=", 1) for kv in args.property), heap=args.heap)
        cluster.start()
        print(f"Kafka {cluster.controller.version}: {args.brokers} brokers, bootstrap={cluster.bootstrap} "
              f"dir={cluster.workdir}", flush=True)
        try:
            cluster.controller.proc.wait()
        except KeyboardInterrupt:
            pass
        finally:
            cluster.stop()
    elif args.command == "run":
        kafka = KafkaReference(
            properties=dict(kv.split("=", 1) for kv in args.property),
            scram_users=dict(kv.split("=", 1) for kv in args.scram_user),
            features={k: int(v) for k, v in (kv.split("=", 1) for kv in args.feature)},
            heap=args.heap)
        kafka.start()
        print(f"Kafka {kafka.version} bootstrap={kafka.bootstrap}"
              + (f" sasl={kafka.sasl_bootstrap}" if kafka.sasl_bootstrap else "")
              + f" dir={kafka.workdir}", flush=True)
        try:
            kafka.proc.wait()
        except KeyboardInterrupt:
            pass
        finally:
            kafka.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
