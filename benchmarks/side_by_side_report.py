"""The Markdown of a benchmarks/side_by_side.py run, and its place in docs/PERFORMANCE.md.

One table: a row per measure, kipper and Tansu side by side, their ratio, issue 15's
goal where it has one (met or not, for kipper), and the machine's load during the pass.
PERFORMANCE.md holds each run between ``<!-- side-by-side:<label> -->`` markers, which
``update_docs`` replaces.
"""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.machine import describe

# (pass, key, what, unit format, goal: (text, check) or None)
ROWS = [
    ("ingest1", "records_per_sec", "1 idempotent producer, records/s", "{:,.0f}", None),
    ("ingest1", "broker_cpu_s_per_million", "broker CPU-s per 1M records", "{:.3f}",
     ("<= 0.10", lambda v: v <= 0.10)),
    ("ingest2", "records_per_sec", "2 idempotent producers, records/s", "{:,.0f}", None),
    ("ingest2", "broker_cpu_s_per_million", "broker CPU-s per 1M records", "{:.3f}", None),
    ("consume", "rdkafka-1.records_per_sec", "consume 1 partition, librdkafka defaults, records/s", "{:,.0f}",
     None),
    ("consume", "rdkafka-1.stalls", "its consumer's stalls over 0.3 s", "{:.0f}", None),
    ("consume", "rdkafka-1.broker_cpu_s_per_million", "broker CPU-s per 1M records", "{:.3f}",
     ("<= 0.06", lambda v: v <= 0.06)),
    ("consume", "rdkafka-1-backoff10.records_per_sec", "the same, fetch.queue.backoff.ms=10, records/s",
     "{:,.0f}", None),
    ("consume", "rdkafka-1-backoff10.broker_cpu_s_per_million", "broker CPU-s per 1M records", "{:.3f}", None),
    ("consume", "rdkafka-classic-3.records_per_sec", "classic group, 3 partitions, incl. join, records/s",
     "{:,.0f}", None),
    ("consume", "rdkafka-848-3.records_per_sec", "KIP-848 group, 3 partitions, incl. join, records/s",
     "{:,.0f}", None),
    ("consume", "aiokafka-1.records_per_sec", "aiokafka defaults, 1 partition, records/s", "{:,.0f}", None),
    ("consume", "aiokafka-1.broker_cpu_s_per_million", "broker CPU-s per 1M records", "{:.3f}", None),
    ("consume", "kafka-python-1.records_per_sec", "kafka-python defaults, 1 partition, records/s", "{:,.0f}",
     None),
    ("consume", "kafka-python-1.broker_cpu_s_per_million", "broker CPU-s per 1M records", "{:.3f}", None),
    ("requests", "requests_per_sec", "single-record Produce requests/s (pipelined)", "{:,.0f}", None),
    ("requests", "broker_cpu_us_per_request", "broker CPU us per request", "{:.1f}",
     ("<= 10", lambda v: v <= 10)),
    ("requests", "requests_per_broker_cpu_second", "requests per broker CPU-second (one core)", "{:,.0f}",
     (">= 80,000", lambda v: v >= 80_000)),
    ("latency20k", "p50_ms", "20k rec/s, linger.ms=0: p50 ms", "{:.2f}", None),
    ("latency20k", "p99_ms", "p99 ms", "{:.2f}", ("<= 5", lambda v: v <= 5)),
    ("latency20k", "p999_ms", "p99.9 ms", "{:.2f}", ("<= 20", lambda v: v <= 20)),
    ("latency20k", "max_ms", "max ms", "{:.1f}", None),
    ("latency20k", "received_pct", "records received in time, %", "{:.1f}", None),
    ("latency20k", "broker_cpu_us_per_record", "broker CPU us per record", "{:.1f}", None),
    ("latency50k", "p50_ms", "50k rec/s, linger.ms=0: p50 ms", "{:.2f}", None),
    ("latency50k", "p99_ms", "p99 ms", "{:.2f}", ("<= 5", lambda v: v <= 5)),
    ("latency50k", "p999_ms", "p99.9 ms", "{:.2f}", ("<= 20", lambda v: v <= 20)),
    ("latency50k", "max_ms", "max ms", "{:.1f}", None),
    ("latency50k", "received_pct", "records received in time, %", "{:.1f}", None),
    ("latency50k", "broker_cpu_us_per_record", "broker CPU us per record", "{:.1f}", None),
    ("partitions", "create_topics_ms_median", "CreateTopics of 1,000 partitions, ms (median)", "{:.1f}",
     ("<= Tansu", "tansu")),
    ("partitions", "metadata_ms_median", "Metadata of a 1,000-partition topic, ms (median)", "{:.2f}",
     ("<= Tansu", "tansu")),
    ("partitions", "broker_cpu_ms_per_metadata", "broker CPU ms per Metadata", "{:.3f}", None),
    ("partitions", "ingest_records_per_sec", "1 idempotent producer into 1,000 partitions, records/s",
     "{:,.0f}", None),
    ("partitions", "ingest_broker_cpu_s_per_million", "broker CPU-s per 1M records", "{:.3f}", None),
    ("idle", "rss_kib_per_connection", "200 idle connections: KiB of RSS each", "{:.1f}", None),
    ("idle", "idle_cpu_pct", "broker CPU while they idle, %", "{:.2f}", None),
    ("idle", "produce_rtt_ms_p50", "a Produce round trip meanwhile, p50 ms", "{:.3f}", None),
    ("idle", "produce_rtt_ms_p99", "p99 ms", "{:.3f}", None),
    ("idle", "ingest_alone_records_per_sec", "1 idempotent producer alone, records/s", "{:,.0f}", None),
    ("idle", "ingest_beside_records_per_sec", "the same beside the 200 idle connections, records/s", "{:,.0f}",
     None),
    ("idle", "ingest_beside_over_alone", "beside / alone", "{:.2f}", None),
    ("idle", "ingest_alone_cpu_s_per_million", "broker CPU-s per 1M records alone", "{:.3f}", None),
    ("idle", "ingest_beside_cpu_s_per_million", "beside the idle connections", "{:.3f}", None),
    ("memory", "rss_bytes_per_payload_byte", "RSS growth per byte of records stored (1M x 100 B)", "{:.2f}",
     None),
    ("start", "start_s_median", "process start to an accepted connection, s (median)", "{:.3f}", None),
    ("start", "idle_rss_mib", "idle RSS, MiB", "{:.1f}", None),
]


