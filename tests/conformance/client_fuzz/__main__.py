"""The client generator's long run: ``make clients-fuzz`` (CLIENTS_FUZZ_MINUTES=30 ...), or

    .venv/bin/python -m tests.conformance.client_fuzz --minutes 30 --seed 1 --out client-findings

starts Apache Kafka and a kipper configured alike (tests/support/reference.py), draws
sequences of calls of the Python clients (steps.py: confluent-kafka's admin client, producer,
consumer and share consumer; kafka-python's and aiokafka's admin clients, producers and
consumers) until the time is up, makes every call against both brokers and compares what the
client returned, prints its figures as it goes and writes each finding, shrunk, to ``--out``
with ``summary.json``."""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from pathlib import Path

from tests.conformance.client_fuzz.machine import ClientRun, machine
from tests.conformance.fuzz.__main__ import report, run_arguments, start
from tests.conformance.fuzz.explore import explore


def main(argv: list[str] | None = None) -> int:
    args = run_arguments("tests.conformance.client_fuzz", __doc__, examples=10, steps=12,
                         out="client-findings").parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop both brokers on a kill too
    with tempfile.TemporaryDirectory(prefix="kipper-client-fuzz-") as tmp:
        kafka, kipper, procs = start(Path(tmp))
        try:
            began = time.monotonic()
            run = ClientRun(kafka, kipper, [], [], deadline=began + args.minutes * 60)
            print(f"client fuzz: Kafka {kafka.version} and kipper {kipper.version}; {args.minutes:g} minutes "
                  f"from seed {args.seed}", flush=True)
            outcome = explore(run, seed=args.seed, examples=args.examples, steps=args.steps,
                              shrink=not args.no_shrink, out=args.out, build=machine,
                              log=lambda line: print(line, flush=True))
            report(run, outcome, time.monotonic() - began, args.out, masked=run.masked,
                   calls=dict(sorted(run.calls.items())))
        finally:
            for proc in procs:
                proc.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
