"""The compatibility table: for each schema type and level, the changes Confluent's
documentation names as compatible or not, answered the same way by the check route and by
registration (a refused registration is a 409).

Confluent's documentation: BACKWARD allows deleting fields and adding optional ones (the
new schema reads the old data); FORWARD adding fields and deleting optional ones (the old
schema reads the new data); FULL only optional fields either way; the _TRANSITIVE forms
check every earlier version, the others only the latest; NONE accepts everything. Avro's
"optional" is a field with a default; JSON Schema's depends on the content model (an open
object accepts any property, so adding one breaks BACKWARD; a closed one does not);
Protobuf fields are optional, so adding and removing fields is compatible, changing a
field's wire type is not, nor removing a message or changing the package.
"""

from __future__ import annotations

import json

import pytest

from kipper.broker.schema_registry import errors
from kipper.broker.schema_registry.engine import SchemaRegistry
from tests.support import requires

requires.module("avro", "schema-registry")
requires.module("jsonschema", "schema-registry")
requires.module("grpc_tools", "schema-registry")

LEVELS = ("BACKWARD", "FORWARD", "FULL")


def avro(*fields) -> str:
    return json.dumps({"type": "record", "name": "R", "namespace": "ex", "fields": list(fields)})


def f(name, type_, **extra) -> dict:
    return {"name": name, "type": type_, **extra}


def js(properties: dict, closed: bool = False, **extra) -> str:
    doc = {"type": "object", "properties": properties, **extra}
    if closed:
        doc["additionalProperties"] = False
    return json.dumps(doc)


def proto(body: str, package: str = "ex") -> str:
    return f'syntax = "proto3";\npackage {package};\n{body}\n'


S, I = {"type": "string"}, {"type": "integer"}

