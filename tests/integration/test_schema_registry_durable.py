"""The registry survives a crash of a durable broker, and compaction keeps its topic small.

A real ``kipper broker`` with log.dirs and its registry takes registrations and config
changes from confluent-kafka's SchemaRegistryClient in a thread; the broker is SIGKILLed
while they go on; after a restart on the same directories every acknowledged registration
is there with its subject, version and id, and every acknowledged config; the next id is
new. An in-memory broker starts again empty. With small segments the cleaner compacts
``_schemas`` (one record per key) and a restart reads the same registry from what is left.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from tests.support.broker import BrokerProcess, free_port
from tests.support.readback import read_topic
from tests.support import requires

requires.module("avro", "schema-registry")
requires.module("confluent_kafka.schema_registry", "interop")
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402

pytestmark = pytest.mark.broker_subprocess
SUBJECTS = [f"crash-{i}-value" for i in range(4)]


def schema(version: int) -> str:
    """Version n adds field f_n with a default: each is BACKWARD compatible with the last."""
    fields = [{"name": "id", "type": "long"}] + [{"name": f"f_{i}", "type": "int", "default": i}
                                                 for i in range(1, version)]
    return json.dumps({"type": "record", "name": "Event", "namespace": "crash", "fields": fields})


def start(overrides: dict, port: int, sr_port: int) -> tuple[BrokerProcess, str]:
    url = f"http://127.0.0.1:{sr_port}"
    broker = BrokerProcess({**overrides, "schema.registry.listeners": url}, port=port).start()
    return broker, url


def test_a_sigkilled_durable_broker_keeps_every_acknowledged_registration(tmp_path):
    overrides = {"log.dirs": str(tmp_path / "logs")}
    port, sr_port = free_port(), free_port()
    broker, url = start(overrides, port, sr_port)
    acknowledged: dict[tuple[str, int], int] = {}  # (subject, version) -> id
    configs: dict[str, str] = {}
    stop = threading.Event()
    failures: list[Exception] = []

    def load() -> None:
        sr = SchemaRegistryClient({"url": url, "max.retries": 0})
        version = 1
        while not stop.is_set():
            for subject in SUBJECTS:
                try:
                    registered = sr.register_schema_full_response(subject, Schema(schema(version), "AVRO"))
                    acknowledged[(subject, registered.version)] = registered.schema_id
                    if version % 5 == 0:
                        level = ("FULL", "BACKWARD", "FORWARD")[version % 3]
                        sr.set_compatibility(subject_name=subject, level=level)
                        configs[subject] = level
                except Exception as exc:  # the broker is gone: the test checks what was acknowledged
                    failures.append(exc)
                    return
            version += 1

    writer = threading.Thread(target=load, daemon=True)
    writer.start()
    deadline = time.time() + 60
    while len(acknowledged) < 120 and time.time() < deadline and writer.is_alive():
        time.sleep(0.05)
    broker.kill()  # SIGKILL while the writer is registering
    stop.set()
    writer.join(20)
    assert len(acknowledged) >= 120, failures[:1]

    broker, url = start(overrides, port, sr_port)
    try:
        sr = SchemaRegistryClient({"url": url})
        for (subject, version), schema_id in sorted(acknowledged.items()):
            got = sr.get_version(subject, version)
            assert (got.schema_id, got.version) == (schema_id, version), (subject, version)
            assert json.loads(got.schema.schema_str) == json.loads(schema(version))
        for subject, level in configs.items():
            assert sr.get_compatibility(subject_name=subject) == level
        assert set(SUBJECTS) <= set(sr.get_subjects())
        newest = max(acknowledged.values())
        fresh = sr.register_schema("after-the-crash", Schema(schema(1), "AVRO"))  # content seen before
        assert fresh in acknowledged.values()
        brand_new = json.dumps({"type": "record", "name": "New", "fields": [{"name": "x", "type": "int"}]})
        assert sr.register_schema("after-the-crash-2", Schema(brand_new, "AVRO")) > newest
    finally:
        broker.stop()


def test_an_in_memory_broker_starts_again_empty():
    port, sr_port = free_port(), free_port()
    broker, url = start({}, port, sr_port)
    SchemaRegistryClient({"url": url}).register_schema("gone-value", Schema(schema(1), "AVRO"))
    broker.stop()
    broker, url = start({}, port, sr_port)
    try:
        assert SchemaRegistryClient({"url": url}).get_subjects() == []
    finally:
        broker.stop()


def test_compaction_keeps_one_record_per_key_and_the_same_registry(tmp_path):
    overrides = {"log.dirs": str(tmp_path / "logs"), "log.segment.bytes": "4096", "log.cleaner.backoff.ms": "100",
                 "log.cleaner.delete.retention.ms": "0"}
    port, sr_port = free_port(), free_port()
    broker, url = start(overrides, port, sr_port)
    try:
        sr = SchemaRegistryClient({"url": url})
        sr.register_schema("compacted-value", Schema(schema(1), "AVRO"))
        levels = ("FULL", "BACKWARD", "FORWARD", "NONE")
        for i in range(200):  # one key, written 200 times
            sr.set_compatibility(subject_name="compacted-value", level=levels[i % 4])
        deadline = time.time() + 30
        while time.time() < deadline and len(read_topic(broker.bootstrap, "_schemas")[0]) > 100:
            time.sleep(0.2)
        kept = read_topic(broker.bootstrap, "_schemas")[0]
        assert len(kept) <= 100, f"{len(kept)} records of 201 left: not compacted"
    finally:
        broker.stop()
    broker, url = start(overrides, port, sr_port)
    try:
        sr = SchemaRegistryClient({"url": url})
        assert sr.get_compatibility(subject_name="compacted-value") == levels[199 % 4]
        assert sr.get_latest_version("compacted-value").version == 1
    finally:
        broker.stop()
