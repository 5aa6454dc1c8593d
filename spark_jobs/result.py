"""The load generator's result: task results merged into one JSON document
(counts summed, histograms added bucket by bucket, per role), the short table
printed at the end, and the problems that make the run exit with status 1."""

from __future__ import annotations

from kipper.protocol.histogram import LatencyHistogram
from kipper.spark_jobs.workload import Workload

ROLES = ("steady", "churn", "transactional")
COUNTS = ("sent", "acked", "failed", "unacknowledged")
# errors that a churn producer is expected to meet when the workload sets a producer-id quota
QUOTA_ERRORS = ("THROTTLING_QUOTA_EXCEEDED", "TimeoutError")


def _add(into: dict, more: dict) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def merge_roles(results: list[dict]) -> dict:
    """Per role: counts, errors and a latency summary, summed over the tasks."""
    out = {}
    for role in ROLES:
        hist, errors = LatencyHistogram(), {}
        totals = dict.fromkeys(COUNTS, 0)
        for r in results:
            part = r.get("roles", {}).get(role)
            if part is None:
                continue
            _add(totals, {k: part[k] for k in COUNTS})
            _add(errors, part["errors"])
            hist.add(LatencyHistogram.from_dict(part["latency"]))
        out[role] = {**totals, "errors": errors, "latency": hist.summary_ms()}
    return out


def merge(results: list[dict], wall_s: float, stored: int | None, w: Workload, run_id: str,
          topics: list[str], master: str, tasks: int, job_started_at: float | None = None,
          quota: dict | None = None) -> dict:
    hist = LatencyHistogram()
    errors: dict[str, int] = {}
    delivery: dict[str, int] = {}
    share_acks: dict[str, int] = {}
    transactions: dict[str, int] = {}
    for r in results:
        hist.add(LatencyHistogram.from_dict(r["latency"]))
        _add(errors, r["errors"])
        _add(delivery, r["share_delivery_counts"])
        _add(share_acks, r.get("share_acks", {}))
        _add(transactions, r.get("transactions", {}))
    total = {k: sum(r[k] for r in results) for k in
             ("sent", "acked", "failed", "unacknowledged", "producers_created", "share_consumed")}
    load_s = max((r["load_seconds"] for r in results), default=0.0)
    first_start = min((r["started_at"] for r in results), default=0.0)
    return {
        "run_id": run_id, "workload": w.name, "master": master, "tasks": tasks, "topics": topics,
        "partitions_per_topic": w.partitions_per_topic, "message_size": w.message_size,
        "target_rate": w.producer_rate, "duration_s": round(load_s, 3), "job_seconds": round(wall_s, 3),
        "started_at": round(first_start, 3), **total,
        "records_per_sec": round(total["acked"] / load_s, 1) if load_s else 0.0,
        "mb_per_sec": round(total["acked"] * w.message_size / load_s / 1e6, 3) if load_s else 0.0,
        "stored_records": stored,
        "stored_matches_acked": stored == total["acked"] if stored is not None else None,
        "errors": errors, "first_error": next((r["first_error"] for r in results if r["first_error"]), None),
        "latency": hist.summary_ms(), "latency_histogram_us": hist.to_dict(),
        "roles": merge_roles(results),
        "quota": quota,
        "transactions": transactions,
        "transaction_errors": [e for r in results for e in r.get("transaction_errors", [])],
        "share_delivery_counts": delivery,
        "share_acks": share_acks,
        "share_errors": [e for r in results for e in r["share_errors"]],
        "overhead": {
            # Spark's part of the job: scheduling, Python worker start, result collection
            "job_minus_longest_task_s": round(wall_s - max((r["seconds"] for r in results), default=0), 3),
            "task_start_spread_s": round(max((r["started_at"] for r in results), default=0) - first_start, 3),
            # job submitted -> first task running (scheduling, Python worker start)
            "first_task_start_s": round(first_start - job_started_at, 3) if job_started_at else None,
        },
        "producers": [led for r in results for led in r.get("ledgers", [])],
        "per_task": [{k: r.get(k) for k in ("task", "host", "workdir", "python", "kipper", "producers",
                                            "producers_created", "sent", "acked", "failed", "unacknowledged",
                                            "load_seconds", "share_consumed", "cpu_seconds")}
                     | {"p99_ms": LatencyHistogram.from_dict(r["latency"]).summary_ms()["p99_ms"]}
                     for r in sorted(results, key=lambda r: r["task"])],
    }


