"""Log compaction: cleaning rate in memory and on disk, and Produce latency while the
cleaner runs against a broker whose cleaner is off, in one run.

    .venv/bin/python -m benchmarks.compaction [--megabytes 100] [--keys 1000] [--size 200] [--rounds 3] [--batch-records 1]

1. In process: a partition holding --megabytes of --size-byte records over --keys
   keys (--batch-records per batch; most records are superseded), one segment rolled;
   one cleaning pass to the end, timed: MB/s of log read; then a pass over the same
   data in steps of the broker's slice budget: how long each step held the loop.
2. Two broker processes in turn, cleaner on and off: a compacted topic gets the same
   dirty data (through confluent-kafka, --batch-records records per batch) and rolls, held back from the cleaner by
   min.compaction.lag.ms until the probe starts; then a second producer sends 1,000
   single-record Produce requests a second (linger.ms=0, acks=1) to another topic for
   10 s while the on-broker cleans; delivery latency p50/p99 of both runs, in --rounds
   rounds, and the median of the rounds' p99 ratios.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import tempfile
import time

from tests.support.broker import BrokerProcess, free_port


def _fill_partition(partition, n: int, keys: int, size: int, per_batch: int = 1) -> None:
    from kipper.protocol import batch as b
    from kipper.protocol import records

    value = os.urandom(size)
    for i in range(0, n, per_batch):
        data = records.build_batch([(b"key-%d" % (j % keys), value, j) for j in range(i, min(n, i + per_batch))])
        partition.log.maybe_roll(len(data), 0)
        partition.append(data, b.split_batches(data), 0)


def cleaning_rate(kind: str, megabytes: int, keys: int, size: int, per_batch: int = 1) -> dict:
    """One pass to the end in process: MB/s and records removed/s with an unbounded budget,
    then again on the same data with the broker's slice budget: how long each step took."""
    from kipper.broker.cleaner.compaction import CleaningPass, cleanable
    from kipper.broker.cleaner.service import CLEANER_SLICE_S
    from kipper.broker.storage.log_config import LogConfig
    from kipper.broker.storage.memory_log import MemoryLog
    from kipper.broker.log.partition import Partition
    from kipper.broker.producer_state.settings import ProducerStateSettings
    from kipper.broker.storage.file_log import FileLog

    config = LogConfig(compact=True, delete=False, min_cleanable_dirty_ratio=0.0)
    n = megabytes * 1_000_000 // (size + 80)
    out = {}
    for budget in (1.0, CLEANER_SLICE_S):
        with tempfile.TemporaryDirectory() as d:
            log = MemoryLog(config) if kind == "memory" else FileLog.create(__import__("pathlib").Path(d) / "t-0",
                                                                             config, 0)
            p = Partition("t", 0, log, ProducerStateSettings())
            _fill_partition(p, n, keys, size, per_batch)
            log.maybe_roll(0, 1 << 62) if kind == "memory" else log.roll(0)
            plan = cleanable(p, config, 1)
            t0 = time.perf_counter()
            cleaning = CleaningPass(p, config, plan, 1)
            steps = []
            while True:
                started = time.perf_counter()
                more = cleaning.step(budget)
                steps.append(time.perf_counter() - started)
                if not more:
                    break
            elapsed = time.perf_counter() - t0
            stats = cleaning.stats()
            if budget == 1.0:
                out["mb_per_s"] = stats.bytes_read / elapsed / 1e6
                out["removed_per_s"] = stats.records_removed / elapsed
            else:
                steps.sort()
                out["steps"] = len(steps)
                out["step_ms"] = [steps[int(q * (len(steps) - 1))] * 1000 for q in (0.5, 0.99, 1.0)]
    return out


def _dirty(bootstrap: str, topic: str, n: int, keys: int, size: int, q, per_batch: int = 1) -> None:
    from confluent_kafka import Producer

    value = os.urandom(size)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0 if per_batch == 1 else 50,
                  "batch.num.messages": per_batch, "batch.size": 1_000_000})
    for i in range(n):
        while True:
            try:
                p.produce(topic, key=b"key-%d" % (i % keys), value=value)
                break
            except BufferError:
                p.poll(0.005)
        p.poll(0)
    q.put(p.flush(300))


