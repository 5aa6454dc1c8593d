"""The tool generator's bounded run in `make test`: one derandomized round of sequences of
Kafka's own command-line tools (the same every run), each command run against Kafka and
kipper and its exit code, stdout and stderr compared, error texts word for word. A difference
fails the test with the sequence that showed it; ``make tools-fuzz`` shrinks such a one and
writes it out (docs/CONFORMANCE.md, The tool generator)."""

from __future__ import annotations

import json

from tests.conformance.fuzz.explore import explore, figures
from tests.java_ecosystem.tool_fuzz.machine import ToolRun, machine

SEQUENCES, STEPS = 6, 10  # some 55 commands: about a minute on two cores


def test_generated_tool_commands_print_what_they_print_against_kafka(kafka_reference, kipper_reference, tools,
                                                                     tmp_path):
    run = ToolRun(kafka_reference, kipper_reference, [], [], pair=tools, files=tmp_path)
    outcome = explore(run, seed=0, examples=SEQUENCES, steps=STEPS, shrink=False, derandomize=True, rounds=1,
                      log=lambda line: None, build=machine)
    print("\n" + figures(run, outcome))
    assert not outcome.errors, outcome.errors[0]
    assert not outcome.findings, "\n\n".join(
        f"{f.title}\nthe sequence (make tools-fuzz shrinks such a one):\n" +
        "\n".join(json.dumps(step) for step in f.steps) for f in outcome.findings)
    assert run.stats.sequences >= SEQUENCES and run.stats.identical == run.stats.compared > SEQUENCES * 2
