"""The analysis' aggregates: DataFrames of dump lines in, DataFrames or small
pandas frames out. Per-API latency percentiles come from the histograms of
every interval merged bucket by bucket; cumulative counters are read at their
last sample per broker; ``bucketed`` cuts a series into plot buckets."""

from __future__ import annotations

PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))


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
    """Per user: the quota, rates, throttle time, and the cumulative admitted ids and
    throttled requests at the user's last sample (summed over brokers)."""
    from pyspark.sql import functions as F

    per_broker = users.groupBy("user", "broker_id").agg(
        F.count("*").alias("samples"), F.max("quota").alias("quota"),
        F.avg("producer_id_rate").alias("producer_id_rate_mean"),
        F.max("producer_id_rate").alias("producer_id_rate_max"),
        F.avg("throttle_time_ms").alias("throttle_time_ms_mean"),
        F.max("throttle_time_ms").alias("throttle_time_ms_max"),
        F.min("tokens").alias("tokens_min"),
        F.max_by("throttled", "ts_ms").alias("throttled"),
        F.max_by("admitted", "ts_ms").alias("admitted"))
    return (per_broker.groupBy("user").agg(
        F.sum("samples").alias("samples"), F.max("quota").alias("quota"),
        F.avg("producer_id_rate_mean").alias("producer_id_rate_mean"),
        F.max("producer_id_rate_max").alias("producer_id_rate_max"),
        F.avg("throttle_time_ms_mean").alias("throttle_time_ms_mean"),
        F.max("throttle_time_ms_max").alias("throttle_time_ms_max"),
        F.min("tokens_min").alias("tokens_min"),
        F.sum("throttled").alias("throttled"), F.sum("admitted").alias("admitted"))
        .orderBy("user"))


def producer_state(lines):
    from pyspark.sql import functions as F

    return lines.select("broker_id", "ts_ms", *(F.col(f"producer_state.{c}").alias(c) for c in (
        "entries", "bytes", "duplicates", "duplicate_sequence_errors", "out_of_order", "fencings", "expired")),
        F.col("producer_ids.allocated").alias("producer_ids_allocated"))


def transactions(lines):
    """Per line: the transaction coordinator's counters and the epoch bumps (seed 003)."""
    from pyspark.sql import functions as F

    return lines.select("broker_id", "ts_ms", F.col("transactions.transactional_ids").alias("transactional_ids"),
                        *(F.col(f"transactions.{c}").alias(c) for c in
                          ("commits", "aborts", "fenced", "timed_out", "epoch_bumps")),
                        F.col("producer_ids.epoch_bumps").alias("idempotent_epoch_bumps"),
                        F.col("producer_state.fencings").alias("producer_state_fencings"))


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
            .agg(F.max("lock_expiries").alias("lock_expiries"),  # cumulative since the share-partition loaded
                 F.max("in_flight").alias("in_flight_peak"), F.max("archived").alias("archived_peak"))
            .orderBy("group", "topic", "partition"))


def share_groups(lines):
    return lines.select("broker_id", "ts_ms", "share_groups.*").where("groups is not null")


def bucketed(df, value_cols: list[str], how: str, t0: int, step_ms: int, keys: tuple = (), per: tuple = ()):
    """A time series cut into ``step_ms`` buckets (for plots), as a pandas frame.

    ``how="sum"`` adds interval counts up. ``how="max"`` is for gauges and
    cumulative counters: the latest-looking (largest) value of each bucket per
    broker and per ``per`` columns (partitions, say), then added up over them,
    so two brokers or three partitions give a total, never a bucket's samples
    counted several times over."""
    from pyspark.sql import functions as F

    bucket = F.floor((F.col("ts_ms") - F.lit(t0)) / F.lit(step_ms)).alias("bucket")
    if how == "sum":
        out = df.groupBy(bucket, *keys).agg(*(F.sum(c).alias(c) for c in value_cols))
    else:
        inner = df.groupBy(bucket, "broker_id", *keys, *per).agg(*(F.max(c).alias(c) for c in value_cols))
        out = inner.groupBy("bucket", *keys).agg(*(F.sum(c).alias(c) for c in value_cols))
    out = out.orderBy("bucket", *keys).toPandas()
    out["t_ms"] = t0 + out["bucket"] * step_ms
    out["t_s"] = out["bucket"] * step_ms / 1000.0
    return out
