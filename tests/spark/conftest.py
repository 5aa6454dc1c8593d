"""Spark jobs run as a user runs them: ``spark-submit`` subprocesses.

One broker (dumping metrics every 200 ms, to files and to METRICS_TOPIC, with a
durable log) and one loadgen run are shared by the module's tests: the loadgen
test checks what the job reports (its audit too) against what the broker stored,
the analysis test reads the dump that run left behind, and the live-metrics test
restarts the broker on the same log and reads the metrics topic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import requires
from tests.support.broker import ROOT, BrokerProcess
from tests.support.readback import read_topic

requires.module("pyspark", "spark")
requires.java()
requires.spark_kafka_connector()  # every loadgen run ends with the audit, through the connector

BIN = Path(sys.executable).parent


def spark_submit(script: str, *args: str, timeout: float = 240, quiet_conf: bool = True,
                 submit_args: tuple = (), env: dict | None = None) -> subprocess.CompletedProcess:
    """``spark-submit [submit_args] spark_jobs/SCRIPT args``; ``env`` adds to or
    (with None values) removes from the environment."""
    full = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if quiet_conf:
        full["SPARK_CONF_DIR"] = str(ROOT / "spark_jobs")
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    submit = BIN / "spark-submit" if (BIN / "spark-submit").exists() else "spark-submit"
    path = script if Path(script).is_absolute() else str(ROOT / "spark_jobs" / script)
    return subprocess.run([str(submit), *submit_args, path, *args], cwd=ROOT, env=full,
                          capture_output=True, text=True, timeout=timeout)


def output_lines(proc) -> list[str]:
    """What the job printed, without the JVM's own start-up notice. spark-submit
    hands a Python driver's stderr on through its stdout, so both are read."""
    return [line for line in (proc.stdout + proc.stderr).splitlines()
            if line.strip() and not line.startswith("WARNING: Using incubator modules")]


LOAD_WORKLOAD = """\
name: spark-test
topics: 1
partitionsPerTopic: 3
messageSize: 200
producersPerTopic: 2
producerRate: 4000
testDurationMinutes: 0.17
keyDistributor: KEY_ROUND_ROBIN
idempotence: true
producerIdChurnPerSecond: 1
shareConsumersPerTopic: 1
"""


METRICS_TOPIC = "_kipper-metrics"


@pytest.fixture(scope="session")
def loadgen_run(tmp_path_factory):
    """A ~10 s loadgen run, local[2], against a broker that dumps its metrics."""
    tmp = tmp_path_factory.mktemp("loadgen")
    dumps = tmp / "dumps"
    workload = tmp / "workload.yaml"
    workload.write_text(LOAD_WORKLOAD)
    broker = BrokerProcess({"metrics.dump.dir": str(dumps), "metrics.dump.interval.ms": "200",
                            "metrics.dump.topic": METRICS_TOPIC, "log.dirs": str(tmp / "data")}).start()
    try:
        # a producer-id quota for every user, so the dump carries a quota section to analyse
        subprocess.run([sys.executable, "-m", "kipper", "configs", "--bootstrap-server", broker.bootstrap,
                        "--alter", "--add-config", "producer_ids_rate=50", "--entity-type", "users"],
                       cwd=ROOT, check=True, capture_output=True, timeout=60)
        proc = spark_submit("loadgen.py", "--bootstrap-server", broker.bootstrap, "--workload", str(workload),
                            "--master", "local[2]", "--output", str(tmp / "result.json"),
                            "--progress-interval", "3")
        result = json.loads((tmp / "result.json").read_text()) if (tmp / "result.json").exists() else None
        stored = None
        if result is not None:
            stored = {t: sum(len(rs) for rs in read_topic(broker.bootstrap, t).values()) for t in result["topics"]}
    finally:
        broker.stop()  # the final interval is flushed on shutdown
    return {"proc": proc, "result": result, "stored": stored, "dumps": dumps, "tmp": tmp, "log_dirs": tmp / "data"}


@pytest.fixture(scope="session")
def spark():
    """A SparkSession in the test process (local[2]) with the Kafka connector, for the
    checks that need no spark-submit of their own: one JVM for all of them."""
    from kipper.spark_jobs.common import spark_session
    from kipper.spark_jobs.connector import add_to

    session = spark_session("kipper-tests", "local[2]", {"spark.sql.shuffle.partitions": "4",
                                                          "spark.sql.adaptive.enabled": "false"})
    add_to(session)
    yield session
    session.stop()
