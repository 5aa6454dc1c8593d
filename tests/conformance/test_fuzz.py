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
from tests.conformance.fuzz.machine import Pair, Run
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


def test_messages_compares_the_texts_themselves(kafka_reference, kipper_reference):
    """``--messages``: a refusal's text is compared word for word, where the bounded run compares
    only whether there is one; the same step answered with the same text shows no difference."""
    step = {"api": "CreateTopics", "version": 7, "conn": "main", "body": {
        "topics": [{"name": "bad name!", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                    "configs": []}], "timeout_ms": 30000, "validate_only": True}}
    for messages in (False, True):
        run = Run(kafka_reference, kipper_reference, load_allowed(), [], messages=messages)
        pair = Pair(run, run.token())
        try:
            assert pair.step(step) == []
            answers = [side.resolver.norm.response(side.run.transcript[-1].response) for side in (pair.kafka, pair.kipper)]
        finally:
            pair.close(cleanup=False)
        texts = {answer["topics"]["name=bad name!"]["error_message"] for answer in answers}
        assert texts == ({"<message>"} if not messages else
                         {"Topic name is invalid: 'bad name!' contains one or more characters other than "
                          "ASCII alphanumerics, '.', '_' and '-'"}), texts
