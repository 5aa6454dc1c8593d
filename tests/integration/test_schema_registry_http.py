"""The Schema Registry over HTTP on a real broker: Confluent's routes, content types, error
bodies and codes as its clients see them (confluent-kafka's SchemaRegistryClient and raw
HTTP), the ``_schemas`` topic it writes, and a reset that empties it."""

from __future__ import annotations

import http.client
import json

import pytest

from kipper.client import admin
from kipper.client.blocking import connect_any
from kipper.testing import EmbeddedBroker
from tests.support import requires

requires.module("avro", "schema-registry")
requires.module("confluent_kafka.schema_registry", "interop")
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient  # noqa: E402
from confluent_kafka.schema_registry.error import SchemaRegistryError  # noqa: E402

V1 = "application/vnd.schemaregistry.v1+json"
USER = json.dumps({"type": "record", "name": "User", "namespace": "ex", "fields": [{"name": "name", "type": "string"}]})


@pytest.fixture(scope="module")
def registry():
    with EmbeddedBroker({"schema.registry.listeners": "http://127.0.0.1:0"}) as broker:
        yield broker


@pytest.fixture
def client(registry):
    return SchemaRegistryClient({"url": registry.schema_registry_url})


def raw(registry, method: str, path: str, body=None, content_type: str | None = V1) -> tuple[int, str, object]:
    host, port = registry.schema_registry_url.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    headers = {"Accept": V1}
    if content_type:
        headers["Content-Type"] = content_type
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = text
    return response.status, response.getheader("Content-Type"), parsed


def test_answers_are_confluents_json_with_its_content_type(registry):
    status, ctype, body = raw(registry, "GET", "/schemas/types")
    assert (status, ctype, body) == (200, V1, ["JSON", "PROTOBUF", "AVRO"])
    assert raw(registry, "GET", "/config")[2] == {"compatibilityLevel": "BACKWARD"}
    assert raw(registry, "GET", "/mode")[2] == {"mode": "READWRITE"}


@pytest.mark.parametrize("method, path, body, ctype, status, code", [
    ("GET", "/nowhere", None, V1, 404, 404),
    ("PATCH", "/subjects", None, V1, 405, 405),
    ("DELETE", "/schemas/types", None, V1, 405, 405),
    ("GET", "/schemas/ids/999999", None, V1, 404, 40403),
    ("GET", "/subjects/none-such/versions", None, V1, 404, 40401),
    ("POST", "/subjects/s/versions", b"not json", V1, 400, 400),
    ("POST", "/subjects/s/versions", {"schema": USER}, "text/plain", 415, 415),
    ("POST", "/subjects/s/versions", {"schema": "{\"type\": \"nope\"}"}, "application/json", 422, 42201),
    ("PUT", "/config", {"compatibility": "SOMETIMES"}, V1, 422, 42203),
    ("PUT", "/mode", {"mode": "ASLEEP"}, V1, 422, 42204),
    ("GET", "/subjects/none-such/versions/zero", None, V1, 422, 42202),
])
def test_failures_are_confluents_error_bodies(registry, method, path, body, ctype, status, code):
    got_status, got_type, got = raw(registry, method, path, body, ctype)
    assert (got_status, got_type) == (status, V1)
    assert got["error_code"] == code and isinstance(got["message"], str) and got["message"]


def test_register_look_up_and_read_back_with_confluents_client(client):
    schema = Schema(USER, "AVRO")
    registered = client.register_schema_full_response("http-users-value", schema)
    assert registered.version == 1 and registered.guid
    found = client.lookup_schema("http-users-value", schema)
    assert (found.schema_id, found.version) == (registered.schema_id, 1)
    by_id = client.get_schema(registered.schema_id)
    assert json.loads(by_id.schema_str) == json.loads(USER)
    assert client.get_schema_by_guid(registered.guid).schema_str == by_id.schema_str
    assert client.get_subjects_by_schema_id(registered.schema_id) == ["http-users-value"]
    assert [(v.subject, v.version) for v in client.get_schema_versions(registered.schema_id)] == \
        [("http-users-value", 1)]
    assert client.get_latest_version("http-users-value").schema_id == registered.schema_id


def test_references_and_referencedby(client, registry):
    address = json.dumps({"type": "record", "name": "Address", "namespace": "ex",
                          "fields": [{"name": "city", "type": "string"}]})
    person = json.dumps({"type": "record", "name": "Person", "namespace": "ex",
                         "fields": [{"name": "home", "type": "ex.Address"}]})
    client.register_schema("http-address", Schema(address, "AVRO"))
    ref = SchemaReference("ex.Address", "http-address", 1)
    person_id = client.register_schema("http-person", Schema(person, "AVRO", [ref]))
    assert client.get_referenced_by("http-address", 1) == [person_id]
    assert raw(registry, "GET", f"/schemas/ids/{person_id}")[2]["references"] == \
        [{"name": "ex.Address", "subject": "http-address", "version": 1}]
    with pytest.raises(SchemaRegistryError) as refused:
        client.delete_subject("http-address")
    assert refused.value.error_code == 42206


def test_compatibility_check_over_http(client):
    client.register_schema("http-compat", Schema(USER, "AVRO"))
    newer = json.loads(USER)
    newer["fields"].append({"name": "age", "type": "int"})
    assert client.test_compatibility("http-compat", Schema(json.dumps(newer), "AVRO"), verbose=True) is False
    newer["fields"][-1]["default"] = 0
    assert client.test_compatibility("http-compat", Schema(json.dumps(newer), "AVRO")) is True


def test_subject_names_with_slashes_and_the_raw_schema_route(registry):
    status, _, body = raw(registry, "POST", "/subjects/a%2Fb/versions", {"schema": USER})
    assert status == 200
    status, _, text = raw(registry, "GET", "/subjects/a%2Fb/versions/latest/schema")
    assert status == 200 and json.loads(json.dumps(text)) == json.loads(USER)
    assert "a/b" in raw(registry, "GET", "/subjects")[2]


def test_the_schemas_topic_is_compacted_with_one_partition(registry, client):
    client.register_schema("http-topic-check", Schema(USER, "AVRO"))
    with connect_any(registry.bootstrap_servers) as conn:
        topic = admin.metadata(conn, ["_schemas"]).topics[0]
        configs = admin.describe_configs(conn, [admin.ConfigResource(admin.ConfigResourceType.TOPIC, "_schemas")]).results[0].configs
    assert len(topic.partitions) == 1
    assert {c.name: c.value for c in configs}["cleanup.policy"] == "compact"


def test_reset_empties_the_registry():
    with EmbeddedBroker({"schema.registry.listeners": "http://127.0.0.1:0"}) as broker:
        client = SchemaRegistryClient({"url": broker.schema_registry_url})
        client.register_schema("before-reset", Schema(USER, "AVRO"))
        broker.reset()
        assert SchemaRegistryClient({"url": broker.schema_registry_url}).get_subjects() == []


def test_a_broker_without_the_listener_has_no_registry():
    with EmbeddedBroker() as broker:
        with pytest.raises(RuntimeError, match="no Schema Registry"):
            broker.schema_registry_url
