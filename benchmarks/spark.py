"""Figures for docs/PERFORMANCE.md (issue #7): ``python -m benchmarks.spark``.

    loadgen    records/s of loadgen.py with local[1] and local[2] against one broker
    overhead   Spark's cost per task: empty tasks, Python workers warm
    analysis   analyze_metrics.py over N synthetic dump lines (default 1,000,000)
    compare    local[2] against a two-worker standalone cluster on loopback, in one sitting:
               loadgen throughput and overhead, empty-task cost, analysis of the same dumps

Each prints a small table; spark-submit subprocesses, so the figures include
what a user waits for (JVM start, Python workers).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _env() -> dict:
    return dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                SPARK_CONF_DIR=str(ROOT / "spark_jobs"), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def submit(*args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    proc = subprocess.run([str(BIN / "spark-submit"), *args], cwd=ROOT, env={**_env(), **(env or {})},
                          capture_output=True, text=True)
    return proc, time.monotonic() - started


# --- synthetic dump lines ----------------------------------------------------------------------

def synthetic_lines(path: Path, n: int, seed: int = 7) -> int:
    """Lines shaped like a busy broker's: 8 APIs with ~10 buckets, 12 partitions,
    producer state, 2 quota users, 3 share-partitions. Returns bytes written."""
    from kipper.protocol.histogram import BUCKET_BOUNDS as BOUNDS

    rnd = random.Random(seed)
    apis = ["Produce", "Fetch", "Metadata", "ApiVersions", "InitProducerId", "ListOffsets", "ShareFetch",
            "ShareAcknowledge"]
    t0 = 1_790_000_000_000
    size = 0
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            hist = {}
            for a in apis:
                lo = rnd.randrange(40, 120)
                buckets = [[b, rnd.randrange(1, 200)] for b in BOUNDS[lo:lo + 10]]
                count = sum(c for _, c in buckets)
                hist[a] = {"count": count, "sum_us": count * BOUNDS[lo + 4], "max_us": BOUNDS[lo + 9],
                           "p50_us": BOUNDS[lo + 4], "p99_us": BOUNDS[lo + 9], "buckets": buckets}
            parts = [{"topic": f"orders-{t}", "partition": p, "bytes_in": (r := rnd.randrange(500, 3000)) * 200,
                      "records_in": r, "bytes_out": r * 200, "records_out": r} for t in range(3) for p in range(4)]
            line = {"schema": 1, "ts_ms": t0 + i * 1000, "broker_id": 1, "interval_ms": 1000, "apis": hist,
                    "rejected": {}, "partitions": parts,
                    "connections": {"open": 12, "accepted": 12 + i // 100, "closed": i // 100},
                    "totals": {"requests": i * 900, "bytes_in": i * 4_000_000, "records_in": i * 20_000,
                               "bytes_out": i * 4_000_000, "records_out": i * 20_000,
                               "connections_accepted": 12 + i // 100, "connections_closed": i // 100},
                    "producer_state": {"mode": "latest", "entries": 100 + i // 1000, "bytes": 6600 + i // 15,
                                       "partitions": {f"orders-{t}-{p}": {"entries": 8, "bytes": 528}
                                                      for t in range(3) for p in range(4)},
                                       "duplicates": i // 5000, "duplicate_sequence_errors": 0,
                                       "out_of_order": 0, "fencings": i // 100_000, "expired": 0},
                    "quotas": {"users": [{"user": u, "quota": 10.0, "producer_id_rate": rnd.random() * 12,
                                          "tokens": rnd.random() * 100, "throttle_time_ms": rnd.random() * 50,
                                          "admitted": i, "throttled": i // 10} for u in ("alice", "bob")]},
                    "share": {"partitions": [{"group": "g", "topic": "orders-0", "partition": p, "spso": i,
                                              "speo": i + 50, "in_flight": 50, "available": 10, "acquired": 35,
                                              "acknowledged": 3, "archived": 2, "lock_expiries": i // 50,
                                              "delivery_counts": {"1": 45, "2": 4, "5": 1}} for p in range(3)]},
                    "share_groups": {"groups": 1, "members": 3, "share_sessions": 3, "share_partitions_loaded": 3,
                                     "in_flight_records": 150, "available_records": 30, "checkpoints_written": i // 30,
                                     "deltas_written": i, "recoveries": 0},
                    "dump": {"dropped": 0}}
            text = json.dumps(line, separators=(",", ":")) + "\n"
            size += len(text)
            f.write(text)
    return size


# --- the three benchmarks ----------------------------------------------------------------------

def bench_loadgen(duration: float, size: int) -> None:
    from tests.support.broker import BrokerProcess

    workload = Path(tempfile.mkdtemp()) / "bench.yaml"
    workload.write_text(f"name: bench\ntopics: 1\npartitionsPerTopic: 4\nmessageSize: {size}\n"
                        f"producersPerTopic: 2\nproducerRate: 0\ntestDurationMinutes: {duration / 60}\n")
    print("| master | tasks | records/s | MB/s | p50 ms | p99 ms | acked = stored | job s | job - task s "
          "| first task start s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for master in ("local[1]", "local[2]"):
        with BrokerProcess() as broker:
            out = workload.with_suffix(f".{master[6]}.json")
            proc, _ = submit(str(ROOT / "spark_jobs" / "loadgen.py"), "--bootstrap-server", broker.bootstrap,
                             "--workload", str(workload), "--master", master, "--output", str(out))
            if proc.returncode:
                print(proc.stdout, proc.stderr)
                continue
            r = json.loads(out.read_text())
            print(f"| {master} | {r['tasks']} | {r['records_per_sec']:,.0f} | {r['mb_per_sec']:.1f} | "
                  f"{r['latency']['p50_ms']} | {r['latency']['p99_ms']} | {r['stored_matches_acked']} | "
                  f"{r['job_seconds']:.1f} | {r['overhead']['job_minus_longest_task_s']:.2f} | "
                  f"{r['overhead']['first_task_start_s']:.2f} |", flush=True)


OVERHEAD_SCRIPT = (
    "import time\n"
    "from kipper.spark_jobs.common import spark_session\n"
    "spark = spark_session('overhead', None)\n"
    "sc = spark.sparkContext\n"
    "sc.parallelize(range(4), 4).map(lambda x: x).collect()  # start the Python workers\n"
    "for n in (2, 8, 32, 128):\n"
    "    best = min((lambda t: (sc.parallelize(range(n), n).map(lambda x: x).collect(), time.perf_counter() - t)[1])"
    "(time.perf_counter()) for _ in range(3))\n"
    "    print(f'| {n} | {best * 1000:.0f} | {best * 1000 / n:.1f} |', flush=True)\n"
    "spark.stop()\n")


def bench_overhead() -> None:
    script = Path(tempfile.mkdtemp()) / "overhead.py"
    script.write_text(OVERHEAD_SCRIPT)
    print("| tasks (local[2]) | job ms (best of 3) | ms per task |")
    print("|---|---|---|")
    proc, total = submit("--master", "local[2]", str(script))
    print("\n".join(line for line in proc.stdout.splitlines() if line.startswith("|")))
    print(f"\nspark-submit of that script, JVM start to exit: {total:.1f} s")


def bench_analysis(lines: int) -> None:
    d = Path(tempfile.mkdtemp(prefix="kipper-bench-dump-"))
    (d / "in").mkdir()
    t = time.monotonic()
    size = synthetic_lines(d / "in" / "metrics-1-0.jsonl", lines)
    print(f"generated {lines:,} lines, {size / 1e9:.2f} GB, in {time.monotonic() - t:.0f} s", flush=True)
    for master in ("local[2]",):
        proc, took = submit(str(ROOT / "spark_jobs" / "analyze_metrics.py"), "--input", str(d / "in"),
                            "--output", str(d / "report"), "--master", master)
        print(proc.stdout.strip())
        if proc.returncode:
            print(proc.stderr[-3000:])
        print(f"| {lines:,} | {size / 1e9:.2f} GB | {master} | {took:.0f} s |")


def bench_compare(duration: float, size: int, lines: int) -> None:
    """local[2] against a two-worker standalone cluster (1 core each, loopback), in one sitting:
    the same unthrottled loadgen, empty-task overhead, and the analysis of the same dumps."""
    from tests.support.broker import BrokerProcess
    from tests.support.spark_cluster import SparkStandaloneCluster

    tmp = Path(tempfile.mkdtemp(prefix="kipper-bench-compare-"))
    workload = tmp / "bench.yaml"
    workload.write_text(f"name: bench\ntopics: 1\npartitionsPerTopic: 4\nmessageSize: {size}\n"
                        f"producersPerTopic: 2\nproducerRate: 0\ntestDurationMinutes: {duration / 60}\n")
    env_archive = tmp / "kipper-env.tar.gz"
    t = time.monotonic()
    subprocess.run([sys.executable, "-m", "kipper.spark_jobs.pack_env", "--output", str(env_archive)], cwd=ROOT,
                   check=True, capture_output=True)
    print(f"packed the executors' environment in {time.monotonic() - t:.1f} s", flush=True)
    synthetic = tmp / "synthetic"
    synthetic.mkdir()
    synthetic_lines(synthetic / "metrics-1-0.jsonl", lines)
    (tmp / "overhead.py").write_text(OVERHEAD_SCRIPT)
    with SparkStandaloneCluster(workers=2, cores=1, memory="1g") as cluster:
        cluster_args = ["--master", cluster.url, "--archives", f"{env_archive}#environment",
                        "--conf", "spark.cores.max=2", "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0"]
        cluster_env = {"PYSPARK_PYTHON": "./environment/bin/python", "SPARK_LOCAL_IP": "127.0.0.1"}
        setups = (("local[2]", ["--master", "local[2]"], {}), ("standalone, 2 workers", cluster_args, cluster_env))
        rows = []
        for name, args, env in setups:
            dumps = tmp / f"dumps-{len(rows)}"
            with BrokerProcess({"metrics.dump.dir": str(dumps), "log.level": "WARNING"}) as broker:
                out = tmp / f"result-{len(rows)}.json"
                proc, took = submit(*args, str(ROOT / "spark_jobs" / "loadgen.py"), "--bootstrap-server",
                                    broker.bootstrap, "--workload", str(workload), "--output", str(out), env=env)
            if proc.returncode:
                print(proc.stdout[-3000:], proc.stderr[-3000:])
                continue
            r = json.loads(out.read_text())
            over, _ = submit(*args, str(tmp / "overhead.py"), env=env)
            per_task = [line for line in over.stdout.splitlines() if line.startswith("|")]
            analysis = []
            for label, src in (("this run's dumps", dumps), (f"{lines:,} synthetic lines", synthetic)):
                a, a_took = submit(*args, str(ROOT / "spark_jobs" / "analyze_metrics.py"), "--input", str(src),
                                   "--output", str(tmp / f"report-{len(rows)}-{len(analysis)}"), env=env)
                inner = a.stdout.strip().splitlines()[0].rsplit(", ", 1)[-1] if a.returncode == 0 else "failed"
                analysis.append((label, inner, a_took))
            rows.append((name, r, took, per_task, analysis))
            print(f"{name}: done", flush=True)
    print("\n| master | tasks | records/s | MB/s | p50 ms | p99 ms | acked = stored | job s | job - task s "
          "| first task start s | spark-submit s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r, took, _, _ in rows:
        print(f"| {name} | {r['tasks']} | {r['records_per_sec']:,.0f} | {r['mb_per_sec']:.1f} | "
              f"{r['latency']['p50_ms']} | {r['latency']['p99_ms']} | {r['stored_matches_acked']} | "
              f"{r['job_seconds']:.1f} | {r['overhead']['job_minus_longest_task_s']:.2f} | "
              f"{r['overhead']['first_task_start_s']:.2f} | {took:.0f} |")
    print("\n| master | empty tasks | job ms (best of 3) | ms per task |")
    print("|---|---|---|---|")
    for name, _, _, per_task, _ in rows:
        for line in per_task:
            print(f"| {name} {line}")
    print("\n| master | input | analysis (in the job) | spark-submit, start to exit |")
    print("|---|---|---|---|")
    for name, _, _, _, analysis in rows:
        for label, inner, took in analysis:
            print(f"| {name} | {label} | {inner} | {took:.0f} s |")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=("loadgen", "overhead", "analysis", "compare"))
    p.add_argument("--duration", type=float, default=20.0, help="loadgen seconds")
    p.add_argument("--message-size", type=int, default=100)
    p.add_argument("--lines", type=int, default=1_000_000)
    a = p.parse_args()
    sys.path.insert(0, str(ROOT))
    {"loadgen": lambda: bench_loadgen(a.duration, a.message_size), "overhead": bench_overhead,
     "analysis": lambda: bench_analysis(a.lines),
     "compare": lambda: bench_compare(a.duration, a.message_size, a.lines)}[a.what]()


if __name__ == "__main__":
    main()
