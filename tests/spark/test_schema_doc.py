"""docs/METRICS.md documents every field of the Spark schema of a dump line."""

from __future__ import annotations

from pathlib import Path

from kipper.spark_jobs.schema import DUMP_LINE, field_names

DOC = Path(__file__).resolve().parents[2] / "docs" / "METRICS.md"


def test_every_schema_field_is_documented():
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in field_names(DUMP_LINE) if name != "_corrupt_record" and f"`{name}`" not in text]
    assert not missing


def test_a_line_written_by_the_broker_fits_the_schema(tmp_path):
    """Every key of a real snapshot is a schema field (nothing the reader would drop silently)."""
    from kipper.broker.metrics import Metrics
    from kipper.broker.metrics_dump import MetricsDumper
    from kipper.broker.producer_state.registry import ProducerStates

    m = Metrics()
    m.providers["producer_state"] = ProducerStates("latest", 10, 1000).snapshot
    m.record_in("t", 0, 10, 1)
    m.observe_request("Produce", 100)
    line = MetricsDumper(m, 1, tmp_path, max_bytes=1 << 20, max_files=2).snapshot()
    names = set(field_names(DUMP_LINE))

    maps = {"apis", "producer_state.partitions", "rejected"}  # their keys are data, not fields

    def walk(obj, prefix=""):
        for key, value in obj.items():
            name = prefix + key
            assert name in names, name
            if name in maps:
                for inner in value.values():
                    if isinstance(inner, dict):
                        walk(inner, name + ".")
            elif isinstance(value, dict):
                walk(value, name + ".")
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                walk(value[0], name + ".")
    walk(line)
