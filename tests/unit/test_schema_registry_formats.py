"""The three schema types: the canonical text the registry stores (one text per schema,
whatever the spelling), what each library refuses, references, and Protobuf sent as a
base64 descriptor (as confluent-kafka's serializer sends it) becoming .proto text that
compiles back to the same descriptor."""

from __future__ import annotations

import base64
import json

import pytest

from kipper.broker.schema_registry import formats
from kipper.broker.schema_registry.model import Reference
from tests.support import requires

requires.module("avro", "schema-registry")
requires.module("jsonschema", "schema-registry")
requires.module("grpc_tools", "schema-registry")


def parse(schema_type: str, text: str, deps=None, refs=(), is_new=True):
    return formats.parse(schema_type, text, deps or {}, tuple(refs), is_new=is_new)


def test_avro_canonical_text_is_java_avros_compact_form():
    spelled = """{ "namespace": "ex", "type": "record", "name": "User", "doc": "a user",
                   "fields": [ {"type": "string", "name": "name", "default": "x"},
                               {"name": "home", "type": {"type": "record", "name": "Home", "fields": []}},
                               {"name": "work", "type": "Home"},
                               {"name": "kind", "type": {"type": "enum", "name": "K", "namespace": "other",
                                                         "symbols": ["A"]}} ] }"""
    assert parse("AVRO", spelled).canonical == (
        '{"type":"record","name":"User","namespace":"ex","doc":"a user","fields":['
        '{"name":"name","type":"string","default":"x"},'
        '{"name":"home","type":{"type":"record","name":"Home","fields":[]}},'
        '{"name":"work","type":"Home"},'
        '{"name":"kind","type":{"type":"enum","name":"K","namespace":"other","symbols":["A"]}}]}')
    assert parse("AVRO", '{"type": "string"}').canonical == '"string"'


@pytest.mark.parametrize("bad", [
    '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "array", "items": "string"}]}',
    '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": "one"}]}',
    '{"type": "enum", "name": "E", "symbols": ["A", "A"]}',
    '["null", "null"]',
    "not json",
])
def test_avro_refusals(bad):
    with pytest.raises(formats.InvalidSchema, match="Invalid schema of type AVRO"):
        parse("AVRO", bad)


def test_avro_references_name_types_defined_elsewhere_and_stay_names():
    address = '{"type": "record", "name": "Address", "namespace": "ex", "fields": []}'
    person = '{"type": "record", "name": "Person", "namespace": "ex", "fields": [{"name": "a", "type": "Address"}]}'
    parsed = parse("AVRO", person, {"ex.Address": address}, [Reference("ex.Address", "address", 1)])
    assert json.loads(parsed.canonical)["fields"][0]["type"] == "Address"
    assert json.loads(parsed.formatted("resolved"))["fields"][0]["type"]["name"] == "Address"


def test_avro_normalized_form_does_not_depend_on_spelling():
    a = '{"type":"record","name":"R","namespace":"ex","fields":[{"name":"f","type":"int","doc":"d"}]}'
    b = '{"name":"ex.R","fields":[{"doc":"d","type":{"type":"int"},"name":"f"}],"type":"record"}'
    assert parse("AVRO", a).normalized().canonical == parse("AVRO", b).normalized().canonical


def test_json_schema_is_checked_against_its_drafts_metaschema():
    with pytest.raises(formats.InvalidSchema):
        parse("JSON", '{"type": "object", "properties": {"a": {"type": 12}}}')
    with pytest.raises(formats.InvalidSchema):  # draft 2020-12's keyword misused
        parse("JSON", '{"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": 3}')
    assert parse("JSON", '{ "type" : "string" }').canonical == '{"type":"string"}'


def test_json_refs_must_resolve_within_the_schema_or_its_references():
    with pytest.raises(formats.InvalidSchema, match="cannot be resolved"):
        parse("JSON", '{"$ref": "http://example.com/missing.json"}')
    customer = '{"$id": "http://example.com/customer.json", "type": "object"}'
    order = '{"type": "object", "properties": {"c": {"$ref": "http://example.com/customer.json"}}}'
    assert parse("JSON", order, {"http://example.com/customer.json": customer},
                 [Reference("http://example.com/customer.json", "customer", 1)])
    recursive = '{"type": "object", "properties": {"next": {"$ref": "#"}}}'
    assert parse("JSON", recursive).backward_errors(parse("JSON", recursive)) == []


PROTO = """syntax = "proto3";
package ex;
import "google/protobuf/timestamp.proto";
message Order {
  string id = 1;
  google.protobuf.Timestamp at = 2;
  map<string, int32> counts = 3;
  oneof pay { string card = 4; string cash = 5; }
  optional int32 priority = 6;
  reserved 10 to 12;
  enum State { NEW = 0; DONE = 1; }
  State state = 7;
}
"""


def test_protobuf_text_compiles_and_prints_one_canonical_text():
    parsed = parse("PROTOBUF", PROTO)
    assert parse("PROTOBUF", parsed.canonical).canonical == parsed.canonical
    assert "map<string, int32> counts = 3;" in parsed.canonical
    assert "optional int32 priority = 6;" in parsed.canonical
    assert "oneof pay {" in parsed.canonical


def test_protobuf_sent_as_a_base64_descriptor_is_the_same_schema():
    text = parse("PROTOBUF", PROTO)
    descriptor = text.formatted("serialized")
    from_descriptor = parse("PROTOBUF", descriptor)
    assert from_descriptor.canonical == text.canonical
    decoded = base64.b64decode(from_descriptor.formatted("serialized"))
    assert decoded == base64.b64decode(descriptor)


def test_protoc_refuses_what_the_language_refuses():
    with pytest.raises(formats.InvalidSchema, match='"strin" is not defined'):
        parse("PROTOBUF", 'syntax = "proto3"; message M { strin a = 1; }')
    with pytest.raises(formats.InvalidSchema, match="already been used"):
        parse("PROTOBUF", 'syntax = "proto3"; message M { int32 a = 1; int32 b = 1; }')
    with pytest.raises(formats.InvalidSchema, match="not found"):
        parse("PROTOBUF", 'syntax = "proto3"; import "other.proto"; message M { int32 a = 1; }')


def test_protobuf_imports_come_from_the_references():
    other = 'syntax = "proto3"; package dep; message D { int32 x = 1; }'
    main = 'syntax = "proto3"; import "dep/other.proto"; message M { dep.D d = 1; }'
    parsed = parse("PROTOBUF", main, {"dep/other.proto": other}, [Reference("dep/other.proto", "other", 1)])
    assert ".dep.D d = 1;" in parsed.canonical


def test_an_unknown_type_is_invalid():
    with pytest.raises(formats.InvalidSchema, match="Invalid schema type XML"):
        parse("XML", "<x/>")


def test_protobuf_custom_options_declared_in_a_reference_survive_both_ways():
    ext = ('syntax = "proto3"; package e; import "google/protobuf/descriptor.proto";\n'
           'message Meta { string doc = 1; }\nextend google.protobuf.FieldOptions { Meta field_meta = 1160; }')
    main = 'syntax = "proto3"; import "ext.proto"; message X { string a = 1 [(e.field_meta) = { doc: "hi" }]; }'
    deps, refs = {"ext.proto": ext}, [Reference("ext.proto", "ext", 1)]
    text = parse("PROTOBUF", main, deps, refs)
    assert '(e.field_meta) = { doc: "hi" }' in text.canonical
    assert parse("PROTOBUF", text.formatted("serialized"), deps, refs).canonical == text.canonical
