"""Scenarios the generator found (tests/conformance/fuzz, issue 36): each is the shortest
sequence a difference shrank to, with the name of what it shows, replayed step by step as it
was generated (a step's symbols, such as ``{"<pid>": "<T>-x0"}``, resolved on each broker by
tests/conformance/fuzz/symbols.py; the waits of fuzz/side.py between steps, unrecorded).

``python -m tests.conformance.fuzz --scenario fuzz-findings/finding-007.json NAME`` prints a
finding as an entry of ``GENERATED``.
"""

from __future__ import annotations

from tests.conformance.fuzz.side import Side
from tests.conformance.scenarios import register

T0 = {"api": "CreateTopics", "version": 7, "body": {
    "topics": [{"name": "<T>-t0", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
    "timeout_ms": 30000, "validate_only": False}}


def replay(steps: list[dict]):
    def run_steps(run) -> None:
        side = Side(run)
        for step in steps:
            side.step(step)
    return run_steps


GENERATED: dict[str, list[dict]] = {
    # DescribeConfigs of a topic: kipper lists share.auto.offset.reset among a topic's configs (seed 004)
    "generated/describe-a-topic-s-configs": [
        T0,
        {"api": "DescribeConfigs", "version": 4, "body": {"resources": [
            {"resource_type": 2, "resource_name": "<T>-t0", "configuration_keys": None}],
            "include_synonyms": True, "include_documentation": False}},
    ],
}

for _name, _steps in GENERATED.items():
    register(_name, replay(_steps))
