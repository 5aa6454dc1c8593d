"""docs/SCHEMA_REGISTRY.md's worked examples, run as written: each Python block is a test
file of a user's suite that names only the plugin's fixtures; the Protobuf one is compiled
with the documented protoc command first."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.support import requires

requires.module("avro", "schema-registry")
requires.module("confluent_kafka.schema_registry", "interop")

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Worked examples"


def blocks() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "SCHEMA_REGISTRY.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    section = text[start:text.index("\n## ", start + len(SECTION))]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


def test_the_documented_examples_pass_in_a_users_suite(pytester):
    found = blocks()
    assert [kind for kind, _ in found] == ["python", "python", "proto", "sh", "python"]
    (avro, json_schema, proto, protoc, protobuf) = (body for _, body in found)
    pytester.makepyfile(test_avro_orders=avro, test_json_orders=json_schema, test_protobuf_orders=protobuf)
    (pytester.path / "order.proto").write_text(proto)
    command = shlex.split(protoc)
    assert command[:3] == ["python", "-m", "grpc_tools.protoc"]
    subprocess.run([sys.executable, *command[1:]], cwd=pytester.path, check=True, timeout=60)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=3)
