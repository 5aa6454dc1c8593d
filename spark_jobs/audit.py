"""The exactly-once audit: ``spark-submit spark_jobs/audit.py --bootstrap-server HOST:PORT
--topics T1,T2 [--result loadgen.json] [--output audit.json]``.

Reads every partition of the topics from its log start to its end (read_committed)
with Spark's Kafka connector, takes each record's identity (producer uid, counter:
spark_jobs/ledger.py) and reports, per topic and partition, records read, distinct
records, duplicates, records out of their producer's order, and records of aborted
transactions seen; per topic and producer, the acknowledged records that are missing
(against the loadgen's ledgers with --result; without it, a counter missing between a
producer's first and last record found). Exit 0 only when nothing is duplicated,
missing, misordered or read from an aborted transaction. The loadgen runs the same
audit at the end of its run (``audit()``), in its own session.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # spark-submit spark_jobs/audit.py: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kipper.spark_jobs.common import JobError, main_wrapper, spark_session
from kipper.spark_jobs.ledger import MAGIC
from kipper.spark_jobs.kafka_options import add_arguments, connector_options
from kipper.spark_jobs.audit_report import problems, table

__all__ = ["audit", "problems", "table", "main"]
EXAMPLES = 5  # missing counters listed per producer
PROBLEMS = ("duplicates", "missing", "misordered", "aborted_seen")
COUNTS = ("records", "distinct", "duplicates", "misordered", "aborted_seen", "unmarked", "unexpected",
          "stored_unacknowledged")
# what a record found in a ledger range of each state adds to, besides records and distinct
STATE_COLUMN = {"duplicate": "duplicates", "aborted": "aborted_seen", "unmarked": "unmarked",
                "failed": "stored_unacknowledged", "unacknowledged": "stored_unacknowledged"}


def read_records(spark, bootstrap: str, topics: list[str], options: dict[str, str]):
    """(topic, partition, offset, marked, uid, counter) of every committed record."""
    from pyspark.sql import functions as F

    df = (spark.read.format("kafka")
          .option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", ",".join(topics))
          .option("startingOffsets", "earliest")
          .option("endingOffsets", "latest")
          .option("kafka.isolation.level", "read_committed")
          .options(**options).load())

    def u64(pos):
        return F.conv(F.hex(F.substring("value", pos, 8)), 16, 10).cast("long")
    return df.select("topic", "partition", "offset",
                     (F.hex(F.substring("value", 1, 4)) == MAGIC.hex().upper()).alias("marked"),
                     u64(5).alias("uid"), u64(13).alias("counter"))


def expected_ranges(spark, ledgers: list[dict] | None, first_copies):
    """(uid, first, last, state) ranges the records are checked against: the loadgen's
    ledgers, or, without them, each producer's first..last counter found."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    if ledgers is None:
        return (first_copies.groupBy("uid").agg(F.min("counter").alias("first"), F.max("counter").alias("last"))
                .withColumn("state", F.lit("acked")))
    rows = [(led["uid"], a, b, state) for led in ledgers
            for state in ("acked", "failed", "unacknowledged", "aborted") for a, b in led.get(state, [])]
    schema = StructType([StructField("uid", LongType()), StructField("first", LongType()),
                         StructField("last", LongType()), StructField("state", StringType())])
    return spark.createDataFrame(rows, schema)


