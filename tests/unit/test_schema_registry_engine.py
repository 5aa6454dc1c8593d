"""The registry engine without sockets: subjects, versions, ids, deletes, configs, modes and
references as Confluent's registry answers them, and the ``_schemas`` records it writes,
which replayed into an empty state give the same registry."""

from __future__ import annotations

import json

import pytest

from kipper.broker.schema_registry import errors
from kipper.broker.schema_registry import records as rec
from kipper.broker.schema_registry.engine import SchemaRegistry
from kipper.broker.schema_registry.state import RegistryState
from tests.support import requires

requires.module("avro", "schema-registry")

USER = {"type": "record", "name": "User", "namespace": "ex", "fields": [{"name": "name", "type": "string"}]}


def avro(**extra_fields) -> str:
    doc = json.loads(json.dumps(USER))
    doc["fields"] += [{"name": k, **v} for k, v in extra_fields.items()]
    return json.dumps(doc)


class Registry:
    """The engine and the records it wrote, applied as the store applies them."""

    def __init__(self):
        self.engine = SchemaRegistry(RegistryState())
        self.log: list[tuple[bytes, bytes | None]] = []

    def commit(self, change):
        for key, value in change.records:
            self.log.append((key.encode(), value))
            self.engine.state.apply(key, value)
        return change.answer

    def register(self, subject, schema, **body):
        return self.commit(self.engine.register(subject, {"schema": schema, **body}))

    def replayed(self) -> SchemaRegistry:
        state = RegistryState()
        for key, value in self.log:
            assert state.apply_raw(key, value)
        return SchemaRegistry(state)


def code(call) -> int:
    with pytest.raises(errors.RegistryError) as info:
        call()
    return info.value.error_code


def test_ids_are_global_and_one_per_schema_content():
    r = Registry()
    first = r.register("a-value", avro())
    again = r.register("a-value", json.dumps(USER, indent=4))  # whitespace is not content
    other_subject = r.register("b-value", avro())
    second = r.register("a-value", avro(age={"type": "int", "default": 0}))
    assert (first["id"], first["version"]) == (1, 1)
    assert again["id"] == 1 and again["version"] == 1
    assert other_subject["id"] == 1 and other_subject["version"] == 1
    assert (second["id"], second["version"]) == (2, 2)
    assert [v.subject for v in r.engine.id_versions(1)] == ["a-value", "b-value"]


def test_incompatible_schema_is_refused_with_409_and_writes_nothing():
    r = Registry()
    r.register("s", avro())
    before = len(r.log)
    with pytest.raises(errors.RegistryError) as info:
        r.register("s", avro(age={"type": "int"}))  # BACKWARD: a new field needs a default
    assert (info.value.status, info.value.error_code) == (409, 409)
    assert "incompatible with an earlier schema" in info.value.message
    assert len(r.log) == before


def test_error_codes_of_missing_things():
    r = Registry()
    r.register("s", avro())
    assert code(lambda: r.engine.version("nope", 1)) == 40401
    assert code(lambda: r.engine.version("s", 7)) == 40402
    assert code(lambda: r.engine.by_id(99)) == 40403
    assert code(lambda: r.engine.version("s", "a")) == 42202
    assert code(lambda: r.engine.lookup("nope", {"schema": avro()})) == 40401
    assert code(lambda: r.engine.lookup("s", {"schema": avro(x={"type": "int"})})) == 40403
    assert code(lambda: r.engine.register("s", {"schema": "{not json"})) == 42201
    assert code(lambda: r.engine.register("s", {"schema": avro(), "schemaType": "XML"})) == 42201
    assert code(lambda: r.engine.set_config(None, {"compatibility": "SIDEWAYS"})) == 42203
    assert code(lambda: r.engine.set_mode(None, {"mode": "SLEEPING"})) == 42204
    assert code(lambda: r.engine.get_config("s")) == 40408
    assert code(lambda: r.engine.get_mode("s")) == 40409


def test_an_invalid_default_is_refused_on_register_but_not_on_lookup():
    bad = avro(age={"type": "int", "default": "old"})
    r = Registry()
    assert code(lambda: r.engine.register("s", {"schema": bad})) == 42201
    r.register("s", avro())
    assert code(lambda: r.engine.lookup("s", {"schema": bad})) == 40403  # parsed, not found


