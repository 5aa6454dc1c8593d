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

from kipper.protocol.errors import KafkaError
from kipper.spark_jobs.common import JobError, main_wrapper, spark_session
from kipper.spark_jobs.kafka_options import add_arguments, admin_settings, connector_options, is_plaintext
from kipper.spark_jobs.result import JvmCpu, cpu_figures, merge, problems, table
from kipper.spark_jobs.workload import Workload, load

PROGRESS_S = 5.0
FIRST_TASK_TIMEOUT_S = 60.0
JOB_GROUP = "kipper-loadgen"
QUOTA_USER = "ANONYMOUS"  # the tasks' clients connect without SASL (docs/QUOTAS.md)
LOCK_MS_DEFAULT = 30000   # group.share.record.lock.duration.ms when the broker does not say
SINKS = ("kipper", "spark-kafka")

__all__ = ["merge", "plan", "table", "run", "main"]


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
    p.add_argument("--first-task-timeout", type=float, default=FIRST_TASK_TIMEOUT_S, metavar="SECONDS",
                   help="stop when no Spark task has started by then (default %(default)g); a job whose "
                        "executors are all lost is stopped at once")
    p.add_argument("--sink", choices=SINKS, default="kipper",
                   help="kipper: kipper's Producer in the tasks (default); spark-kafka: Spark's Kafka sink "
                        "(Kafka's Java producer) writes the same records")
    p.add_argument("--no-audit", dest="audit", action="store_false",
                   help="skip the exactly-once audit of the run's topics (spark_jobs/audit.py) at the end")
    p.add_argument("--metrics-topic", metavar="TOPIC",
                   help="each task also reports its kipper producers' in-flight requests and batching to TOPIC "
                        "once a second (the broker's metrics.dump.topic; spark_jobs/stream_metrics.py reads it)")
    add_arguments(p)
    return p.parse_args(argv)


# --- before Spark ------------------------------------------------------------------------------

def check_producer_config(w: Workload) -> None:
    from kipper.client.config import ConfigError, ProducerConfig

    try:
        ProducerConfig.from_dict({"bootstrap.servers": "127.0.0.1:9092", **w.producer_config})
    except (ConfigError, ValueError) as exc:
        raise JobError(f"workload key 'producerConfig': {exc}", 2) from None


def connect(bootstrap: str, settings: dict | None = None):
    from kipper.client.connect import connect as connect_with

    try:
        return connect_with(bootstrap, settings, client_id="kipper-loadgen", timeout=5.0)
    except ValueError as exc:
        raise JobError(f"--bootstrap-server: {exc}", 2) from None
    except (ConnectionError, OSError) as exc:
        raise JobError(f"broker unreachable: {exc}") from None
    except KafkaError as exc:  # SASL refused
        raise JobError(f"broker refused the connection: {exc}") from None


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


def broker_configs(conn, keys: list[str]) -> dict[str, str]:
    """The first broker's values of ``keys`` (DescribeConfigs); {} when it will not say."""
    from kipper.client import admin

    try:
        node = admin.metadata(conn, []).brokers[0].node_id
        body = admin.describe_configs(conn, [admin.ConfigResource(admin.ConfigResourceType.BROKER, str(node))],
                                      configuration_keys=keys)
    except Exception:
        return {}
    return {c.name: c.value for r in body.results if not r.error_code for c in r.configs}


def user_quota(conn, user: str) -> float | None:
    from kipper.client import admin

    body = admin.describe_client_quotas(conn, [admin.ClientQuotaFilterComponent.of_entity("user", user)],
                                        strict=True)
    for entry in body.entries or []:
        for v in entry["values"]:
            if v.key == "producer_ids_rate":
                return v.value
    return None


def set_user_quota(conn, user: str, rate: float | None) -> None:
    """producer_ids_rate of ``user`` set to ``rate``, or removed (None)."""
    from kipper.client import admin
    from kipper.protocol.errors import ErrorCode

    body = admin.alter_client_quotas(conn, [admin.ClientQuotaAlteration({"user": user}, {"producer_ids_rate": rate})])
    for entry in body.entries:
        if entry.error_code:
            raise JobError(f"cannot set producer_ids_rate for user {user}: {ErrorCode(entry.error_code).name} "
                           f"{entry.error_message or ''}".rstrip())


def quota_note(w: Workload, configs: dict[str, str], duration_s: float) -> str:
    """What the quota will do in this run, from the broker's window settings (docs/QUOTAS.md)."""
    try:
        burst = w.producer_ids_rate * int(configs["producer.id.quota.window.num"]) * \
            float(configs["producer.id.quota.window.size.seconds"])
    except (KeyError, ValueError):
        return f"producer_ids_rate={w.producer_ids_rate:g} for user {QUOTA_USER} during the run"
    starts = w.producer_id_churn_per_second * duration_s
    text = (f"producer_ids_rate={w.producer_ids_rate:g} for user {QUOTA_USER} during the run; the broker's "
            f"bucket holds {burst:,.0f} id(s)")
    if starts <= burst:
        text += (f", more than the {starts:,.0f} the churn starts: nothing will be throttled (lower "
                 "producer.id.quota.window.num or .window.size.seconds on the broker)")
    return text


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


