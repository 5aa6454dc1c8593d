"""Both documented commands on a real Spark standalone cluster (a master and two
workers on loopback, started with spark-class), with spark-submit's own
--master and the executors' Python shipped as a packed virtualenv
(--archives, PYSPARK_PYTHON): the workers' own Python has no kipper.

The load is workloads/seeds.yaml, so the same run shows every seed in the
report; and two clusters that cannot run a task stop the loadgen with one line.
"""

from __future__ import annotations

import csv
import json
import socket
import subprocess
import sys
import time

import pytest

from tests.spark.conftest import output_lines, spark_submit
from tests.spark.report_checks import check_report
from tests.support.broker import ROOT, BrokerProcess
from tests.support.readback import read_topic
from tests.support.spark_cluster import SparkStandaloneCluster, outside_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # the seeds run, its audit and analysis on the cluster: one fixture

SEEDS_BROKER = {"producer.id.quota.window.num": "2", "producer.id.quota.window.size.seconds": "2",
                "group.share.record.lock.duration.ms": "1000", "metrics.dump.interval.ms": "500"}
DURATION_S = "20"


@pytest.fixture(scope="module")
def packed_env(tmp_path_factory):
    out = tmp_path_factory.mktemp("env") / "kipper-env.tar.gz"
    subprocess.run([sys.executable, "-m", "kipper.spark_jobs.pack_env", "--output", str(out)], cwd=ROOT,
                   check=True, capture_output=True, timeout=300)
    return out


@pytest.fixture(scope="module")
def cluster():
    with SparkStandaloneCluster(workers=2, cores=1, memory="1g") as c:
        yield c


def on_cluster(cluster, packed_env, *conf: str) -> dict:
    """spark-submit's arguments and environment for the cluster, as docs/SPARK.md shows them."""
    submit = ("--master", cluster.url, "--archives", f"{packed_env}#environment", *conf)
    return {"submit_args": submit, "env": {"PYSPARK_PYTHON": "./environment/bin/python", "SPARK_LOCAL_IP": "127.0.0.1"}}


@pytest.fixture(scope="module")
def seeds_run(cluster, packed_env, tmp_path_factory):
    """workloads/seeds.yaml on the cluster, then the analysis of the broker's dumps there too."""
    tmp = tmp_path_factory.mktemp("seeds")
    dumps = tmp / "dumps"
    broker = BrokerProcess({"metrics.dump.dir": str(dumps), **SEEDS_BROKER}).start()
    try:
        # every core registered before the job is planned, so it gets one task per worker
        load = spark_submit("loadgen.py", "--bootstrap-server", broker.bootstrap,
                            "--workload", str(ROOT / "workloads" / "seeds.yaml"), "--duration-seconds", DURATION_S,
                            "--output", str(tmp / "result.json"), "--progress-interval", "5", timeout=600,
                            **on_cluster(cluster, packed_env, "--conf", "spark.cores.max=2",
                                         "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0"))
        result = json.loads((tmp / "result.json").read_text()) if (tmp / "result.json").exists() else None
        stored = None
        if result is not None:
            stored = sum(len(rs) for t in result["topics"] for rs in read_topic(broker.bootstrap, t).values())
    finally:
        broker.stop()
    assert load.returncode == 0, load.stdout + load.stderr
    report = tmp / "report"
    analysis = spark_submit("analyze_metrics.py", "--input", str(dumps), "--output", str(report),
                            "--loadgen", str(tmp / "result.json"), timeout=600, **on_cluster(cluster, packed_env))
    assert analysis.returncode == 0, analysis.stdout + analysis.stderr
    summary = {(r["section"], r["metric"]): r["value"] for r in csv.DictReader(open(report / "summary.csv"))}
    return {"load": load, "result": result, "stored": stored, "dumps": dumps, "report": report,
            "summary": summary, "analysis": analysis, "apps": cluster.apps()}


def test_spark_submit_master_reaches_the_cluster_and_the_master_registers_both_jobs(cluster, seeds_run):
    result = seeds_run["result"]
    assert result["master"] == cluster.url
    names = {a["name"] for a in seeds_run["apps"]}
    assert {"kipper-loadgen-seeds", "kipper-analyze-metrics"} <= names
    assert f"on {cluster.url}" in seeds_run["analysis"].stdout


def test_tasks_ran_on_both_workers_in_the_shipped_environment(cluster, seeds_run):
    tasks = seeds_run["result"]["per_task"]
    workers = {i for t in tasks for i in range(cluster.workers) if t["workdir"].startswith(str(cluster.worker_dir(i)))}
    assert workers == {0, 1} and len(tasks) == 2
    for t in tasks:
        assert t["python"] == f"{t['workdir']}/environment/bin/python"
        assert t["kipper"].startswith(f"{t['workdir']}/environment/")
    # the workers' own Python cannot import kipper: only the archive brings it
    bare = subprocess.run(["python3", "-c", "import kipper"], env=outside_env(), cwd=cluster.dir,
                          capture_output=True)
    assert bare.returncode != 0


