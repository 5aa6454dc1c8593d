"""kipper, Tansu and Apache Kafka side by side, every workload of issue 15 in one run.

    .venv/bin/python -m benchmarks.side_by_side --label after
    .venv/bin/python -m benchmarks.side_by_side --label before --kipper-root /tmp/kipper-before

Passes (each with a fresh broker per candidate, kipper first, then Tansu, then Kafka, which
scripts/kafka-reference fetches; ``--no-kafka`` leaves it out):

- ``ingest1``/``ingest2``: 1 and 2 idempotent confluent-kafka producers (benchmarks/broker_ingest.py);
- ``consume``: a 1-partition and a 3-partition topic filled with records, read back by
  consumers with each client's defaults (benchmarks/consume_defaults.py's modes: librdkafka
  assigned and in classic and KIP-848 groups, aiokafka, kafka-python), records/s, the
  consumer's stalls and broker CPU per 1M records;
- ``requests``: single-record Produce requests pipelined on one connection: requests/s and
  broker CPU per request;
- ``latency20k``/``latency50k``: a producer at a fixed rate with linger.ms=0, latency to a consumer;
- ``partitions``: CreateTopics and Metadata of 1,000-partition topics, ingest into one;
- ``idle``: 200 idle connections: memory each, CPU while idle, a request's round trip meanwhile,
  and one idempotent producer's ingest with and without them;
- ``memory``: broker RSS growth per byte of records stored;
- ``start``: process start to the first accepted connection, and idle RSS.

Every broker is warmed before a pass measures it (benchmarks/warm.py: 1,000,000 records
produced and read back, ``--warm``), as a long-running broker is; ``start`` (start-up time
and idle memory) is always cold, and ``--cold PASS ...`` runs those passes a second time on
brokers that were not warmed (what a CI job that starts a broker sees). Broker CPU is the
broker process's user+system time from /proc. The machine's load is
sampled around each pass (benchmarks/machine.py). ``--kipper-root`` runs the kipper broker
of another checkout (with its own .venv), to measure a build before a change in the same
sitting. Writes ``<out>/<label>.json`` and ``<out>/<label>.md``; docs/PERFORMANCE.md
includes the Markdown (``--docs`` updates it between its markers).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import broker_ingest, consume_defaults, kafka_peer, start_time, workloads
from benchmarks.machine import LoadProbe, process_cpu_seconds, rss_kib
from benchmarks.side_by_side_report import markdown, update_docs
from benchmarks.warm import WARM_RECORDS, warm
from tests.support.broker import BrokerProcess, free_port
from tests.support.tansu import TansuProcess, tansu_binary

ROOT = Path(__file__).resolve().parents[1]
PASSES = ("ingest1", "ingest2", "consume", "requests", "latency20k", "latency50k", "partitions",
          "idle", "memory", "start")


def spawn(fn, *args, queue_result: bool = True):
    """Run ``fn(*args)`` in a spawned process; returns (process, result queue)."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_call, args=(fn, args, q))
    proc.start()
    return proc, q


def _call(fn, args, q) -> None:
    q.put(fn(*args))


def run(fn, *args, timeout: float = 1800):
    proc, q = spawn(fn, *args)
    result = q.get(timeout=timeout)
    proc.join(30)
    return result


class Candidates:
    def __init__(self, kipper_root: Path | None, kafka: bool = True):
        self.kipper_root = kipper_root
        self.names = (["kipper"] + (["tansu"] if tansu_binary() is not None else [])
                      + (["kafka"] if kafka and kafka_peer.available() else []))

    def start(self, name: str, overrides: dict | None = None):
        if name == "kipper":
            return BrokerProcess({"log.level": "WARNING", **(overrides or {})}, checkout=self.kipper_root)
        if name == "kafka":
            return kafka_peer.KafkaPeer()
        return TansuProcess()


# --- the passes: one candidate's broker, already started -----------------------------------

def p_ingest(broker, name, args, producers: int) -> dict:
    return broker_ingest.run_against(name, broker, args.records, args.size, producers, producers,
                                     idempotent=True)


