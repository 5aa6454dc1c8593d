"""``kipper perf produce``: kafka-producer-perf-test for our Producer.

Prints progress every 5 seconds and a final line with records/s, MB/s and
average, p50, p95, p99 and max latency (send to acknowledgement, in ms). Records
that failed are counted by reason on stderr; Ctrl-C prints the summary of what
was acknowledged so far. A broker that cannot be reached fails at once.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from kipper.cli.common import UsageError, add_bootstrap, add_command, check_reachable
from kipper.client.config import ConfigError
from kipper.client.producer import Producer

REPORT_INTERVAL = 5.0


def add_parser(sub) -> None:
    p = add_command(sub, "perf", "performance tools (produce)",
                    "Measure kipper's producer against a broker, like kafka-producer-perf-test.sh.")
    p.add_argument("mode", choices=("produce",), help="what to measure")
    add_bootstrap(p)
    p.add_argument("--topic", required=True, help="the topic to write to")
    p.add_argument("--num-records", type=int, required=True, help="records to send")
    p.add_argument("--record-size", type=int, required=True, help="bytes of each record's value")
    p.add_argument("--throughput", type=float, default=-1, help="records/s cap, -1 for none")
    p.add_argument("--producer-prop", action="append", default=[], metavar="KEY=VALUE",
                   help="a producer property (Kafka's names), repeatable")
    p.add_argument("--print-metrics", action="store_true", help="print the producer's metrics at the end")
    p.set_defaults(func=run)


def parse_props(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--producer-prop '{item}' is not KEY=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


class Stats:
    """Latencies in ms, plus the windowed progress line Kafka's tool prints."""

    def __init__(self, total: int, record_size: int):
        self.total = total
        self.record_size = record_size
        self.latencies: list[int] = []
        self.errors = 0
        self.reasons: dict[str, int] = {}
        self.start = time.monotonic()
        self.window_start = self.start
        self.window_count = 0
        self.window_lat_sum = 0
        self.window_lat_max = 0

    def record(self, error, meta) -> None:
        if error is not None:
            self.errors += 1
            reason = str(error)
            self.reasons[reason] = self.reasons.get(reason, 0) + 1
            return
        lat = int(time.time() * 1000) - meta.timestamp
        self.latencies.append(lat)
        self.window_count += 1
        self.window_lat_sum += lat
        if lat > self.window_lat_max:
            self.window_lat_max = lat

    def maybe_report(self, out) -> None:
        now = time.monotonic()
        if now - self.window_start < REPORT_INTERVAL:
            return
        n, elapsed = self.window_count, now - self.window_start
        if n:
            print(f"{n} records sent, {n / elapsed:.1f} records/sec "
                  f"({n * self.record_size / elapsed / 1e6:.2f} MB/sec), "
                  f"{self.window_lat_sum / n:.1f} ms avg latency, {self.window_lat_max} ms max latency.",
                  file=out, flush=True)
        self.window_start, self.window_count, self.window_lat_sum, self.window_lat_max = now, 0, 0, 0

    def summary(self) -> dict:
        elapsed = time.monotonic() - self.start
        lat = sorted(self.latencies)
        n = len(lat)

        def pct(q):
            return lat[min(n - 1, int(q * n))] if n else 0
        return {"records": n, "errors": self.errors, "seconds": elapsed,
                "records_per_sec": n / elapsed if elapsed else 0.0,
                "mb_per_sec": n * self.record_size / elapsed / 1e6 if elapsed else 0.0,
                "avg_ms": sum(lat) / n if n else 0.0, "p50_ms": pct(0.5), "p95_ms": pct(0.95),
                "p99_ms": pct(0.99), "max_ms": lat[-1] if n else 0}


def produce(bootstrap: str, topic: str, num_records: int, record_size: int, throughput: float,
            props: dict, out=sys.stdout, err=sys.stderr) -> dict:
    payload = os.urandom(record_size)
    stats = Stats(num_records, record_size)
    producer = Producer({"bootstrap.servers": bootstrap, **props})
    cb = stats.record
    interval = 1.0 / throughput if throughput > 0 else 0.0
    next_at = time.monotonic()
    sent = 0
    interrupted = False
    try:
        for i in range(num_records):
            producer.send(topic, payload, on_delivery=cb)
            sent += 1
            if interval:
                next_at += interval
                delay = next_at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            if i & 1023 == 0:
                stats.maybe_report(out)
        while producer.flush(1.0):
            stats.maybe_report(out)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        producer.close(0 if interrupted else 30)
    s = stats.summary()
    if interrupted:
        print(f"Interrupted after sending {sent} of {num_records} records; the summary counts "
              "the acknowledged ones.", file=err, flush=True)
    print(f"{s['records']} records sent, {s['records_per_sec']:.1f} records/sec "
          f"({s['mb_per_sec']:.2f} MB/sec), {s['avg_ms']:.2f} ms avg latency, {s['max_ms']} ms max latency, "
          f"{s['p50_ms']} ms 50th, {s['p95_ms']} ms 95th, {s['p99_ms']} ms 99th, "
          f"{s['max_ms']} ms 99.9th-max.", file=out, flush=True)
    if s["errors"]:
        print(f"{s['errors']} records failed", file=out, flush=True)
        for reason, count in sorted(stats.reasons.items(), key=lambda kv: -kv[1]):
            print(f"kipper perf: topic '{topic}': {count} record(s) failed: {reason}", file=err, flush=True)
    s["metrics"] = producer.metrics()
    s["interrupted"] = interrupted
    return s


def run(args: argparse.Namespace) -> int:
    if args.num_records <= 0 or args.record_size <= 0:
        raise UsageError("--num-records and --record-size must be positive")
    props = parse_props(args.producer_prop)
    check_reachable(args.bootstrap_server)
    s = produce(args.bootstrap_server, args.topic, args.num_records, args.record_size,
                args.throughput, props)
    if args.print_metrics:
        for k, v in sorted(s["metrics"].items()):
            print(f"{k}: {v}")
    if s["interrupted"]:
        return 130
    return 1 if s["errors"] else 0