# (name, schema type, history (oldest first), new schema, {level: compatible})
TABLE = [
    ("avro: add a field with a default", "AVRO", [avro(f("a", "int"))],
     avro(f("a", "int"), f("b", "int", default=0)), {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("avro: add a field without a default", "AVRO", [avro(f("a", "int"))],
     avro(f("a", "int"), f("b", "int")), {"BACKWARD": False, "FORWARD": True, "FULL": False}),
    ("avro: delete a field without a default", "AVRO", [avro(f("a", "int"), f("b", "int"))],
     avro(f("a", "int")), {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("avro: delete a field with a default", "AVRO", [avro(f("a", "int"), f("b", "int", default=0))],
     avro(f("a", "int")), {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("avro: int promoted to long", "AVRO", [avro(f("a", "int"))], avro(f("a", "long")),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("avro: int changed to string", "AVRO", [avro(f("a", "int"))], avro(f("a", "string")),
     {"BACKWARD": False, "FORWARD": False, "FULL": False, "NONE": True}),
    ("avro: an enum symbol added", "AVRO",
     [avro(f("e", {"type": "enum", "name": "E", "symbols": ["A", "B"]}))],
     avro(f("e", {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]})),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("avro: record renamed", "AVRO", [avro(f("a", "int"))],
     json.dumps({"type": "record", "name": "Other", "namespace": "ex", "fields": [f("a", "int")]}),
     {"BACKWARD": False, "FORWARD": False, "FULL": False}),
    ("avro: compatible with the latest, not with the first", "AVRO",
     [avro(f("a", "string")), avro(f("x", "int", default=0))], avro(f("a", "int", default=0)),
     {"BACKWARD": True, "BACKWARD_TRANSITIVE": False}),
    ("avro: the first cannot read it, the latest can", "AVRO",
     [avro(f("x", "int"), f("a", "int", default=0)), avro(f("x", "int"))], avro(f("x", "int"), f("a", "string")),
     {"FORWARD": True, "FORWARD_TRANSITIVE": False}),
    ("avro: fully compatible with the latest only", "AVRO",
     [avro(f("x", "int"), f("a", "int", default=0)), avro(f("x", "int"))],
     avro(f("x", "int"), f("a", "string", default="")), {"FULL": True, "FULL_TRANSITIVE": False}),
    ("json: an optional property added to an open object", "JSON", [js({"a": S})], js({"a": S, "b": I}),
     {"BACKWARD": False, "FORWARD": True, "FULL": False}),
    ("json: an optional property added to a closed object", "JSON", [js({"a": S}, closed=True)],
     js({"a": S, "b": I}, closed=True), {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("json: a property removed from an open object", "JSON", [js({"a": S, "b": I})], js({"a": S}),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("json: a property removed from a closed object", "JSON", [js({"a": S, "b": I}, closed=True)],
     js({"a": S}, closed=True), {"BACKWARD": False, "FORWARD": True, "FULL": False}),
    ("json: a required property added to a closed object", "JSON", [js({"a": S}, closed=True)],
     js({"a": S, "b": I}, closed=True, required=["b"]), {"BACKWARD": False, "FORWARD": False, "FULL": False}),
    ("json: integer widened to number", "JSON", [json.dumps(I)], json.dumps({"type": "number"}),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("json: an enum value added", "JSON", [json.dumps({"enum": ["a", "b"]})], json.dumps({"enum": ["a", "b", "c"]}),
     {"BACKWARD": True, "FORWARD": False, "FULL": False}),
    ("json: a string made nullable", "JSON", [json.dumps(S)], json.dumps({"type": ["string", "null"]}),
     {"BACKWARD": True, "FORWARD": False}),
    ("json: nullable after a string, not after an integer", "JSON", [json.dumps(I), json.dumps(S)],
     json.dumps({"type": ["string", "null"]}), {"BACKWARD": True, "BACKWARD_TRANSITIVE": False}),
    ("proto: a field added", "PROTOBUF", [proto("message M { int32 a = 1; }")],
     proto("message M { int32 a = 1; string b = 2; }"), {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("proto: a field removed", "PROTOBUF", [proto("message M { int32 a = 1; string b = 2; }")],
     proto("message M { int32 a = 1; }"), {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("proto: a field renamed", "PROTOBUF", [proto("message M { int32 a = 1; }")],
     proto("message M { int32 b = 1; }"), {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("proto: int32 to int64 (one wire type)", "PROTOBUF", [proto("message M { int32 a = 1; }")],
     proto("message M { int64 a = 1; }"), {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("proto: int32 to sint32 (zigzag)", "PROTOBUF", [proto("message M { int32 a = 1; }")],
     proto("message M { sint32 a = 1; }"), {"BACKWARD": False, "FORWARD": False, "FULL": False}),
    ("proto: string to bytes", "PROTOBUF", [proto("message M { string a = 1; }")],
     proto("message M { bytes a = 1; }"), {"BACKWARD": True, "FORWARD": True, "FULL": True}),
    ("proto: int32 to string", "PROTOBUF", [proto("message M { int32 a = 1; }")],
     proto("message M { string a = 1; }"), {"BACKWARD": False, "FORWARD": False, "FULL": False, "NONE": True}),
    ("proto: a message removed", "PROTOBUF", [proto("message A { int32 a = 1; }\nmessage B { int32 b = 1; }")],
     proto("message A { int32 a = 1; }"), {"BACKWARD": False, "FORWARD": True, "FULL": False}),
    ("proto: the package changed", "PROTOBUF", [proto("message A { int32 a = 1; }")],
     proto("message A { int32 a = 1; }", package="other"), {"BACKWARD": False, "FORWARD": False, "FULL": False}),
    ("proto: one field moved into a new oneof", "PROTOBUF", [proto("message M { int32 a = 1; int32 b = 2; }")],
     proto("message M { int32 a = 1; oneof o { int32 b = 2; } }"), {"BACKWARD": True, "FORWARD": True}),
    ("proto: two fields moved into a oneof", "PROTOBUF", [proto("message M { int32 a = 1; int32 b = 2; }")],
     proto("message M { oneof o { int32 a = 1; int32 b = 2; } }"), {"BACKWARD": False, "FULL": False}),
    ("proto: a field's type changed since the first version", "PROTOBUF",
     [proto("message M { int32 a = 1; }"), proto("message M { string a = 1; }")],
     proto("message M { string a = 1; int32 b = 2; }"), {"BACKWARD": True, "BACKWARD_TRANSITIVE": False,
                                                          "FULL_TRANSITIVE": False}),
]
CASES = [pytest.param(schema_type, history, new, level, expected, id=f"{name} [{level}]")
         for name, schema_type, history, new, answers in TABLE for level, expected in answers.items()]


def registry_with(schema_type: str, history: list[str], level: str) -> SchemaRegistry:
    engine = SchemaRegistry()

    def commit(change):
        for key, value in change.records:
            engine.state.apply(key, value)

    commit(engine.set_config(None, {"compatibility": "NONE"}))  # the history as it is
    for schema in history:
        commit(engine.register("s", {"schema": schema, "schemaType": schema_type}))
    commit(engine.set_config(None, {"compatibility": level}))
    return engine


@pytest.mark.parametrize("schema_type, history, new, level, expected", CASES)
def test_compatibility_table(schema_type, history, new, level, expected):
    engine = registry_with(schema_type, history, level)
    body = {"schema": new, "schemaType": schema_type}
    checked = engine.compatibility("s", None if level.endswith("TRANSITIVE") else "latest", body, verbose=True)
    assert checked["is_compatible"] is expected, checked["messages"]
    if expected:
        assert engine.register("s", body).records
    else:
        with pytest.raises(errors.RegistryError) as refused:
            engine.register("s", body)
        assert (refused.value.status, refused.value.error_code) == (409, 409)


def test_every_level_of_every_type_is_in_the_table():
    covered = {(schema_type, level) for _, schema_type, _, _, answers in TABLE for level in answers}
    for schema_type in ("AVRO", "JSON", "PROTOBUF"):
        assert {level for t, level in covered if t == schema_type} >= {"BACKWARD", "FORWARD", "FULL",
                                                                       "BACKWARD_TRANSITIVE"}
    assert {level for _, level in covered} == {"NONE", "BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE",
                                               "FORWARD_TRANSITIVE", "FULL_TRANSITIVE"}


def test_a_schema_of_another_type_is_incompatible():
    engine = registry_with("AVRO", [avro(f("a", "int"))], "BACKWARD")
    checked = engine.compatibility("s", "latest", {"schema": js({"a": S}), "schemaType": "JSON"}, verbose=True)
    assert checked == {"is_compatible": False, "messages": ["Incompatible because of different schema type",
                                                            "{validateFields: 'false', compatibility: 'BACKWARD'}"]}


def test_lenient_policy_accepts_an_optional_property_in_an_open_object():
    engine = registry_with("JSON", [js({"a": S})], "BACKWARD")
    for key, value in engine.set_config(None, {"compatibilityPolicy": "LENIENT"}).records:
        engine.state.apply(key, value)
    assert engine.compatibility("s", "latest", {"schema": js({"a": S, "b": I}), "schemaType": "JSON"}) == \
        {"is_compatible": True}
