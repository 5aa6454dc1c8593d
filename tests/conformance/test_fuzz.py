"""The generator's bounded run in `make test` (issue 36): one derandomized round of sequences
(the same every run), each step sent to Kafka and to kipper and compared as the scenarios are.
A difference fails the test with the sequence that showed it; ``make conformance-fuzz``
shrinks such a sequence and writes it out (docs/CONFORMANCE.md, The generator)."""

from __future__ import annotations

import json

from tests.conformance.compare import load_allowed
from tests.conformance.fuzz.__main__ import advertised_by
from tests.conformance.fuzz.bodies import advertised
from tests.conformance.fuzz.explore import explore, figures
from tests.conformance.fuzz.machine import Run
from tests.support.reference import require_kafka

require_kafka()

SEQUENCES, STEPS = 30, 12  # about a minute on two cores


def test_generated_sequences_answer_as_kafka_does(kafka_reference, kipper_reference):
    run = Run(kafka_reference, kipper_reference, load_allowed(), advertised(advertised_by(kipper_reference.bootstrap)))
    outcome = explore(run, seed=0, examples=SEQUENCES, steps=STEPS, shrink=False, derandomize=True, rounds=1,
                      log=lambda line: None)
    print("\n" + figures(run, outcome))
    assert not outcome.errors, outcome.errors[0]
    assert not outcome.findings, "\n\n".join(
        f"{f.title}\nthe sequence (make conformance-fuzz shrinks such a one):\n" +
        "\n".join(json.dumps(step) for step in f.steps) for f in outcome.findings)
    assert run.stats.sequences >= SEQUENCES
