"""spark_jobs/stream_metrics.py on the metrics topic of the loadgen run's broker (restarted
on the same durable log): its windowed figures equal the batch aggregates analyze_metrics
computes over the same lines (the dump files), and a query stopped and restarted from its
checkpoint reads the lines added meanwhile exactly once."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kipper.client.blocking import connect_any
from kipper.client.producer_requests import produce
from kipper.protocol import records
from tests.spark.conftest import METRICS_TOPIC
from tests.support.broker import BrokerProcess

# the first test also waits for the shared Spark fixtures (a loadgen run with its audit, a JVM);
# on a busy 2-core machine that alone can pass the suite's 300 s
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
WINDOW_MS = 10_000
ADDED = 30


def file_lines(dumps) -> list[dict]:
    out = []
    for path in sorted(dumps.glob("metrics-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1])):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


@pytest.fixture(scope="module")
def replay(loadgen_run):
    """The loadgen run's broker again, on its log, publishing nothing itself: the topic
    holds exactly the lines of the dump files."""
    broker = BrokerProcess({"log.dirs": str(loadgen_run["log_dirs"])}).start()
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def first_run(spark, loadgen_run, replay, tmp_path_factory):
    """The command, in the tests' session (its own JVM would add half a minute)."""
    import contextlib
    import io

    from kipper.spark_jobs.stream_metrics import parse_args, run

    out = tmp_path_factory.mktemp("stream")
    console = io.StringIO()
    with contextlib.redirect_stdout(console):
        code = run(parse_args(["--bootstrap-server", replay.bootstrap, "--topic", METRICS_TOPIC, "--output",
                               str(out / "out"), "--checkpoint", str(out / "ck"), "--available-now"]), spark)
    assert code == 0
    return out, console.getvalue()


def test_the_windowed_figures_equal_the_batch_aggregates_over_the_same_lines(spark, loadgen_run, first_run):
    from kipper.spark_jobs import aggregates
    from kipper.spark_jobs.schema import DUMP_LINE
    from kipper.spark_jobs.stream_metrics import latest

    out, text = first_run
    assert text.startswith(f"stream_metrics: {METRICS_TOPIC} on ")
    assert "-- batch 0: seeds" in text and "-- batch 0: producer-id quota per user" in text
    assert "window (UTC)       source" in text and "broker 1" in text
    expected = file_lines(loadgen_run["dumps"])
    seeds = latest(spark, str(out / "out"), "seeds")
    quota = latest(spark, str(out / "out"), "quota_users")
    assert seeds["lines"].sum() == len(expected)

    lines = spark.read.schema(DUMP_LINE).json(str(loadgen_run["dumps"]))
    state = aggregates.producer_state(lines).toPandas()
    assert seeds["entries"].max() == state["entries"].max() > 0  # seed 000
    assert seeds["bytes"].max() == state["bytes"].max()
    users = aggregates.quota_summary(aggregates.quota_users(lines)).toPandas().set_index("user")
    streamed = quota.groupby("user").agg({"admitted": "max", "throttled": "max"})
    for user in users.index:  # seed 002
        assert streamed.loc[user, "admitted"] == users.loc[user, "admitted"]
        assert streamed.loc[user, "throttled"] == users.loc[user, "throttled"]
    expiries = aggregates.share_lock_expiries(aggregates.share_partitions(lines)).toPandas()
    assert seeds["lock_expiries"].max() == expiries["lock_expiries"].sum()  # seed 004
    txn = aggregates.transactions(lines).toPandas()
    assert seeds["commits"].max() == (txn["commits"].max() or 0)  # seed 003 (none in this workload)


def test_a_restart_from_the_checkpoint_reads_the_new_lines_once(spark, loadgen_run, replay, first_run):
    from kipper.spark_jobs.stream_metrics import latest, parse_args, start

    out, _ = first_run
    expected = file_lines(loadgen_run["dumps"])
    # more lines arrive while the query is stopped: the last ones again, a minute later
    added = [{**line, "ts_ms": line["ts_ms"] + 60_000} for line in expected[-ADDED:]]
    with connect_any(replay.bootstrap) as conn:
        batch = records.build_batch([(b"1", json.dumps(line).encode(), 0) for line in added])
        assert produce(conn, {(METRICS_TOPIC, 0): batch}).responses[0].partition_responses[0].error_code == 0
    args = parse_args(["--bootstrap-server", replay.bootstrap, "--topic", METRICS_TOPIC, "--output",
                       str(out / "out"), "--checkpoint", str(out / "ck"), "--available-now", "--quiet"])
    for query in start(spark, args):
        query.awaitTermination(240)
        assert query.exception() is None
    seeds = latest(spark, str(out / "out"), "seeds")
    want = Counter((line["ts_ms"] // WINDOW_MS) * WINDOW_MS for line in expected + added)
    got = {int(row.window_start.timestamp() * 1000): row.lines for row in seeds.itertuples()}
    assert got == dict(want)  # every line once: none lost, none counted twice across the restart
