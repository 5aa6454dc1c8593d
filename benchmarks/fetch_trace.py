"""What a consumer with librdkafka's default settings sees of each broker's Fetch answers
(issue 41: why kipper delivered fewer records/s than a warm Kafka with a tenth of its CPU).

    .venv/bin/python -m benchmarks.fetch_trace [--records 1000000] [--rounds 2] [--no-kafka]
    .venv/bin/python -m benchmarks.fetch_trace --no-kafka --delays 0 3 6 10

Each broker (kipper, then Apache Kafka 4.4) is started, warmed (benchmarks/warm.py) and given
a 1-partition topic of ``--records`` records of 100 B, which a librdkafka consumer with its
defaults reads back, ``debug=fetch,protocol`` on. From librdkafka's own log it counts the
Fetch answers, their bytes, their round trip (``rtt``, as librdkafka measures it) and the
fetch backoffs it took because its queue held ``queued.min.messages`` (100,000) records or
``queued.max.messages.kbytes`` (64 MiB) when it decided on the next Fetch; each of those waits
``fetch.queue.backoff.ms`` (1,000 ms). From the consumer's polls: records/s and the stalls over
0.3 s. The debug log costs the consumer a little time, the same on both brokers.

``--delays MS ...``: kipper alone (a test broker, kipper.testing, with log.dirs), each Fetch
answer held back by MS ms by its fault plan, one consumer per delay, in turn, ``--rounds``
times: the answer's timing alone, everything else equal.
"""

from __future__ import annotations

import argparse
import logging
import re
import statistics
import tempfile
import time

from benchmarks import broker_ingest, consumers, kafka_peer, workloads
from benchmarks.warm import in_process, warm

TOPIC = "trace1"
_RESPONSE = re.compile(r"Received FetchResponse \(v\d+, (\d+) bytes, CorrId \d+, rtt ([\d.]+)ms\)")
_QUEUE_FULL = "Queue full"
EMPTY_ANSWER = 200  # bytes: a Fetch answer without records is ~100


class FetchLog(logging.Handler):
    """librdkafka's debug log, tallied: each Fetch answer's size and round trip, and the
    backoffs it took because its queue was full."""

    def __init__(self):
        super().__init__()
        self.sizes: list[int] = []
        self.rtts: list[float] = []
        self.backoffs = 0

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        found = _RESPONSE.search(text)
        if found:
            self.sizes.append(int(found[1]))
            self.rtts.append(float(found[2]))
        elif "Fetch backoff for" in text and _QUEUE_FULL in text:
            self.backoffs += 1

    def summary(self, records: int) -> dict:
        answers = [s for s in self.sizes if s > EMPTY_ANSWER]
        return {"fetch_answers": len(answers),
                "bytes_per_answer": statistics.median(answers) if answers else 0,
                "records_per_answer": round(records / len(answers)) if answers else 0,
                "rtt_ms_median": statistics.median(self.rtts) if self.rtts else 0,
                "rtt_ms_mean": round(statistics.fmean(self.rtts), 2) if self.rtts else 0,
                "queue_full_backoffs": self.backoffs}


def traced(bootstrap: str, topic: str, n: int) -> dict:
    """Reads ``n`` records of partition 0 with librdkafka's defaults; what its log showed."""
    tally = FetchLog()
    log = logging.getLogger(f"fetch-trace-{topic}")
    log.setLevel(logging.DEBUG)
    log.addHandler(tally)
    result = consumers.rdkafka(bootstrap, topic, n, None, {"debug": "fetch,protocol"}, logger=log)
    return {**result, **tally.summary(result["records"])}


def line(name: str, got: dict) -> str:
    return (f"{name:>14} {got['records_per_sec']:>9,.0f} rec/s  {got['stalls']} stalls ({got['stalled_s']:.2f} s)  "
            f"{got['queue_full_backoffs']} queue-full backoffs  {got['fetch_answers']} answers of "
            f"{got['bytes_per_answer']:,.0f} B ({got['records_per_answer']:,} records)  "
            f"rtt median {got['rtt_ms_median']:.2f} ms, mean {got['rtt_ms_mean']:.2f} ms")


def brokers(args) -> None:
    from benchmarks.consume_defaults import start

    names = ["kipper"] + ([] if args.no_kafka or not kafka_peer.available() else ["kafka"])
    for name in names:
        with start(name) as broker:
            print(f"{name}: warmed {warm(broker, args.warm)}", flush=True)
            fill(broker.bootstrap, args.records)
            for _ in range(args.rounds):
                print(line(name, in_process(traced, broker.bootstrap, TOPIC, args.records)), flush=True)


def delays(args) -> None:
    from kipper.testing import EmbeddedBroker

    with tempfile.TemporaryDirectory(prefix="fetch-trace-") as logs, \
            EmbeddedBroker({"log.dirs": logs, "log.level": "WARNING"}) as broker:
        broker.bootstrap = broker.bootstrap_servers
        print(f"kipper (test broker): warmed {warm(broker, args.warm)}", flush=True)
        fill(broker.bootstrap, args.records)
        for _ in range(args.rounds):
            for ms in args.delays:
                broker.faults.clear()
                if ms:
                    broker.faults.delay("Fetch", ms / 1000, count=None)
                print(line(f"delay {ms:g} ms", in_process(traced, broker.bootstrap, TOPIC, args.records)),
                      flush=True)
        broker.faults.clear()


def fill(bootstrap: str, records: int) -> None:
    broker_ingest.create_topic(bootstrap, 1, TOPIC)
    undelivered = in_process(workloads.fill, bootstrap, TOPIC, records, 100)
    if undelivered:
        raise RuntimeError(f"{undelivered} records were not delivered")


def main() -> None:
    ap = argparse.ArgumentParser(description="librdkafka's view of each broker's Fetch answers (issue 41)")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--warm", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-kafka", action="store_true")
    ap.add_argument("--delays", type=float, nargs="+", help="kipper alone, each Fetch answer held back MS ms")
    args = ap.parse_args()
    started = time.perf_counter()
    delays(args) if args.delays else brokers(args)
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