CONSUME_MODES = ("rdkafka-1", "rdkafka-1-backoff10", "rdkafka-classic-3", "rdkafka-848-3", "aiokafka-1",
                 "kafka-python-1")


def p_consume(broker, name, args) -> dict:
    """Each mode's records/s, stalls and broker CPU, as ``<mode>.<key>``."""
    consume_defaults.fill(broker, args.records, args.size)
    out = {}
    for mode in args.consume_modes:
        got = consume_defaults.measure(broker, mode, args.records)
        for key in ("records_per_sec", "stalls", "broker_cpu_s_per_million", "error"):
            if key in got:
                out[f"{mode}.{key}"] = got[key]
    return out


def p_requests(broker, name, args) -> dict:
    broker_ingest.create_topic(broker.bootstrap, 1, "requests")
    cpu0 = process_cpu_seconds(broker.proc.pid)
    got = run(workloads.raw_produce, broker.bootstrap, "requests", args.requests, args.size, args.window)
    cpu = process_cpu_seconds(broker.proc.pid) - cpu0
    return {"requests_per_sec": got["requests"] / got["seconds"],
            "broker_cpu_us_per_request": cpu / got["requests"] * 1e6,
            "requests_per_broker_cpu_second": got["requests"] / cpu if cpu else None}


def p_latency(broker, name, args, rate: int) -> dict:
    topic = f"latency{rate}"
    broker_ingest.create_topic(broker.bootstrap, 1, topic)
    ctx = mp.get_context("spawn")
    ready, go = ctx.Queue(), ctx.Event()
    expected = int(rate * args.latency_seconds)
    consumer, cq = spawn(workloads.latency_consumer, broker.bootstrap, topic, expected,
                         args.latency_seconds, ready)
    ready.get(timeout=60)
    producer, pq = spawn(workloads.paced_producer, broker.bootstrap, topic, rate, args.latency_seconds,
                         args.size, go)
    time.sleep(3.0)  # the producer connects and sends its first record before the clock starts
    cpu0 = process_cpu_seconds(broker.proc.pid)
    go.set()
    sent = pq.get(timeout=args.latency_seconds + 120)
    cpu = process_cpu_seconds(broker.proc.pid) - cpu0
    seen = cq.get(timeout=120)
    producer.join(30)
    consumer.join(30)
    return {**seen, "achieved_rate": round(sent["sent"] / sent["seconds"]),
            "broker_cpu_us_per_record": cpu / max(sent["sent"], 1) * 1e6}


def p_partitions(broker, name, args) -> dict:
    from kipper.client import admin
    from kipper.client.blocking import connect_any

    creates = []
    with connect_any(broker.bootstrap) as conn:
        for i in range(args.create_runs):
            t = time.perf_counter()
            answer = admin.create_topics(conn, [admin.NewTopic(f"wide{i}", 1000, 1)])
            creates.append((time.perf_counter() - t) * 1000)
            assert answer.topics[0].error_code == 0, answer
    frame = workloads.metadata_request("wide0")
    run(workloads.request_rtts, broker.bootstrap, frame, 3)  # first use
    cpu0 = process_cpu_seconds(broker.proc.pid)
    rtts = run(workloads.request_rtts, broker.bootstrap, frame, args.metadata_runs)
    cpu = process_cpu_seconds(broker.proc.pid) - cpu0
    ingest = broker_ingest.run_against(name, broker, args.records, args.size, 1, 1000, idempotent=True)
    return {"create_topics_ms_median": statistics.median(creates), "create_topics_ms_min": min(creates),
            "metadata_ms_median": statistics.median(rtts), "metadata_ms_p99": _p(rtts, 0.99),
            "broker_cpu_ms_per_metadata": cpu / args.metadata_runs * 1000,
            "ingest_records_per_sec": ingest["records_per_sec"],
            "ingest_broker_cpu_s_per_million": ingest["broker_cpu_s_per_million"]}