def test_acked_equals_stored_and_the_analysis_totals_equal_the_broker_counters(seeds_run):
    result, summary = seeds_run["result"], seeds_run["summary"]
    assert result["acked"] > 5_000 and result["stored_records"] == result["acked"] == seeds_run["stored"]
    assert result["roles"]["steady"]["failed"] == result["roles"]["steady"]["unacknowledged"] == 0
    files = sorted(seeds_run["dumps"].glob("metrics-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    last = json.loads(files[-1].read_text().splitlines()[-1])
    assert int(summary[("throughput", "records_in")]) == last["totals"]["records_in"] == result["acked"]
    assert int(summary[("broker 1", "counter_records_in")]) == last["totals"]["records_in"]
    assert int(summary[("loadgen", "run_topics_records_in")]) == result["acked"]


def test_the_audit_on_the_cluster_reads_every_committed_record_once_and_no_aborted_one(seeds_run):
    """The seeds run's audit (Spark's Kafka connector, read_committed, on both workers):
    the aborted and fenced transactions' records stay unread; the rest once, in order."""
    result = seeds_run["result"]
    audit, t = result["audit"], result["audit"]["totals"]
    assert audit["verdict"] == "clean", audit
    assert t["duplicates"] == t["missing"] == t["misordered"] == t["aborted_seen"] == 0
    aborted = sum(b - a + 1 for led in result["producers"] for a, b in led["aborted"])
    assert aborted > 0 and t["records"] == result["stored_records"] - aborted
    assert t["acked"] > 5_000 and t["acked"] == t["distinct"] - t["stored_unacknowledged"]
    html = (seeds_run["report"] / "report.html").read_text()  # the analysis shows the loadgen's audit
    assert "<h2>Audit</h2>" in html and "every acknowledged record was read exactly once" in html
    assert seeds_run["summary"][("audit", "verdict")] == "clean"


def test_every_seed_section_of_the_report_has_data(seeds_run):
    report, summary = seeds_run["report"], seeds_run["summary"]
    import pandas as pd

    # seed 000: producer-state entries
    assert int(summary[("producer_state broker 1", "entries_peak")]) > 0
    # seed 002: the quota user has throttled ids, and admitted ones
    users = pd.read_parquet(report / "tables" / "quota_summary").set_index("user")
    assert users.loc["ANONYMOUS", "throttled"] > 0 and users.loc["ANONYMOUS", "admitted"] > 0
    # seed 003: commits, aborts and at least one fencing or epoch bump
    txn = pd.read_parquet(report / "tables" / "transactions")
    assert txn["commits"].max() > 0 and txn["aborts"].max() > 0
    assert txn["fenced"].max() + txn["epoch_bumps"].max() >= 1
    # seed 004: delivery counts above 1, archived records, lock expiries
    delivery = pd.read_parquet(report / "tables" / "share_delivery_counts")
    assert delivery["delivery_count"].max() > 1
    expiries = pd.read_parquet(report / "tables" / "share_lock_expiries")
    assert expiries["lock_expiries"].sum() > 0 and expiries["archived_peak"].max() > 0
    html = (report / "report.html").read_text()
    for png in ("producer_state.png", "quotas.png", "transactions.png", "share.png"):
        assert f'src="{png}"' in html
    assert "No data" not in html


def test_the_report_prints_counts_as_integers_and_times_as_utc(seeds_run):
    check_report((seeds_run["report"] / "report.html").read_text())


def test_executors_that_cannot_start_stop_the_loadgen_with_one_line(cluster, packed_env, tmp_path):
    """Every executor fails to bind its block manager port (held here): Spark relaunches
    them and requeues the tasks forever; the loadgen stops and names Spark's cause, long
    before its 10 minutes (how long Spark takes to give up depends on the machine's load:
    a loaded make test saw 155 s, and beside stress-ng more than the 7 minutes allowed)."""
    wl = tmp_path / "w.yaml"
    wl.write_text("topics: 1\npartitionsPerTopic: 1\nmessageSize: 10\nproducersPerTopic: 2\n"
                  "producerRate: 10\ntestDurationMinutes: 10\n")
    with socket.socket() as held, BrokerProcess() as broker:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        started = time.monotonic()
        proc = spark_submit("loadgen.py", "--bootstrap-server", broker.bootstrap, "--workload", str(wl),
                            "--output", str(tmp_path / "r.json"), timeout=420,
                            **on_cluster(cluster, packed_env, "--conf", f"spark.blockManager.port={port}",
                                         "--conf", "spark.driver.blockManager.port=0",
                                         "--conf", "spark.port.maxRetries=0"))
        took = time.monotonic() - started
    assert proc.returncode == 1, proc.stdout + proc.stderr
    errors = [x for x in output_lines(proc) if x.startswith("loadgen: error:")]
    assert len(errors) == 1, errors
    assert "Spark lost every executor" in errors[0] and "Address already in use" in errors[0], errors[0]
    assert took < 420 and not (tmp_path / "r.json").exists()


def test_no_task_within_the_first_task_timeout_stops_the_loadgen_with_one_line(cluster, packed_env, tmp_path):
    """Executors that need more memory than any worker has are never launched."""
    wl = tmp_path / "w.yaml"
    wl.write_text("topics: 1\npartitionsPerTopic: 1\nmessageSize: 10\nproducersPerTopic: 1\n"
                  "producerRate: 10\ntestDurationMinutes: 1\n")
    with BrokerProcess() as broker:
        proc = spark_submit("loadgen.py", "--bootstrap-server", broker.bootstrap, "--workload", str(wl),
                            "--first-task-timeout", "8", "--output", str(tmp_path / "r.json"), timeout=240,
                            **on_cluster(cluster, packed_env, "--executor-memory", "4g"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    errors = [x for x in output_lines(proc) if x.startswith("loadgen: error:")]
    assert errors == ["loadgen: error: no Spark task started within 8 s (no executor registered; Spark: Initial "
                      "job has not accepted any resources; check your cluster UI to ensure that workers are "
                      "registered and have sufficient resources); the Spark job was stopped"], errors