def plan(w: Workload, bootstrap: str, run_id: str, topics: list[str], tasks: int, duration_s: float,
         lock_ms: int = LOCK_MS_DEFAULT) -> list[dict]:
    """Producers (topic by topic), transactional producers and share consumers
    dealt round-robin over ``tasks`` tasks."""
    producer_topics = [t for t in topics for _ in range(w.producers_per_topic)]
    share_topics = [t for t in topics for _ in range(w.share_consumers_per_topic)]
    stalling_topics = [t for t in topics for _ in range(w.share_stalling_consumers_per_topic)]
    transactional = [(t, f"{run_id}-txn-{i}") for i, t in
                     enumerate(t for t in topics for _ in range(w.transactional_producers_per_topic))]
    specs = []
    for i in range(tasks):
        mine = producer_topics[i::tasks]
        specs.append({
            "task": i, "run_id": run_id, "bootstrap": bootstrap, "topics": mine,
            "share_topics": share_topics[i::tasks], "stalling_topics": stalling_topics[i::tasks],
            "message_size": w.message_size,
            "key_distributor": w.key_distributor, "idempotence": w.idempotence,
            "producer_config": dict(w.producer_config), "duration_s": duration_s,
            "rate": w.producer_rate * len(mine) / len(producer_topics),
            "churn": w.producer_id_churn_per_second * len(mine) / len(producer_topics),
            "churn_records": w.churn_records_per_producer,
            "share_release_percent": w.share_release_percent, "share_reject_percent": w.share_reject_percent,
            "lock_ms": lock_ms,
            "transactional": transactional[i::tasks], "partitions": w.partitions_per_topic,
            "transaction_records": w.transaction_records, "transactions_per_second": w.transactions_per_second,
            "transaction_abort_percent": w.transaction_abort_percent, "transaction_fence": w.transaction_fence,
        })
    return specs


# --- after the tasks ----------------------------------------------------------------------------

class Progress(threading.Thread):
    """Prints the records stored so far (broker end offsets) while the tasks run."""

    def __init__(self, bootstrap: str, topics: list[str], partitions: int, interval: float, out=sys.stdout,
                 settings: dict | None = None):
        super().__init__(name="loadgen-progress", daemon=True)
        self.args = (bootstrap, topics, partitions)
        self.settings = settings
        self.interval = interval
        self.out = out
        self.done = threading.Event()

    def run(self) -> None:
        bootstrap, topics, partitions = self.args
        start, last_t, last_n = time.monotonic(), time.monotonic(), 0
        try:
            conn = connect(bootstrap, self.settings)
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


def check_sink(args, w: Workload, settings: dict) -> None:
    """What each sink can do, checked before Spark starts."""
    if args.sink == "spark-kafka":
        unsupported = [key for key, used in (
            ("transactionalProducersPerTopic", w.transactional_producers),
            ("shareConsumersPerTopic", w.share_consumers_per_topic),
            ("producerIdChurnPerSecond", w.producer_id_churn_per_second),
            ("producerIdsRate", w.producer_ids_rate)) if used]
        if unsupported:
            raise JobError(f"--sink spark-kafka writes the steady producers' records only; the workload sets "
                           f"{', '.join(unsupported)} (use --sink kipper)", 2)
    elif not is_plaintext(settings):
        raise JobError(f"security.protocol={settings['security.protocol']}: kipper's Producer connects with "
                       "PLAINTEXT only; use --sink spark-kafka (Kafka's Java producer) on a SASL or TLS "
                       "listener", 2)


def check_clients(w: Workload) -> None:
    if w.transactional_producers:
        try:
            import confluent_kafka  # noqa: F401
        except ImportError:
            raise JobError("workload key 'transactionalProducersPerTopic' needs confluent-kafka "
                           "(pip install confluent-kafka, or kipper's interop extra)", 2) from None


def run_job(sc, specs: list[dict], first_task_timeout: float) -> list[dict]:
    """The tasks, under a watchdog that stops a job Spark cannot run."""
    from kipper.spark_jobs.tasks import run_task
    from kipper.spark_jobs.watchdog import Watchdog

    sc.setJobGroup(JOB_GROUP, "kipper load generator", True)
    with Watchdog(sc, JOB_GROUP, first_task_timeout) as watchdog:
        try:
            return sc.parallelize(specs, len(specs)).map(run_task).collect()
        except Exception:
            if watchdog.cause is not None:
                raise JobError(f"{watchdog.cause}; the Spark job was stopped") from None
            raise


