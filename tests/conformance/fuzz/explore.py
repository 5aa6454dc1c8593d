"""Rounds of generated sequences until the time is up, each round a Hypothesis run of the
state machine under its own seed. A round that finds a difference ends with it shrunk to its
shortest sequence, which is written out (``finding-NNN.json``: the steps, ready for
tests/conformance/scenarios/generated.py, and the differences) and becomes known, so that
the next rounds look for others. A difference Hypothesis cannot reproduce when it replays
the shortest sequence is written out as flaky: timing, to be kept out of the generator."""

from __future__ import annotations

import json
import re
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as use_seed
from hypothesis.errors import Flaky
from hypothesis.internal.conjecture import engine
from hypothesis.stateful import run_state_machine_as_test

from tests.conformance.fuzz.machine import DifferenceFound, Run, machine, signature


@dataclass
class Finding:
    number: int
    flaky: bool
    seed: int
    token: str
    signatures: list
    differences: list
    steps: list

    @property
    def title(self) -> str:
        d = self.differences[0]
        head = d["request"] if d["version"] < 0 else f"{d['api']} v{d['version']}"  # (a tool's: its command)
        text = f"{head} {d['path']}: kafka={d['kafka']!r} kipper={d['kipper']!r}"
        return re.sub(r"x{12,}", "x…", text.replace(self.token, "<T>"))[:400]


BROKEN_ROUNDS_STOP = 5


@dataclass
class Outcome:
    rounds: int = 0
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def explore(run: Run, *, seed: int, examples: int, steps: int, shrink: bool = True, derandomize: bool = False,
            out: Path | None = None, rounds: int | None = None, shrink_seconds: int = 90,
            log: Callable[[str], None] = print, build: Callable[[Run], type] = machine) -> Outcome:
    """Rounds until ``run.deadline`` (or ``rounds`` of them); each finding written to ``out``.
    A round under way when the time is up finishes (its sequences, and a shrink of at most
    ``shrink_seconds``: each of its tries replays a sequence on both brokers). ``build`` makes
    the state machine: the protocol's steps by default, Kafka's tools' commands in
    tests/java_ecosystem/tool_fuzz."""
    engine.MAX_SHRINKING_SECONDS = shrink_seconds  # Hypothesis keeps this monkeypatchable for such uses
    outcome = Outcome()
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])
    config = settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                      derandomize=derandomize, phases=phases, suppress_health_check=list(HealthCheck),
                      report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)
    broken = 0
    while time.monotonic() < run.deadline and (rounds is None or outcome.rounds < rounds):
        round_seed = seed + outcome.rounds
        outcome.rounds += 1
        cls = build(run)
        use_seed(round_seed)(cls)
        run.last_failure = None
        try:
            run_state_machine_as_test(cls, settings=config)
            broken = 0
        except BaseException as exc:  # noqa: BLE001 - a difference, flaky or not, or a generator bug
            if isinstance(exc, KeyboardInterrupt):
                raise
            failure = run.last_failure
            if failure is None or not (_holds(exc, DifferenceFound) or isinstance(exc, Flaky)):
                outcome.errors.append("".join(traceback.format_exception(exc, limit=-6)))
                log(f"round {outcome.rounds} (seed {round_seed}): the generator broke: {exc!r}")
                if derandomize:
                    raise
                broken += 1
                if broken >= BROKEN_ROUNDS_STOP:  # (a tool JVM gone, a broker down: nothing more to learn)
                    log(f"stopping: the generator broke {broken} rounds in a row")
                    break
                continue
            broken = 0
            finding = Finding(len(outcome.findings) + 1, isinstance(exc, Flaky),
                              round_seed, failure.token, sorted({signature(d, failure.token) for d in failure.differences}, key=repr),
                              [d.as_dict() for d in failure.differences], failure.steps)
            run.known |= {tuple(s) for s in finding.signatures}
            outcome.findings.append(finding)
            if out is not None:
                write(finding, out)
            log(f"round {outcome.rounds} (seed {round_seed}): {'flaky ' if finding.flaky else ''}finding "
                f"{finding.number}, {len(finding.steps)} steps: {finding.title}")
        log(figures(run, outcome))
    return outcome


def _holds(exc: BaseException, kind: type) -> bool:
    if isinstance(exc, kind):
        return True
    return any(_holds(e, kind) for e in getattr(exc, "exceptions", ()))


def figures(run: Run, outcome: Outcome) -> str:
    s = run.stats
    new = sum(1 for f in outcome.findings if not f.flaky)
    return (f"fuzz: {outcome.rounds} rounds, {s.sequences} sequences, {s.steps} steps ({s.identical} of "
            f"{s.compared} answered alike), {new} differences found, {len(outcome.findings) - new} flaky, "
            f"{s.known_again} sequences met a known one again, {s.ended_after_listed} ended after a listed one, "
            f"{s.past_share_state} steps compared past share state, "
            f"{len(outcome.errors)} generator errors")


def summary(run: Run, outcome: Outcome, seconds: float) -> dict:
    return {"seconds": round(seconds), "rounds": outcome.rounds, **asdict(run.stats),
            "findings": [{"number": f.number, "flaky": f.flaky, "title": f.title, "steps": len(f.steps)}
                         for f in outcome.findings], "errors": len(outcome.errors)}


def write(finding: Finding, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"finding-{finding.number:03d}.json"
    path.write_text(json.dumps(asdict(finding), indent=1, default=repr))
    return path


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def as_scenario(finding: dict, name: str) -> str:
    """A finding's steps as an entry of tests/conformance/scenarios/generated.py's GENERATED."""
    lines = [f"    # {re.sub(r'x{{12,}}', 'x…', d['api'] + ' ' + d['path'])}: Kafka {d['kafka']!r}, kipper {d['kipper']!r}"
             for d in finding["differences"][:3]]
    lines.append(f"    {('generated/' + name)!r}: [")
    lines += [f"        {step!r}," for step in finding["steps"]]
    lines.append("    ],")
    return "\n".join(lines)