def _fmt(fmt: str, value) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return fmt.format(value)


def _goal(goal, kipper, tansu) -> str:
    if goal is None or not isinstance(kipper, (int, float)):
        return ""
    text, check = goal
    if check == "tansu":
        ok = isinstance(tansu, (int, float)) and kipper <= tansu
    else:
        ok = check(kipper)
    return f"{text}: {'met' if ok else 'not met'}"


def _ratio(a, b) -> str:
    return f"{a / b:.2f}x" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else ""


def _rows():
    """ROWS, each pass's rows followed by the same rows of its cold run (``<pass>-cold``)."""
    for pass_name, key, what, fmt, goal in ROWS:
        yield pass_name, key, what, fmt, goal
    for pass_name, key, what, fmt, _ in ROWS:
        yield f"{pass_name}-cold", key, f"cold: {what}", fmt, None


def markdown(report: dict) -> str:
    warm = report.get("warm", 0)
    how = (f"every broker warmed before each pass ({warm:,} records produced and read back on it), "
           "start-up and idle memory cold" if warm else "every broker cold")
    lines = [f"Run `{report['label']}`, kipper at `{report['kipper_commit']}` (runner at "
             f"`{report['runner_commit']}`), started {report['started']}, "
             f"{report['machine']['cpus']} CPUs, Python {report['machine']['python']}; {how}.", "",
             "| pass | measure | kipper | Tansu | Kafka | kipper/Kafka | kipper/Tansu | goal (kipper) "
             "| machine during the pass |",
             "|---|---|---|---|---|---|---|---|---|"]
    shown_load = set()
    for pass_name, key, what, fmt, goal in _rows():
        results = report["passes"].get(pass_name)
        if results is None:
            continue
        k = results.get("kipper", {})
        t = results.get("tansu", {})
        a = results.get("kafka", {})
        kv, tv, av = k.get(key, k.get("error")), t.get(key, t.get("error")), a.get(key, a.get("error"))
        ratio, kafka_ratio = _ratio(kv, tv), _ratio(kv, av)
        load = ""
        if pass_name not in shown_load:
            shown_load.add(pass_name)
            load = describe(results.get("load", {}))
        lines.append(f"| {pass_name} | {what} | {_fmt(fmt, kv)} | {_fmt(fmt, tv)} | {_fmt(fmt, av)} | {kafka_ratio} "
                     f"| {ratio} | {_goal(goal, kv, tv)} | {load} |")
    return "\n".join(lines) + "\n"


def update_docs(path: Path, label: str, text: str) -> None:
    """Replace (or append) the run's section between its markers."""
    start, end = f"<!-- side-by-side:{label} -->", f"<!-- /side-by-side:{label} -->"
    doc = path.read_text(encoding="utf-8")
    block = f"{start}\n{text}{end}"
    if start in doc:
        doc = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(doc, encoding="utf-8")