def audit(spark, bootstrap: str, topics: list[str], ledgers: list[dict] | None = None,
          options: dict[str, str] | None = None) -> dict:
    """The audit of ``topics`` as a JSON-ready dict (see the module comment)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    started = time.monotonic()
    with_ledgers = ledgers is not None
    spark.conf.set("spark.sql.shuffle.partitions", "4")  # a run's identities are few rows per producer
    recs = read_records(spark, bootstrap, topics, options or {}).persist()
    try:
        marked = recs.where("marked")
        # One shuffle, by producer: both windows below cluster on uid. A copy of an identity after
        # its first (the lowest topic, partition, offset) is a duplicate...
        same = F.lag("counter").over(Window.partitionBy("uid").orderBy("counter", "topic", "partition", "offset"))
        copies = marked.withColumn("copy", F.when(F.col("counter") == same, 2).otherwise(1))
        firsts = copies.where("copy = 1")
        # ...and within a partition, a producer's first copies must follow its order
        prev = F.lag("counter").over(Window.partitionBy("uid", "topic", "partition").orderBy("offset"))
        ordered = firsts.withColumn("misordered", F.coalesce((F.col("counter") < prev).cast("int"), F.lit(0)))
        ranges = F.broadcast(expected_ranges(spark, ledgers, firsts))
        states = (ordered.alias("r").join(ranges.alias("e"), (F.col("r.uid") == F.col("e.uid")) &
                                          F.col("r.counter").between(F.col("e.first"), F.col("e.last")), "left")
                  .select("r.topic", "r.partition", "r.uid", "r.misordered", F.col("e.state").alias("state")))
        # one row per (topic, partition, uid, state), with copies beyond the first as state "duplicate"
        dups = copies.where("copy > 1").select("topic", "partition", "uid", F.lit(0).alias("misordered"),
                                               F.lit("duplicate").alias("state"))
        unmarked = recs.where("not marked").select("topic", "partition", F.lit(None).cast("long").alias("uid"),
                                                   F.lit(0).alias("misordered"), F.lit("unmarked").alias("state"))
        groups = (states.unionByName(dups).unionByName(unmarked)
                  .groupBy("topic", "partition", "uid", "state")
                  .agg(F.count("*").alias("n"), F.sum("misordered").alias("misordered")).collect())
        per_partition: dict = {}
        found: dict[int, dict[str, int]] = {}
        topics_of: dict[int, set] = {}
        for r in groups:
            row = per_partition.setdefault((r["topic"], r["partition"]), dict.fromkeys(COUNTS, 0))
            state, n = r["state"], r["n"]
            row["records"] += n
            row["misordered"] += r["misordered"] or 0
            key = STATE_COLUMN.get(state, "unexpected" if state is None else None)
            if key:
                row[key] += n
            if state not in ("duplicate", "unmarked"):
                row["distinct"] += n
                by_state = found.setdefault(r["uid"], {})
                by_state[state] = by_state.get(state, 0) + n
                topics_of.setdefault(r["uid"], set()).add(r["topic"])
        if ledgers is None:  # each producer's first..last counter found stands for its acknowledged records
            ledgers = [{"uid": r["uid"], "role": None, "topics": sorted(topics_of.get(r["uid"], ())),
                        "sent": None, "acked": [[r["first"], r["last"]]]}
                       for r in firsts.groupBy("uid").agg(F.min("counter").alias("first"),
                                                          F.max("counter").alias("last")).collect()]
        producers = _producers(ledgers, found)
        short = [p["uid"] for p in producers if p["missing"]]
        if short:
            _missing_examples(firsts, producers, short)
    finally:
        recs.unpersist()
    for p in producers:
        del p["_acked"]
    partitions = [{"topic": t, "partition": p, **row} for (t, p), row in sorted(per_partition.items())]
    return _summary(topics, partitions, producers, with_ledgers, time.monotonic() - started)


def _producers(ledgers: list[dict], found: dict[int, dict[str, int]]) -> list[dict]:
    out = []
    for led in ledgers:
        acked = sum(b - a + 1 for a, b in led.get("acked", []))
        got = found.get(led["uid"], {})
        out.append({"uid": led["uid"], "role": led.get("role"), "topics": led.get("topics", []),
                    "sent": led.get("sent"), "acked": acked, "read": got.get("acked", 0),
                    "missing": acked - got.get("acked", 0), "aborted_seen": got.get("aborted", 0),
                    "missing_examples": [], "_acked": led.get("acked", [])})
    return out


def _missing_examples(firsts, producers: list[dict], uids: list[int]) -> None:
    """The first few missing counters of each producer that lacks records."""
    wanted = {p["uid"]: p for p in producers if p["uid"] in set(uids)}
    found: dict[int, set] = {u: set() for u in wanted}
    for r in firsts.where(firsts.uid.isin(list(wanted))).select("uid", "counter").collect():
        found[r["uid"]].add(r["counter"])
    for u, p in wanted.items():
        examples = p["missing_examples"]
        for a, b in p["_acked"]:
            c = a
            while c <= b and len(examples) < EXAMPLES:
                if c not in found[u]:
                    examples.append(c)
                c += 1


def _summary(topics, partitions, producers, with_ledgers: bool, seconds: float) -> dict:
    totals = {k: sum(p[k] for p in partitions) for k in COUNTS}
    totals["acked"] = sum(p["acked"] for p in producers)
    totals["missing"] = sum(p["missing"] for p in producers)
    per_topic = {}
    for p in producers:
        for t in p["topics"][:1]:
            row = per_topic.setdefault(t, {"topic": t, "acked": 0, "missing": 0, "producers": 0})
            row["acked"] += p["acked"]
            row["missing"] += p["missing"]
            row["producers"] += 1
    verdict = "clean" if not any(totals[k] for k in PROBLEMS) else "FAILED"
    return {"topics": topics, "against": "loadgen ledgers" if with_ledgers else "records found",
            "verdict": verdict, "totals": totals, "partitions": partitions,
            "per_topic": [per_topic[t] for t in sorted(per_topic)],
            "producers": [p for p in producers if p["missing"] or p["aborted_seen"]] if len(producers) > 50
            else producers, "seconds": round(seconds, 3)}


# --- the command ---------------------------------------------------------------------------------

def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="audit", description="Exactly-once audit of a load run's topics "
                                                          "with Spark's Kafka connector.")
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT]")
    p.add_argument("--topics", metavar="T1,T2", help="topics to read (default: the --result's topics)")
    p.add_argument("--result", metavar="LOADGEN.json", help="the loadgen's result: its topics and its producers' "
                                                            "acknowledged records")
    p.add_argument("--output", metavar="AUDIT.json", help="the audit as JSON (default audit-<time>.json)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    add_arguments(p)
    return p.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    from kipper.spark_jobs.connector import ConnectorError, resolve

    result = None
    if args.result:
        try:
            result = json.loads(Path(args.result).read_text())
        except (OSError, ValueError) as exc:
            raise JobError(f"--result {args.result}: {exc}", 2) from None
        if "producers" not in result:
            raise JobError(f"--result {args.result}: no producer ledgers (a loadgen result of this version "
                           "has them)", 2)
    topics = [t for t in (args.topics or "").split(",") if t] or (result or {}).get("topics") or []
    if not topics:
        raise JobError("--topics or --result is needed", 2)
    options = connector_options(args)
    try:
        jars = resolve()
    except ConnectorError as exc:
        raise JobError(str(exc)) from None
    spark = spark_session("kipper-audit", args.master)
    try:
        from kipper.spark_jobs.connector import add_to

        add_to(spark, jars)
        report = audit(spark, args.bootstrap_server, topics, result["producers"] if result else None, options)
    finally:
        spark.stop()
    out = Path(args.output or f"audit-{time.strftime('%Y%m%d-%H%M%S')}.json")
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(report), flush=True)
    print(f"audit: {out}", flush=True)
    found = problems(report)
    if found:
        print("audit: " + "; ".join(found), file=sys.stderr, flush=True)
        return 1
    return 0


def main(argv=None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    main_wrapper("audit", main)
