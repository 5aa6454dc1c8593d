"""Producer-state memory per (producer id, partition) entry, latest vs window5,
and the append-path cost of the idempotence check. One run, side by side.

    .venv/bin/python -m benchmarks.producer_state_memory [--ids 100000 1000000]

Memory is measured with tracemalloc around filling one partition's manager
with N producer ids, each having written 5 batches (so window5 holds a full
window). The append path is measured in-process (a real broker Partition's append
path, no network or request parsing) with 100-record batches, idempotent vs
not, and end to
end: confluent-kafka producing to a kipper broker with enable.idempotence
off and on (acks=all both), alternating runs, best of each.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

from kipper.broker.producer_state import LATEST, WINDOW5, ProducerStateManager
from kipper.broker.producer_state.manager import APPEND, PendingBatch, Validation
from kipper.protocol import batch as b
from kipper.protocol import records

BATCHES_PER_PRODUCER = 5


def bytes_per_entry(mode: str, n_ids: int) -> tuple[float, int]:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    psm = ProducerStateManager(mode)
    offset = 0
    for pid in range(1_000_000, 1_000_000 + n_ids):
        for k in range(BATCHES_PER_PRODUCER):
            v = Validation(APPEND, pending=[PendingBatch(pid, 0, k * 10, k * 10 + 9, 9, -1, k)])
            offset += 10
            psm.commit(v, [offset - 1])
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(psm) == n_ids
    return (after - before) / n_ids, psm.nbytes()


def append_rate(idempotent: bool, n_batches: int = 20000, per_batch: int = 100,
                producers: int = 100) -> float:
    from kipper.broker.server import open_engines
    from kipper.broker.config import load

    state = open_engines(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"}))
    _, _, topic = state.topics.create("bench", 1)
    partition = topic.partitions[0]
    payload = [(None, b"x" * 100)] * per_batch
    seqs = [0] * producers
    prepared = []
    for i in range(n_batches):
        p = i % producers
        if idempotent:
            data = records.build_batch(payload, producer_id=5000 + p, producer_epoch=0,
                                       base_sequence=seqs[p])
            seqs[p] += per_batch
        else:
            data = records.build_batch(payload)
        prepared.append((data, b.split_batches(data)))
    start = time.perf_counter()
    for data, spans in prepared:
        r = partition.append(data, spans, 0)
        assert r.error == 0
    elapsed = time.perf_counter() - start
    return n_batches * per_batch / elapsed


def end_to_end_rate(idempotent: bool, n: int) -> float:
    from benchmarks.producer_compare import in_process, run_confluent_plain
    from tests.support.broker import BrokerProcess

    with BrokerProcess({"log.level": "WARNING"}) as broker:
        elapsed, failed, _cpu = in_process(run_confluent_plain, broker.bootstrap, f"e2e-{idempotent}", n,
                                     100, {"enable.idempotence": idempotent})
    assert failed == 0
    return n / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--e2e-records", type=int, default=500_000)
    args = ap.parse_args()
    print(f"{'producer ids':>12} {'latest B/entry':>15} {'window5 B/entry':>16} {'ratio':>6}")
    for n in args.ids:
        latest, _ = bytes_per_entry(LATEST, n)
        window5, _ = bytes_per_entry(WINDOW5, n)
        print(f"{n:>12,} {latest:>15.1f} {window5:>16.1f} {window5 / latest:>6.2f}x")
    rates = {False: [], True: []}
    for _ in range(3):  # alternate, so neither side gets the warmer allocator
        for idem in (False, True):
            rates[idem].append(append_rate(idem))
    off, on = max(rates[False]), max(rates[True])
    print(f"append path in-process, 100-record batches: idempotence off {off:,.0f} rec/s, "
          f"on {on:,.0f} rec/s, on/off = {on / off:.3f} ({(1 - on / off) * 100:.1f}% slower)")
    runs = {False: [], True: []}
    for _ in range(3):
        for idem in (False, True):
            runs[idem].append(end_to_end_rate(idem, args.e2e_records))
    e_off, e_on = max(runs[False]), max(runs[True])
    print(f"end to end, confluent-kafka acks=all, {args.e2e_records:,} records: idempotence off "
          f"{e_off:,.0f} rec/s, on {e_on:,.0f} rec/s, on/off = {e_on / e_off:.3f} "
          f"({(1 - e_on / e_off) * 100:.1f}% slower)")


if __name__ == "__main__":
    main()
