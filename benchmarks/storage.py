"""Durable storage (log.dirs): fetch from disk against memory, restart time and RSS with
a large log, in one run.

    .venv/bin/python -m benchmarks.storage [--gigabytes 1.0] [--size 1000]

1. Fill one partition with --gigabytes of --size-byte records (confluent-kafka,
   acks=1) on a durable broker and on an in-memory one; read each back from
   offset 0 with a confluent-kafka consumer: records/s and MB/s, side by side.
2. The durable broker's RSS after the fill and after the whole read.
3. Restart time of the durable broker: SIGTERM (a clean stop) then start, and
   SIGKILL then start, measured from the process start until it answers
   ApiVersions, with the broker's own "storage_opened" timing.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import signal
import tempfile
import time

from tests.support.broker import BrokerProcess, free_port

TOPIC = "stored"


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _fill(bootstrap: str, n: int, size: int, done_q) -> None:
    from confluent_kafka import Producer

    payload = os.urandom(size)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 20,
                  "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20})
    for _ in range(n):
        while True:
            try:
                p.produce(TOPIC, payload)
                break
            except BufferError:
                p.poll(0.005)
        p.poll(0)
    done_q.put(p.flush(600))


def fill(bootstrap: str, n: int, size: int) -> float:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=1)])[TOPIC].result(15)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    t0 = time.perf_counter()
    proc = ctx.Process(target=_fill, args=(bootstrap, n, size, q))
    proc.start()
    left = q.get(timeout=3600)
    proc.join(60)
    assert left == 0, f"{left} records undelivered"
    return time.perf_counter() - t0


def read_all(bootstrap: str, n: int) -> tuple[float, int]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{time.time()}",
                  "enable.auto.commit": False, "fetch.max.bytes": 52428800,
                  "max.partition.fetch.bytes": 10485760, "fetch.queue.backoff.ms": 10})
    c.assign([TopicPartition(TOPIC, 0, 0)])
    got = 0
    nbytes = 0
    t0 = time.perf_counter()
    while got < n:
        for m in c.consume(10000, 1.0):
            if not m.error():
                got += 1
                nbytes += len(m.value())
    elapsed = time.perf_counter() - t0
    c.close()
    return elapsed, nbytes


def restart_seconds(broker: BrokerProcess, how: str) -> tuple[float, str]:
    if how == "clean":
        broker.stop(120)
    else:
        broker.kill()
    t0 = time.perf_counter()
    broker.start(timeout=300)
    elapsed = time.perf_counter() - t0
    opened = re.findall(r"storage_opened .*", broker.log_text())[-1]
    return elapsed, opened


def main() -> None:
    ap = argparse.ArgumentParser(description="durable storage: fetch, restart, RSS")
    ap.add_argument("--gigabytes", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=1000, help="record value size in bytes")
    args = ap.parse_args()
    n = int(args.gigabytes * 1e9 / args.size)
    print(f"{n:,} records of {args.size} bytes ({n * args.size / 1e9:.2f} GB) in one partition")
    results = {}
    with tempfile.TemporaryDirectory(prefix="kipper-storage-") as data:
        for name, overrides in (("memory", {}), ("durable", {"log.dirs": data})):
            broker = BrokerProcess({"log.level": "INFO", **overrides}, port=free_port()).start()
            try:
                fill_s = fill(broker.bootstrap, n, args.size)
                rss_filled = _rss_mib(broker.proc.pid)
                read_s, nbytes = read_all(broker.bootstrap, n)
                rss_read = _rss_mib(broker.proc.pid)
                results[name] = (n / read_s, nbytes / read_s / 1e6)
                print(f"{name:>8}: fill {n / fill_s:>9,.0f} rec/s; fetch {n / read_s:>9,.0f} rec/s "
                      f"{nbytes / read_s / 1e6:7.1f} MB/s; RSS {rss_filled:.0f} MiB filled, "
                      f"{rss_read:.0f} MiB after the read", flush=True)
                if name == "durable":
                    for how in ("clean", "sigkill"):
                        seconds, opened = restart_seconds(broker, how)
                        print(f"  restart after {how:>7}: ready in {seconds:.2f} s  ({opened.strip()})",
                              flush=True)
                    print(f"  RSS after restart: {_rss_mib(broker.proc.pid):.0f} MiB")
            finally:
                if broker.proc is not None and broker.proc.poll() is None:
                    broker.proc.send_signal(signal.SIGTERM)
                    broker.proc.wait(120)
    mem, disk = results["memory"], results["durable"]
    print(f"fetch from disk / from memory: {disk[0] / mem[0]:.2f}x records/s")


if __name__ == "__main__":
    main()