def problems(result: dict) -> list[str]:
    """What makes the run fail (exit status 1). A churn producer's records
    refused by the workload's own producer-id quota are what the quota is for."""
    out = []
    roles = result.get("roles") or {}
    churn = roles.get("churn", {})
    tolerated = 0
    if result.get("quota") and churn:
        tolerated = churn["unacknowledged"] + sum(v for k, v in churn["errors"].items() if k in QUOTA_ERRORS)
    failed = result["failed"] + result["unacknowledged"] - tolerated
    if failed > 0:
        out.append(f"{result['failed']} record(s) failed, {result['unacknowledged']} unacknowledged"
                   + (f" ({tolerated} of them churn records refused by the quota)" if tolerated else "")
                   + (f"; first error: {result['first_error']}" if result["first_error"] else ""))
    if result.get("transaction_errors"):
        out.append(f"{len(result['transaction_errors'])} transaction(s) failed: {result['transaction_errors'][0]}")
    if result["share_errors"]:
        out.append(f"share consumer errors: {result['share_errors'][0]}")
    if result.get("audit"):
        from kipper.spark_jobs.audit_report import problems as audit_problems

        out += [f"audit: {p}" for p in audit_problems(result["audit"])]
    return out


class JvmCpu:
    """CPU time of the driver's JVM since this object was made. On a local master the
    executors are that JVM, so it is the Java side of the tasks (Kafka's Java producer
    with --sink spark-kafka); elsewhere None (their JVMs are on other machines)."""

    def __init__(self, spark):
        from kipper.spark_jobs.common import is_local

        self.bean = None
        if is_local(spark.sparkContext.master):
            try:
                self.bean = spark.sparkContext._jvm.java.lang.ProcessHandle
                self.start = self._ns()
            except Exception:  # a JVM that does not say
                self.bean = None

    def _ns(self) -> int:
        return self.bean.current().info().totalCpuDuration().get().toNanos()  # info() is a snapshot

    def seconds(self) -> float | None:
        return None if self.bean is None else (self._ns() - self.start) / 1e9


def cpu_figures(results: list[dict], jvm_s: float | None) -> dict:
    """CPU the tasks' Python workers spent (each task's process time: its threads and the
    producers' send threads), the driver JVM's (local masters), and per acknowledged record."""
    python_s = sum(r.get("cpu_seconds") or 0.0 for r in results)
    acked = sum(r["acked"] for r in results)
    total = python_s + (jvm_s or 0.0)
    return {"python_tasks_s": round(python_s, 3), "jvm_s": round(jvm_s, 3) if jvm_s is not None else None,
            "us_per_record": round(total / acked * 1e6, 2) if acked else None}


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
                       f"p99.9 {lat['p999_ms']}  max {lat['max_ms']}" if lat.get("count") or not result["acked"]
                       else "not measured (the Java producer's callbacks stay in the JVM)"),
        ("producers created", f"{result['producers_created']:,}"),
    ]
    roles = result.get("roles") or {}
    for role in ("churn", "transactional"):
        r = roles.get(role)
        if r and r["sent"]:
            errors = "  " + ", ".join(f"{k} {v:,}" for k, v in sorted(r["errors"].items())) if r["errors"] else ""
            rows.append((f"{role} records", f"{r['acked']:,} acked of {r['sent']:,} "
                                            f"({r['failed']:,} failed, {r['unacknowledged']:,} unacknowledged){errors}"))
    if result.get("quota"):
        q = result["quota"]
        rows.append(("producer-id quota", f"producer_ids_rate={q['rate']:g} for user {q['user']} during the run"))
    t = result.get("transactions") or {}
    if any(t.values()):
        rows.append(("transactions", f"{t.get('committed', 0):,} committed, {t.get('aborted', 0):,} aborted, "
                                     f"{t.get('fenced', 0):,} fenced, {t.get('failed', 0):,} failed"))
    if result["share_consumed"] or result["share_errors"]:
        acks = result.get("share_acks") or {}
        shown = ", ".join(f"{k} {v:,}" for k, v in acks.items() if v)
        rows.append(("share consumed", f"{result['share_consumed']:,}  delivery counts "
                                       + " ".join(f"{k}:{v}" for k, v in sorted(result["share_delivery_counts"].items(),
                                                                               key=lambda kv: int(kv[0])))
                                       + (f"  ({shown})" if shown else "")))
    if result["errors"]:
        rows.append(("errors", ", ".join(f"{k} {v}" for k, v in sorted(result["errors"].items()))))
    cpu = result.get("cpu")
    if cpu and cpu.get("us_per_record") is not None:
        jvm = f" + JVM {cpu['jvm_s']:.1f} s" if cpu.get("jvm_s") is not None else ""
        rows.append(("cpu", f"{cpu['us_per_record']:.1f} us/record  (Python tasks {cpu['python_tasks_s']:.1f} s{jvm}, "
                            f"sink {result.get('sink', 'kipper')})"))
    a = result.get("audit")
    if a:
        t = a["totals"]
        rows.append(("audit", f"{a['verdict']}: {t['records']:,} read, {t['duplicates']:,} duplicated, "
                              f"{t['missing']:,} missing, {t['misordered']:,} misordered, "
                              f"{t['aborted_seen']:,} from aborted transactions"))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)
