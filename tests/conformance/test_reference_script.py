"""scripts/kafka-reference: the cache is used without Maven once filled, classpaths name
jars that exist, and the session's Kafka answers like the broker it is."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from kipper.client import admin
from kipper.client.connect import connect
from scripts import kafka_reference as kref
from tests.support.broker import ROOT
from tests.support.reference import require_kafka

require_kafka()

SCRIPT = ROOT / "scripts" / "kafka-reference"


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=300,
                          env=env or dict(os.environ))


def test_a_filled_cache_needs_neither_maven_nor_the_network(kafka_reference, tmp_path):
    # kafka_reference has filled the cache; a PATH with java but without mvn must do
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(shutil.which("java") or Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    (bin_dir / "python3").symlink_to(shutil.which("python3"))
    env = dict(os.environ, PATH=str(bin_dir))
    assert _run("version", env=env).stdout.strip() == kafka_reference.version
    done = _run("classpath", "broker", env=env)
    assert done.returncode == 0, done.stderr
    jars = done.stdout.strip().split(os.pathsep)
    assert all(Path(j).is_file() for j in jars)
    names = {Path(j).name for j in jars}
    assert f"kafka_2.13-{kafka_reference.version}.jar" in names
    assert f"kafka-tools-{kafka_reference.version}.jar" in names
    assert any(n.startswith("log4j-slf4j2-impl-") for n in names)
    assert str(kref.cache_root()) in jars[0] and str(ROOT) not in jars[0]


def test_the_reference_is_kafka_4_with_share_groups_and_sasl(kafka_reference):
    assert kafka_reference.version.startswith("4.")
    with connect(kafka_reference.bootstrap) as conn:
        assert 76 in conn.versions  # ShareGroupHeartbeat: share.version=1 is finalized
    with connect(kafka_reference.sasl_bootstrap, kafka_reference.sasl_settings("alice", "SCRAM-SHA-512")) as conn:
        assert admin.metadata(conn).brokers[0].port == int(kafka_reference.sasl_bootstrap.rsplit(":", 1)[1])


def test_a_kafka_tool_runs_against_the_reference(kafka_reference):
    done = _run("tool", "kafka-broker-api-versions", "--bootstrap-server", kafka_reference.bootstrap)
    assert done.returncode == 0, done.stderr
    assert "Produce(0):" in done.stdout
