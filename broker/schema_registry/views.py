"""The JSON bodies of the REST API, as Confluent's entities serialize (empty fields left
out; ``schemaType`` left out for Avro, the type a client assumes when it is absent)."""

from __future__ import annotations

from kipper.broker.schema_registry.model import AVRO, SchemaValue


def _common(v: SchemaValue, schema_text: str) -> dict:
    out = {}
    if v.schema_type != AVRO:
        out["schemaType"] = v.schema_type
    if v.references:
        out["references"] = [r.to_json() for r in v.references]
    if v.metadata:
        out["metadata"] = v.metadata
    if v.rule_set:
        out["ruleSet"] = v.rule_set
    out["schema"] = schema_text
    return out


def schema_entity(v: SchemaValue, schema_text: str | None = None, *, deleted: bool = False) -> dict:
    """A subject version (Confluent's Schema): GET .../versions/{v}, POST /subjects/{s}."""
    out = {"subject": v.subject, "version": v.version, "id": v.id, "guid": v.guid,
           **_common(v, v.schema if schema_text is None else schema_text)}
    if v.ts is not None:
        out["ts"] = v.ts
    if deleted and v.deleted:
        out["deleted"] = True
    return out


def schema_string(v: SchemaValue, schema_text: str | None = None, *, with_subject: bool = False) -> dict:
    """A schema by id or guid (Confluent's SchemaString); subject and version only when the
    client named a subject."""
    out = {"subject": v.subject, "version": v.version} if with_subject else {}
    out.update(_common(v, v.schema if schema_text is None else schema_text))
    out["guid"] = v.guid
    return out


def register_response(v: SchemaValue) -> dict:
    return {"id": v.id, "version": v.version, "guid": v.guid, **_common(v, v.schema)}


def config_entity(config: dict, level: str) -> dict:
    """A stored config as GET /config answers it (compatibilityLevel first)."""
    out = {"compatibilityLevel": config.get("compatibilityLevel", level)}
    out.update((k, v) for k, v in config.items() if k != "compatibilityLevel" and v is not None)
    return out


def config_update(config: dict) -> dict:
    """PUT /config's answer: the request's form of the config now in force."""
    out = {}
    if config.get("compatibilityLevel") is not None:
        out["compatibility"] = config["compatibilityLevel"]
    out.update((k, v) for k, v in config.items() if k != "compatibilityLevel" and v is not None)
    return out
