"""Analysis of broker metrics dumps: ``spark-submit spark_jobs/analyze_metrics.py
--input DUMP_DIR --output REPORT_DIR``.

The dump lines are parsed once, with the explicit schema of spark_jobs/schema.py,
into a Parquet table (``tables/dump_lines``); every aggregate then reads only
the columns it needs from it. Computed: throughput over time and per topic,
request latency percentiles per API (histograms merged bucket by bucket),
per-user producer-id rates and throttle time, producer-state growth, and
share-group delivery counts and lock expiries. Written: Parquet tables, a CSV
summary, PNG plots and one report.html (spark_jobs/report.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # spark-submit spark_jobs/analyze_metrics.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kipper.spark_jobs.common import JobError, main_wrapper, spark_session

PLOT_POINTS = 600  # time buckets per plot at most
PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="analyze_metrics", description="Analyze kipper metrics dumps.")
    p.add_argument("--input", required=True, metavar="DUMP_DIR", help="a broker's metrics.dump.dir")
    p.add_argument("--output", required=True, metavar="REPORT_DIR")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
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


# --- aggregates (DataFrames in, DataFrames or small pandas frames out) ---------------------------

def throughput(lines):
    from pyspark.sql import functions as F

    def total(field):
        return F.expr(f"aggregate(coalesce(partitions, array()), 0L, (acc, p) -> acc + coalesce(p.{field}, 0L))")
    secs = F.col("interval_ms") / 1000.0
    return (lines.select("broker_id", "ts_ms", "interval_ms",
                         *(total(f).alias(f) for f in ("records_in", "bytes_in", "records_out", "bytes_out")),
                         F.col("totals.records_in").alias("broker_total_records_in"),
                         F.col("totals.bytes_in").alias("broker_total_bytes_in"),
                         F.col("connections.open").alias("connections_open"))
            .withColumn("records_in_per_s", F.col("records_in") / secs)
            .withColumn("bytes_in_per_s", F.col("bytes_in") / secs)
            .withColumn("records_out_per_s", F.col("records_out") / secs)
            .withColumn("bytes_out_per_s", F.col("bytes_out") / secs))


def topic_throughput(lines):
    from pyspark.sql import functions as F

    p = lines.select(F.explode("partitions").alias("p")).select("p.*")
    return (p.groupBy("topic").agg(*(F.sum(c).alias(c) for c in ("records_in", "bytes_in", "records_out", "bytes_out")),
                                   F.countDistinct("partition").alias("partitions"))
            .orderBy(F.desc("bytes_in")))


def api_latency_over_time(lines):
    from pyspark.sql import functions as F

    a = lines.select("broker_id", "ts_ms", F.explode("apis").alias("api", "h"))
    return a.select("broker_id", "ts_ms", "api", F.col("h.count").alias("count"),
                    (F.col("h.sum_us") / F.col("h.count")).alias("mean_us"),
                    F.col("h.p50_us").alias("p50_us"), F.col("h.p99_us").alias("p99_us"),
                    F.col("h.max_us").alias("max_us"))


def api_latency(lines):
    """Per API: requests and percentiles of all intervals, from the merged histograms."""
    import pandas as pd
    from pyspark.sql import functions as F

    a = lines.select(F.explode("apis").alias("api", "h"))
    totals = {r["api"]: r for r in a.groupBy("api").agg(
        F.sum("h.count").alias("count"), F.sum("h.sum_us").alias("sum_us"),
        F.max("h.max_us").alias("max_us")).collect()}
    buckets = (a.select("api", F.explode("h.buckets").alias("b"))
               .select("api", F.col("b")[0].alias("bound"), F.col("b")[1].alias("n"))
               .groupBy("api", "bound").agg(F.sum("n").alias("n")).collect())
    by_api: dict[str, list[tuple[int, int]]] = {}
    for r in buckets:
        by_api.setdefault(r["api"], []).append((r["bound"], r["n"]))
    rows = []
    for api, t in sorted(totals.items()):
        pairs = sorted(by_api.get(api, []), key=lambda b: (b[0] < 0, b[0]))
        n = sum(c for _, c in pairs) or 1
        row = {"api": api, "requests": int(t["count"] or 0),
               "mean_us": (t["sum_us"] or 0) / t["count"] if t["count"] else 0.0}
        for name, q in PERCENTILES:
            seen, value = 0, t["max_us"] or 0
            for bound, c in pairs:
                seen += c
                if c and seen >= q * n:
                    value = t["max_us"] if bound < 0 else min(bound, t["max_us"] or bound)
                    break
            row[f"{name}_us"] = int(value)
        row["max_us"] = int(t["max_us"] or 0)
        rows.append(row)
    return pd.DataFrame(rows, columns=["api", "requests", "mean_us", *(f"{n}_us" for n, _ in PERCENTILES), "max_us"])


def quota_users(lines):
    from pyspark.sql import functions as F

    return (lines.select("broker_id", "ts_ms", "interval_ms", F.explode("quotas.users").alias("u"))
            .select("broker_id", "ts_ms", "interval_ms", "u.*"))


def quota_summary(users):
    from pyspark.sql import functions as F

    return (users.groupBy("user").agg(
        F.count("*").alias("samples"), F.max("quota").alias("quota"),
        F.avg("producer_id_rate").alias("producer_id_rate_mean"),
        F.max("producer_id_rate").alias("producer_id_rate_max"),
        F.avg("throttle_time_ms").alias("throttle_time_ms_mean"),
        F.max("throttle_time_ms").alias("throttle_time_ms_max"),
        F.min("tokens").alias("tokens_min"),
        (F.max("throttled") - F.min("throttled")).alias("throttled"),
        (F.max("admitted") - F.min("admitted")).alias("admitted"))
        .orderBy("user"))


def producer_state(lines):
    from pyspark.sql import functions as F

    return lines.select("broker_id", "ts_ms", *(F.col(f"producer_state.{c}").alias(c) for c in (
        "entries", "bytes", "duplicates", "duplicate_sequence_errors", "out_of_order", "fencings", "expired")))


def share_partitions(lines):
    from pyspark.sql import functions as F

    return (lines.select("broker_id", "ts_ms", F.explode("share.partitions").alias("s"))
            .select("broker_id", "ts_ms", "s.group", "s.topic", "s.partition", "s.in_flight", "s.available",
                    "s.acquired", "s.acknowledged", "s.archived", "s.lock_expiries", "s.delivery_counts"))


def share_delivery_counts(shares):
    """Per group and delivery count: records at that count, at the peak and summed over samples."""
    from pyspark.sql import functions as F

    per_ts = (shares.select("group", "ts_ms", F.explode("delivery_counts").alias("delivery_count", "records"))
              .groupBy("group", "ts_ms", "delivery_count").agg(F.sum("records").alias("records")))
    return (per_ts.groupBy("group", "delivery_count")
            .agg(F.max("records").alias("records_peak"), F.sum("records").alias("record_samples"))
            .withColumn("delivery_count", F.col("delivery_count").cast("int"))
            .orderBy("group", "delivery_count"))


def share_lock_expiries(shares):
    from pyspark.sql import functions as F

    return (shares.groupBy("group", "topic", "partition")
            .agg((F.max("lock_expiries") - F.min("lock_expiries")).alias("lock_expiries"),
                 F.max("in_flight").alias("in_flight_peak"), F.max("archived").alias("archived_peak"))
            .orderBy("group", "topic", "partition"))


def share_groups(lines):
    return lines.select("broker_id", "ts_ms", "share_groups.*").where("groups is not null")


def bucketed(df, value_cols: list[str], how: str, t0: int, step_ms: int, keys: tuple = ()):
    """A time series cut into ``step_ms`` buckets (for plots): sum or max per bucket and keys."""
    from pyspark.sql import functions as F

    agg = F.sum if how == "sum" else F.max
    bucket = F.floor((F.col("ts_ms") - F.lit(t0)) / F.lit(step_ms)).alias("bucket")
    out = (df.groupBy(bucket, *keys).agg(*(agg(c).alias(c) for c in value_cols)).orderBy("bucket", *keys)
           .toPandas())
    out["t_s"] = out["bucket"] * step_ms / 1000.0
    return out


# --- the job ---------------------------------------------------------------------------------------

def analyze(spark, inputs: list[str], output: Path) -> dict:
    from pyspark.sql import functions as F

    from kipper.spark_jobs import report
    from kipper.spark_jobs.schema import DUMP_LINE

    tables = output / "tables"
    started = time.monotonic()
    raw = (spark.read.schema(DUMP_LINE).option("mode", "PERMISSIVE")
           .option("columnNameOfCorruptRecord", "_corrupt_record").json(inputs))
    raw.write.mode("overwrite").parquet(str(tables / "dump_lines"))  # parse the JSON once
    parsed = spark.read.parquet(str(tables / "dump_lines"))
    counts = parsed.agg(F.count("*").alias("n"), F.count("_corrupt_record").alias("corrupt"),
                        F.min("ts_ms").alias("t0"), F.max("ts_ms").alias("t1"),
                        F.countDistinct("broker_id").alias("brokers")).first()
    lines = parsed.where("_corrupt_record is null and ts_ms is not null").drop("_corrupt_record")
    if counts["n"] == counts["corrupt"] or counts["t0"] is None:
        raise JobError(f"none of the {counts['n']} line(s) in the input is a metrics dump line")
    t0, t1 = counts["t0"], counts["t1"]
    step_ms = max(1000, -(-(t1 - t0 + 1) // PLOT_POINTS))

    def save(df, name):
        df.coalesce(1).write.mode("overwrite").parquet(str(tables / name))
        return spark.read.parquet(str(tables / name))

    def save_pandas(pdf, name):
        (tables / name).mkdir(parents=True, exist_ok=True)
        pdf.to_parquet(tables / name / "part-0.parquet", index=False)
        return pdf

    tp = save(throughput(lines), "throughput")
    topics = save(topic_throughput(lines), "topic_throughput").toPandas()
    lat_time = save(api_latency_over_time(lines), "api_latency_over_time")
    lat = save_pandas(api_latency(lines), "api_latency")
    users = save(quota_users(lines), "quota_users")
    user_summary = save(quota_summary(users), "quota_summary").toPandas()
    ps = save(producer_state(lines), "producer_state")
    shares = save(share_partitions(lines), "share_partitions")
    delivery = save(share_delivery_counts(shares), "share_delivery_counts").toPandas()
    expiries = save(share_lock_expiries(shares), "share_lock_expiries").toPandas()
    sgroups = save(share_groups(lines), "share_groups")

    totals = tp.agg(*(F.sum(c).alias(c) for c in ("records_in", "bytes_in", "records_out", "bytes_out")),
                    F.sum("interval_ms").alias("interval_ms"), F.max("records_in_per_s").alias("peak")).first()
    last = {r["broker_id"]: r for r in tp.groupBy("broker_id").agg(
        F.max_by("broker_total_records_in", "ts_ms").alias("records_in"),
        F.max_by("broker_total_bytes_in", "ts_ms").alias("bytes_in")).collect()}
    ps_first_last = ps.groupBy("broker_id").agg(
        F.min_by("entries", "ts_ms").alias("first"), F.max_by("entries", "ts_ms").alias("last"),
        F.max("entries").alias("peak"), F.max_by("bytes", "ts_ms").alias("bytes"),
        F.max("duplicates").alias("duplicates"), F.max("out_of_order").alias("out_of_order"),
        F.max("fencings").alias("fencings")).collect()
    span_s = (t1 - t0) / 1000
    wall_s = (totals["interval_ms"] or 0) / 1000 / max(1, counts["brokers"])
    summary = [
        ("input", "lines", counts["n"]), ("input", "corrupt_lines", counts["corrupt"]),
        ("input", "brokers", counts["brokers"]), ("input", "first_ts_ms", t0), ("input", "last_ts_ms", t1),
        ("input", "span_s", round(span_s, 3)),
        ("throughput", "records_in", totals["records_in"]), ("throughput", "bytes_in", totals["bytes_in"]),
        ("throughput", "records_out", totals["records_out"]), ("throughput", "bytes_out", totals["bytes_out"]),
        ("throughput", "records_in_per_s_mean", round((totals["records_in"] or 0) / wall_s, 1) if wall_s else 0),
        ("throughput", "records_in_per_s_peak", round(totals["peak"] or 0, 1)),
    ]
    for b, r in sorted(last.items()):
        summary += [(f"broker {b}", "counter_records_in", r["records_in"]),
                    (f"broker {b}", "counter_bytes_in", r["bytes_in"])]
    for r in lat.itertuples():
        summary += [(f"api {r.api}", "requests", r.requests), (f"api {r.api}", "p50_us", r.p50_us),
                    (f"api {r.api}", "p99_us", r.p99_us), (f"api {r.api}", "max_us", r.max_us)]
    for r in sorted(ps_first_last, key=lambda r: r["broker_id"]):
        b = f"producer_state broker {r['broker_id']}"
        summary += [(b, "entries_first", r["first"]), (b, "entries_last", r["last"]),
                    (b, "entries_peak", r["peak"]), (b, "bytes_last", r["bytes"]),
                    (b, "duplicates", r["duplicates"]), (b, "out_of_order", r["out_of_order"]),
                    (b, "fencings", r["fencings"])]
    for r in user_summary.itertuples():
        summary += [(f"user {r.user}", "producer_id_rate_mean", r.producer_id_rate_mean),
                    (f"user {r.user}", "producer_id_rate_max", r.producer_id_rate_max),
                    (f"user {r.user}", "throttle_time_ms_mean", r.throttle_time_ms_mean),
                    (f"user {r.user}", "throttle_time_ms_max", r.throttle_time_ms_max)]
    if len(expiries):
        summary.append(("share", "lock_expiries", int(expiries["lock_expiries"].fillna(0).sum())))
        summary.append(("share", "partitions", len(expiries)))
    for r in delivery.itertuples():
        summary.append((f"share group {r.group}", f"delivery_count_{r.delivery_count}_peak", r.records_peak))

    series = {
        "throughput": bucketed(tp, ["records_in", "records_out", "bytes_in", "bytes_out"], "sum", t0, step_ms),
        "latency": bucketed(lat_time, ["p50_us", "p99_us", "max_us"], "max", t0, step_ms, ("api",)),
        "producer_state": bucketed(ps, ["entries", "bytes", "duplicates", "out_of_order", "fencings"],
                                   "max", t0, step_ms),
        "quotas": bucketed(users, ["producer_id_rate", "throttle_time_ms", "tokens"], "max", t0, step_ms, ("user",)),
        "share": bucketed(shares, ["in_flight", "acquired", "archived", "lock_expiries"], "sum", t0, step_ms),
        "share_groups": bucketed(sgroups, ["in_flight_records", "available_records", "members"], "max", t0, step_ms),
    }
    step_s = step_ms / 1000
    series["throughput"]["records_in_per_s"] = series["throughput"]["records_in"] / step_s
    series["throughput"]["records_out_per_s"] = series["throughput"]["records_out"] / step_s
    series["throughput"]["mb_in_per_s"] = series["throughput"]["bytes_in"] / step_s / 1e6
    series["share"] = series["share"].sort_values("bucket")
    elapsed = time.monotonic() - started
    summary.append(("analysis", "seconds", round(elapsed, 2)))
    return report.write(output, summary=summary, api_latency=lat, topics=topics, users=user_summary,
                        delivery=delivery, expiries=expiries, series=series, step_s=step_s)


def run(args: argparse.Namespace) -> int:
    inputs = find_inputs(args.input)
    output = Path(args.output)
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JobError(f"--output {args.output}: {exc.strerror or exc}") from None
    spark = spark_session("kipper-analyze-metrics", args.master)
    try:
        started = time.monotonic()
        result = analyze(spark, inputs, output)
    finally:
        spark.stop()
    s = dict(((sec, k), v) for sec, k, v in result["summary"])
    print(f"analyze_metrics: {s[('input', 'lines')]:,} lines from {len(inputs)} file(s), "
          f"{s[('throughput', 'records_in')] or 0:,} records in, "
          f"{s[('throughput', 'records_in_per_s_mean')]:,} records/s mean, "
          f"{time.monotonic() - started:.1f} s", flush=True)
    print(f"report: {output / 'report.html'}", flush=True)
    return 0


def main(argv=None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    main_wrapper("analyze_metrics", main)
