"""Producer throughput, side by side in one run, against one kipper broker.

    .venv/bin/python -m benchmarks.producer_compare [--records 500000] [--size 100]
        [--clients kipper,confluent-kafka] [--no-latency] [--spread 0]

Clients: ours (kipper's Producer), aiokafka, kafka-python and confluent-kafka,
each with acks=all and idempotence on, with its own default batching. Then
ours with max.in.flight.requests.per.connection=1 against ours pipelined,
both through a proxy that adds 2 ms in each direction (a real network's
round trip), at Java's default batch.size (16384) and at ours (131072). Each
client runs in its own process; the broker is restarted for each run so no
client inherits another's log. With ``--spread S`` each client sends the same
1,024 values of size-S..size+S bytes in turn instead of one value of ``size``
(records whose sizes differ, as most applications' do). Besides records/s, each line gives the client
process's own CPU time (all its threads) per 1M records.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import os
import random
import time

from benchmarks.broker_ingest import create_topic
from tests.support.broker import BrokerProcess, free_port
from tests.support.proxy import FaultProxy


def values_to_send(n: int, size: int, spread: int):
    """The values a client sends, in order: one value of ``size`` bytes, n
    times; or with a spread, 1,024 values of size-spread..size+spread bytes
    (the same for every client), in turn."""
    if not spread:
        return itertools.repeat(os.urandom(size), n)
    rnd = random.Random(1024)
    values = [rnd.randbytes(rnd.randint(max(0, size - spread), size + spread)) for _ in range(1024)]
    return itertools.islice(itertools.cycle(values), n)


def run_ours(bootstrap, topic, n, size, extra=None, spread=0):
    from kipper.client import Producer

    payload = os.urandom(size)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                  **(extra or {})})
    p.send(topic, payload).get(30)  # connect and fetch metadata outside the timing
    start, cpu = time.perf_counter(), time.process_time()
    for value in values_to_send(n, size, spread):
        p.send(topic, value)
    left = p.flush(600)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    errors = p.metrics()["errors"]
    p.close()
    return elapsed, left + errors, cpu


def run_confluent(bootstrap, topic, n, size, extra=None, spread=0):
    from confluent_kafka import Producer

    payload = os.urandom(size)
    errors = []
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    p.produce(topic, payload)
    p.flush(30)
    cb = (lambda err, msg: err is not None and errors.append(err))
    start, cpu = time.perf_counter(), time.process_time()
    for value in values_to_send(n, size, spread):
        while True:
            try:
                p.produce(topic, value, on_delivery=cb)
                break
            except BufferError:
                p.poll(0.01)
        p.poll(0)
    left = p.flush(600)
    return time.perf_counter() - start, left + len(errors), time.process_time() - cpu


def run_confluent_plain(bootstrap, topic, n, size, extra=None):
    """confluent-kafka with acks=all and the given settings (idempotence on or off)."""
    from confluent_kafka import Producer

    payload = os.urandom(size)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", **(extra or {})})
    p.produce(topic, payload)
    p.flush(30)
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        while True:
            try:
                p.produce(topic, payload)
                break
            except BufferError:
                p.poll(0.01)
        p.poll(0)
    left = p.flush(600)
    return time.perf_counter() - start, left, time.process_time() - cpu


def run_kafka_python(bootstrap, topic, n, size, extra=None, spread=0):
    from kafka import KafkaProducer

    payload = os.urandom(size)
    p = KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    p.send(topic, payload).get(30)
    start, cpu = time.perf_counter(), time.process_time()
    futures = [p.send(topic, value) for value in values_to_send(n, size, spread)]
    p.flush(600)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    failed = sum(1 for f in futures if not f.succeeded())
    p.close()
    return elapsed, failed, cpu


def run_aiokafka(bootstrap, topic, n, size, extra=None, spread=0):
    import asyncio

    from aiokafka import AIOKafkaProducer

    async def main():
        payload = os.urandom(size)
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
        await p.start()
        await (await p.send(topic, payload))
        start, cpu = time.perf_counter(), time.process_time()
        futures = [await p.send(topic, value) for value in values_to_send(n, size, spread)]
        results = await asyncio.gather(*futures, return_exceptions=True)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        await p.stop()
        return elapsed, sum(1 for r in results if isinstance(r, Exception)), cpu

    return asyncio.run(main())


CLIENTS = {"kipper": run_ours, "aiokafka": run_aiokafka, "kafka-python": run_kafka_python,
           "confluent-kafka": run_confluent}


def _child(fn, args, queue):
    try:
        queue.put(fn(*args))
    except Exception as exc:  # reported, not raised: one client must not stop the run
        queue.put(("error", repr(exc)))


def in_process(fn, *args):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_child, args=(fn, args, q))
    proc.start()
    result = q.get(timeout=1800)
    proc.join(30)
    return result


def measure(name, fn, n, size, *, partitions=1, delay_ms=0.0, extra=None, spread=0):
    """Records/s and the client process's own CPU-s per 1M records (all its
    threads, from ``time.process_time``), or None if the client failed."""
    port = free_port()
    proxy = None
    advertise = None
    if delay_ms:
        proxy = FaultProxy("127.0.0.1", port, delay_ms=delay_ms)
        proxy.start()
        advertise = ("127.0.0.1", proxy.port)
    with BrokerProcess({"log.level": "WARNING"}, port=port, advertise=advertise) as broker:
        bootstrap = f"127.0.0.1:{proxy.port if proxy else port}"
        topic = "bench-" + "".join(c if c.isalnum() else "-" for c in name)
        create_topic(bootstrap, partitions, topic)
        result = in_process(fn, bootstrap, topic, n, size, extra, spread)
    if proxy:
        proxy.stop()
    if result[0] == "error":
        print(f"{name:>28}: failed: {result[1]}", flush=True)
        return None
    elapsed, failed, cpu = result
    rate = n / elapsed
    cpu_per_m = cpu / n * 1e6
    print(f"{name:>28}: {rate:>10,.0f} records/s  ({elapsed:.2f} s, {failed} undelivered, "
          f"{cpu_per_m:.2f} client CPU-s per 1M)", flush=True)
    return rate, cpu_per_m


def main() -> None:
    ap = argparse.ArgumentParser(description="producer throughput, side by side")
    ap.add_argument("--records", type=int, default=500_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--latency-records", type=int, default=200_000)
    ap.add_argument("--clients", default=",".join(CLIENTS),
                    help="comma-separated subset of " + ", ".join(CLIENTS))
    ap.add_argument("--no-latency", action="store_true", help="skip the passes through the 2 ms proxy")
    ap.add_argument("--spread", type=int, default=0,
                    help="send values of size-SPREAD..size+SPREAD bytes instead of one size")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    n, size = args.records, args.size
    if args.spread < 0 or args.size < 0:
        ap.error("--size and --spread must not be negative")
    sizes = f"{max(0, size - args.spread)}-{size + args.spread}" if args.spread else f"{size}"
    print(f"{n:,} records of {sizes} bytes, acks=all, idempotence on, 1 partition, one kipper broker")
    results = {name: measure(name, CLIENTS[name], n, size, spread=args.spread)
               for name in args.clients.split(",")}
    if not args.no_latency:
        print(f"\nthrough a proxy adding 2 ms each way, {args.latency_records:,} records:")
        for batch_size in (16384, 131072):  # Java's default batch, and ours
            extra = {"batch.size": batch_size}
            results[f"in-flight 1 @2ms batch {batch_size}"] = measure(
                f"in-flight 1, batch {batch_size}", run_ours, args.latency_records, size,
                delay_ms=2, extra={**extra, "max.in.flight.requests.per.connection": 1})
            results[f"pipelined @2ms batch {batch_size}"] = measure(
                f"pipelined, batch {batch_size}", run_ours, args.latency_records, size,
                delay_ms=2, extra=extra)
    rates = {name: r[0] if r else None for name, r in results.items()}
    ours = rates.get("kipper")
    print("\nratios:")
    for other in ("aiokafka", "kafka-python", "confluent-kafka"):
        if ours and rates.get(other):
            print(f"  kipper / {other}: {ours / rates[other]:.2f}x")
    if results.get("kipper"):
        print(f"  kipper's producer process: {results['kipper'][1]:.2f} CPU-s per 1M records")
    for batch_size in (16384, 131072):
        one = rates.get(f"in-flight 1 @2ms batch {batch_size}")
        piped = rates.get(f"pipelined @2ms batch {batch_size}")
        if one and piped:
            print(f"  pipelined / in-flight 1 at 2 ms, batch.size {batch_size}: {piped / one:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"records_per_s": rates,
                       "client_cpu_s_per_1m": {k: r[1] if r else None for k, r in results.items()}},
                      f, indent=2)


if __name__ == "__main__":
    main()
