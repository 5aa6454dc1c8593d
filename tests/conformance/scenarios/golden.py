"""The golden frames of tests/golden (request frames captured from confluent-kafka, aiokafka
and kafka-python, and their admin calls) replayed byte for byte to both brokers, after the
topics they name exist; and each captured record batch produced and fetched back."""

from __future__ import annotations

import io
import struct
from pathlib import Path

from kipper.protocol.header import REQUEST_HEADERS
from kipper.protocol.messages import APIS
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import register

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
BY_NAME = {api.name: api for api in APIS.values()}
PARTITIONS = 2


def frames() -> list[Path]:
    out = []
    for client in ("confluent-kafka", "aiokafka", "kafka-python"):
        out += sorted((GOLDEN / client).glob("*.hex"))
        out += sorted((GOLDEN / "admin" / client).glob("*.hex"))
    return out


def topics_named(body) -> set[str]:
    """Topic names anywhere in a request body (fields called topic or name in topic arrays)."""
    found = set()

    def walk(obj, key=""):
        if isinstance(obj, dict):
            for kk, v in obj.items():
                if kk in ("topic", "name") and isinstance(v, str) and key in ("topics", "topic_data", "v3_and_below_topics"):
                    found.add(v)
                if kk == "topic_names" and isinstance(v, list):
                    found.update(x for x in v if isinstance(x, str))
                walk(v, kk)
        elif isinstance(obj, list):
            for v in obj:
                walk(v, key)
    walk(body)
    return {t for t in found if t and not t.startswith("__")}


def decode_request(raw: bytes):
    key, version = struct.unpack_from(">hh", raw, 0)
    api = APIS[key]
    stream = io.BytesIO(raw)
    REQUEST_HEADERS[api.request_header_version(version)].parse_stream(stream)
    return api, version, api.request_schema(version).parse_stream(stream)


def _replay(path: Path):
    raw = bytes.fromhex(path.read_text().strip())

    def run_it(run):
        api, version, body = decode_request(raw)
        for topic in sorted(topics_named(body)):
            if api.key in (19, 20):  # CreateTopics / DeleteTopics name topics they act on
                continue
            _ensure(run, topic)
        run.call_frame(api, version, struct.pack(">i", len(raw)) + raw, label=f"golden {path.parent.name}/{path.stem}")
    return run_it


def _ensure(run, topic: str) -> None:
    created = run.state.setdefault("created", set())
    if topic in created:
        return
    run.call(k.CREATE_TOPICS, k.top(k.CREATE_TOPICS), {
        "topics": [{"name": topic, "num_partitions": PARTITIONS, "replication_factor": 1, "assignments": [],
                    "configs": []}], "timeout_ms": 30000, "validate_only": False}, record=False)
    k.wait_for_leaders(run, topic, PARTITIONS)
    created.add(topic)


def _batch(path: Path):
    data = bytes.fromhex(path.read_text().strip())

    def run_it(run):
        t = k.create_topic(run)
        k.produce(run, t, data, label=f"golden batch {path.stem}")
        k.fetch(run, t, 0, label="fetch it back")
    return run_it


for _path in frames():
    register(f"golden/{_path.parent.name}/{_path.stem}", _replay(_path))
for _path in sorted((GOLDEN / "batches").glob("*.hex")):
    register(f"golden/batch/{_path.stem}", _batch(_path))
