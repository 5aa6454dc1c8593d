"""The differential suite: every scenario runs against Apache Kafka and against kipper, and
their answers must agree field by field after normalisation, or differ only as
allowed_differences.toml (= docs/KAFKA_DIFFERENCES.md) allows. See docs/CONFORMANCE.md."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conformance.compare import Difference, classify, closed, coverage_problems, diff, error_codes, load_allowed
from tests.conformance.harness import Ahead
from tests.conformance.normalise import normalise
from tests.conformance.report import Report
from tests.conformance.scenarios import load_all
from tests.support.reference import require_kafka

require_kafka()

SCENARIOS = load_all()
MINIMUM_SCENARIOS = 300


@pytest.fixture(scope="session")
def report(tmp_path_factory, kafka_reference, kipper_reference):
    rep = Report(load_allowed())
    rep.versions = {"kafka": kafka_reference.version, "kipper": kipper_reference.version}
    yield rep
    path = rep.write(tmp_path_factory.getbasetemp())
    print(f"\nconformance: {rep.scenarios} scenarios, {rep.requests} requests compared, {rep.identical} identical, "
          f"{sum(1 for d in rep.differences if d.allowed)} listed and "
          f"{sum(1 for d in rep.differences if not d.allowed)} unlisted differences; report in {path}")


@pytest.fixture(scope="session")
def ahead(request, kafka_reference, kipper_reference):
    """The scenarios this session selected, started ahead of their tests."""
    chosen = [item.callspec.params["scenario"] for item in request.session.items
              if item.originalname == "test_kipper_answers_as_kafka_does"]
    runner = Ahead(chosen, kafka_reference, kipper_reference, int(os.environ.get("CONFORMANCE_WORKERS", "4")))
    yield runner
    runner.close()


def compare(scenario, kafka_run, kipper_run) -> list[tuple[str, int, list[Difference]]]:
    a = [x for x in kafka_run.transcript if x.recorded]
    b = [x for x in kipper_run.transcript if x.recorded]
    golden_foreign = not scenario.name.startswith("golden/")
    na, nb = normalise(a, kafka_run.token, golden_foreign), normalise(b, kipper_run.token, golden_foreign)
    out = []
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b):
            x = a[i] if i < len(a) else b[i]
            out.append((x.api, x.version, [Difference(scenario.name, x.label, x.api, x.version, "<exchange>",
                                                      na[i] if i < len(a) else "<absent>",
                                                      nb[i] if i < len(b) else "<absent>")]))
            continue
        x = a[i]
        label = x.label if x.label == b[i].label else f"{x.label} / {b[i].label}"
        codes, theirs = error_codes(na[i]), error_codes(nb[i])
        diffs = [Difference(scenario.name, label, x.api, x.version, path, ka, kb, kafka_codes=codes, kipper_codes=theirs,
                            kafka_closed=closed(na[i]), asked=x.request)
                 for path, ka, kb in diff(na[i], nb[i])]
        out.append((x.api, x.version, diffs))
    return out


def judge(scenario, kafka_run, kipper_run, report) -> tuple[list, list[Difference]]:
    """The compared exchanges, and the differences allowed_differences.toml does not list."""
    exchanges = compare(scenario, kafka_run, kipper_run)
    for _, _, diffs in exchanges:
        classify(diffs, report.allowed)
    return exchanges, [d for _, _, diffs in exchanges for d in diffs if not d.allowed]


def dump(directory: Path, scenario, *runs) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    out = {run.broker: [{"label": x.label, "api": x.api, "version": x.version, "recorded": x.recorded,
                         "request": x.request, "response": x.response} for x in run.transcript] for run in runs}
    (directory / (scenario.name.replace("/", "_") + ".json")).write_text(json.dumps(out, indent=1, default=repr))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_kipper_answers_as_kafka_does(scenario, ahead, report):
    kafka_run, kipper_run = ahead.result(scenario)
    exchanges, unlisted = judge(scenario, kafka_run, kipper_run, report)
    if unlisted and scenario.timed:  # a timer's window on a loaded machine: once more, under fresh names
        print(f"\nconformance: {scenario.name} differed on its first run ({len(unlisted)} fields); running it again")
        kafka_run, kipper_run = ahead.again(scenario)
        exchanges, unlisted = judge(scenario, kafka_run, kipper_run, report)
    if os.environ.get("CONFORMANCE_DUMP"):  # a directory: both transcripts of each scenario, for reading
        dump(Path(os.environ["CONFORMANCE_DUMP"]), scenario, kafka_run, kipper_run)
    report.add(exchanges)
    assert not unlisted, "differences from Kafka that allowed_differences.toml does not list:\n" + "\n".join(
        f"  [{d.label}] {d.api} v{d.version} {d.path}: kafka={d.kafka!r} kipper={d.kipper!r}" for d in unlisted[:40])


def test_the_suite_has_enough_scenarios():
    assert len(SCENARIOS) >= MINIMUM_SCENARIOS, f"{len(SCENARIOS)} scenarios; the issue asks for {MINIMUM_SCENARIOS}"


def test_every_allowed_difference_shows_where_it_says_and_nowhere_else(request, report):
    """KAFKA_DIFFERENCES.md stays exact: each entry names the scenarios it covers (covers =);
    each of those that ran in this session showed a difference the entry allows, and no
    other scenario did. An entry that covers nothing any more, or whose difference moved,
    fails here. Runs after the scenarios (last in this module); -k runs check what they ran."""
    ran = {item.callspec.params["scenario"].name for item in request.session.items
           if item.originalname == "test_kipper_answers_as_kafka_does"}
    if not ran:
        pytest.skip("no scenario ran in this session")
    problems = coverage_problems(report.allowed, ran)
    assert not problems, "allowed_differences.toml's covers do not match what the scenarios showed:\n  " + \
        "\n  ".join(problems)
