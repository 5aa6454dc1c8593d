"""Analysis of broker metrics dumps: ``spark-submit spark_jobs/analyze_metrics.py
--input DUMP_DIR --output REPORT_DIR``.

The dump lines are parsed once, with the explicit schema of spark_jobs/schema.py,
into a Parquet table (``tables/dump_lines``); every aggregate (spark_jobs/aggregates.py)
then reads only the columns it needs from it. Computed: throughput over time and
per topic, request latency percentiles per API (histograms merged bucket by
bucket), and one view per seed: producer-state growth (000), per-user
producer-id rates and throttling (002), transactions and epoch bumps (003),
share-group delivery counts and lock expiries (004). With ``--loadgen`` the
load generator's result is set next to the broker's figures. Written: Parquet
tables, a CSV summary, PNG plots and one report.html (spark_jobs/report.py).
On a cluster the input (and ``--tables``) must be a path every executor can
reach: Spark reads it, nothing is copied by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

if __package__ in (None, ""):  # spark-submit spark_jobs/analyze_metrics.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kipper.spark_jobs.common import JobError, main_wrapper, spark_session

PLOT_POINTS = 600  # time buckets per plot at most
JOB_GROUP = "kipper-analyze-metrics"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="analyze_metrics", description="Analyze kipper metrics dumps.")
    p.add_argument("--input", required=True, metavar="DUMP_DIR",
                   help="a broker's metrics.dump.dir: a local directory, or a URI Spark reads "
                        "(hdfs://, s3a://, file://); on a cluster, a path every executor can read")
    p.add_argument("--output", required=True, metavar="REPORT_DIR", help="report.html, plots and summary.csv")
    p.add_argument("--tables", metavar="DIR_OR_URI",
                   help="where Spark writes the Parquet tables (default REPORT_DIR/tables); on a cluster, "
                        "a path every executor can write")
    p.add_argument("--loadgen", metavar="RESULT.json", help="a loadgen result, shown next to the broker's view")
    p.add_argument("--audit", metavar="AUDIT.json", help="an audit (spark_jobs/audit.py) for the report's Audit "
                                                         "section (default: the one in the --loadgen result)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--first-task-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="stop when no Spark task has started by then (default %(default)g)")
    return p.parse_args(argv)


def find_inputs(directory: str) -> list[str]:
    d = Path(directory)
    if not d.is_dir():
        raise JobError(f"--input {directory} is not a directory")
    files = sorted(str(p) for p in d.rglob("*.jsonl") if p.is_file() and p.stat().st_size > 0)
    if not files:
        raise JobError(f"--input {directory} holds no metrics dump lines (*.jsonl); "
                       "run the broker with metrics.dump.dir set to it")
    return files


def remote(uri: str) -> bool:
    """A URI that Spark reads through a Hadoop connector (hdfs://, s3a://, ...)."""
    scheme = urlparse(uri).scheme
    return len(scheme) > 1 and scheme != "file"


def input_paths(arg: str) -> list[str]:
    """What Spark reads: the *.jsonl files of a local directory (checked before
    Spark starts), or a remote directory that Spark lists itself."""
    if remote(arg):
        return [arg]
    return find_inputs(urlparse(arg).path if arg.startswith("file:") else arg)


def read_audit(path: str | None) -> dict | None:
    if path is None:
        return None
    try:
        audit = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JobError(f"--audit {path}: {exc}") from None
    if not isinstance(audit, dict) or not {"verdict", "totals", "partitions"} <= audit.keys():
        raise JobError(f"--audit {path}: not an audit (spark_jobs/audit.py --output)")
    return audit


def read_loadgen(path: str | None) -> dict | None:
    if path is None:
        return None
    try:
        result = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise JobError(f"--loadgen {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise JobError(f"--loadgen {path}: not JSON: {exc}") from None
    missing = [k for k in ("acked", "stored_records", "latency", "topics") if k not in (result or {})]
    if not isinstance(result, dict) or missing:
        raise JobError(f"--loadgen {path}: not a loadgen result (missing {', '.join(missing) or 'everything'})")
    return result


# --- the job ---------------------------------------------------------------------------------------

def parallel(spark, jobs: dict, threads: int = 4) -> dict:
    """Run independent Spark actions side by side, each thread in the job group."""
    from concurrent.futures import ThreadPoolExecutor

    sc = spark.sparkContext

    def run(fn):
        sc.setJobGroup(JOB_GROUP, "kipper metrics analysis", True)  # per thread in PySpark
        return fn()

    with ThreadPoolExecutor(threads, thread_name_prefix="analysis") as pool:
        futures = {name: pool.submit(run, fn) for name, fn in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def read_lines(spark, inputs: list[str], tables: str):
    """The dump lines, parsed once with the explicit schema into tables/dump_lines."""
    from kipper.spark_jobs.schema import DUMP_LINE

    reader = (spark.read.schema(DUMP_LINE).option("mode", "PERMISSIVE")
              .option("columnNameOfCorruptRecord", "_corrupt_record"))
    if len(inputs) == 1 and remote(inputs[0]):
        reader = reader.option("recursiveFileLookup", "true").option("pathGlobFilter", "*.jsonl")
    reader.json(inputs).write.mode("overwrite").parquet(f"{tables}/dump_lines")
    return spark.read.parquet(f"{tables}/dump_lines")


def analyze(spark, inputs: list[str], output: Path, tables: str | None = None, loadgen: dict | None = None,
            audit: dict | None = None) -> dict:
    from pyspark.sql import functions as F

    from kipper.spark_jobs import aggregates as A
    from kipper.spark_jobs import report

    tables = tables or str(output / "tables")
    started = time.monotonic()
    parsed = read_lines(spark, inputs, tables)
    counts = parsed.agg(F.count("*").alias("n"), F.count("_corrupt_record").alias("corrupt"),
                        F.min("ts_ms").alias("t0"), F.max("ts_ms").alias("t1"),
                        F.countDistinct("broker_id").alias("brokers")).first()
    if counts["n"] == 0:
        raise JobError(f"--input {inputs[0]} holds no metrics dump lines (*.jsonl)")
    if counts["n"] == counts["corrupt"] or counts["t0"] is None:
        raise JobError(f"none of the {counts['n']} line(s) in the input is a metrics dump line")
    lines = parsed.where("_corrupt_record is null and ts_ms is not null").drop("_corrupt_record")
    t0, t1 = counts["t0"], counts["t1"]
    step_ms = max(1000, -(-(t1 - t0 + 1) // PLOT_POINTS))

    def save(df, name):
        df.coalesce(1).write.mode("overwrite").parquet(f"{tables}/{name}")
        return spark.read.parquet(f"{tables}/{name}")

    def save_pandas(pdf, name):
        if len(pdf):
            spark.createDataFrame(pdf).coalesce(1).write.mode("overwrite").parquet(f"{tables}/{name}")
        return pdf

    # Many small jobs: each waits mostly on scheduling, so independent ones run side by side.
    saved = parallel(spark, {
        "tp": lambda: save(A.throughput(lines), "throughput"),
        "topics": lambda: save(A.topic_throughput(lines), "topic_throughput").toPandas(),
        "lat_time": lambda: save(A.api_latency_over_time(lines), "api_latency_over_time"),
        "lat": lambda: save_pandas(A.api_latency(lines), "api_latency"),
        "users": lambda: save(A.quota_users(lines), "quota_users"),
        "ps": lambda: save(A.producer_state(lines), "producer_state"),
        "txn": lambda: save(A.transactions(lines), "transactions"),
        "shares": lambda: save(A.share_partitions(lines), "share_partitions"),
        "share_groups": lambda: save(A.share_groups(lines), "share_groups"),
    })
    tp, topics, lat_time, lat, users, ps, txn, shares = (
        saved[k] for k in ("tp", "topics", "lat_time", "lat", "users", "ps", "txn", "shares"))

    def last_per_broker(df, *aggs):
        return {r["broker_id"]: r.asDict() for r in df.groupBy("broker_id").agg(*aggs).collect()}

    got = parallel(spark, {
        "user_summary": lambda: save(A.quota_summary(users), "quota_summary").toPandas(),
        "delivery": lambda: save(A.share_delivery_counts(shares), "share_delivery_counts").toPandas(),
        "expiries": lambda: save(A.share_lock_expiries(shares), "share_lock_expiries").toPandas(),
        "totals": lambda: tp.agg(*(F.sum(c).alias(c) for c in ("records_in", "bytes_in", "records_out", "bytes_out")),
                                 F.sum("interval_ms").alias("interval_ms")).first().asDict(),
        "brokers": lambda: last_per_broker(tp, F.max_by("broker_total_records_in", "ts_ms").alias("records_in"),
                                           F.max_by("broker_total_bytes_in", "ts_ms").alias("bytes_in")),
        "ps_last": lambda: last_per_broker(
            ps, F.min_by("entries", "ts_ms").alias("entries_first"), F.max_by("entries", "ts_ms").alias("entries_last"),
            F.max("entries").alias("entries_peak"), F.max_by("bytes", "ts_ms").alias("bytes_last"),
            *(F.max(c).alias(c) for c in ("duplicates", "duplicate_sequence_errors", "out_of_order", "fencings",
                                          "expired", "producer_ids_allocated"))),
        "txn_last": lambda: last_per_broker(
            txn, *(F.max(c).alias(c) for c in ("commits", "aborts", "fenced", "timed_out", "epoch_bumps",
                                               "idempotent_epoch_bumps", "producer_state_fencings")),
            F.max_by("transactional_ids", "ts_ms").alias("transactional_ids")),
        "s_throughput": lambda: A.bucketed(tp, ["records_in", "records_out", "bytes_in", "bytes_out"], "sum",
                                           t0, step_ms),
        "s_latency": lambda: A.bucketed(lat_time, ["p50_us", "p99_us", "max_us"], "max", t0, step_ms, ("api",)),
        "s_producer_state": lambda: A.bucketed(ps, ["entries", "bytes", "duplicates", "producer_ids_allocated"],
                                               "max", t0, step_ms),
        "s_quotas": lambda: A.bucketed(users, ["producer_id_rate", "throttle_time_ms", "quota", "admitted",
                                               "throttled"], "max", t0, step_ms, ("user",)),
        "s_transactions": lambda: A.bucketed(txn, ["commits", "aborts", "fenced", "epoch_bumps",
                                                   "idempotent_epoch_bumps", "producer_state_fencings"],
                                             "max", t0, step_ms),
        "s_share": lambda: A.bucketed(shares, ["in_flight", "acquired", "archived", "lock_expiries"], "max", t0,
                                      step_ms, per=("group", "topic", "partition")),
    })
    user_summary, delivery, expiries = got["user_summary"], got["delivery"], got["expiries"]
    totals, brokers, ps_last, txn_last = got["totals"], got["brokers"], got["ps_last"], got["txn_last"]
    series = {k[2:]: v for k, v in got.items() if k.startswith("s_")}
    run_topics_in = None
    if loadgen is not None:
        wanted = topics[topics["topic"].isin(loadgen["topics"])]
        run_topics_in = int(wanted["records_in"].sum()) if len(wanted) else 0
    step_s = step_ms / 1000
    for col in ("records_in", "records_out"):
        series["throughput"][f"{col}_per_s"] = series["throughput"][col] / step_s
    analysis = {
        "input": {"lines": counts["n"], "corrupt": counts["corrupt"], "files": len(inputs),
                  "brokers": sorted(brokers), "t0_ms": t0, "t1_ms": t1, "step_s": step_s},
        "totals": {**{k: int(totals[k] or 0) for k in ("records_in", "bytes_in", "records_out", "bytes_out")},
                   "wall_s": (totals["interval_ms"] or 0) / 1000 / max(1, counts["brokers"]),
                   "peak_in_per_s": float(series["throughput"]["records_in_per_s"].max() or 0)},
        "brokers": brokers, "topics": topics, "api_latency": lat, "users": user_summary,
        "producer_state": ps_last, "transactions": txn_last,
        "delivery": delivery, "expiries": expiries, "series": series,
        "loadgen": loadgen, "run_topics_in": run_topics_in,
        "audit": audit if audit is not None else (loadgen or {}).get("audit"),
    }
    analysis["seconds"] = round(time.monotonic() - started, 2)
    return report.write(output, analysis)


def run(args: argparse.Namespace) -> int:
    inputs = input_paths(args.input)
    loadgen = read_loadgen(args.loadgen)
    audit = read_audit(args.audit)
    output = Path(args.output)
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JobError(f"--output {args.output}: {exc.strerror or exc}") from None
    from kipper.spark_jobs.watchdog import Watchdog

    # the aggregates are small after the map side: a few shuffle partitions, not Spark's 200
    spark = spark_session("kipper-analyze-metrics", args.master, {"spark.sql.shuffle.partitions": "8"})
    try:
        started = time.monotonic()
        sc = spark.sparkContext
        master = sc.master
        sc.setJobGroup(JOB_GROUP, "kipper metrics analysis", True)
        with Watchdog(sc, JOB_GROUP, args.first_task_timeout) as watchdog:
            try:
                result = analyze(spark, inputs, output, args.tables, loadgen, audit)
            except JobError:
                raise
            except Exception:
                if watchdog.cause is not None:
                    raise JobError(f"{watchdog.cause}; the Spark job was stopped") from None
                raise
    finally:
        spark.stop()
    s = {(sec, k): v for sec, k, v, _ in result["summary"]}
    print(f"analyze_metrics: {s[('input', 'lines')]:,} lines from {len(inputs)} input(s) on {master}, "
          f"{s[('throughput', 'records_in')]:,} records in, "
          f"{s[('throughput', 'records_in_per_s_mean')]:,} records/s mean, "
          f"{time.monotonic() - started:.1f} s", flush=True)
    print(f"report: {output / 'report.html'}", flush=True)
    return 0


def main(argv=None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    main_wrapper("analyze_metrics", main)
