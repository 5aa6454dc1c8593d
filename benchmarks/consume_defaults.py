"""Consumption with every client's default settings, kipper against Kafka and Tansu (issue 41).

    .venv/bin/python -m benchmarks.consume_defaults [--records 1000000] [--rounds 2]
    .venv/bin/python -m benchmarks.consume_defaults --modes rdkafka-1 rdkafka-classic-3 --no-tansu
    .venv/bin/python -m benchmarks.consume_defaults --baseline ../kipper-before   # two kipper builds

Each round starts every broker afresh, in turn (kipper, Tansu, Kafka; the order rotates from
round to round so that drift in the machine's load falls on all of them), warms it (1,000,000
records produced and read back, ``--warm``), fills a 1-partition and a 3-partition topic with
``--records`` records of 100 bytes, and then reads them back once per mode, each mode a fresh
consumer (benchmarks/consumers.py) with its client's defaults:

- ``rdkafka-1``: librdkafka, partition 0 assigned; ``rdkafka-1-backoff10``: the same with
  ``fetch.queue.backoff.ms=10`` (what the side-by-side consume pass measured before issue 41);
  ``rdkafka-1-work10us``: the defaults, the application spending 10 us on each record;
- ``rdkafka-classic-3`` / ``rdkafka-848-3``: a group of one member subscribed to the
  3-partition topic, classic or KIP-848 protocol (the time counts the join);
- ``aiokafka-1``, ``aiokafka-3``, ``kafka-python-1``, ``kafka-python-3``: the same with those
  clients (the ``-3`` modes: a classic group).

Printed per mode and broker: records/s, the consumer's stalls over 0.3 s, and broker CPU-s
per 1M records (user + system from /proc), and the ratios kipper/Kafka. ``--json`` keeps it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmarks import broker_ingest, consumers, kafka_peer, workloads
from benchmarks.machine import LoadProbe, describe, process_cpu_seconds
from benchmarks.warm import in_process, warm
from tests.support.broker import BrokerProcess
from tests.support.tansu import TansuProcess, tansu_binary

MODES = {
    "rdkafka-1": ("rdkafka", 1, None, None),
    "rdkafka-1-backoff10": ("rdkafka", 1, None, {"fetch.queue.backoff.ms": 10}),
    "rdkafka-1-work10us": ("rdkafka", 1, None, None, 10),
    "rdkafka-classic-3": ("rdkafka", 3, "classic", None),
    "rdkafka-848-3": ("rdkafka", 3, "consumer", None),
    "aiokafka-1": ("aiokafka", 1, None, None),
    "aiokafka-3": ("aiokafka", 3, "classic", None),
    "kafka-python-1": ("kafka-python", 1, None, None),
    "kafka-python-3": ("kafka-python", 3, "classic", None),
}
TOPICS = {1: "consume1", 3: "consume3"}


def fill(broker, records: int, size: int) -> None:
    for partitions, topic in TOPICS.items():
        broker_ingest.create_topic(broker.bootstrap, partitions, topic)
        undelivered = in_process(workloads.fill, broker.bootstrap, topic, records, size)
        if undelivered:
            raise RuntimeError(f"{undelivered} records of {topic} were not delivered")


def measure(broker, mode: str, records: int) -> dict:
    client, partitions, group, settings, *work = MODES[mode]
    cpu0 = process_cpu_seconds(broker.proc.pid)
    try:
        got = in_process(consumers.CLIENTS[client], broker.bootstrap, TOPICS[partitions], records, group,
                         settings, *work)
    except RuntimeError as exc:  # a client or broker without this mode: the others still run
        return {"error": str(exc)}
    cpu = process_cpu_seconds(broker.proc.pid) - cpu0
    if got["records"]:
        got["broker_cpu_s_per_million"] = cpu / (got["records"] / 1e6)
    return got


def start(name: str, kipper_root=None, variants: dict | None = None):
    if name == "kafka":
        return kafka_peer.KafkaPeer()
    if name == "tansu":
        return TansuProcess()
    overrides = (variants or {}).get(name, {})
    return BrokerProcess({"log.level": "WARNING", **overrides},
                         checkout=kipper_root if name == "baseline" else None)


def variant(text: str) -> tuple[str, dict]:
    """``NAME:key=value,key=value``: kipper with these overrides, as another candidate."""
    name, _, settings = text.partition(":")
    return name, dict(kv.split("=", 1) for kv in settings.split(",") if kv)


def main() -> None:
    ap = argparse.ArgumentParser(description="consume with each client's defaults (issue 41)")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--warm", type=int, default=1_000_000, help="records produced and read back first (0: cold)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    ap.add_argument("--no-kafka", action="store_true")
    ap.add_argument("--no-tansu", action="store_true")
    ap.add_argument("--baseline", type=Path, help="a kipper checkout to run beside this one (its .venv)")
    ap.add_argument("--variant", type=variant, action="append", default=[],
                    help="NAME:key=value,...: kipper with these broker settings, beside the others")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    variants = dict(args.variant)
    names = ["kipper"] + (["baseline"] if args.baseline else []) + list(variants)
    names += [] if args.no_tansu or tansu_binary() is None else ["tansu"]
    names += [] if args.no_kafka or not kafka_peer.available() else ["kafka"]
    print(f"consume with client defaults: {', '.join(names)}; {args.records:,} records of {args.size} B; "
          f"every broker warmed with {args.warm:,} records produced and read back first", flush=True)
    runs: dict[str, dict[str, list[dict]]] = {m: {n: [] for n in names} for m in args.modes}
    loads = []
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            probe = LoadProbe().start()
            with start(name, args.baseline, variants) as broker:
                warmed = warm(broker, args.warm) if args.warm else {}
                fill(broker, args.records, args.size)
                for mode in args.modes:
                    got = measure(broker, mode, args.records)
                    runs[mode][name].append(got)
                    print(f"  round {r} {name:>8} {mode:<20} {_line(got)} {warmed}", flush=True)
            loads.append(probe.stop())
            print(f"  round {r} {name}: {describe(loads[-1])}", flush=True)
    print(_table(runs, names))
    if args.json:
        args.json.write_text(json.dumps({"settings": {k: str(v) for k, v in vars(args).items()},
                                         "runs": runs, "load": loads}, indent=2) + "\n")


def _line(got: dict) -> str:
    if "error" in got:
        return got["error"][:100]
    return (f"{got['records_per_sec']:>10,.0f} rec/s  first {got.get('first_record_s', 0):.2f} s  "
            f"stalls {got['stalls']} ({got['stalled_s']:.2f} s)  "
            f"broker {got.get('broker_cpu_s_per_million', 0):.3f} CPU-s/1M")


def _median(rows: list[dict], key: str):
    values = [row[key] for row in rows if key in row]
    return statistics.median(values) if values else None


def _table(runs: dict, names: list[str]) -> str:
    head = "| mode | " + " | ".join(f"{n} rec/s (CPU-s/1M)" for n in names)
    ref = "kafka" if "kafka" in names else names[-1]
    head += f" | kipper/{ref} rate | CPU |"
    lines = [head, "|" + "---|" * (len(names) + 3)]
    for mode, per in runs.items():
        cells, rates, cpus = [], {}, {}
        for n in names:
            rates[n] = _median(per[n], "records_per_sec")
            cpus[n] = _median(per[n], "broker_cpu_s_per_million")
            cells.append("-" if rates[n] is None else f"{rates[n]:,.0f} ({cpus[n]:.3f})")
        ratio = (f"{rates['kipper'] / rates[ref]:.2f}x" if rates.get("kipper") and rates.get(ref) else "-")
        cpu = (f"{cpus['kipper'] / cpus[ref]:.2f}x" if cpus.get("kipper") and cpus.get(ref) else "-")
        lines.append(f"| {mode} | " + " | ".join(cells) + f" | {ratio} | {cpu} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
