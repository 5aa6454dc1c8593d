"""The long run: ``make conformance-fuzz`` (FUZZ_MINUTES=60 FUZZ_SEED=1 ...), or

    .venv/bin/python -m tests.conformance.fuzz --minutes 60 --seed 1 --out fuzz-findings

starts Apache Kafka and a kipper configured alike (tests/support/reference.py), generates
sequences until the time is up, prints its figures as it goes (rounds, sequences, steps,
differences found) and writes each finding, shrunk, to ``--out`` with ``summary.json``.

``--workers N`` runs N explorers at once against the same two brokers, each from its own seeds
(``seed + 1000 * worker``) and writing to ``--out/worker-N``: a sequence mostly waits for the
brokers' answers (its own resources keep sequences apart), so on two cores 2-3 workers send
about that many times the steps in the same time."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import signal
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from tests.conformance.compare import load_allowed
from tests.conformance.fuzz.explore import Finding, Outcome, as_scenario, explore, figures, load, summary
from tests.conformance.fuzz.machine import Run, token_counter
from tests.support.reference import Reference, start_kafka, start_kipper


def advertised_by(bootstrap: str) -> list[dict]:
    """The ApiVersions answer of the broker at ``bootstrap``: what the generator draws from."""
    from kipper.client.blocking import connect_any
    from kipper.protocol.messages import APIS

    with connect_any(bootstrap) as conn:
        answer = conn.send_raw(APIS[18], 3, {"client_software_name": "fuzz", "client_software_version": "1"})
    return [{"api_key": a.api_key, "min_version": a.min_version, "max_version": a.max_version} for a in answer.api_keys]


def start(workdir: Path) -> tuple[Reference, Reference, list]:
    kafka = start_kafka(workdir / "kafka")
    kipper = start_kipper(workdir / "kipper")
    refs = (Reference("kafka", kafka.bootstrap, kafka.sasl_bootstrap, kafka.version),
            Reference("kipper", kipper.bootstrap, f"127.0.0.1:{kipper.sasl_port}", version("kipper")))
    return refs[0], refs[1], [kafka, kipper]


def report(run, outcome: Outcome, seconds: float, out: Path, **extra) -> None:
    """A long run's end: ``summary.json`` (with ``extra``) in ``out``, the figures and findings printed."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary(run, outcome, seconds) | extra, indent=1))
    print(figures(run, outcome))
    for f in outcome.findings:
        print(f"  finding {f.number}{' (flaky)' if f.flaky else ''}: {len(f.steps)} steps: {f.title}")


def run_arguments(module: str, doc: str, *, examples: int, steps: int, out: str) -> argparse.ArgumentParser:
    """The options every generator's long run takes (this one's, and the tool generator's)."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc)
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to generate (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="the first round's seed; round n uses seed+n-1")
    parser.add_argument("--examples", type=int, default=examples, help=f"sequences per round (default {examples})")
    parser.add_argument("--steps", type=int, default=steps, help=f"the longest sequence, in steps (default {steps})")
    parser.add_argument("--out", type=Path, default=Path(out), help="where findings are written")
    parser.add_argument("--no-shrink", action="store_true", help="write findings as found, unshrunk")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = run_arguments("tests.conformance.fuzz", __doc__, examples=40, steps=25, out="fuzz-findings")
    parser.add_argument("--workers", type=int, default=1, help="explorers at once against the same brokers (default 1)")
    parser.add_argument("--messages", action="store_true",
                        help="compare error messages word for word (by default only whether there is one: null, \"\" or text)")
    parser.add_argument("--scenario", nargs=2, metavar=("FINDING", "NAME"),
                        help="print a finding's steps as an entry of scenarios/generated.py, and stop")
    args = parser.parse_args(argv)
    if args.scenario:
        print(as_scenario(load(Path(args.scenario[0])), args.scenario[1]))
        return 0

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop both brokers on a kill too
    with tempfile.TemporaryDirectory(prefix="kipper-fuzz-") as tmp:
        kafka, kipper, procs = start(Path(tmp))
        try:
            began = time.monotonic()
            deadline = began + args.minutes * 60
            apis = _apis(kipper.bootstrap)
            print(f"fuzz: Kafka {kafka.version} and kipper {kipper.version}; {len(apis)} APIs advertised; "
                  f"{args.minutes:g} minutes from seed {args.seed}"
                  + (f", {args.workers} workers" if args.workers > 1 else ""), flush=True)
            if args.workers > 1:
                _SHARED[:] = [kafka, kipper, apis, deadline, args]  # (forked, not pickled: the schemas hold locks)
                with workers_pool(args.workers) as pool:
                    parts = pool.map(_worker, range(args.workers))
                run, outcome = _together(kafka, kipper, apis, parts)
            else:
                run = Run(kafka, kipper, load_allowed(), apis, deadline=deadline, messages=args.messages)
                outcome = explore(run, seed=args.seed, examples=args.examples, steps=args.steps,
                                  shrink=not args.no_shrink, out=args.out, log=lambda line: print(line, flush=True))
            report(run, outcome, time.monotonic() - began, args.out)
        finally:
            for proc in procs:
                proc.stop()
    return 0


def workers_pool(n: int):
    """The ``--workers`` processes, forked. Each puts SIGTERM back to the default: the handler
    the parent installs (KeyboardInterrupt, to stop the brokers) runs only on a process's main
    thread, and a worker waiting for its next task with a signal delivered to one of its side
    threads never ran it, so the pool's terminate waited on that worker for ever (the
    twenty-third run hung so after its last round)."""
    return multiprocessing.get_context("fork").Pool(n, initializer=signal.signal, initargs=(signal.SIGTERM, signal.SIG_DFL))


_SHARED: list = []  # what the workers share: both brokers' references, the APIs, the deadline, the options


def _worker(i: int) -> tuple:
    """One explorer of ``--workers``: its figures and findings, for the parent to add up."""
    kafka, kipper, apis, deadline, args = _SHARED
    run = Run(kafka, kipper, load_allowed(), apis, deadline=deadline, tokens=token_counter(i, args.workers),
              messages=args.messages)
    outcome = explore(run, seed=args.seed + 1000 * i, examples=args.examples, steps=args.steps,
                      shrink=not args.no_shrink, out=args.out / f"worker-{i}",
                      log=lambda line: print(f"[worker {i}] {line}", flush=True))
    return run.stats, outcome


def _together(kafka: Reference, kipper: Reference, apis: list, parts: list) -> tuple[Run, Outcome]:
    """The workers' figures added up, their findings one list (numbered again, in worker order)."""
    run, outcome = Run(kafka, kipper, [], apis), Outcome()
    for stats, part in parts:
        for name, value in vars(stats).items():
            mine = getattr(run.stats, name)
            if isinstance(value, dict):
                for k, v in value.items():
                    mine[k] = mine.get(k, 0) + v
            else:
                setattr(run.stats, name, mine + value)
        outcome.rounds += part.rounds
        outcome.errors += part.errors
        outcome.findings += [Finding(**{**vars(f), "number": len(outcome.findings) + n + 1})
                             for n, f in enumerate(part.findings)]
    return run, outcome


def _apis(bootstrap: str) -> list:
    from tests.conformance.fuzz.bodies import advertised

    return advertised(advertised_by(bootstrap))


if __name__ == "__main__":
    sys.exit(main())