def p_idle(broker, name, args) -> dict:
    broker_ingest.create_topic(broker.bootstrap, 1, "probe")
    probe = workloads.produce_request("probe", args.size)
    run(workloads.request_rtts, broker.bootstrap, probe, 50)
    alone = broker_ingest.run_against(name, broker, args.records, args.size, 1, 1, idempotent=True,
                                      topic="ingest-alone")
    rss0 = rss_kib(broker.proc.pid)
    ctx = mp.get_context("spawn")
    ready = ctx.Queue()
    holder, _ = spawn(workloads.hold_idle, broker.bootstrap, args.idle_connections, args.idle_seconds + 600,
                      ready)
    opened = ready.get(timeout=120)
    time.sleep(1.0)
    rss1 = rss_kib(broker.proc.pid)
    cpu0 = process_cpu_seconds(broker.proc.pid)
    time.sleep(args.idle_seconds)
    cpu = process_cpu_seconds(broker.proc.pid) - cpu0
    rtts = run(workloads.request_rtts, broker.bootstrap, probe, 2000)
    beside = broker_ingest.run_against(name, broker, args.records, args.size, 1, 1, idempotent=True,
                                       topic="ingest-beside")
    holder.terminate()
    holder.join(30)
    return {"connections": opened, "rss_kib_per_connection": (rss1 - rss0) / opened,
            "idle_cpu_pct": 100 * cpu / args.idle_seconds,
            "produce_rtt_ms_p50": statistics.median(rtts), "produce_rtt_ms_p99": _p(rtts, 0.99),
            "ingest_alone_records_per_sec": alone["records_per_sec"],
            "ingest_beside_records_per_sec": beside["records_per_sec"],
            "ingest_beside_over_alone": beside["records_per_sec"] / alone["records_per_sec"],
            "ingest_alone_cpu_s_per_million": alone["broker_cpu_s_per_million"],
            "ingest_beside_cpu_s_per_million": beside["broker_cpu_s_per_million"]}


def p_memory(broker, name, args) -> dict:
    broker_ingest.create_topic(broker.bootstrap, 1, "memory")
    run(workloads.fill, broker.bootstrap, "memory", 1000, args.size)
    time.sleep(1.0)
    rss0 = rss_kib(broker.proc.pid)
    n = args.records
    undelivered = run(workloads.fill, broker.bootstrap, "memory", n, args.size)
    time.sleep(2.0)
    rss1 = rss_kib(broker.proc.pid)
    stored = (n - undelivered) * args.size
    return {"rss_growth_mib": (rss1 - rss0) / 1024, "payload_mib": stored / 2**20,
            "rss_bytes_per_payload_byte": (rss1 - rss0) * 1024 / stored}


def p_start(cands: Candidates, args) -> dict:
    """Both candidates alternated run by run (no broker started beforehand)."""
    root = cands.kipper_root or ROOT
    python = str(root / ".venv" / "bin" / "python") if cands.kipper_root else sys.executable
    binary = tansu_binary()
    cmds = {"kipper": lambda port: start_time.kipper_cmd(port, python)}
    if binary is not None:
        cmds["tansu"] = lambda port: start_time.tansu_cmd(binary, port)
    runs: dict[str, list] = {}
    for _ in range(args.start_runs):
        for name, cmd in cmds.items():
            port = free_port()
            runs.setdefault(name, []).append(start_time.time_to_accept(cmd(port), port, cwd=root))
        if "kafka" in cands.names:
            runs.setdefault("kafka", []).append(kafka_peer.time_to_accept())
    return {name: {"start_s_median": statistics.median(r[0] for r in rs),
                   "start_s_min": min(r[0] for r in rs), "start_s_max": max(r[0] for r in rs),
                   "idle_rss_mib": statistics.median(r[1] for r in rs) / 1024} for name, rs in runs.items()}


def _p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(int(q * len(values)), len(values) - 1)]


