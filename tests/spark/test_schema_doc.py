"""docs/METRICS.md documents every field of the Spark schema of a dump line."""

from __future__ import annotations

from pathlib import Path

from kipper.spark_jobs.schema import DUMP_LINE, field_names

DOC = Path(__file__).resolve().parents[2] / "docs" / "METRICS.md"


def test_every_schema_field_is_documented():
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in field_names(DUMP_LINE) if name != "_corrupt_record" and f"`{name}`" not in text]
    assert not missing


def map_fields(schema, prefix: str = "") -> set[str]:
    from pyspark.sql.types import ArrayType, MapType, StructType

    out = set()
    for f in schema.fields:
        kind = f.dataType
        if isinstance(kind, MapType):
            out.add(prefix + f.name)
            kind = kind.valueType
        while isinstance(kind, ArrayType):
            kind = kind.elementType
        if isinstance(kind, StructType):
            out |= map_fields(kind, prefix + f.name + ".")
    return out


def test_a_line_written_by_the_broker_fits_the_schema(tmp_path):
    """Every key of a real snapshot is a schema field (nothing the reader would drop silently)."""
    from kipper.broker.composition import build_broker
    from kipper.broker.config import load
    from kipper.broker.metrics_dump import MetricsDumper

    m = build_broker(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"})).metrics
    m.record_in("t", 0, 10, 1)
    m.observe_request("Produce", 100)
    line = MetricsDumper(m, 1, tmp_path, max_bytes=1 << 20, max_files=2).snapshot()
    names = set(field_names(DUMP_LINE))

    maps = map_fields(DUMP_LINE)  # their keys are data, not fields

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
