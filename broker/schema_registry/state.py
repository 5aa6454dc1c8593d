"""What the ``_schemas`` topic says, as indexes (Confluent's lookup cache): each subject's
versions, the subjects and versions of each schema id, the id of each schema content
(its guid), who references a version, and the configs and modes.

``apply(key, value)`` takes one record, in the topic's order: the state after replaying the
topic at start is the state before the broker stopped, and a change made through the engine
is applied the same way after its records were appended. Nothing here checks a rule; it
records what happened.
"""

from __future__ import annotations

import structlog

from kipper.broker.schema_registry import records as rec
from kipper.broker.schema_registry.model import SchemaValue

log = structlog.get_logger(__name__)

GLOBAL = None  # the subject of the global config and mode


class RegistryState:
    def __init__(self):
        self.versions: dict[str, dict[int, SchemaValue]] = {}  # subject -> version -> value
        self.id_versions: dict[int, dict[str, int]] = {}  # id -> subject -> version
        self.id_by_guid: dict[str, int] = {}
        self.referenced_by: dict[tuple[str, int], set[int]] = {}  # (subject, version) -> ids
        self.configs: dict[str | None, dict] = {}
        self.modes: dict[str | None, str] = {}
        self.max_id = 0
        self.skipped = 0  # records that were not the registry's

    # --- taking records --------------------------------------------------------------------------

    def apply(self, key: rec.Key, value: bytes | None) -> None:
        kt = key.keytype
        if kt == rec.SCHEMA:
            if value is None:
                self._tombstone(key.subject, key.version)
            else:
                self._put(rec.decode_schema_value(key, value))
        elif kt == rec.CONFIG:
            if value is None:
                self.configs.pop(key.subject, None)
            else:
                doc = rec.decode_object(value)
                doc.pop("subject", None)
                self.configs[key.subject] = doc
        elif kt == rec.MODE:
            if value is None:
                self.modes.pop(key.subject, None)
            else:
                self.modes[key.subject] = str(rec.decode_object(value).get("mode") or "READWRITE")
        elif kt == rec.DELETE_SUBJECT and value is not None:
            up_to = int(rec.decode_object(value).get("version") or 0)
            for version, v in list(self.versions.get(key.subject, {}).items()):
                if version <= up_to and not v.deleted:
                    self.versions[key.subject][version] = v.as_deleted()
        elif kt == rec.CLEAR_SUBJECT and value is not None:
            self._clear(key.subject or "")

    def apply_raw(self, key: bytes | None, value: bytes | None) -> bool:
        """A record as read from the topic; one that is not the registry's is skipped."""
        try:
            self.apply(rec.decode_key(key), value)
            return True
        except rec.RecordError as exc:
            self.skipped += 1
            log.warning("schema_registry_record_skipped", reason=str(exc))
            return False

    def _put(self, value: SchemaValue) -> None:
        self.versions.setdefault(value.subject, {})[value.version] = value
        self.id_versions.setdefault(value.id, {})[value.subject] = value.version
        self.id_by_guid[value.guid] = value.id
        self.max_id = max(self.max_id, value.id)
        for ref in value.references:
            self.referenced_by.setdefault((ref.subject, ref.version), set()).add(value.id)

    def _tombstone(self, subject: str, version: int) -> None:
        value = self.versions.get(subject, {}).pop(version, None)
        if value is None:
            return
        if not self.versions[subject]:
            del self.versions[subject]
        holders = self.id_versions.get(value.id, {})
        if holders.get(subject) == version:
            del holders[subject]
        if not holders:
            self.id_versions.pop(value.id, None)
        for ref in value.references:
            ids = self.referenced_by.get((ref.subject, ref.version))
            if ids is not None:
                ids.discard(value.id)
                if not ids:
                    del self.referenced_by[(ref.subject, ref.version)]

    def _clear(self, prefix: str) -> None:
        """CLEAR_SUBJECT (IMPORT mode): the deleted versions left under the prefix go."""
        for subject in [s for s in self.versions if s.startswith(prefix)]:
            for version, v in list(self.versions[subject].items()):
                if v.deleted:
                    self._tombstone(subject, version)

    # --- reading -----------------------------------------------------------------------------

    def subject_versions(self, subject: str, *, deleted: bool = False) -> list[SchemaValue]:
        """Ascending by version; soft-deleted ones only with ``deleted``."""
        versions = self.versions.get(subject, {})
        return [versions[v] for v in sorted(versions) if deleted or not versions[v].deleted]

    def has_subject(self, subject: str, *, deleted: bool = False) -> bool:
        return any(deleted or not v.deleted for v in self.versions.get(subject, {}).values())

    def get(self, subject: str, version: int) -> SchemaValue | None:
        return self.versions.get(subject, {}).get(version)

    def latest(self, subject: str) -> SchemaValue | None:
        live = self.subject_versions(subject)
        return live[-1] if live else None

    def by_id(self, schema_id: int, subject: str | None = None) -> SchemaValue | None:
        """A version holding ``schema_id`` (under ``subject`` when it has one there)."""
        holders = self.id_versions.get(schema_id)
        if not holders:
            return None
        if subject is not None and subject in holders:
            return self.versions[subject][holders[subject]]
        first = min(holders.items())
        return self.versions[first[0]][first[1]]

    def versions_of_id(self, schema_id: int, *, deleted: bool = False) -> list[SchemaValue]:
        out = []
        for subject, version in sorted(self.id_versions.get(schema_id, {}).items()):
            v = self.versions[subject][version]
            if deleted or not v.deleted:
                out.append(v)
        return out

    def subjects(self, *, deleted: bool = False, deleted_only: bool = False) -> list[str]:
        """A subject is deleted when every version of it is (Confluent's filter)."""
        out = []
        for subject in sorted(self.versions):
            gone = all(v.deleted for v in self.versions[subject].values())
            if (deleted_only and gone) or (not deleted_only and (deleted or not gone)):
                out.append(subject)
        return out

    def referencing_ids(self, subject: str, version: int, *, deleted: bool = False) -> list[int]:
        """The ids of the schemas that reference (subject, version); with ``deleted``
        those whose every version is soft-deleted too."""
        ids = self.referenced_by.get((subject, version), set())
        return sorted(i for i in ids if deleted or self.versions_of_id(i))
