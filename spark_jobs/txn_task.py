"""The transactional producers of one load-generator task (seed 003, KIP-360).

kipper's own Producer is idempotent but has no transactions, so these are
confluent-kafka (librdkafka) transactional producers, one thread each. A
producer runs ``transactionsPerSecond`` transactions of ``transactionRecords``
records, spread over every partition of its topic (so its producer id has
state on each partition from the first transaction on), flushes them (every
record is acknowledged, hence stored, before the transaction ends) and
commits or, for ``transactionAbortPercent`` of them, aborts. With
``transactionFence`` a second instance with the same transactional.id starts
halfway while the first has a transaction open: the broker bumps the epoch,
aborts that transaction and the first instance's commit is refused as fenced.
"""

from __future__ import annotations

import logging
import random
import threading
import time

from kipper.spark_jobs.counts import Counts
from kipper.spark_jobs.ledger import ABORTED, ACKED

TIMEOUT_S = 30.0
# librdkafka's own log lines (a fenced instance logs FATAL, as it should) would land in
# the executor's stderr; what matters is counted in the result instead
_QUIET = logging.getLogger("kipper.loadgen.librdkafka")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class TxnRun:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = Counts()
        self.instances = 0
        self.stats = {"committed": 0, "aborted": 0, "fenced": 0, "failed": 0,
                      "records_committed": 0, "records_aborted": 0}
        self.errors: list[str] = []  # transactions that failed (each fails the run)
        self.threads: list[threading.Thread] = []

    def bump(self, **counts: int) -> None:
        with self.lock:
            for k, v in counts.items():
                self.stats[k] += v

    def join(self) -> dict:
        for t in self.threads:
            t.join(TIMEOUT_S * 3)
        return {"counts": self.counts.result(), "instances": self.instances,
                "transactions": dict(self.stats), "errors": list(self.errors)}


def _run(spec: dict, topic: str, transactional_id: str, tail: bytes, start: float, end: float,
         run: TxnRun, books) -> None:
    from confluent_kafka import KafkaException, Producer

    counts = run.counts
    conf = {"bootstrap.servers": spec["bootstrap"], "transactional.id": transactional_id,
            "client.id": f"loadgen-txn-{spec['task']}", "linger.ms": 5, "logger": _QUIET}

    ledgers = {}  # producer instance -> its ledger: a transaction's records are settled when it ends

    def instance():
        p = Producer(conf)
        p.init_transactions(TIMEOUT_S)  # a known transactional.id: the broker bumps its epoch
        with run.lock:
            run.instances += 1
        ledgers[id(p)] = books.new("transactional", [topic])
        return p

    def callback(sent_at: float, acked_here: list):
        def done(error, message):
            if error is None:
                acked_here[0] += 1
                with counts.lock:
                    counts.acked += 1
                    counts.record(int((time.perf_counter() - sent_at) * 1e6))
            else:
                counts.error(error.name(), error.str())
        return done

    rnd = random.Random(transactional_id)
    every = 1.0 / spec["transactions_per_second"]
    fence_at = start + (end - start) / 2 if spec["transaction_fence"] else float("inf")
    partitions = spec["partitions"]
    producer = None
    next_at = start
    try:
        producer = instance()
        while True:
            now = time.monotonic()
            if now >= end:
                break
            if now < next_at:
                time.sleep(min(next_at - now, 0.05))
                continue
            next_at += every
            acked_here = [0]
            ledger = ledgers[id(producer)]
            first = ledger.sent
            try:
                producer.begin_transaction()
                for i in range(spec["transaction_records"]):
                    producer.produce(topic, ledger.value(ledger.next(), tail), partition=i % partitions,
                                     on_delivery=callback(time.perf_counter(), acked_here))
                with counts.lock:
                    counts.sent += spec["transaction_records"]
                left = producer.flush(TIMEOUT_S)
                if left:
                    with counts.lock:
                        counts.unacknowledged += left
                if time.monotonic() >= fence_at:
                    fence_at = float("inf")
                    successor = instance()  # fences ``producer``: its open transaction is aborted
                    try:
                        producer.commit_transaction(TIMEOUT_S)
                        ledger.settle(first, ledger.sent - 1, ACKED)
                        run.bump(committed=1, records_committed=acked_here[0])  # not fenced after all
                    except KafkaException:
                        ledger.settle(first, ledger.sent - 1, ABORTED)
                        run.bump(fenced=1, records_aborted=acked_here[0])
                    producer = successor
                    continue
                if rnd.random() * 100 < spec["transaction_abort_percent"]:
                    producer.abort_transaction(TIMEOUT_S)
                    ledger.settle(first, ledger.sent - 1, ABORTED)
                    run.bump(aborted=1, records_aborted=acked_here[0])
                else:
                    producer.commit_transaction(TIMEOUT_S)
                    ledger.settle(first, ledger.sent - 1, ACKED)
                    run.bump(committed=1, records_committed=acked_here[0])
            except KafkaException as exc:
                error = exc.args[0]
                with run.lock:
                    run.errors.append(f"{transactional_id}: {error.name()}: {error.str()}")
                run.bump(failed=1, records_aborted=acked_here[0])
                if error.txn_requires_abort():
                    producer.abort_transaction(TIMEOUT_S)
                    ledger.settle(first, ledger.sent - 1, ABORTED)
                elif error.fatal():
                    producer = instance()
    except Exception as exc:  # reported with the task's results
        with run.lock:
            run.errors.append(f"{transactional_id}: {type(exc).__name__}: {exc}")


def start(spec: dict, tail: bytes, start: float, end: float, books) -> TxnRun:
    run = TxnRun()
    for topic, transactional_id in spec["transactional"]:
        t = threading.Thread(target=_run, args=(spec, topic, transactional_id, tail, start, end, run, books),
                             name=f"loadgen-txn-{transactional_id}", daemon=True)
        t.start()
        run.threads.append(t)
    return run
