"""What the registry costs a broker that does not use it (nothing of it is imported), what a
broker with it imports at start (not the schema libraries: they load with the first schema
of their type), and the refusal to start when the listener is set without the extra."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.support import requires
from tests.support.broker import ROOT

START_AND_LIST = textwrap.dedent("""
    import asyncio, json, sys
    from kipper.broker.config import load
    from kipper.broker.server import BrokerServer

    async def main():
        server = BrokerServer(load(None, json.loads(sys.argv[1]), environ={}))
        await server.start()
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("avro", "jsonschema", "grpc_tools")
                        or m.startswith("google.protobuf") or m.startswith("kipper.broker.schema_registry") or m.startswith("kipper.broker.registry_http"))
        await server.stop()
        print(json.dumps(loaded))

    asyncio.run(main())
""")


def loaded_modules(overrides: dict) -> list[str]:
    import json

    done = subprocess.run([sys.executable, "-c", START_AND_LIST, json.dumps(overrides)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_broker_without_the_registry_imports_none_of_it():
    assert loaded_modules({"listeners": "PLAINTEXT://127.0.0.1:0"}) == []


def test_a_broker_with_the_registry_loads_the_schema_libraries_only_when_a_schema_comes():
    requires.module("avro", "schema-registry")
    loaded = loaded_modules({"listeners": "PLAINTEXT://127.0.0.1:0",
                             "schema.registry.listeners": "http://127.0.0.1:0"})
    assert "kipper.broker.schema_registry.engine" in loaded and "kipper.broker.registry_http.server" in loaded
    assert not [m for m in loaded if not m.startswith("kipper.")], loaded


BLOCK_AVRO = textwrap.dedent("""
    import sys

    class Missing:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("avro", "grpc_tools"):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, Missing())
""")


def test_the_listener_without_the_extra_refuses_to_start_and_says_what_to_install(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCK_AVRO)
    done = subprocess.run([sys.executable, "-m", "kipper", "broker", "--override", "listeners=PLAINTEXT://127.0.0.1:0",
                           "--override", "schema.registry.listeners=http://127.0.0.1:0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 1
    assert "pip install 'kipper[schema-registry]'" in done.stderr
    assert "avro" in done.stderr and "grpcio-tools" in done.stderr


def test_an_illegal_topic_for_the_registry_refuses_to_start():
    requires.module("avro", "schema-registry")
    done = subprocess.run([sys.executable, "-m", "kipper", "broker", "--override", "listeners=PLAINTEXT://127.0.0.1:0",
                           "--override", "schema.registry.listeners=http://127.0.0.1:0",
                           "--override", "schema.registry.topic=no spaces"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "schema.registry.topic: Topic name is invalid" in done.stderr
