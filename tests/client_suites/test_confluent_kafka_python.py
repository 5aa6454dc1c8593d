"""confluent-kafka-python's own Schema Registry integration suites (sync and async: the API
client, the Avro, JSON Schema and Protobuf serializers) and its share consumer's
deserialization tests, run against a kipper broker and its registry
(scripts/confluent_kafka_suite.py fetches them by the installed client's tag and runs them;
docs/SCHEMA_REGISTRY.md). About two minutes: the suite sleeps a second after each topic it
makes. Skipped where the suite can be neither fetched nor found in the cache."""

from __future__ import annotations

import re

import pytest

from scripts import confluent_kafka_suite as suite

pytestmark = [pytest.mark.slow, pytest.mark.interop]


def test_confluent_kafka_pythons_schema_registry_suites_pass_against_kipper():
    try:
        directory, note = suite.available()
    except RuntimeError as exc:
        pytest.skip(f"confluent-kafka-python's tests are not available: {exc}")
    done = suite.run_against_kipper(directory, [])
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    print(note or f"ran {directory.name}", summary, sep="\n")
    assert done.returncode == 0, f"{note}\n{done.stdout[-15000:]}\n{done.stderr[-3000:]}"
    passed = int(re.search(r"(\d+) passed", summary).group(1))
    assert passed >= 100 and "failed" not in summary and "error" not in summary, summary
