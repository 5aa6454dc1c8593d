"""Keyed records, side by side in one run: kipper's Producer and confluent-kafka.

    .venv/bin/python -m benchmarks.producer_keyed [--records 300000] [--size 100]
        [--keys 1000] [--partitions 6]

Each record has a key, one of ``--keys`` (b"key-0", b"key-1", ...) in turn, so
each client hashes it to a partition (murmur2, as Java's client does);
acks=all, idempotence on. As in ``producer_compare``, each client runs in its
own process against a fresh kipper broker, and each line gives the client
process's own CPU time per 1M records. The timed loops are written out, as in
``producer_compare``, rather than shared through a helper: a call per record
would be measured too.
"""

from __future__ import annotations

import argparse
import os
import time

from benchmarks.producer_compare import measure


def _keys(n: int, count: int):
    keys = [b"key-%d" % i for i in range(count)]
    return (keys[i % count] for i in range(n))


def run_ours(bootstrap, topic, n, size, keys, spread=0):
    from kipper.client import Producer

    payload = os.urandom(size)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    p.send(topic, payload, key=b"warm").get(30)
    start, cpu = time.perf_counter(), time.process_time()
    for key in _keys(n, keys):
        p.send(topic, payload, key=key)
    left = p.flush(600)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    errors = p.metrics()["errors"]
    p.close()
    return elapsed, left + errors, cpu


def run_confluent(bootstrap, topic, n, size, keys, spread=0):
    from confluent_kafka import Producer

    payload = os.urandom(size)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    p.produce(topic, payload, key=b"warm")
    p.flush(30)
    start, cpu = time.perf_counter(), time.process_time()
    for key in _keys(n, keys):
        while True:
            try:
                p.produce(topic, payload, key=key)
                break
            except BufferError:
                p.poll(0.01)
        p.poll(0)
    left = p.flush(600)
    return time.perf_counter() - start, left, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description="keyed records: kipper's producer and confluent-kafka")
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=6)
    args = ap.parse_args()
    if args.records < 1 or args.size < 0 or args.keys < 1 or args.partitions < 1:
        ap.error("--records, --keys and --partitions must be at least 1, --size at least 0")
    print(f"{args.records:,} records of {args.size} bytes with {args.keys:,} keys, acks=all, idempotence on, "
          f"{args.partitions} partitions, one kipper broker")
    results = {name: measure(name, fn, args.records, args.size, partitions=args.partitions, extra=args.keys)
               for name, fn in (("kipper", run_ours), ("confluent-kafka", run_confluent))}
    if results["kipper"] and results["confluent-kafka"]:
        (ours, our_cpu), (theirs, their_cpu) = results["kipper"], results["confluent-kafka"]
        print(f"  kipper / confluent-kafka: {ours / theirs:.2f}x records/s, {our_cpu / their_cpu:.2f}x CPU per record")


if __name__ == "__main__":
    main()