def test_soft_then_hard_delete_of_a_version():
    r = Registry()
    r.register("s", avro())
    r.register("s", avro(age={"type": "int", "default": 0}))
    assert code(lambda: r.commit(r.engine.delete_version("s", 1, permanent=True))) == 40407
    assert r.commit(r.engine.delete_version("s", 1)) == 1
    assert r.engine.versions("s") == [2]
    assert r.engine.versions("s", deleted=True) == [1, 2]
    assert r.engine.versions("s", deleted_as_negative=True) == [-1, 2]
    assert code(lambda: r.commit(r.engine.delete_version("s", 1))) == 40406
    assert r.engine.by_id(1).deleted  # a soft-deleted schema still decodes by id
    assert r.commit(r.engine.delete_version("s", 1, permanent=True)) == 1
    assert code(lambda: r.engine.by_id(1)) == 40403
    assert r.engine.versions("s", deleted=True) == [2]


def test_subject_delete_soft_then_permanent_and_reregister():
    r = Registry()
    r.register("s", avro())
    r.commit(r.engine.set_config("s", {"compatibility": "NONE"}))
    assert code(lambda: r.commit(r.engine.delete_subject("s", permanent=True))) == 40405
    assert r.commit(r.engine.delete_subject("s")) == [1]
    assert r.engine.subjects() == [] and r.engine.subjects(deleted=True) == ["s"]
    assert r.engine.subjects(deleted_only=True) == ["s"]
    assert code(lambda: r.commit(r.engine.delete_subject("s"))) == 40404
    again = r.register("s", avro())  # the same schema after a soft delete: a new version, same id
    assert (again["id"], again["version"]) == (1, 2)
    r.commit(r.engine.delete_subject("s"))
    assert r.commit(r.engine.delete_subject("s", permanent=True)) == [2]
    assert code(lambda: r.engine.versions("s", deleted=True)) == 40401
    assert "s" not in r.engine.state.configs  # the subject's config went with it
    assert code(lambda: r.commit(r.engine.delete_subject("s"))) == 40401


def test_configs_and_modes_global_and_per_subject():
    r = Registry()
    assert r.engine.get_config(None) == {"compatibilityLevel": "BACKWARD"}
    assert r.commit(r.engine.set_config("s", {"compatibility": "full_transitive", "normalize": True})) == \
        {"compatibility": "FULL_TRANSITIVE", "normalize": True}
    assert r.engine.get_config("s") == {"compatibilityLevel": "FULL_TRANSITIVE", "normalize": True}
    assert r.engine.get_config("t", default_to_global=True) == {"compatibilityLevel": "BACKWARD"}
    assert r.commit(r.engine.delete_config("s"))["compatibilityLevel"] == "FULL_TRANSITIVE"
    assert code(lambda: r.commit(r.engine.delete_config("s"))) == 40401
    r.commit(r.engine.set_mode("s", {"mode": "READONLY"}))
    assert r.engine.get_mode("s") == {"mode": "READONLY"}
    assert code(lambda: r.engine.register("s", {"schema": avro()})) == 42205
    r.commit(r.engine.delete_mode("s"))
    assert r.register("s", avro())["version"] == 1


def test_import_mode_keeps_the_given_ids_and_versions():
    r = Registry()
    r.commit(r.engine.set_mode(None, {"mode": "IMPORT"}))
    r.register("s", avro(), id=42, version=3)
    value = r.engine.version("s", 3)
    assert (value.id, value.version) == (42, 3)
    assert code(lambda: r.engine.register("t", {"schema": avro(x={"type": "int"}), "id": 42})) == 42205
    r.commit(r.engine.set_mode(None, {"mode": "READWRITE"}))
    assert r.register("t", avro(x={"type": "int"}))["id"] == 43  # after the largest id seen


