"""``loadgen --sink spark-kafka``: the same steady producers' records, written by Spark's
Kafka sink (``df.write.format("kafka")``, Kafka's Java producer) instead of kipper's.

One Spark partition per task spec; its Python side (``mapInArrow``) makes the records
exactly as spark_jobs/tasks.py does (the identity of spark_jobs/ledger.py, then the
payload's tail; keys from the workload's distributor; ``producerRate`` paced in short
bursts until the duration is over) and hands them to the JVM in Arrow batches, where
the connector's cached KafkaProducer sends them. A task that finishes has had every
record acknowledged (the sink flushes and fails the task on any send error), so each
producer's ledger is its counters 0..sent-1. What each task sent and the CPU its
Python worker spent come back through an accumulator. There is no per-record ack
latency: the Java producer's callbacks stay in the JVM.
"""

from __future__ import annotations

import json
import os
import socket
import time

BATCH = 2000  # rows per Arrow batch (the kipper tasks' BURST_MAX)
OUT_SCHEMA = "topic string, key binary, value binary"


def _keys(distributor: str):
    from kipper.spark_jobs.tasks import _keys as keys

    return keys(distributor)


def generate(batches, stats):
    """mapInArrow: each input row is a task spec (JSON); yields its records."""
    import pyarrow as pa

    from kipper.spark_jobs.ledger import IDENTITY, IDENTITY_SIZE, MAGIC, synthetic, uid

    schema = pa.schema([("topic", pa.string()), ("key", pa.binary()), ("value", pa.binary())])
    pack = IDENTITY.pack
    for batch in batches:
        for text in batch.column(0).to_pylist():
            spec = json.loads(text)
            cpu0, wall0, started = time.process_time(), time.monotonic(), time.time()
            topics = spec["topics"]
            n = len(topics)
            uids = [uid(spec["task"], j) for j in range(n)]
            counters = [0] * n
            tail = os.urandom(spec["message_size"])[IDENTITY_SIZE:]
            key_for = _keys(spec["key_distributor"])
            rate, end, sent = spec["rate"], wall0 + spec["duration_s"], 0
            while True:
                now = time.monotonic()
                if now >= end:
                    break
                if rate > 0:
                    burst = min(int((now - wall0) * rate) - sent, BATCH)
                    if burst <= 0:
                        time.sleep(min(0.002, end - now))
                        continue
                else:
                    burst = BATCH
                ts, ks, vs = [], [], []
                for i in range(sent, sent + burst):
                    j = i % n
                    c = counters[j]
                    counters[j] = c + 1
                    ts.append(topics[j])
                    ks.append(key_for(i))
                    vs.append(pack(MAGIC, uids[j], c) + tail)
                sent += burst
                yield pa.RecordBatch.from_arrays([pa.array(ts, pa.string()), pa.array(ks, pa.binary()),
                                                  pa.array(vs, pa.binary())], schema=schema)
            load_s = time.monotonic() - wall0
            # the last batch is handed over when the next one is asked for: the sink flushes after
            stats.add([{"task": spec["task"], "sent": sent, "load_seconds": load_s, "started_at": started,
                        "cpu_seconds": time.process_time() - cpu0, "host": socket.gethostname(),
                        "workdir": os.getcwd(), "python": __import__("sys").executable,
                        "ledgers": [synthetic(uids[j], "steady", [topics[j]], counters[j]) for j in range(n)]}])


def java_producer_options(w) -> dict[str, str]:
    """The workload's producer settings as the connector's kafka.* options."""
    opts = {"kafka.enable.idempotence": "true" if w.idempotence else "false",
            "kafka.acks": "all" if w.idempotence else "1"}
    opts.update({f"kafka.{k}": str(v) for k, v in w.producer_config.items()})
    return opts


def run(spark, specs: list[dict], bootstrap: str, options: dict[str, str], w) -> list[dict]:
    """Write the specs' records through the connector; one result per task, shaped as
    spark_jobs/tasks.py's."""
    from pyspark import AccumulatorParam

    from kipper.protocol.histogram import LatencyHistogram

    class Rows(AccumulatorParam):
        def zero(self, value):
            return []

        def addInPlace(self, a, b):
            a.extend(b)
            return a

    sc = spark.sparkContext
    stats = sc.accumulator([], Rows())
    rows = sc.parallelize([(json.dumps(s),) for s in specs], len(specs)).toDF("spec string")
    started = time.monotonic()
    (rows.mapInArrow(lambda batches: generate(batches, stats), OUT_SCHEMA)
     .write.format("kafka").option("kafka.bootstrap.servers", bootstrap)
     .options(**java_producer_options(w)).options(**options).save())
    seconds = time.monotonic() - started
    empty = LatencyHistogram().to_dict()
    out = []
    for r in stats.value:
        counts = {"sent": r["sent"], "acked": r["sent"], "failed": 0, "unacknowledged": 0}
        out.append({**r, **counts, "pid": None, "kipper": None, "topics": sorted({t for led in r["ledgers"]
                                                                                 for t in led["topics"]}),
                    "producers": len(r["ledgers"]), "producers_created": len(r["ledgers"]),
                    "errors": {}, "first_error": None, "seconds": seconds, "latency": empty,
                    "roles": {"steady": {**counts, "errors": {}, "first_error": None, "latency": empty}},
                    "transactions": {}, "transaction_errors": [], "share_consumed": 0,
                    "share_delivery_counts": {}, "share_acks": {}, "share_errors": []})
    return out
