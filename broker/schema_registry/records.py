"""The ``_schemas`` topic's records in Confluent's JSON format, so the topic reads as a
Confluent Schema Registry's would: a key ``{"keytype": "SCHEMA", "subject": ..., "version": ...,
"magic": 1}`` and a SchemaValue, CONFIG and MODE keys per subject (``subject`` null for the
global one), DELETE_SUBJECT (soft-delete every version up to ``version``), CLEAR_SUBJECT and
NOOP. A null value is a tombstone: the hard delete of a version, a config or a mode. Keys are
encoded with a fixed field order so that the cleaner compacts equal keys together."""

from __future__ import annotations

import json
from dataclasses import dataclass

from kipper.broker.schema_registry.model import AVRO, Reference, SchemaValue

SCHEMA, CONFIG, MODE, DELETE_SUBJECT, CLEAR_SUBJECT, NOOP = (
    "SCHEMA", "CONFIG", "MODE", "DELETE_SUBJECT", "CLEAR_SUBJECT", "NOOP")
KEY_TYPES = (SCHEMA, CONFIG, MODE, DELETE_SUBJECT, CLEAR_SUBJECT, NOOP)


class RecordError(ValueError):
    """A record of the topic that is not the registry's (skipped at replay, logged)."""


@dataclass(frozen=True)
class Key:
    keytype: str
    subject: str | None = None
    version: int | None = None

    def encode(self) -> bytes:
        if self.keytype == SCHEMA:
            doc = {"keytype": SCHEMA, "subject": self.subject, "version": self.version, "magic": 1}
        elif self.keytype == NOOP:
            doc = {"keytype": NOOP, "magic": 0}
        else:
            doc = {"keytype": self.keytype, "subject": self.subject, "magic": 0}
        return _dumps(doc)


def _dumps(doc: dict) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def decode_key(data: bytes | None) -> Key:
    try:
        doc = json.loads(bytes(data)) if data is not None else None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(f"key is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("keytype") not in KEY_TYPES:
        raise RecordError(f"not a schema registry key: {data!r:.80}")
    version = doc.get("version")
    subject = doc.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise RecordError(f"subject is not a string: {data!r:.80}")
    if doc["keytype"] == SCHEMA and not isinstance(version, int):
        raise RecordError(f"SCHEMA key without a version: {data!r:.80}")
    return Key(doc["keytype"], subject, version if doc["keytype"] == SCHEMA else None)


def schema_value(value: SchemaValue) -> bytes:
    doc = {"subject": value.subject, "version": value.version, "id": value.id, "schemaType": value.schema_type}
    if value.references:
        doc["references"] = [r.to_json() for r in value.references]
    if value.metadata:
        doc["metadata"] = value.metadata
    if value.rule_set:
        doc["ruleSet"] = value.rule_set
    doc["schema"] = value.schema
    doc["deleted"] = value.deleted
    if value.ts is not None:
        doc["ts"] = value.ts
    return _dumps(doc)


def decode_schema_value(key: Key, data: bytes) -> SchemaValue:
    doc = _object(data)
    try:
        refs = tuple(Reference(str(r["name"]), str(r["subject"]), int(r["version"]))
                     for r in doc.get("references") or ())
        return SchemaValue(subject=str(doc.get("subject", key.subject)), version=int(doc.get("version", key.version)),
                           id=int(doc["id"]), schema=str(doc["schema"]),
                           schema_type=str(doc.get("schemaType") or AVRO), references=refs,
                           metadata=doc.get("metadata"), rule_set=doc.get("ruleSet"),
                           deleted=bool(doc.get("deleted", False)), ts=doc.get("ts"))
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"bad SCHEMA value: {exc}") from None


def config_value(subject: str | None, config: dict) -> bytes:
    return _dumps({**config, **({"subject": subject} if subject is not None else {})})


def mode_value(subject: str | None, mode: str) -> bytes:
    return _dumps({**({"subject": subject} if subject is not None else {}), "mode": mode})


def delete_subject_value(subject: str, version: int) -> bytes:
    return _dumps({"subject": subject, "version": version})


def clear_subject_value(subject: str) -> bytes:
    return _dumps({"subject": subject})


def decode_object(data: bytes) -> dict:
    return _object(data)


def _object(data) -> dict:
    try:
        doc = json.loads(bytes(data))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordError(f"value is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise RecordError("value is not a JSON object")
    return doc
