"""Apache Kafka as the third broker of benchmarks/side_by_side.py (issue 29): the same
KRaft broker+controller scripts/kafka-reference starts for the conformance suite, with
Kafka's default 1 GiB heap, PLAINTEXT only and no authorizer, like the other two."""

from __future__ import annotations

import socket
import tempfile
import time
from pathlib import Path

from scripts.kafka_reference import KafkaReference, missing_tools

HEAP = "1g"  # kafka-server-start.sh's default KAFKA_HEAP_OPTS
SETTINGS = {"num.partitions": "1", "group.initial.rebalance.delay.ms": "0", "log.flush.interval.messages": "9223372036854775807"}


def available() -> bool:
    return missing_tools() is None


class KafkaPeer:
    """``with KafkaPeer() as broker``: ``bootstrap`` and ``proc`` (the JVM) as the benchmark
    passes expect of a broker."""

    def __init__(self):
        self.kafka = KafkaReference(properties=dict(SETTINGS), heap=HEAP)

    @property
    def bootstrap(self) -> str:
        return self.kafka.bootstrap

    @property
    def proc(self):
        return self.kafka.proc

    def __enter__(self) -> "KafkaPeer":
        self.kafka.start(timeout=120)
        return self

    def __exit__(self, *exc) -> None:
        self.kafka.stop()


def time_to_accept() -> tuple[float, int]:
    """Seconds from starting the JVM to the first accepted connection (the KRaft directory
    formatted beforehand, untimed), and the idle RSS in KiB once Metadata lists the broker."""
    from benchmarks.machine import rss_kib

    work = Path(tempfile.mkdtemp(prefix="kafka-start-"))
    kafka = KafkaReference(workdir=work, properties=dict(SETTINGS), heap=HEAP)
    kafka.start(timeout=120)  # formats the directory, and warms the page cache for the timed start
    kafka.stop()  # keeps the directory: the timed start below uses it, then removes it
    kafka = KafkaReference(workdir=work, properties=dict(SETTINGS), heap=HEAP, port=kafka.port,
                           controller_port=kafka.controller_port)
    kafka._own_workdir = True
    config = work / "server.properties"
    log = open(kafka.workdir / "server.log", "ab")
    t0 = time.perf_counter()
    kafka.proc = kafka._java("kafka.Kafka", [str(config)], stdout=log, stderr=log, start_new_session=True)
    while True:
        try:
            socket.create_connection(("127.0.0.1", kafka.port), timeout=0.2).close()
            break
        except OSError:
            if kafka.proc.poll() is not None or time.perf_counter() - t0 > 120:
                kafka.stop()
                raise RuntimeError("Kafka did not start")
            time.sleep(0.01)
    elapsed = time.perf_counter() - t0
    kafka._wait_ready(120)
    time.sleep(1.0)
    rss = rss_kib(kafka.proc.pid)
    kafka.stop()
    log.close()
    return elapsed, rss
