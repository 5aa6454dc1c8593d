"""Kafka's own perf tools against kipper and Apache Kafka, side by side (issue 30).

kafka-producer-perf-test writes N records to a fresh one-partition topic, then
kafka-consumer-perf-test reads them back, against each broker in turn, round after round
(kipper, Kafka, kipper, Kafka, ...) so the machine's noise falls on both. Each tool is a JVM of
its own, as bin/kafka-*-perf-test.sh starts it. kipper keeps its log in memory (its default),
Kafka on disk (it has no other way); both are one node with their default settings but for
one partition per topic and no initial rebalance delay.

    .venv/bin/python -m benchmarks.kafka_perf_tools [--records 500000] [--size 100] [--rounds 2] [--acks 1]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import uuid

from benchmarks.kafka_peer import KafkaPeer, available
from scripts.kafka_reference import TOOLS, classpath, java_binary
from tests.support.broker import BrokerProcess

PRODUCED = re.compile(r"^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                      r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th", re.M)


def tool(name: str, *args: str, timeout: float = 900) -> str:
    cmd = [java_binary(), "-Xmx512m", "-cp", classpath("tools"), TOOLS[name], *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done.stdout


def one_round(bootstrap: str, records: int, size: int, acks: str) -> dict:
    topic = f"perf-{uuid.uuid4().hex[:8]}"
    tool("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic, "--partitions", "1")
    out = tool("kafka-producer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic, "--num-records",
               str(records), "--record-size", str(size), "--throughput", "-1", "--command-property", f"acks={acks}")
    sent = PRODUCED.findall(out)[-1]
    assert int(sent[0]) == records, out
    out = tool("kafka-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic,
               "--num-records", str(records), "--timeout", "120000")
    cells = out.strip().splitlines()[-1].split(", ")
    assert int(cells[4]) == records, out
    return {"produce rec/s": float(sent[1]), "produce MB/s": float(sent[2]), "avg latency ms": float(sent[3]),
            "p99 latency ms": float(sent[7]), "consume rec/s": float(cells[5]), "consume MB/s": float(cells[3]),
            "fetch rec/s": float(cells[9])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--acks", default="1")
    args = parser.parse_args()
    if not available():
        raise SystemExit("needs Java and Maven (scripts/kafka-reference)")
    results: dict[str, list[dict]] = {"kipper": [], "kafka": []}
    with BrokerProcess({"log.level": "WARNING", "num.partitions": "1", "group.initial.rebalance.delay.ms": "0"}) as kipper, \
            KafkaPeer() as kafka:
        for r in range(args.rounds):
            for name, broker in (("kipper", kipper), ("kafka", kafka)):
                figures = one_round(broker.bootstrap, args.records, args.size, args.acks)
                results[name].append(figures)
                print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v:,.1f}" for k, v in figures.items()), flush=True)
    print(f"\n{args.records:,} records of {args.size} bytes, acks={args.acks}, {args.rounds} rounds; means:")
    print("| figure | kipper | Kafka | kipper/Kafka |\n|---|---|---|---|")
    for key in results["kipper"][0]:
        a = statistics.mean(f[key] for f in results["kipper"])
        b = statistics.mean(f[key] for f in results["kafka"])
        print(f"| {key} | {a:,.1f} | {b:,.1f} | {a / b:.2f}x |")


if __name__ == "__main__":
    main()
