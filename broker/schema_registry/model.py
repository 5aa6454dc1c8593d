"""The registry's values: a schema reference, a subject's version as the ``_schemas``
topic stores it, and the guid Confluent derives from a schema's content."""

from __future__ import annotations

import hashlib
import json
import struct
import uuid
from dataclasses import dataclass, field, replace

AVRO, JSON, PROTOBUF = "AVRO", "JSON", "PROTOBUF"
SCHEMA_TYPES = (AVRO, JSON, PROTOBUF)


@dataclass(frozen=True, order=True)
class Reference:
    name: str
    subject: str
    version: int

    def to_json(self) -> dict:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True)
class SchemaValue:
    """One subject version (Confluent's SchemaValue): the canonical schema text, its type
    and references, the metadata and rule set carried with it, and the soft-delete flag."""

    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = AVRO
    references: tuple[Reference, ...] = ()
    metadata: dict | None = None
    rule_set: dict | None = None
    deleted: bool = False
    ts: int | None = None
    guid: str = field(default="", compare=False)

    def __post_init__(self):
        if not self.guid:
            object.__setattr__(self, "guid", content_guid(self.schema, self.references, self.metadata,
                                                          self.rule_set))

    def as_deleted(self) -> "SchemaValue":
        return replace(self, deleted=True)

    @property
    def key(self) -> tuple[str, int]:
        return self.subject, self.version


def content_guid(schema: str, references, metadata: dict | None, rule_set: dict | None) -> str:
    """Confluent's guid: the MD5 of the schema text, each reference's name, subject and
    version (a 4-byte big-endian int), then a 1 byte and the metadata's tags and properties
    when there is metadata, as a UUID. Two registrations of the same content share it and
    so share an id. A rule set is hashed by its JSON text (kipper's: Confluent walks it
    rule by rule)."""
    md = hashlib.md5(schema.encode())
    for ref in references:
        md.update(ref.name.encode())
        md.update(ref.subject.encode())
        md.update(struct.pack(">i", ref.version))
    if metadata is not None:
        md.update(b"\x01")
        for key, values in sorted((metadata.get("tags") or {}).items()):
            md.update(key.encode())
            for value in values:
                md.update(value.encode())
        for key, value in sorted((metadata.get("properties") or {}).items()):
            md.update(key.encode())
            md.update(str(value).encode())
        for name in sorted(metadata.get("sensitive") or ()):
            md.update(name.encode())
    if rule_set is not None:
        md.update(b"\x01")
        md.update(json.dumps(rule_set, sort_keys=True, separators=(",", ":")).encode())
    return str(uuid.UUID(bytes=md.digest()))


def parse_version(text) -> int | None:
    """A path's version: 1..2^31-1, or -1 for "latest" (Confluent's VersionId); None if invalid."""
    if isinstance(text, int):
        value = text
    else:
        text = str(text)
        if text == "latest":
            return -1
        try:
            value = int(text)
        except ValueError:
            return None
    if value == -1:
        return -1
    return value if 1 <= value <= 2**31 - 1 else None
