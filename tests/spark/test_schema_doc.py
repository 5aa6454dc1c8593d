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
        while isinstance(kind, MapType):  # a map of maps (api_versions): every level's keys are data
            out.add(prefix + f.name)
            kind = kind.valueType
        while isinstance(kind, ArrayType):
            kind = kind.elementType
        if isinstance(kind, StructType):
            out |= map_fields(kind, prefix + f.name + ".")
    return out


def test_a_line_written_by_the_broker_fits_the_schema(tmp_path):
    """Every key of a real snapshot is a schema field (nothing the reader would drop silently)."""
    from kipper.broker.server import open_engines
    from kipper.broker.config import load
    from kipper.broker.metrics_dump import MetricsDumper

    m = open_engines(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"})).metrics
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
                    if isinstance(inner, dict) and any(n.startswith(name + ".") for n in names):  # a struct's
                        walk(inner, name + ".")
            elif isinstance(value, dict):
                walk(value, name + ".")
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                walk(value[0], name + ".")
    walk(line)


def conforms(value, kind, name="line") -> list[str]:
    """Where ``value`` does not have the type Spark's reader expects (it would turn
    the whole line into a corrupt record)."""
    from pyspark.sql.types import (
        ArrayType, DoubleType, IntegerType, LongType, MapType, StringType, StructType,
    )

    if value is None:
        return []
    if isinstance(kind, StructType):
        if not isinstance(value, dict):
            return [name]
        fields = {f.name: f.dataType for f in kind.fields}
        return [bad for k, v in value.items() if k in fields for bad in conforms(v, fields[k], f"{name}.{k}")]
    if isinstance(kind, MapType):
        if not isinstance(value, dict):
            return [name]
        return [bad for k, v in value.items() for bad in conforms(v, kind.valueType, f"{name}[{k}]")]
    if isinstance(kind, ArrayType):
        if not isinstance(value, list):
            return [name]
        return [bad for i, v in enumerate(value) for bad in conforms(v, kind.elementType, f"{name}[{i}]")]
    ok = {LongType: (int,), IntegerType: (int,), DoubleType: (int, float), StringType: (str,)}
    types = next((t for k, t in ok.items() if isinstance(kind, k)), None)
    return [] if types is None or (isinstance(value, types) and not isinstance(value, bool)) else [name]


def test_every_value_of_a_busy_line_has_the_type_the_schema_reads(tmp_path):
    """A named user's quota, a tracked user, transactions and producer ids: nothing
    in the line may make Spark's reader drop it as corrupt."""
    from kipper.broker.server import open_engines
    from kipper.broker.config import load
    from kipper.broker.metrics_dump import MetricsDumper

    broker = open_engines(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"}))
    broker.quotas.manager.set_quotas({"alice": 2.0}, 5.0)
    broker.quotas.manager.check("alice", 7, 1_000)
    broker.txn.coordinator.init_producer_id("app", 60_000, -1, -1, 0)
    broker.txn.coordinator.init_producer_id("app", 60_000, -1, -1, 0)
    m = broker.metrics
    m.record_in("t", 0, 10, 1)
    m.observe_request("Produce", 100)
    line = MetricsDumper(m, 1, tmp_path, max_bytes=1 << 20, max_files=2).snapshot()
    assert line["quotas"]["quotas"] == {"alice": 2.0} and line["quotas"]["users"]
    assert line["transactions"]["epoch_bumps"] == 1 and line["producer_ids"]["allocated"] == 1
    assert conforms(line, DUMP_LINE) == []