def test_references_resolve_and_protect_what_they_name():
    r = Registry()
    address = json.dumps({"type": "record", "name": "Address", "namespace": "ex",
                          "fields": [{"name": "city", "type": "string"}]})
    person = json.dumps({"type": "record", "name": "Person", "namespace": "ex",
                         "fields": [{"name": "home", "type": "ex.Address"}]})
    r.register("address", address)
    ref = [{"name": "ex.Address", "subject": "address", "version": 1}]
    assert code(lambda: r.engine.register("person", {"schema": person})) == 42201  # unknown type
    made = r.register("person", person, references=ref)
    assert r.engine.referenced_by("address", 1) == [made["id"]]
    assert code(lambda: r.commit(r.engine.delete_version("address", 1))) == 42206
    assert code(lambda: r.commit(r.engine.delete_subject("address"))) == 42206
    assert r.engine.lookup("person", {"schema": person, "references": ref}).id == made["id"]
    missing = [{"name": "ex.Address", "subject": "address", "version": 9}]
    assert code(lambda: r.engine.register("p2", {"schema": person, "references": missing})) == 42201


def test_compatibility_check_route_answers_without_writing():
    r = Registry()
    r.register("s", avro())
    before = len(r.log)
    ok = r.engine.compatibility("s", "latest", {"schema": avro(age={"type": "int", "default": 1})})
    bad = r.engine.compatibility("s", "1", {"schema": avro(age={"type": "int"})}, verbose=True)
    assert ok == {"is_compatible": True}
    assert bad["is_compatible"] is False and any("READER_FIELD_MISSING_DEFAULT_VALUE" in m for m in bad["messages"])
    assert r.engine.compatibility("new-subject", "latest", {"schema": avro()}) == {"is_compatible": True}
    assert code(lambda: r.engine.compatibility("s", "9", {"schema": avro()})) == 40402
    assert len(r.log) == before


def test_the_records_replayed_give_the_same_registry():
    r = Registry()
    r.register("a", avro())
    r.register("a", avro(age={"type": "int", "default": 0}))
    r.register("b", avro())
    r.commit(r.engine.delete_version("a", 1))
    r.commit(r.engine.set_config("b", {"compatibility": "NONE"}))
    r.commit(r.engine.set_config(None, {"compatibility": "FORWARD"}))
    r.commit(r.engine.set_mode("b", {"mode": "READONLY"}))
    r.commit(r.engine.delete_subject("a"))
    again = r.replayed()
    for engine in (r.engine, again):
        assert engine.subjects(deleted=True) == ["a", "b"] and engine.subjects() == ["b"]
        assert engine.versions("a", deleted=True) == [1, 2]
        assert engine.get_config("b") == {"compatibilityLevel": "NONE"}
        assert engine.get_config(None) == {"compatibilityLevel": "FORWARD"}
        assert engine.get_mode("b") == {"mode": "READONLY"}
        assert engine.state.max_id == 2
    assert [json.loads(k)["keytype"] for k, _ in r.log] == [
        "SCHEMA", "SCHEMA", "SCHEMA", "SCHEMA", "CONFIG", "CONFIG", "MODE", "DELETE_SUBJECT"]


def test_keys_are_confluents_json_and_byte_stable():
    assert rec.Key(rec.SCHEMA, "s", 3).encode() == b'{"keytype":"SCHEMA","subject":"s","version":3,"magic":1}'
    assert rec.Key(rec.CONFIG, None).encode() == b'{"keytype":"CONFIG","subject":null,"magic":0}'
    assert rec.decode_key(rec.Key(rec.MODE, "x").encode()) == rec.Key(rec.MODE, "x")


def test_records_that_are_not_the_registrys_are_skipped():
    state = RegistryState()
    assert not state.apply_raw(b"not json", b"{}")
    assert not state.apply_raw(b'{"keytype":"SCHEMA","subject":"s","magic":1}', b"{}")  # no version
    assert not state.apply_raw(rec.Key(rec.SCHEMA, "s", 1).encode(), b'{"subject":"s"}')  # no id
    assert state.skipped == 3 and state.versions == {}


def test_a_compatibility_group_checks_only_the_versions_of_the_same_group():
    r = Registry()
    r.commit(r.engine.set_config(None, {"compatibility": "BACKWARD", "compatibilityGroup": "app.major"}))
    assert r.engine.get_config(None)["compatibilityGroup"] == "app.major"
    r.register("s", avro(), metadata={"properties": {"app.major": "1"}})
    breaking = avro(age={"type": "int"})  # no default: incompatible with version 1
    assert code(lambda: r.engine.register("s", {"schema": breaking, "metadata": {"properties": {"app.major": "1"}}})) \
        == 409
    assert r.register("s", breaking, metadata={"properties": {"app.major": "2"}})["version"] == 2
