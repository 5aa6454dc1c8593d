"""Apache Kafka's jars from Maven Central, in a cache outside the repository (issues 29, 30).

The newest Kafka 4.x that Central serves is resolved once (Maven reads the version range
against Central's metadata) and stamped; each artifact set is copied with everything it
needs into ``${KIPPER_CACHE:-~/.cache/kipper}/kafka-<version>/<set>/lib`` by
``mvn dependency:copy-dependencies`` on a generated pom, and stamped too, so a second run
asks Maven nothing. Standard library only. The command line is scripts/kafka_reference.py.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

KAFKA_GROUP = "org.apache.kafka"
# Kafka 4.x only: 4.0 dropped ZooKeeper and needs Java 17, which is what these machines run.
VERSION_RANGE = "[4.0.0,5.0.0)"
LOG4J_VERSION = "2.24.3"  # the log4j2 line Kafka 4.x ships with
# Kafka's poms ask for slf4j-api 1.7 (for its clients' users); its distribution ships 2.0,
# which the log4j2 binding needs.
SLF4J_VERSION = "2.0.17"

# Each set is what one kind of program needs on its classpath. The SLF4J binding is what
# Kafka's distribution puts in libs/ (log4j2 through log4j-slf4j2-impl).
_LOGGING = [f"org.slf4j:slf4j-api:{SLF4J_VERSION}",
            f"org.apache.logging.log4j:log4j-slf4j2-impl:{LOG4J_VERSION}",
            f"org.apache.logging.log4j:log4j-core:{LOG4J_VERSION}"]
SETS: dict[str, list[str]] = {
    "broker": [f"{KAFKA_GROUP}:kafka_2.13", f"{KAFKA_GROUP}:kafka-tools", *_LOGGING],
    "tools": [f"{KAFKA_GROUP}:kafka_2.13", f"{KAFKA_GROUP}:kafka-tools", *_LOGGING],  # = broker
    "clients": [f"{KAFKA_GROUP}:kafka-clients", *_LOGGING],
    "streams": [f"{KAFKA_GROUP}:kafka-streams", f"{KAFKA_GROUP}:kafka-clients", *_LOGGING],
}

# The shell scripts of Kafka's bin/ and the classes they run (Kafka 4.x), all in the
# "tools" set. `tool NAME` runs them as `java -cp <tools> <class> ARGS`.
TOOLS: dict[str, str] = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs": "org.apache.kafka.tools.ConfigCommand",
    "kafka-acls": "org.apache.kafka.tools.AclCommand",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-console-share-consumer": "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-streams-groups": "org.apache.kafka.tools.streams.StreamsGroupCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-client-metrics": "org.apache.kafka.tools.ClientMetricsCommand",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-storage": "kafka.tools.StorageTool",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-groups": "org.apache.kafka.tools.GroupsCommand",
    "kafka-cluster": "org.apache.kafka.tools.ClusterTool",
    "kafka-delegation-tokens": "org.apache.kafka.tools.DelegationTokenCommand",
    "kafka-streams-application-reset": "org.apache.kafka.tools.StreamsResetter",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-server-start": "kafka.Kafka",
}


class KafkaReferenceError(RuntimeError):
    """Java or Maven missing, a download that failed, a broker that did not start."""


# --- where things live ------------------------------------------------------------------

def cache_root() -> Path:
    return Path(os.environ.get("KIPPER_CACHE") or Path.home() / ".cache" / "kipper")


def missing_tools() -> str | None:
    """Why this script cannot run here, or None."""
    lacking = [t for t in ("java", "mvn") if _which(t) is None]
    if lacking:
        return f"{' and '.join(lacking)} not found on PATH (JAVA_HOME unset or without bin/java)"
    return None


def _which(tool: str) -> str | None:
    if tool == "java" and os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
        if candidate.exists():
            return str(candidate)
    return shutil.which(tool)


def java_binary() -> str:
    java = _which("java")
    if java is None:
        raise KafkaReferenceError("java not found: install a Java 17+ runtime or set JAVA_HOME")
    return java


def _mvn(args: list[str], cwd: Path) -> None:
    mvn = _which("mvn")
    if mvn is None:
        raise KafkaReferenceError("mvn not found: install Maven (apt-get install maven)")
    cmd = [mvn, "-B", "-q", *args]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-30:])
        raise KafkaReferenceError(f"{' '.join(cmd)} failed in {cwd}:\n{tail}")


def _pom(coordinates: list[str], version: str) -> str:
    deps = []
    for coordinate in coordinates:
        parts = coordinate.split(":")
        group, artifact = parts[0], parts[1]
        ver = parts[2] if len(parts) > 2 else version
        deps.append(f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
                    f"<version>{ver}</version></dependency>")
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<!-- generated by kipper's scripts/kafka-reference; a throwaway project whose only\n"
            "     purpose is dependency:copy-dependencies -->\n"
            "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
            "  <modelVersion>4.0.0</modelVersion>\n"
            "  <groupId>dev.kipper.reference</groupId><artifactId>kafka-set</artifactId>"
            "<version>1</version><packaging>pom</packaging>\n"
            "  <dependencies>\n" + "\n".join(deps) + "\n  </dependencies>\n</project>\n")


# --- the version --------------------------------------------------------------------------

def kafka_version() -> str:
    """KIPPER_KAFKA_VERSION, else the version resolved once and stamped in the cache."""
    pinned = os.environ.get("KIPPER_KAFKA_VERSION", "").strip()
    if pinned:
        return pinned
    stamp = cache_root() / "kafka-version"
    if stamp.exists() and stamp.read_text().strip():
        return stamp.read_text().strip()
    with _locked():
        if not (stamp.exists() and stamp.read_text().strip()):
            stamp.write_text(_resolve_newest() + "\n")
    return stamp.read_text().strip()


@contextlib.contextmanager
def _locked():
    """One fetch at a time per cache: test sessions of several checkouts share it."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _resolve_newest() -> str:
    """Maven resolves the version range against Central's metadata; we read its answer."""
    work = cache_root() / "resolve"
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(_pom([f"{KAFKA_GROUP}:kafka-clients"], VERSION_RANGE))
    out = work / "resolved.txt"
    out.unlink(missing_ok=True)
    _mvn(["dependency:list", "-DexcludeTransitive=true", "-DincludeArtifactIds=kafka-clients",
          f"-DoutputFile={out}"], work)
    found = re.search(r"org\.apache\.kafka:kafka-clients:jar:([0-9][^:\s]*)", out.read_text())
    if not found:
        raise KafkaReferenceError(f"could not read the resolved Kafka version from {out}")
    return found.group(1)


