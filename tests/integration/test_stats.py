"""``kipper stats`` over the dumps of a real broker, and its merging of intervals."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from kipper.client.producer import Producer
from kipper.cli.stats import latest_lines, merge, percentile
from tests.support.broker import ROOT, BrokerProcess


def kipper(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kipper", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def dumping_broker(tmp_path):
    proc = BrokerProcess({"metrics.dump.dir": str(tmp_path / "dumps"),
                          "metrics.dump.interval.ms": "200"}).start()
    yield proc, tmp_path / "dumps"
    proc.stop()


def test_stats_shows_what_a_running_broker_dumped(dumping_broker, unique):
    broker, dumps = dumping_broker
    topic = f"stats-{unique}"
    with Producer({"bootstrap.servers": broker.bootstrap}) as p:
        for i in range(500):
            p.send(topic, b"x" * 100)
        assert p.flush(10) == 0
    time.sleep(0.6)  # a few intervals after the last write
    res = kipper("stats", "--dump-dir", str(dumps), "--window", "1000")
    assert res.returncode == 0, res.stderr
    assert "Produce" in res.stdout and f"{topic}-0" in res.stdout
    assert "records in 500" in res.stdout.replace(",", "")
    res = kipper("stats", "--dump-dir", str(dumps), "--window", "1000", "--json")
    view = json.loads(res.stdout)
    assert sum(p["records_in"] for p in view["partitions"] if p["topic"] == topic) == 500
    assert view["apis"]["Produce"]["count"] >= 1 and view["totals"]["records_in"] == 500


def test_watch_redraws_the_given_number_of_times(dumping_broker):
    _, dumps = dumping_broker
    time.sleep(0.5)
    res = kipper("stats", "--dump-dir", str(dumps), "--watch", "0.2", "--count", "3")
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("connections: open") == 3


def test_stats_on_a_directory_without_dumps_fails_with_one_line(tmp_path):
    res = kipper("stats", "--dump-dir", str(tmp_path))
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "no metrics dump" in res.stderr
    res = kipper("stats", "--dump-dir", str(tmp_path / "missing"))
    assert res.returncode == 1 and "is not a directory" in res.stderr


def test_merging_sums_counts_and_merges_latency_histograms():
    a = {"broker_id": 1, "ts_ms": 1, "interval_ms": 1000,
         "apis": {"Produce": {"count": 2, "sum_us": 300, "max_us": 200, "buckets": [[104, 1], [208, 1]]}},
         "partitions": [{"topic": "t", "partition": 0, "bytes_in": 10, "records_in": 1,
                         "bytes_out": 0, "records_out": 0}]}
    b = {"broker_id": 1, "ts_ms": 2, "interval_ms": 1000,
         "apis": {"Produce": {"count": 2, "sum_us": 2100, "max_us": 2000, "buckets": [[104, 1], [2048, 1]]}},
         "partitions": [{"topic": "t", "partition": 0, "bytes_in": 30, "records_in": 3,
                         "bytes_out": 5, "records_out": 1}]}
    view = merge([a, b])
    produce = view["apis"]["Produce"]
    assert produce["count"] == 4 and produce["max_us"] == 2000 and produce["rate"] == 2.0
    assert produce["p50_us"] == 104 and produce["p99_us"] == 2000
    assert view["partitions"] == [{"topic": "t", "partition": 0, "bytes_in": 40, "records_in": 4,
                                   "bytes_out": 5, "records_out": 1}]


def test_percentile_of_the_overflow_bucket_is_the_maximum():
    assert percentile([[8, 1], [-1, 1]], 0.99, 999_000_000) == 999_000_000
    assert percentile([], 0.5, 0) == 0


def test_latest_lines_cross_rotated_files_and_skip_a_half_written_line(tmp_path):
    old, new = tmp_path / "metrics-1-0.jsonl", tmp_path / "metrics-1-1.jsonl"
    old.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(5)))
    new.write_text(json.dumps({"n": 5}) + "\n" + '{"n": 6')
    assert [r["n"] for r in latest_lines([old, new], 3)] == [3, 4, 5]
