"""Load generation with Spark: ``spark-submit spark_jobs/loadgen.py
--bootstrap-server HOST:PORT --workload FILE.yaml [--master ...]``.

The driver validates the workload and the broker (before Spark starts, so a
mistake costs no JVM), creates the run's topics, splits producers and share
consumers over Spark tasks (spark_jobs/tasks.py), prints progress from the
broker's end offsets while they run, then merges the tasks' counts and
latency histograms into one JSON result and a short table. Task retries are
off: a retried task would send its records twice.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):  # spark-submit spark_jobs/loadgen.py: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kipper.protocol.histogram import LatencyHistogram
from kipper.spark_jobs.common import JobError, is_local, main_wrapper, ship_project, spark_session
from kipper.spark_jobs.workload import Workload, load

PROGRESS_S = 5.0


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="loadgen", description="Drive kipper's Producer from Spark tasks.")
    p.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT]")
    p.add_argument("--workload", required=True, metavar="FILE.yaml")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--tasks", type=int, help="Spark tasks (default: the cluster's parallelism, "
                                             "at most one per producer)")
    p.add_argument("--duration-seconds", type=float, help="override testDurationMinutes")
    p.add_argument("--output", metavar="FILE.json", help="result file (default loadgen-<name>-<time>.json)")
    p.add_argument("--progress-interval", type=float, default=PROGRESS_S, metavar="SECONDS")
    return p.parse_args(argv)


# --- before Spark ------------------------------------------------------------------------------

def check_producer_config(w: Workload) -> None:
    from kipper.client.config import ConfigError, ProducerConfig

    try:
        ProducerConfig.from_dict({"bootstrap.servers": "127.0.0.1:9092", **w.producer_config})
    except (ConfigError, ValueError) as exc:
        raise JobError(f"workload key 'producerConfig': {exc}", 2) from None


def connect(bootstrap: str):
    from kipper.client.blocking import connect_any

    try:
        return connect_any(bootstrap, client_id="kipper-loadgen", timeout=5.0)
    except ValueError as exc:
        raise JobError(f"--bootstrap-server: {exc}", 2) from None
    except (ConnectionError, OSError) as exc:
        raise JobError(f"broker unreachable: {exc}") from None


def create_topics(conn, names: list[str], partitions: int, *, share: bool = False) -> None:
    from kipper.client import admin
    from kipper.protocol.errors import ErrorCode

    # share consumers read everything the run wrote, whenever they joined
    configs = {"share.auto.offset.reset": "earliest"} if share else {}
    body = admin.create_topics(conn, [admin.NewTopic(n, partitions, -1, configs) for n in names])
    for t in body.topics:
        if t.error_code and t.error_code != ErrorCode.TOPIC_ALREADY_EXISTS:
            raise JobError(f"cannot create topic {t.name}: {ErrorCode(t.error_code).name} "
                           f"{t.error_message or ''}".rstrip())


def _offsets(conn, names: list[str], partitions: int, ts: int) -> dict:
    from kipper.client.consumer_requests import list_offsets

    body = list_offsets(conn, {(n, p): ts for n in names for p in range(partitions)})
    return {(t.name, p.partition_index): p.offset for t in body.topics for p in t.partitions
            if not p.error_code}


def offset_span(conn, names: list[str], partitions: int) -> int:
    """End minus start offsets: a cheap progress figure (share groups' control records count too)."""
    end, start = _offsets(conn, names, partitions, -1), _offsets(conn, names, partitions, -2)
    return sum(end[k] - start.get(k, 0) for k in end)


def stored_records(conn, names: list[str], partitions: int) -> int:
    """Data records in the topics: every batch header is read back and control
    batches (share-group state, transaction markers) are left out."""
    from kipper.client.consumer_requests import fetch
    from kipper.protocol.batch import HEADER_SIZE, read_header

    end, start = _offsets(conn, names, partitions, -1), _offsets(conn, names, partitions, -2)
    total = 0
    for (topic, partition), hw in sorted(end.items()):
        offset = start.get((topic, partition), 0)
        while offset < hw:
            resp = fetch(conn, {(topic, partition): offset})
            p = resp.responses[0].partitions[0]
            if p.error_code:
                raise JobError(f"cannot read back {topic}-{partition}: error {p.error_code}")
            buf, pos, moved = p.records or b"", 0, False
            while len(buf) - pos >= HEADER_SIZE:
                h = read_header(buf, pos)
                if pos + h.size > len(buf):
                    break  # a partial batch at the end of the response
                if h.last_offset >= offset:
                    if not h.is_control:
                        total += h.records_count
                    offset, moved = h.last_offset + 1, True
                pos += h.size
            if not moved:
                break
    return total


def plan(w: Workload, bootstrap: str, run_id: str, topics: list[str], tasks: int, duration_s: float) -> list[dict]:
    """Producers (topic by topic) and share consumers dealt round-robin over ``tasks`` tasks."""
    producer_topics = [t for t in topics for _ in range(w.producers_per_topic)]
    share_topics = [t for t in topics for _ in range(w.share_consumers_per_topic)]
    specs = []
    for i in range(tasks):
        mine = producer_topics[i::tasks]
        specs.append({
            "task": i, "run_id": run_id, "bootstrap": bootstrap, "topics": mine,
            "share_topics": share_topics[i::tasks], "message_size": w.message_size,
            "key_distributor": w.key_distributor, "idempotence": w.idempotence,
            "producer_config": dict(w.producer_config), "duration_s": duration_s,
            "rate": w.producer_rate * len(mine) / len(producer_topics),
            "churn": w.producer_id_churn_per_second * len(mine) / len(producer_topics),
        })
    return specs


# --- after the tasks ----------------------------------------------------------------------------

def merge(results: list[dict], wall_s: float, stored: int | None, w: Workload, run_id: str,
          topics: list[str], master: str, tasks: int, job_started_at: float | None = None) -> dict:
    hist = LatencyHistogram()
    errors: dict[str, int] = {}
    delivery: dict[str, int] = {}
    for r in results:
        hist.add(LatencyHistogram.from_dict(r["latency"]))
        for k, v in r["errors"].items():
            errors[k] = errors.get(k, 0) + v
        for k, v in r["share_delivery_counts"].items():
            delivery[k] = delivery.get(k, 0) + v
    total = {k: sum(r[k] for r in results) for k in
             ("sent", "acked", "failed", "unacknowledged", "producers_created", "share_consumed")}
    load_s = max((r["load_seconds"] for r in results), default=0.0)
    first_start = min((r["started_at"] for r in results), default=0.0)
    return {
        "run_id": run_id, "workload": w.name, "master": master, "tasks": tasks, "topics": topics,
        "partitions_per_topic": w.partitions_per_topic, "message_size": w.message_size,
        "target_rate": w.producer_rate, "duration_s": round(load_s, 3), "job_seconds": round(wall_s, 3),
        **total,
        "records_per_sec": round(total["acked"] / load_s, 1) if load_s else 0.0,
        "mb_per_sec": round(total["acked"] * w.message_size / load_s / 1e6, 3) if load_s else 0.0,
        "stored_records": stored,
        "stored_matches_acked": stored == total["acked"] if stored is not None else None,
        "errors": errors, "first_error": next((r["first_error"] for r in results if r["first_error"]), None),
        "latency": hist.summary_ms(), "latency_histogram_us": hist.to_dict(),
        "share_delivery_counts": delivery,
        "share_errors": [e for r in results for e in r["share_errors"]],
        "overhead": {
            # Spark's part of the job: scheduling, Python worker start, result collection
            "job_minus_longest_task_s": round(wall_s - max((r["seconds"] for r in results), default=0), 3),
            "task_start_spread_s": round(max((r["started_at"] for r in results), default=0) - first_start, 3),
            # job submitted -> first task running (scheduling, Python worker start)
            "first_task_start_s": round(first_start - job_started_at, 3) if job_started_at else None,
        },
        "per_task": [{k: r[k] for k in ("task", "host", "producers", "producers_created", "sent", "acked",
                                        "failed", "unacknowledged", "load_seconds", "share_consumed")}
                     | {"p99_ms": LatencyHistogram.from_dict(r["latency"]).summary_ms()["p99_ms"]}
                     for r in sorted(results, key=lambda r: r["task"])],
    }


def table(result: dict) -> str:
    lat = result["latency"]
    rows = [
        ("workload", f"{result['workload']}  ({result['tasks']} tasks on {result['master']})"),
        ("records acked", f"{result['acked']:,} of {result['sent']:,} sent"
                          f"  ({result['failed']:,} failed, {result['unacknowledged']:,} unacknowledged)"),
        ("stored by broker", f"{result['stored_records']:,}" if result["stored_records"] is not None else "?"),
        ("throughput", f"{result['records_per_sec']:,.0f} records/s  {result['mb_per_sec']:.2f} MB/s"
                       f"  over {result['duration_s']:.1f} s"),
        ("latency ms", f"p50 {lat['p50_ms']}  p90 {lat['p90_ms']}  p99 {lat['p99_ms']}  "
                       f"p99.9 {lat['p999_ms']}  max {lat['max_ms']}"),
        ("producers created", f"{result['producers_created']:,}"),
    ]
    if result["share_consumed"] or result["share_errors"]:
        rows.append(("share consumed", f"{result['share_consumed']:,}  delivery counts "
                                       + " ".join(f"{k}:{v}" for k, v in sorted(result["share_delivery_counts"].items()))))
    if result["errors"]:
        rows.append(("errors", ", ".join(f"{k} {v}" for k, v in sorted(result["errors"].items()))))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


class Progress(threading.Thread):
    """Prints the records stored so far (broker end offsets) while the tasks run."""

    def __init__(self, bootstrap: str, topics: list[str], partitions: int, interval: float, out=sys.stdout):
        super().__init__(name="loadgen-progress", daemon=True)
        self.args = (bootstrap, topics, partitions)
        self.interval = interval
        self.out = out
        self.done = threading.Event()

    def run(self) -> None:
        bootstrap, topics, partitions = self.args
        start, last_t, last_n = time.monotonic(), time.monotonic(), 0
        try:
            conn = connect(bootstrap)
        except JobError:
            return
        with conn:
            while not self.done.wait(self.interval):
                try:
                    n = offset_span(conn, topics, partitions)
                except Exception:
                    continue
                now = time.monotonic()
                print(f"progress: {now - start:6.1f} s  {n:,} offsets written  "
                      f"{(n - last_n) / (now - last_t):,.0f} records/s", file=self.out, flush=True)
                last_t, last_n = now, n


def run(args: argparse.Namespace) -> int:
    w = load(args.workload)
    check_producer_config(w)
    if args.duration_seconds is not None and args.duration_seconds <= 0:
        raise JobError("--duration-seconds must be above 0", 2)
    if args.tasks is not None and args.tasks < 1:
        raise JobError("--tasks must be at least 1", 2)
    if w.ignored:
        print(f"loadgen: note: ignoring OMB key(s) {', '.join(w.ignored)}", file=sys.stderr)
    conn = connect(args.bootstrap_server)
    run_id = f"{w.topic_prefix}-{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:6]}"
    topics = [f"{run_id}-{i}" for i in range(w.topics)]
    with conn:
        create_topics(conn, topics, w.partitions_per_topic, share=w.share_consumers_per_topic > 0)

    from kipper.spark_jobs.tasks import run_task

    spark = spark_session(f"kipper-loadgen-{w.name}", args.master)
    try:
        sc = spark.sparkContext
        master = sc.master
        if not is_local(master):
            ship_project(spark)
        slots = sc.defaultParallelism
        tasks = min(args.tasks or slots, w.producers)
        if tasks > slots:
            print(f"loadgen: warning: {tasks} tasks but {slots} task slots: some tasks start late",
                  file=sys.stderr)
        duration = args.duration_seconds if args.duration_seconds is not None else w.duration_s
        specs = plan(w, args.bootstrap_server, run_id, topics, tasks, duration)
        print(f"loadgen: {w.name}: {w.producers} producer(s) on {len(topics)} topic(s) x "
              f"{w.partitions_per_topic} partitions in {tasks} task(s) on {master}, "
              f"{duration:g} s, target {w.producer_rate:g} records/s" if w.producer_rate else
              f"loadgen: {w.name}: {w.producers} producer(s) on {len(topics)} topic(s) x "
              f"{w.partitions_per_topic} partitions in {tasks} task(s) on {master}, {duration:g} s, unthrottled",
              flush=True)
        progress = Progress(args.bootstrap_server, topics, w.partitions_per_topic, args.progress_interval)
        progress.start()
        started, started_at = time.monotonic(), time.time()
        try:
            results = sc.parallelize(specs, len(specs)).map(run_task).collect()
        finally:
            progress.done.set()
        wall = time.monotonic() - started
    finally:
        spark.stop()
    try:
        with connect(args.bootstrap_server) as conn:
            stored = stored_records(conn, topics, w.partitions_per_topic)
    except JobError:
        stored = None
    result = merge(results, wall, stored, w, run_id, topics, master, tasks, started_at)
    out = Path(args.output or f"loadgen-{w.name}-{time.strftime('%Y%m%d-%H%M%S')}.json")
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result), flush=True)
    print(f"result: {out}", flush=True)
    if result["failed"] or result["unacknowledged"] or result["share_errors"]:
        print(f"loadgen: {result['failed']} record(s) failed, {result['unacknowledged']} unacknowledged"
              + (f"; first error: {result['first_error']}" if result["first_error"] else "")
              + (f"; share consumer errors: {result['share_errors'][0]}" if result["share_errors"] else ""),
              file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    main_wrapper("loadgen", main)