def refresh_version() -> str:
    """Forget the stamped version and resolve again (a newer 4.x may have been released)."""
    (cache_root() / "kafka-version").unlink(missing_ok=True)
    return kafka_version()


# --- artifact sets ------------------------------------------------------------------------

def set_coordinates(name: str) -> list[str]:
    if name in SETS:
        return SETS[name]
    if name.count(":") in (1, 2):
        return [name, *_LOGGING]
    raise KafkaReferenceError(f"unknown set {name!r}: one of {', '.join(SETS)} or group:artifact[:version]")


def set_dir(name: str, version: str | None = None) -> Path:
    if name != "broker" and set_coordinates(name) == SETS["broker"]:
        name = "broker"  # one copy of the same jars
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return cache_root() / f"kafka-{version or kafka_version()}" / safe


def fetch(name: str = "broker", version: str | None = None) -> list[Path]:
    """The jars of a set, downloaded the first time (Maven's local repository keeps them)."""
    version = version or kafka_version()
    where = set_dir(name, version)
    stamp = where / ".complete"
    coordinates = set_coordinates(name)
    wanted = "\n".join(coordinates) + "\n"
    if not (stamp.exists() and stamp.read_text() == wanted):
        with _locked():
            if not (stamp.exists() and stamp.read_text() == wanted):
                where.mkdir(parents=True, exist_ok=True)
                (where / "pom.xml").write_text(_pom(coordinates, version))
                lib = where / "lib"
                shutil.rmtree(lib, ignore_errors=True)
                _mvn(["dependency:copy-dependencies", f"-DoutputDirectory={lib}", "-DincludeScope=runtime"],
                     where)
                stamp.write_text(wanted)
    return sorted((where / "lib").glob("*.jar"))


def classpath(name: str = "broker", version: str | None = None) -> str:
    return os.pathsep.join(str(p) for p in fetch(name, version))