PASS_FUNCS = {
    "ingest1": lambda b, n, a: p_ingest(b, n, a, 1),
    "ingest2": lambda b, n, a: p_ingest(b, n, a, 2),
    "consume": p_consume,
    "requests": p_requests,
    "latency20k": lambda b, n, a: p_latency(b, n, a, 20_000),
    "latency50k": lambda b, n, a: p_latency(b, n, a, 50_000),
    "partitions": p_partitions,
    "idle": p_idle,
    "memory": p_memory,
}


def run_pass(name: str, cands: Candidates, args, *, cold: bool = False) -> dict:
    """One pass on each candidate, each on a fresh broker warmed first (``cold``: not)."""
    probe = LoadProbe().start()
    results: dict = {}
    if name == "start":
        results = p_start(cands, args)
    else:
        for cand in cands.names:
            try:
                with cands.start(cand) as broker:
                    warmed = {} if cold else warm(broker, args.warm)
                    results[cand] = {**PASS_FUNCS[name](broker, cand, args), **warmed}
            except Exception as exc:  # one broker failing a pass must not lose the others
                results[cand] = {"error": repr(exc)}
            print(f"  {name}{' (cold)' if cold else ''} {cand}: {_short(results[cand])}", flush=True)
    results["load"] = probe.stop()
    print(f"  {name} load: {results['load']}", flush=True)
    return results


def _short(d: dict) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in d.items())


def warm_text(records: int) -> str:
    if not records:
        return "every broker cold (started for the pass, nothing warmed)"
    return (f"every broker warmed before each pass ({records:,} records produced and read back on it); "
            "start-up and idle memory measured cold")


def git_commit(root: Path) -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        marker = root / "COMMIT"  # an exported tree (git archive) notes its commit here
        return marker.read_text().strip() if marker.exists() else "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description="kipper, Tansu and Kafka side by side (issues 15, 29)")
    ap.add_argument("--no-kafka", action="store_true", help="leave Apache Kafka out")
    ap.add_argument("--label", default="run")
    ap.add_argument("--passes", nargs="+", choices=PASSES, default=list(PASSES))
    ap.add_argument("--kipper-root", type=Path, help="run the kipper broker of this checkout (its .venv)")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--requests", type=int, default=300_000)
    ap.add_argument("--window", type=int, default=64, help="Produce requests in flight (requests pass)")
    ap.add_argument("--latency-seconds", type=float, default=15.0)
    ap.add_argument("--create-runs", type=int, default=5)
    ap.add_argument("--metadata-runs", type=int, default=1000)
    ap.add_argument("--idle-connections", type=int, default=200)
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--start-runs", type=int, default=7)
    ap.add_argument("--warm", type=int, default=WARM_RECORDS,
                    help="records produced and read back on each broker before a pass (0: cold)")
    ap.add_argument("--cold", nargs="*", choices=PASSES, default=[],
                    help="passes to run a second time on brokers that were not warmed")
    ap.add_argument("--consume-modes", nargs="+", choices=list(consume_defaults.MODES), default=CONSUME_MODES)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "bench")
    ap.add_argument("--docs", action="store_true", help="put the Markdown into docs/PERFORMANCE.md")
    args = ap.parse_args()
    cands = Candidates(args.kipper_root, kafka=not args.no_kafka)
    report = {"label": args.label, "kipper_commit": git_commit(args.kipper_root or ROOT),
              "runner_commit": git_commit(ROOT), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform()},
              "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
              "passes": {}}
    report["warm"] = args.warm
    print(f"side by side: {', '.join(cands.names)}; kipper at {report['kipper_commit']}; "
          f"{warm_text(args.warm)}", flush=True)
    for name in args.passes:
        print(f"{name}:", flush=True)
        report["passes"][name] = run_pass(name, cands, args)
        if name in args.cold and name != "start":
            print(f"{name} (cold):", flush=True)
            report["passes"][f"{name}-cold"] = run_pass(name, cands, args, cold=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.label}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (args.out / f"{args.label}.md").write_text(text)
    print(text)
    if args.docs:
        update_docs(ROOT / "docs" / "PERFORMANCE.md", args.label, text)


if __name__ == "__main__":
    main()
