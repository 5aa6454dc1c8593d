"""Live seed metrics: ``spark-submit spark_jobs/stream_metrics.py --bootstrap-server HOST:PORT
--topic METRICS_TOPIC --output DIR``.

Reads the lines a broker publishes to ``metrics.dump.topic`` (and the lines a loadgen's
tasks add with ``--metrics-topic``) with ``readStream.format("kafka")``, parses them with
the dump-line schema of spark_jobs/schema.py (the one analyze_metrics reads files with)
and keeps windowed aggregates of each seed in two Structured Streaming queries:

- ``seeds``, per window and source (``broker <node.id>`` or a loadgen task): lines,
  producer-state entries and bytes (000), in-flight requests and records per Produce
  request of kipper's producers (001), commits, aborts, fencings and epoch bumps (003),
  share records delivered more than once, lock expiries and archived records (004);
- ``quota_users``, per window and user: producer ids admitted and Produce requests
  throttled (002), the producer-id rate and the quota.

Counters that grow from broker start are read at their largest value in the window, gauges
at their peak. Each trigger prints the windows it changed and writes them to
``OUTPUT/<query>/batch=<id>`` (a replayed batch overwrites its own directory); the Kafka
offsets and the window state live in ``--checkpoint``, so a stopped query restarted from it
neither loses nor counts a line twice. ``latest()`` reads each window's newest row back.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # spark-submit spark_jobs/stream_metrics.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kipper.spark_jobs.common import JobError, main_wrapper, spark_session
from kipper.spark_jobs.kafka_options import add_arguments, connector_options

QUERIES = ("seeds", "quota_users")
KEYS = {"seeds": ("window_start", "source"), "quota_users": ("window_start", "user")}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="stream_metrics", description="Windowed seed metrics from a broker's "
                                                                   "metrics.dump.topic, live.")
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT]")
    p.add_argument("--topic", required=True, help="the broker's metrics.dump.topic")
    p.add_argument("--output", required=True, metavar="DIR", help="Parquet output, one directory per query")
    p.add_argument("--checkpoint", metavar="DIR", help="checkpoint location (default OUTPUT/_checkpoints)")
    p.add_argument("--window", default="10 seconds", help="window length (default %(default)s)")
    p.add_argument("--trigger", default="5 seconds", help="processing-time trigger (default %(default)s)")
    p.add_argument("--watermark", default="1 minute", help="how late a line may arrive (default %(default)s)")
    p.add_argument("--starting-offsets", default="earliest", choices=("earliest", "latest"),
                   help="where a query without a checkpoint starts (default %(default)s)")
    p.add_argument("--available-now", action="store_true",
                   help="process what the topic holds now, then stop (a catch-up run)")
    p.add_argument("--run-seconds", type=float, help="stop after this long (default: until interrupted)")
    p.add_argument("--quiet", action="store_true", help="no console table")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    add_arguments(p)
    return p.parse_args(argv)


def parsed_lines(spark, args):
    from pyspark.sql import functions as F

    from kipper.spark_jobs.schema import DUMP_LINE

    raw = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", args.bootstrap_server)
           .option("subscribe", args.topic).option("startingOffsets", args.starting_offsets)
           .option("failOnDataLoss", "true").options(**connector_options(args)).load())
    lines = raw.select(F.from_json(F.col("value").cast("string"), DUMP_LINE,
                                   {"columnNameOfCorruptRecord": "_corrupt_record"}).alias("l")).select("l.*")
    return lines.withColumn("ts", F.timestamp_millis("ts_ms")).withWatermark("ts", args.watermark)


def _sum_over(array_col: str, expr: str):
    from pyspark.sql import functions as F

    return F.expr(f"aggregate(coalesce({array_col}, array()), 0L, (acc, x) -> acc + coalesce({expr}, 0L))")


def seed_figures(lines, window: str):
    """Per window and source: every seed's figures (see the module comment)."""
    from pyspark.sql import functions as F

    source = F.when(F.col("producers.client_id").isNotNull(), F.col("producers.client_id")) \
        .otherwise(F.concat(F.lit("broker "), F.col("broker_id").cast("string")))
    per_line = lines.select(
        "ts", source.alias("source"),
        F.col("producer_state.entries").alias("entries"), F.col("producer_state.bytes").alias("bytes"),
        F.col("producer_state.duplicates").alias("duplicates"),
        F.col("producers.in_flight_requests").alias("in_flight"), F.col("producers.requests").alias("requests"),
        F.col("producers.records").alias("records_sent"),
        *(F.col(f"transactions.{c}").alias(c) for c in ("commits", "aborts", "fenced", "epoch_bumps")),
        F.col("producer_ids.epoch_bumps").alias("idempotent_epoch_bumps"),
        _sum_over("share.partitions", "aggregate(map_values(coalesce(x.delivery_counts, map())), 0L, "
                  "(a, v) -> a + v) - coalesce(x.delivery_counts['1'], 0L)").alias("redelivered"),
        _sum_over("share.partitions", "x.lock_expiries").alias("lock_expiries"),
        _sum_over("share.partitions", "x.archived").alias("archived"))
    biggest = ("entries", "bytes", "duplicates", "in_flight", "commits", "aborts", "fenced", "epoch_bumps",
               "idempotent_epoch_bumps", "redelivered", "lock_expiries", "archived")
    return (per_line.groupBy(F.window("ts", window), "source")
            .agg(F.count("*").alias("lines"), *(F.max(c).alias(c) for c in biggest),
                 F.sum("requests").alias("requests"), F.sum("records_sent").alias("records_sent"))
            .select(F.col("window.start").alias("window_start"), F.col("window.end").alias("window_end"),
                    "source", "lines", *biggest, "requests", "records_sent"))