def run(args: argparse.Namespace) -> int:
    w = load(args.workload)
    check_producer_config(w)
    check_clients(w)
    settings = admin_settings(args)
    check_sink(args, w, settings)
    if args.duration_seconds is not None and args.duration_seconds <= 0:
        raise JobError("--duration-seconds must be above 0", 2)
    if args.tasks is not None and args.tasks < 1:
        raise JobError("--tasks must be at least 1", 2)
    if args.first_task_timeout <= 0:
        raise JobError("--first-task-timeout must be above 0", 2)
    if w.ignored:
        print(f"loadgen: note: ignoring OMB key(s) {', '.join(w.ignored)}", file=sys.stderr)
    duration = args.duration_seconds if args.duration_seconds is not None else w.duration_s
    jars = None
    if args.audit or args.sink == "spark-kafka":
        from kipper.spark_jobs.connector import ConnectorError, resolve

        try:
            jars = resolve()
        except ConnectorError as exc:
            raise JobError(f"{exc} (--no-audit runs without it)") from None
    conn = connect(args.bootstrap_server, settings)
    run_id = f"{w.topic_prefix}-{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:6]}"
    topics = [f"{run_id}-{i}" for i in range(w.topics)]
    quota = previous_quota = None
    with conn:
        create_topics(conn, topics, w.partitions_per_topic, share=w.share_consumers_per_topic > 0)
        configs = broker_configs(conn, ["group.share.record.lock.duration.ms", "producer.id.quota.window.num",
                                        "producer.id.quota.window.size.seconds"])
        if w.producer_ids_rate:
            previous_quota = user_quota(conn, QUOTA_USER)
            set_user_quota(conn, QUOTA_USER, w.producer_ids_rate)
            quota = {"user": QUOTA_USER, "rate": w.producer_ids_rate, "previous": previous_quota}
            print(f"loadgen: note: {quota_note(w, configs, duration)}", file=sys.stderr, flush=True)
    try:
        results, wall, started_at, master, tasks, extra = _spark_run(args, w, run_id, topics, duration, configs,
                                                                     settings, jars)
    finally:
        if quota is not None:
            with connect(args.bootstrap_server, settings) as conn:
                set_user_quota(conn, QUOTA_USER, previous_quota)
    try:
        with connect(args.bootstrap_server, settings) as conn:
            stored = stored_records(conn, topics, w.partitions_per_topic)
    except JobError:
        stored = None
    result = merge(results, wall, stored, w, run_id, topics, master, tasks, started_at, quota)
    result.update(extra)
    out = Path(args.output or f"loadgen-{w.name}-{time.strftime('%Y%m%d-%H%M%S')}.json")
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result), flush=True)
    print(f"result: {out}", flush=True)
    found = problems(result)
    if found:
        print("loadgen: " + "; ".join(found), file=sys.stderr)
        return 1
    return 0


def _spark_run(args, w: Workload, run_id: str, topics: list[str], duration: float, configs: dict,
               settings: dict, jars: list[str] | None):
    spark = spark_session(f"kipper-loadgen-{w.name}", args.master)
    try:
        if jars is not None:
            from kipper.spark_jobs.connector import add_to

            add_to(spark, jars)
        sc = spark.sparkContext
        master = sc.master
        slots = sc.defaultParallelism
        tasks = min(args.tasks or slots, w.producers)
        if tasks > slots:
            print(f"loadgen: warning: {tasks} tasks but {slots} task slots: some tasks start late",
                  file=sys.stderr)
        lock_ms = int(configs.get("group.share.record.lock.duration.ms") or LOCK_MS_DEFAULT)
        specs = plan(w, args.bootstrap_server, run_id, topics, tasks, duration, lock_ms)
        for spec in specs:
            spec.update(run_id=run_id, metrics_topic=args.metrics_topic if args.sink == "kipper" else None)
        target = f"target {w.producer_rate:g} records/s" if w.producer_rate else "unthrottled"
        print(f"loadgen: {w.name}: {w.producers} producer(s) on {len(topics)} topic(s) x "
              f"{w.partitions_per_topic} partitions in {tasks} task(s) on {master}, {duration:g} s, {target}",
              flush=True)
        progress = Progress(args.bootstrap_server, topics, w.partitions_per_topic, args.progress_interval,
                            settings=settings)
        progress.start()
        jvm_cpu = JvmCpu(spark)
        started, started_at = time.monotonic(), time.time()
        try:
            if args.sink == "spark-kafka":
                from kipper.spark_jobs.spark_sink import run as run_spark_sink

                results = run_spark_sink(spark, specs, args.bootstrap_server, connector_options(args), w)
            else:
                results = run_job(sc, specs, args.first_task_timeout)
        finally:
            progress.done.set()
        wall = time.monotonic() - started
        extra = {"sink": args.sink, "cpu": cpu_figures(results, jvm_cpu.seconds())}
        if args.audit:
            from kipper.spark_jobs.audit import audit

            print(f"loadgen: auditing {len(topics)} topic(s) with Spark's Kafka connector", flush=True)
            extra["audit"] = audit(spark, args.bootstrap_server, topics,
                                   [led for r in results for led in r["ledgers"]], connector_options(args))
        return results, wall, started_at, master, tasks, extra
    finally:
        spark.stop()


def main(argv=None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    main_wrapper("loadgen", main)
