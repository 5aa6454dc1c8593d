"""The tool generator's long run: ``make tools-fuzz`` (TOOLS_FUZZ_MINUTES=30 ...), or

    .venv/bin/python -m tests.java_ecosystem.tool_fuzz --minutes 30 --seed 1 --out tool-findings

starts Apache Kafka and a kipper configured alike (tests/support/reference.py) and a tool JVM
for each, draws sequences of Kafka's own command-line tools (commands.py) until the time is
up, compares every command's exit code, stdout and stderr (error texts word for word), prints
its figures as it goes and writes each finding, shrunk, to ``--out`` with ``summary.json``."""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from pathlib import Path

from tests.conformance.fuzz.__main__ import report, run_arguments, start
from tests.conformance.fuzz.explore import explore
from tests.java_ecosystem.tool_fuzz.machine import ToolRun, machine
from tests.java_ecosystem.tool_pair import Broker, ToolPair


def tool_run(kafka, kipper, work: Path, deadline: float = float("inf")) -> ToolRun:
    """A run over both brokers (tests.support.reference's Reference), its tool JVMs started."""
    from tests.support.java_programs import compiled_classes

    compiled_classes()
    work.mkdir(parents=True, exist_ok=True)
    pair = ToolPair(Broker("kafka", kafka.bootstrap, kafka.sasl_bootstrap),
                    Broker("kipper", kipper.bootstrap, kipper.sasl_bootstrap), work)
    files = work / "files"
    files.mkdir(exist_ok=True)
    return ToolRun(kafka, kipper, [], [], deadline=deadline, pair=pair, files=files)


def main(argv: list[str] | None = None) -> int:
    args = run_arguments("tests.java_ecosystem.tool_fuzz", __doc__, examples=10, steps=12,
                         out="tool-findings").parse_args(argv)

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop both brokers on a kill too
    with tempfile.TemporaryDirectory(prefix="kipper-tool-fuzz-") as tmp:
        kafka, kipper, procs = start(Path(tmp))
        run = None
        try:
            began = time.monotonic()
            run = tool_run(kafka, kipper, Path(tmp) / "tools", began + args.minutes * 60)
            print(f"tool fuzz: Kafka {kafka.version} and kipper {kipper.version}; {args.minutes:g} minutes "
                  f"from seed {args.seed}", flush=True)
            outcome = explore(run, seed=args.seed, examples=args.examples, steps=args.steps,
                              shrink=not args.no_shrink, out=args.out, build=machine,
                              log=lambda line: print(line, flush=True))
            report(run, outcome, time.monotonic() - began, args.out, masked=run.masked,
                   tools=dict(sorted(run.tools.items())))
        finally:
            if run is not None:
                run.pair.close()
            for proc in procs:
                proc.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