def quota_figures(lines, window: str):
    """Per window and user: the producer-id quota's figures (seed 002)."""
    from pyspark.sql import functions as F

    users = lines.select("ts", F.explode("quotas.users").alias("u"))
    return (users.groupBy(F.window("ts", window), F.col("u.user").alias("user"))
            .agg(F.count("*").alias("samples"), F.max("u.admitted").alias("admitted"),
                 F.max("u.throttled").alias("throttled"), F.max("u.producer_id_rate").alias("producer_id_rate_max"),
                 F.max("u.quota").alias("quota"))
            .select(F.col("window.start").alias("window_start"), F.col("window.end").alias("window_end"),
                    "user", "samples", "admitted", "throttled", "producer_id_rate_max", "quota"))


def _writer(output: str, name: str, quiet: bool):
    from kipper.spark_jobs.stream_console import render

    def write(batch, batch_id: int) -> None:
        rows = batch.orderBy(*KEYS[name]).collect()
        if not rows:
            return
        # the batch id is the checkpoint's: a batch replayed after a crash overwrites what it wrote
        batch.write.mode("overwrite").parquet(f"{output}/{name}/batch={batch_id}")
        if not quiet:
            print(render(name, batch_id, rows), flush=True)
    return write


def start(spark, args):
    """Both queries started; returns them."""
    lines = parsed_lines(spark, args)
    checkpoint = args.checkpoint or f"{args.output}/_checkpoints"
    frames = {"seeds": seed_figures(lines, args.window), "quota_users": quota_figures(lines, args.window)}
    queries = []
    for name, frame in frames.items():
        writer = (frame.writeStream.outputMode("update").queryName(f"kipper-{name}")
                  .option("checkpointLocation", f"{checkpoint}/{name}")
                  .foreachBatch(_writer(args.output, name, args.quiet)))
        writer = writer.trigger(availableNow=True) if args.available_now else \
            writer.trigger(processingTime=args.trigger)
        queries.append(writer.start())
    return queries


def latest(spark, output: str, name: str):
    """Each window's newest row of query ``name`` (a pandas frame)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    path = Path(output) / name
    if not path.is_dir():
        return None
    df = spark.read.parquet(str(path))
    newest = F.row_number().over(Window.partitionBy(*KEYS[name]).orderBy(F.desc("batch")))
    return df.withColumn("n", newest).where("n = 1").drop("n", "batch").orderBy(*KEYS[name]).toPandas()


def run(args: argparse.Namespace, session=None) -> int:
    """The command; with ``session`` (a running SparkSession) it runs there and leaves it running."""
    from kipper.spark_jobs.connector import ConnectorError, add_to, resolve

    try:
        jars = resolve()
    except ConnectorError as exc:
        raise JobError(str(exc)) from None
    spark = session or spark_session("kipper-stream-metrics", args.master, {"spark.sql.shuffle.partitions": "4",
                                                                             "spark.sql.adaptive.enabled": "false"})
    try:
        add_to(spark, jars)
        print(f"stream_metrics: {args.topic} on {args.bootstrap_server}, windows of {args.window}, "
              f"{'what the topic holds now' if args.available_now else 'every ' + args.trigger}, "
              f"output {args.output}", flush=True)
        queries = start(spark, args)
        deadline = time.monotonic() + args.run_seconds if args.run_seconds else None
        while any(q.isActive for q in queries):
            if deadline is not None and time.monotonic() >= deadline:
                break
            for q in queries:
                if q.exception() is not None:
                    raise JobError(f"query {q.name} failed: {q.exception().desc.splitlines()[0]}")
            time.sleep(0.5)
        for q in queries:
            q.stop()
            q.awaitTermination()  # the last batch is committed to the checkpoint before the next run starts
    finally:
        if session is None:
            spark.stop()
    return 0


def main(argv=None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    main_wrapper("stream_metrics", main)
