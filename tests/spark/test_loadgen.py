"""spark_jobs/loadgen.py end to end: a short run, local[2], against a real broker."""

from __future__ import annotations

import pytest

from tests.spark.conftest import spark_submit, output_lines

# the first test also waits for the shared Spark fixtures (a loadgen run with its audit, a JVM);
# on a busy 2-core machine that alone can pass the suite's 300 s
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_records_the_broker_stored_equal_the_records_the_job_reports_acknowledged(loadgen_run):
    proc, result = loadgen_run["proc"], loadgen_run["result"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["acked"] > 10_000 and result["failed"] == 0 and result["unacknowledged"] == 0
    assert sum(loadgen_run["stored"].values()) == result["acked"]  # read back record by record
    assert result["stored_records"] == result["acked"] and result["stored_matches_acked"] is True
    assert result["tasks"] == 2 and sum(t["acked"] for t in result["per_task"]) == result["acked"]


def test_the_run_ends_with_a_clean_audit_every_acknowledged_record_read_once_in_order(loadgen_run):
    result = loadgen_run["result"]
    audit = result["audit"]
    t = audit["totals"]
    assert audit["verdict"] == "clean" and audit["against"] == "loadgen ledgers"
    assert t["records"] == t["distinct"] == t["acked"] == result["acked"]
    assert t["duplicates"] == t["missing"] == t["misordered"] == t["aborted_seen"] == t["unmarked"] == 0
    assert len(audit["partitions"]) == 3 and sum(p["records"] for p in audit["partitions"]) == result["acked"]
    # the churn replaced producers: each instance has its own ledger, all of them settled
    ledgers = result["producers"]
    assert len(ledgers) == result["producers_created"] and sum(led["sent"] for led in ledgers) == result["sent"]
    assert all(led["unacknowledged"] == led["failed"] == [] for led in ledgers)
    assert "audit              clean" in loadgen_run["proc"].stdout or "clean:" in loadgen_run["proc"].stdout


def test_the_result_merges_task_histograms_and_counts_churn_and_share_consumers(loadgen_run):
    result = loadgen_run["result"]
    lat = result["latency"]
    assert lat["count"] == result["acked"]
    assert 0 < lat["p50_ms"] <= lat["p99_ms"] <= lat["max_ms"]
    assert sum(n for _, n in result["latency_histogram_us"]["buckets"]) == result["acked"]
    assert result["producers_created"] > 2  # one fresh producer id per second on top of the two
    assert result["share_consumed"] == result["acked"] and not result["share_errors"]


def test_the_run_prints_progress_and_a_table_and_no_spark_info_logs(loadgen_run):
    proc = loadgen_run["proc"]
    assert "progress:" in proc.stdout and "records acked" in proc.stdout and "latency ms" in proc.stdout
    noisy = [line for line in (proc.stdout + proc.stderr).splitlines() if " INFO " in line]
    assert not noisy, noisy[:5]


def test_a_bad_workload_file_ends_with_one_line_and_exit_status_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("topics: 1\npartitionsPerTopic: 1\nproducersPerTopic: 1\nproducerRate: 10\n"
                   "testDurationMinutes: 1\n")
    proc = spark_submit("loadgen.py", "--bootstrap-server", "127.0.0.1:1", "--workload", str(bad), timeout=120)
    assert proc.returncode == 2
    assert output_lines(proc) == [f"loadgen: error: {bad}: missing workload key(s): messageSize"]
    assert "Traceback" not in proc.stderr


def test_an_unreachable_broker_ends_with_one_line_and_a_non_zero_exit(tmp_path):
    from tests.support.broker import free_port

    wl = tmp_path / "ok.yaml"
    wl.write_text("topics: 1\npartitionsPerTopic: 1\nmessageSize: 10\nproducersPerTopic: 1\n"
                  "producerRate: 10\ntestDurationMinutes: 1\n")
    proc = spark_submit("loadgen.py", "--bootstrap-server", f"127.0.0.1:{free_port()}", "--workload", str(wl),
                        timeout=120)
    assert proc.returncode == 1
    (line,) = output_lines(proc)
    assert line.startswith("loadgen: error: broker unreachable: cannot reach any bootstrap server")
    assert "Traceback" not in proc.stderr
