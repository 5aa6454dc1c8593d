"""spark_jobs/analyze_metrics.py over the dump a real broker wrote during the loadgen run."""

from __future__ import annotations

import csv
import json

import pytest

from tests.spark.conftest import output_lines, spark_submit
from tests.spark.report_checks import check_report

# the first test also waits for the shared Spark fixtures (a loadgen run with its audit, a JVM);
# on a busy 2-core machine that alone can pass the suite's 300 s
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def analysis(loadgen_run):
    out = loadgen_run["tmp"] / "report"
    proc = spark_submit("analyze_metrics.py", "--input", str(loadgen_run["dumps"]), "--output", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = {(r["section"], r["metric"]): r["value"] for r in csv.DictReader(open(out / "summary.csv"))}
    return out, summary, proc


def last_dump_line(dumps) -> dict:
    files = sorted(dumps.glob("metrics-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    return json.loads(files[-1].read_text().splitlines()[-1])


def test_computed_throughput_matches_the_broker_counters(loadgen_run, analysis):
    out, summary, _ = analysis
    broker_total = last_dump_line(loadgen_run["dumps"])["totals"]["records_in"]
    assert int(summary[("throughput", "records_in")]) == broker_total
    assert int(summary[("broker 1", "counter_records_in")]) == broker_total
    assert broker_total == loadgen_run["result"]["acked"]  # the broker took nothing else
    import pandas as pd

    tp = pd.read_parquet(out / "tables" / "throughput")
    assert tp["records_in"].sum() == broker_total
    assert (tp["interval_ms"] > 0).all() and tp["ts_ms"].is_monotonic_increasing


def test_latency_percentiles_per_api_come_from_the_merged_histograms(analysis):
    out, summary, _ = analysis
    import pandas as pd

    lat = pd.read_parquet(out / "tables" / "api_latency").set_index("api")
    produce = lat.loc["Produce"]
    assert produce["requests"] > 0
    assert 0 < produce["p50_us"] <= produce["p99_us"] <= produce["max_us"]
    assert int(summary[("api Produce", "requests")]) == produce["requests"]


def test_producer_state_and_share_groups_are_tabulated(analysis):
    out, summary, _ = analysis
    import pandas as pd

    ps = pd.read_parquet(out / "tables" / "producer_state")
    assert ps["entries"].max() >= 1
    shares = pd.read_parquet(out / "tables" / "share_partitions")
    assert len(shares) > 0 and set(shares["partition"]) == {0, 1, 2}
    delivery = pd.read_parquet(out / "tables" / "share_delivery_counts")
    assert set(delivery["delivery_count"]) >= {1}


def test_producer_id_rates_per_user_come_from_the_quota_section(loadgen_run, analysis):
    out, summary, _ = analysis
    import pandas as pd

    users = pd.read_parquet(out / "tables" / "quota_users")
    anonymous = users[users["user"] == "ANONYMOUS"]
    assert len(anonymous) > 0 and (anonymous["quota"] == 50.0).all()
    assert anonymous["admitted"].max() == loadgen_run["result"]["producers_created"]
    assert anonymous["producer_id_rate"].max() > 0
    assert ("user ANONYMOUS", "producer_id_rate_max") in summary
    assert (out / "quotas.png").exists()


def test_the_report_shows_the_plots_and_the_summary(analysis):
    out, _, proc = analysis
    html = (out / "report.html").read_text()
    for png in ("throughput.png", "latency.png", "producer_state.png", "share.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="{png}"' in html
    assert "records_in" in html and "report:" in proc.stdout


def test_the_report_prints_counts_as_integers_and_times_as_utc(analysis):
    out, _, _ = analysis
    html = (out / "report.html").read_text()
    check_report(html)
    assert "No loadgen result given" in html  # the client's side needs --loadgen


def test_an_empty_input_directory_ends_with_one_line_and_a_non_zero_exit(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = spark_submit("analyze_metrics.py", "--input", str(tmp_path / "empty"), "--output", str(tmp_path / "r"),
                        timeout=120)
    assert proc.returncode == 1
    (line,) = output_lines(proc)
    assert line.startswith(f"analyze_metrics: error: --input {tmp_path / 'empty'} holds no metrics dump lines")
    assert "Traceback" not in proc.stderr and not (tmp_path / "r").exists()