def _probe(bootstrap: str, seconds: float, rate: int) -> list[float]:
    from confluent_kafka import Producer

    lat: list[float] = []
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "1"})
    p.produce("probe", b"warm")
    p.flush(10)
    start = time.perf_counter()
    i = 0
    while time.perf_counter() - start < seconds:
        due = start + i / rate
        # wait in poll, not spinning: a spinning probe takes a core of the two, and the
        # broker's waits for the CPU would then be what the percentiles measure
        while (left := due - time.perf_counter()) > 0:
            p.poll(left)
        sent = time.perf_counter()
        p.produce("probe", b"x" * 100, on_delivery=lambda err, msg, sent=sent: lat.append(time.perf_counter() - sent))
        p.poll(0)
        i += 1
    p.flush(30)
    return lat


def latency_run(cleaner: bool, megabytes: int, keys: int, size: int,
                per_batch: int = 1) -> tuple[list[float], str]:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

    overrides = {"log.cleaner.enable": str(cleaner).lower(), "log.cleaner.backoff.ms": "200",
                 "log.level": "INFO"}
    broker = BrokerProcess(overrides, port=free_port()).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        # not cleanable while it fills (min.compaction.lag.ms of a day); made cleanable the
        # moment the probe starts, so that the pass and the probe overlap from the start
        configs = {"cleanup.policy": "compact", "segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01",
                   "min.compaction.lag.ms": str(86_400_000)}
        for f in admin.create_topics([NewTopic("dirty", 1, 1, config=configs),
                                      NewTopic("probe", 1, 1)]).values():
            f.result(15)
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        n = megabytes * 1_000_000 // (size + 80)
        filler = ctx.Process(target=_dirty, args=(broker.bootstrap, "dirty", n, keys, size, q, per_batch))
        filler.start()
        assert q.get(timeout=1800) == 0
        filler.join(30)
        time.sleep(1.2)  # past segment.ms: the next append rolls the segment
        ctx2 = ctx.Process(target=_dirty, args=(broker.bootstrap, "dirty", 1, keys, size, q))
        ctx2.start()
        q.get(timeout=60)
        ctx2.join(30)
        lag = ConfigResource(ConfigResource.Type.TOPIC, "dirty", incremental_configs=[
            ConfigEntry("min.compaction.lag.ms", "0", incremental_operation=AlterConfigOpType.SET)])
        for f in admin.incremental_alter_configs([lag]).values():
            f.result(15)
        started = time.time()
        lat = _probe(broker.bootstrap, 10.0, 1000)
        probe_s = time.time() - started
        import re
        done = re.search(r"log_cleaned .*seconds=([\d.]+)", broker.log_text())
        if not cleaner:
            note = "no cleaning pass"
        elif done is None:
            note = f"the cleaning pass ran through the whole {probe_s:.1f} s probe"
        else:
            note = f"a cleaning pass of {float(done.group(1)):.1f} s, started with the {probe_s:.1f} s probe"
        return lat, note
    finally:
        broker.stop(60)


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=1000)[int(q * 1000) - 1] * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description="log compaction: cleaning rate and Produce latency")
    ap.add_argument("--megabytes", type=int, default=100)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-records", type=int, default=1,
                    help="records per batch of the dirty data (the cleaner steps inside large batches)")
    args = ap.parse_args()
    for kind in ("memory", "disk"):
        got = cleaning_rate(kind, args.megabytes, args.keys, args.size, args.batch_records)
        p50, p99, top = got["step_ms"]
        print(f"cleaning {kind:>6}: {got['mb_per_s']:6.1f} MB/s of log read, {got['removed_per_s']:,.0f} records "
              f"removed/s; with the broker's slice budget {got['steps']:,} steps of p50 {p50:.3f} ms, "
              f"p99 {p99:.3f} ms, max {top:.3f} ms", flush=True)
    ratios = []
    for round_ in range(args.rounds):  # off and on alternate, so drift in the machine's load hits both
        results = {}
        for cleaner in (False, True):
            lat, note = latency_run(cleaner, args.megabytes, args.keys, args.size, args.batch_records)
            results[cleaner] = (_pct(lat, 0.5), _pct(lat, 0.99))
            print(f"round {round_ + 1}: produce latency, cleaner {'on ' if cleaner else 'off'}: "
                  f"p50 {results[cleaner][0]:.2f} ms, p99 {results[cleaner][1]:.2f} ms over {len(lat):,} "
                  f"records ({note})", flush=True)
        ratios.append(results[True][1] / results[False][1])
        print(f"round {round_ + 1}: p99 with the cleaner running / without: {ratios[-1]:.2f}x", flush=True)
    if ratios:
        print(f"p99 on/off, median of {len(ratios)} rounds: {statistics.median(ratios):.2f}x (goal: at most 1.5x)")

if __name__ == "__main__":
    main()
