"""A kipper cluster's ingest (issue 39): 1 and 2 brokers under the same total load, and a
3-broker kipper beside a 3-broker Apache Kafka at replication factors 1 and 3.

    .venv/bin/python -m benchmarks.cluster --passes scale --records 400000 --rounds 2
    .venv/bin/python -m benchmarks.cluster --passes kafka --records 300000

``scale``: a kipper cluster of one broker, then of two (alternating for ``--rounds``, so drift
in the machine's load falls on both), each with the same load: ``--producers`` idempotent
confluent-kafka producers (acks=all) writing ``--records`` in all into a topic of
``--partitions`` partitions, replication factor 1, whose leaders the controller spreads.
``kafka``: a 3-broker kipper (kipper.cluster) and a 3-broker Kafka (scripts/kafka_cluster.py,
1 GiB heaps), the same load at replication factor 1 and at 3 (min.insync.replicas 2); Kafka
is warmed first with a pass that is not counted. Printed per run: records/s, and the CPU
seconds per million records of all the cluster's processes (brokers and controller, from
/proc). Wrap in ``flock /tmp/kipper-bench.lock``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time

from benchmarks import broker_ingest
from benchmarks.machine import LoadProbe, process_cpu_seconds

TOPIC = broker_ingest.TOPIC


class Candidate:
    """A cluster under measure: ``name``, ``bootstrap``, ``pids()`` of every process."""

    def __init__(self, name: str, cluster):
        self.name = name
        self.cluster = cluster

    def __enter__(self):
        self.cluster.start()
        return self

    def __exit__(self, *exc):
        self.cluster.stop()


class KipperCandidate(Candidate):
    def __init__(self, brokers: int):
        from kipper.cluster import EmbeddedCluster

        super().__init__(f"kipper x{brokers}", EmbeddedCluster(brokers, {"log.level": "WARNING"},
                                                               controller_overrides={"log.level": "WARNING"}))

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap_servers

    def pids(self) -> list[int]:
        nodes = [self.cluster.controller, *self.cluster.brokers.values()]
        return [n.broker._runner.pid for n in nodes if n.running]


class KafkaCandidate(Candidate):
    def __init__(self, brokers: int):
        from scripts.kafka_cluster import KafkaCluster

        super().__init__(f"kafka x{brokers}", KafkaCluster(
            brokers, {"num.partitions": "1", "log.flush.interval.messages": str(2**63 - 1)}, heap="1g"))

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap

    def pids(self) -> list[int]:
        return [n.proc.pid for n in [self.cluster.controller, *self.cluster.brokers.values()] if n.proc is not None]


def create_topic(bootstrap: str, topic: str, partitions: int, rf: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = {"min.insync.replicas": "2"} if rf >= 3 else {}
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=rf, config=configs)])[
        topic].result(120)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions and all(
                p.leader >= 0 and len(p.isrs) == rf for p in meta.partitions.values()):
            return
        time.sleep(0.2)
    raise TimeoutError(f"{topic}: no leaders or full ISRs")


def measure(cand, records: int, size: int, producers: int, partitions: int, rf: int, label: str) -> dict:
    """One run of the load into a fresh topic; records/s and CPU seconds per million records."""
    topic = f"{TOPIC}-{label}-{int(time.time() * 1000)}"
    create_topic(cand.bootstrap, topic, partitions, rf)
    broker_ingest.TOPIC = topic  # (the producers write to broker_ingest.TOPIC)
    ctx = mp.get_context("spawn")
    start, done = ctx.Event(), ctx.Queue()
    share = records // producers
    procs = [ctx.Process(target=_produce_into, args=(topic, cand.bootstrap, share, size, start, done))
             for _ in range(producers)]
    for p in procs:
        p.start()
    time.sleep(3.0)  # every producer connects and writes its first record
    pids = cand.pids()
    cpu0 = sum(process_cpu_seconds(pid) for pid in pids)
    probe = LoadProbe().start()
    t0 = time.perf_counter()
    start.set()
    undelivered = sum(done.get(timeout=3600) for _ in procs)
    elapsed = time.perf_counter() - t0
    cpu = sum(process_cpu_seconds(pid) for pid in pids) - cpu0
    load = probe.stop()
    for p in procs:
        p.join(30)
    total = share * producers
    result = {"candidate": cand.name, "label": label, "records_per_sec": total / elapsed, "seconds": elapsed,
              "cpu_s_per_million": cpu / (total / 1e6), "undelivered": undelivered, "load": load}
    print(f"{cand.name:>10} {label:>6}: {result['records_per_sec']:>10,.0f} records/s, "
          f"{result['cpu_s_per_million']:.2f} CPU-s per million records ({elapsed:.1f} s, {undelivered} undelivered)",
          flush=True)
    return result


def _produce_into(topic, bootstrap, n, size, start, done) -> None:
    broker_ingest.TOPIC = topic
    broker_ingest._produce(bootstrap, n, size, False, start, done, True)


def scale(args) -> list[dict]:
    rows = []
    for _ in range(args.rounds):
        for brokers in (1, 2):
            with KipperCandidate(brokers) as cand:
                rows.append(measure(cand, args.records, args.size, args.producers, args.partitions, 1, "rf1"))
    for brokers in (1, 2):
        mine = [r for r in rows if r["candidate"] == f"kipper x{brokers}"]
        print(f"kipper x{brokers} mean: {sum(r['records_per_sec'] for r in mine) / len(mine):,.0f} records/s, "
              f"{sum(r['cpu_s_per_million'] for r in mine) / len(mine):.2f} CPU-s per million")
    return rows


def beside_kafka(args) -> list[dict]:
    rows = []
    for make in (KafkaCandidate, KipperCandidate):
        with make(3) as cand:
            if make is KafkaCandidate:  # the JVM warmed before anything counts
                measure(cand, args.records // 2, args.size, args.producers, args.partitions, 3, "warmup")
            for rf in (1, 3):
                rows.append(measure(cand, args.records, args.size, args.producers, args.partitions, rf, f"rf{rf}"))
    for rf in (1, 3):
        k = next(r for r in rows if r["candidate"].startswith("kipper") and r["label"] == f"rf{rf}")
        a = next(r for r in rows if r["candidate"].startswith("kafka") and r["label"] == f"rf{rf}")
        print(f"RF {rf}: kipper/Kafka {k['records_per_sec'] / a['records_per_sec']:.2f}x records/s, "
              f"{k['cpu_s_per_million'] / a['cpu_s_per_million']:.2f}x CPU per record")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passes", default="scale,kafka")
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--producers", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2, help="scale: alternating rounds of 1 and 2 brokers")
    args = ap.parse_args()
    print(f"{args.records:,} records of {args.size} bytes from {args.producers} idempotent confluent-kafka "
          f"producers (acks=all) into {args.partitions} partitions")
    for name in args.passes.split(","):
        {"scale": scale, "kafka": beside_kafka}[name](args)


if __name__ == "__main__":
    main()
