"""Share groups: accepted records/s on one partition, and share-partition recovery time.

    .venv/bin/python -m benchmarks.share_throughput [--records 200000] [--consumers 1 2 4]
        [--ack implicit|explicit] [--no-recovery]

Throughput: one kipper broker, a 1-partition topic pre-filled with --records
records of --size bytes (500 per batch). For each consumer count, that many
share consumers (each in its own process; implicit acknowledgement, or with
--ack explicit each record acknowledged ACCEPT on its own, so every record is accepted) drain the topic in a fresh share group; the figure is
records / (time from the start signal to the last acknowledgement answered).
Ours (client.ShareConsumer) and confluent-kafka's ShareConsumer, same broker
settings (group.share.record.lock.partition.limit as given).

Recovery: in-process, a share-partition with 10,000 in-flight records and
1,000 SHARE_DELTA records since its last SHARE_CHECKPOINT is dropped from
memory and rebuilt from the log; median of --repeat runs.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import statistics
import time

from tests.support.broker import BrokerProcess

TOPIC = "share-bench"


def _fill(bootstrap: str, n: int, size: int) -> None:
    from kipper.client.admin import NewTopic, create_topics
    from kipper.client.blocking import connect_any
    from kipper.client.producer_requests import produce
    from kipper.protocol import records

    payload = b"x" * size
    with connect_any(bootstrap) as conn:
        body = create_topics(conn, [NewTopic(TOPIC, 1, 1, {"share.auto.offset.reset": "earliest"})])
        assert body.topics[0].error_code in (0, 36), body
        batch = records.build_batch([(None, payload)] * 500)
        for _ in range(n // 500):
            resp = produce(conn, {(TOPIC, 0): batch}, acks=1)
            assert resp.responses[0].partition_responses[0].error_code == 0


def _consume_ours(bootstrap, group, total, counter, start, done, explicit=False):
    from kipper.client import AcknowledgeType, ShareConsumer

    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "max.poll.records": 1000,
                       "share.acknowledgement.mode": "explicit" if explicit else "implicit"})
    c.subscribe([TOPIC])
    start.wait()
    while counter.value < total:
        recs = c.poll(0.2)
        if explicit:
            for r in recs:  # each record on its own; the next poll carries them
                c.acknowledge(r, AcknowledgeType.ACCEPT)
        if recs:
            with counter.get_lock():
                counter.value += len(recs)
    c.commit_sync()
    done.put(time.perf_counter())
    c.close()


def _consume_confluent(bootstrap, group, total, counter, start, done, explicit=False):
    from confluent_kafka import AcknowledgeType, ShareConsumer

    c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "max.poll.records": 1000,
                       "share.acknowledgement.mode": "explicit" if explicit else "implicit"})
    c.subscribe([TOPIC])
    start.wait()
    while counter.value < total:
        msgs = [m for m in c.poll(0.2) if m.error() is None]
        if explicit:
            for m in msgs:
                c.acknowledge(m, AcknowledgeType.ACCEPT)
        if msgs:
            with counter.get_lock():
                counter.value += len(msgs)
    c.commit_sync()
    done.put(time.perf_counter())
    c.close()


def throughput(bootstrap: str, client: str, consumers: int, total: int, explicit: bool = False) -> float:
    target = _consume_ours if client == "ours" else _consume_confluent
    group = f"bench-{client}-{consumers}-{random.randrange(1 << 30)}"
    ctx = mp.get_context("spawn")
    counter = ctx.Value("q", 0)
    start = ctx.Event()
    done = ctx.Queue()
    procs = [ctx.Process(target=target, args=(bootstrap, group, total, counter, start, done, explicit))
             for _ in range(consumers)]
    for p in procs:
        p.start()
    time.sleep(2.0)  # let every consumer join and get its assignment
    t0 = time.perf_counter()
    start.set()
    ends = [done.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(30)
    elapsed = max(ends) - t0
    assert counter.value >= total, (counter.value, total)
    _check_all_accepted(bootstrap, group)
    return total / elapsed


def _check_all_accepted(bootstrap: str, group: str) -> None:
    """The consumers have closed, so anything not accepted was released: a new
    member of the group must find nothing."""
    from kipper.client import ShareConsumer

    with ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group}) as c:
        c.subscribe([TOPIC])
        left = sum(len(c.poll(0.5)) for _ in range(3))
    assert left == 0, f"{left} records were not accepted"


def recovery_time(in_flight: int = 10_000, deltas: int = 1_000, repeat: int = 5) -> tuple[float, int]:
    from kipper.broker.log.topics import TopicManager
    from kipper.broker.share.log_view import PartitionLogView
    from kipper.broker.share.settings import ShareSettings
    from kipper.broker.share.states import ACCEPT, RELEASE
    from kipper.broker.share.store import ShareStore
    from kipper.protocol import records

    topics = TopicManager(num_partitions=1, auto_create=False)
    _, _, topic = topics.create("recovery", 1)
    plog = topic.partitions[0]
    for _ in range(in_flight * 2 // 100):
        plog.append_batch(records.build_batch([(None, b"x" * 100)] * 100), 0)
    store = ShareStore(ShareSettings(record_lock_partition_limit=10_000, checkpoint_max_deltas=100_000,
                                     auto_offset_reset="earliest"), topics)
    sp = store.get("bench", topic, 0, 0)
    view = PartitionLogView(plog)
    assert sp.acquire("m", 0, view, max_records=in_flight) == [(0, in_flight - 1, 1)]
    rng = random.Random(7)
    offsets = rng.sample(range(in_flight), deltas)
    for i, offset in enumerate(offsets):
        kind = ACCEPT if i % 2 else RELEASE
        errors, changes = sp.acknowledge("m", [(offset, offset, [kind])], 1)
        assert errors == [0]
        store.persist(sp, changes, 1)
    durable = store.index[("recovery", 0)]["bench"]
    assert durable.deltas_since_checkpoint == deltas
    live = sp.durable_view(view)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        again = store.recover("bench", "recovery", plog, durable)
        times.append(time.perf_counter() - t)
        assert again.durable_view(view) == live
    return statistics.median(times), sp.in_flight


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--consumers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--lock-limit", type=int, default=2000,
                    help="group.share.record.lock.partition.limit (100-10000)")
    ap.add_argument("--clients", nargs="+", default=["ours", "confluent"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ack", choices=["implicit", "explicit"], default="implicit",
                    help="explicit: every record acknowledged ACCEPT on its own")
    ap.add_argument("--no-recovery", action="store_true", help="skip the recovery timing")
    args = ap.parse_args()

    import structlog
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    if not args.no_recovery:
        rec, in_flight = recovery_time(repeat=args.repeat)
        print(f"recovery: {in_flight} in-flight records, 1000 deltas since the checkpoint: "
              f"{rec * 1000:.1f} ms (median of {args.repeat})")
    overrides = {"group.share.record.lock.partition.limit": str(args.lock_limit),
                 "log.level": "WARNING"}
    for client in args.clients:
        for n in args.consumers:
            with BrokerProcess(overrides) as broker:
                _fill(broker.bootstrap, args.records, args.size)
                rate = throughput(broker.bootstrap, client, n, args.records, args.ack == "explicit")
            print(f"{client:9s} {n} consumer(s), {args.ack}: {rate:10,.0f} accepted records/s")


if __name__ == "__main__":
    main()
