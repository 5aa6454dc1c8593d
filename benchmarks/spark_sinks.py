"""kipper's Producer against Kafka's Java producer, in the same Spark tasks, in one sitting:
``python -m benchmarks.spark_sinks [--rounds 2] [--seconds 15] [--size 200] [--master local[2]]``.

Each round runs ``loadgen.py`` once with ``--sink kipper`` and once with ``--sink
spark-kafka`` (alternating which goes first) against one broker, unthrottled
(``producerRate: 0``), 1 topic x 3 partitions, 2 producers, idempotent; both runs end
with the audit. Per run: acknowledged records/s over the load, CPU per record of the
tasks' Python workers and of the Spark JVM (local master: the executors are that JVM),
the broker's CPU per record, and the audit's verdict. The last lines are the medians and
the kipper/Java ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from benchmarks.spark import submit
from tests.support.broker import BrokerProcess

WORKLOAD = """\
name: sinks
topics: 1
partitionsPerTopic: 3
messageSize: {size}
producersPerTopic: 2
producerRate: 0
testDurationMinutes: {minutes}
keyDistributor: NO_KEY
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one(broker: BrokerProcess, sink: str, workload: Path, master: str, out: Path) -> dict:
    before = cpu_seconds(broker.proc.pid)
    proc, wall = submit(str(Path("spark_jobs") / "loadgen.py"), "--bootstrap-server", broker.bootstrap,
                        "--workload", str(workload), "--master", master, "--sink", sink,
                        "--output", str(out), "--progress-interval", "60")
    if proc.returncode != 0:
        raise SystemExit(f"{sink}: loadgen failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    r = json.loads(out.read_text())
    return {"sink": sink, "records_per_sec": r["records_per_sec"], "acked": r["acked"],
            "python_us": r["cpu"]["python_tasks_s"] / r["acked"] * 1e6,
            "jvm_us": (r["cpu"]["jvm_s"] or 0.0) / r["acked"] * 1e6,
            "broker_us": (cpu_seconds(broker.proc.pid) - before) / r["acked"] * 1e6,
            "audit": r["audit"]["verdict"], "wall_s": wall}


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument("--size", type=int, default=200)
    p.add_argument("--master", default="local[2]")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kipper-sinks-") as tmp, BrokerProcess() as broker:
        workload = Path(tmp) / "w.yaml"
        workload.write_text(WORKLOAD.format(size=args.size, minutes=args.seconds / 60))
        print(f"{'round':>5} {'sink':<12} {'records/s':>10} {'py us/rec':>9} {'jvm us/rec':>10} "
              f"{'broker us/rec':>13} {'audit':>6}", flush=True)
        for i in range(args.rounds):
            order = ("kipper", "spark-kafka") if i % 2 == 0 else ("spark-kafka", "kipper")
            for sink in order:
                r = one(broker, sink, workload, args.master, Path(tmp) / f"{i}-{sink}.json")
                rows.append(r)
                print(f"{i:>5} {sink:<12} {r['records_per_sec']:>10,.0f} {r['python_us']:>9.1f} {r['jvm_us']:>10.1f} "
                      f"{r['broker_us']:>13.1f} {r['audit']:>6}", flush=True)
    med = {s: {k: statistics.median(r[k] for r in rows if r["sink"] == s)
               for k in ("records_per_sec", "python_us", "jvm_us", "broker_us")} for s in ("kipper", "spark-kafka")}
    for s, m in med.items():
        print(f"median {s:<12} {m['records_per_sec']:>10,.0f} {m['python_us']:>9.1f} {m['jvm_us']:>10.1f} "
              f"{m['broker_us']:>13.1f}")
    k, j = med["kipper"], med["spark-kafka"]
    print(f"kipper/java: records/s {k['records_per_sec'] / j['records_per_sec']:.2f}x, CPU per record (tasks) "
          f"{(k['python_us'] + k['jvm_us']) / (j['python_us'] + j['jvm_us']):.2f}x, broker CPU per record "
          f"{k['broker_us'] / j['broker_us']:.2f}x")


if __name__ == "__main__":
    main()
