"""The registry's answers and changes, as Confluent's KafkaSchemaRegistry gives them.

Synchronous and without I/O: a question reads the state (``state.py``); a change checks
everything first (mode, references, compatibility, ids) and returns a ``Change``: the
``_schemas`` records that make it and the answer to give once they are appended. The
store appends them and only then applies them to the state, so a change that cannot be
written changes nothing. Every failure is a ``RegistryError`` with Confluent's code.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from kipper.broker.schema_registry import compat, contracts, errors, formats, views
from kipper.broker.schema_registry import records as rec
from kipper.broker.schema_registry.model import AVRO, SCHEMA_TYPES, Reference, SchemaValue, parse_version
from kipper.broker.schema_registry.state import GLOBAL, RegistryState

PARSED_CACHE = 4096  # parsed schemas kept (a compatibility check parses the subject's versions)
CONFIG_FIELDS = {"compatibility": "compatibilityLevel", "compatibilityLevel": "compatibilityLevel",
                 "normalize": "normalize", "validateFields": "validateFields", "validateRules": "validateRules",
                 "alias": "alias", "compatibilityGroup": "compatibilityGroup",
                 "compatibilityPolicy": "compatibilityPolicy", "defaultMetadata": "defaultMetadata",
                 "overrideMetadata": "overrideMetadata", "defaultRuleSet": "defaultRuleSet",
                 "overrideRuleSet": "overrideRuleSet"}


@dataclass
class Change:
    records: list[tuple[rec.Key, bytes | None]] = field(default_factory=list)
    answer: object = None


@dataclass(frozen=True)
class SchemaRequest:
    """A register, lookup or compatibility body."""

    schema: str | None
    schema_type: str = AVRO
    references: tuple[Reference, ...] = ()
    metadata: dict | None = None
    rule_set: dict | None = None
    id: int = -1
    version: int = 0

    @classmethod
    def of(cls, body) -> "SchemaRequest":
        if not isinstance(body, dict):
            raise errors.unprocessable("The request body must be a JSON object")
        schema = body.get("schema")
        if schema is not None and not isinstance(schema, str):
            raise errors.unprocessable("'schema' must be a string")
        schema_type = body.get("schemaType") or AVRO
        if not isinstance(schema_type, str):
            raise errors.unprocessable("'schemaType' must be a string")
        try:
            refs = tuple(Reference(str(r["name"]), str(r["subject"]), int(r["version"]))
                         for r in body.get("references") or ())
            schema_id = int(body.get("id") if body.get("id") is not None else -1)
            version = int(body.get("version") or 0)
        except (KeyError, TypeError, ValueError):
            raise errors.unprocessable("references need a name, a subject and a version; id and "
                                       "version are numbers") from None
        return cls(schema, schema_type.upper(), refs, body.get("metadata"), body.get("ruleSet"), schema_id, version)


class SchemaRegistry:
    def __init__(self, state: RegistryState | None = None, *, default_level: str = compat.DEFAULT_LEVEL):
        self.state = state or RegistryState()
        self.default_level = default_level
        self._parsed: OrderedDict = OrderedDict()

    # --- parsing ---------------------------------------------------------------------------------

    def dependencies(self, references: tuple[Reference, ...]) -> dict[str, str]:
        """Every schema the references name, transitively, each after what it uses."""
        out: dict[str, str] = {}

        def visit(ref: Reference, depth: int) -> None:
            if ref.name in out:
                return
            if depth > 64:
                raise formats.InvalidSchema("Invalid schema: references nest more than 64 deep")
            version = ref.version
            value = self.state.latest(ref.subject) if version == -1 else self.state.get(ref.subject, version)
            if value is None:
                raise formats.InvalidSchema(f"Invalid schema: reference '{ref.name}' to subject "
                                            f"'{ref.subject}' version {ref.version} not found")
            for inner in value.references:
                visit(inner, depth + 1)
            out[ref.name] = value.schema

        for ref in references:
            visit(ref, 0)
        return out

    def parse(self, schema_type: str, text: str, references: tuple[Reference, ...], *, is_new: bool,
              normalize: bool = False):
        key = (schema_type, text, references, is_new, normalize)
        parsed = self._parsed.get(key)
        if parsed is not None:
            self._parsed.move_to_end(key)
            return parsed
        if schema_type not in SCHEMA_TYPES:
            raise formats.InvalidSchema(f"Invalid schema type {schema_type}")
        parsed = formats.parse(schema_type, text, self.dependencies(references), references, is_new=is_new)
        if normalize:
            parsed = parsed.normalized()
        self._parsed[key] = parsed
        if len(self._parsed) > PARSED_CACHE:
            self._parsed.popitem(last=False)
        return parsed

    def parsed(self, value: SchemaValue):
        return self.parse(value.schema_type, value.schema, value.references, is_new=False)

    def _request_schema(self, subject: str, req: SchemaRequest, *, is_new: bool, normalize: bool):
        try:
            return self.parse(req.schema_type, req.schema, req.references, is_new=is_new,
                              normalize=normalize or bool(self.config_in_scope(subject).get("normalize")))
        except formats.InvalidSchema as exc:
            raise errors.invalid_schema(str(exc)) from None

    # --- configs and modes ---------------------------------------------------------------------------

    def config_in_scope(self, subject: str | None) -> dict:
        configs = self.state.configs
        if subject is not None and subject in configs:
            return configs[subject]
        return configs.get(GLOBAL, {})

    def level(self, subject: str | None) -> str:
        return str(self.config_in_scope(subject).get("compatibilityLevel") or self.default_level).upper()

    def mode(self, subject: str | None) -> str:
        modes = self.state.modes
        return modes.get(subject) or modes.get(GLOBAL) or "READWRITE"

    def _writable(self, subject: str | None) -> None:
        if self.mode(subject) in ("READONLY", "READONLY_OVERRIDE"):
            raise errors.not_permitted(f"Subject {subject} in context . is in read-only mode")

    # --- questions ---------------------------------------------------------------------------------

    def subjects(self, *, prefix: str = "", deleted: bool = False, deleted_only: bool = False) -> list[str]:
        return [s for s in self.state.subjects(deleted=deleted, deleted_only=deleted_only)
                if s.startswith(prefix.removeprefix(":*:"))]

    def versions(self, subject: str, *, deleted=False, deleted_only=False, deleted_as_negative=False) -> list[int]:
        if not self.state.has_subject(subject, deleted=deleted or deleted_only or deleted_as_negative):
            raise errors.subject_not_found(subject)
        out = []
        for v in self.state.subject_versions(subject, deleted=True):
            if deleted_as_negative:
                out.append(-v.version if v.deleted else v.version)
            elif (deleted_only and v.deleted) or (not deleted_only and (deleted or not v.deleted)):
                out.append(v.version)
        return out

    def version(self, subject: str, version_text, *, deleted: bool = False) -> SchemaValue:
        version = parse_version(version_text)
        if version is None:
            raise errors.invalid_version(version_text)
        value = self.state.latest(subject) if version == -1 else self.state.get(subject, version)
        if value is None or (value.deleted and not deleted):
            if not self.state.has_subject(subject, deleted=deleted):
                raise errors.subject_not_found(subject)
            raise errors.version_not_found(version)
        return value

    def formatted(self, value: SchemaValue, fmt: str | None) -> str:
        if not fmt:
            return value.schema
        try:
            return self.parsed(value).formatted(fmt)
        except formats.InvalidSchema as exc:
            raise errors.invalid_schema(str(exc)) from None

    def by_id(self, schema_id: int, subject: str | None = None) -> SchemaValue:
        value = self.state.by_id(schema_id, subject)
        if value is None:
            raise errors.schema_not_found(schema_id)
        return value

    def by_guid(self, guid: str) -> SchemaValue:
        schema_id = self.state.id_by_guid.get(guid)
        value = self.state.by_id(schema_id) if schema_id is not None else None
        if value is None:
            raise errors.schema_not_found(guid)
        return value

    def id_versions(self, schema_id: int, *, subject: str | None = None, deleted: bool = False) -> list[SchemaValue]:
        if schema_id not in self.state.id_versions:
            raise errors.schema_not_found()
        return [v for v in self.state.versions_of_id(schema_id, deleted=deleted)
                if subject is None or v.subject == subject]

    def referenced_by(self, subject: str, version_text, *, deleted: bool = False) -> list[int]:
        value = self.version(subject, version_text, deleted=True)
        return self.state.referencing_ids(subject, value.version, deleted=deleted)

    def schemas(self, *, prefix: str = "", deleted: bool = False, latest_only: bool = False) -> list[SchemaValue]:
        out = []
        for subject in self.subjects(prefix=prefix, deleted=deleted):
            versions = self.state.subject_versions(subject, deleted=deleted)
            out.extend(versions[-1:] if latest_only else versions)
        return out

    def lookup(self, subject: str, body, *, normalize: bool = False, deleted: bool = False) -> SchemaValue:
        req = SchemaRequest.of(body)
        if not req.schema:
            raise errors.invalid_schema("Empty schema")
        parsed = self._request_schema(subject, req, is_new=False, normalize=normalize)
        wanted = SchemaValue(subject, 1, 0, parsed.canonical, req.schema_type, parsed.references,
                             req.metadata, req.rule_set)
        latest = self.state.latest(subject)
        candidates = [wanted]
        if latest is not None and req.metadata is None and req.rule_set is None and (latest.metadata or latest.rule_set):
            candidates.append(SchemaValue(subject, 1, 0, parsed.canonical, req.schema_type, parsed.references,
                                          latest.metadata, latest.rule_set))  # as a registration would inherit
        for candidate in candidates:
            for v in reversed(self.state.subject_versions(subject, deleted=deleted)):
                if v.guid == candidate.guid and v.schema_type == candidate.schema_type:
                    return v
        if not self.state.has_subject(subject, deleted=deleted):
            raise errors.subject_not_found(subject)
        raise errors.schema_not_found()

    def compatibility(self, subject: str, version_text, body, *, normalize: bool = False,
                      verbose: bool = False) -> dict:
        """POST /compatibility/subjects/{s}/versions[/{v}] (``version_text`` None: every live version)."""
        req = SchemaRequest.of(body)
        if version_text is None:
            previous = self.state.subject_versions(subject)
        else:
            version = parse_version(version_text)
            if version is None:
                raise errors.invalid_version(version_text)
            value = self.state.latest(subject) if version == -1 else self.state.get(subject, version)
            if value is not None and value.deleted:
                value = None
            if value is None and version != -1:
                raise errors.version_not_found(version)
            previous = [value] if value is not None else []
        try:
            if not req.schema:
                raise errors.invalid_schema("Empty schema")
            new = self._request_schema(subject, req, is_new=True, normalize=normalize)
            messages = self._incompatibilities(subject, new, previous, req.metadata)
        except errors.RegistryError as exc:
            if not verbose or exc.error_code != 42201:
                raise
            messages = [exc.message]
        out: dict = {"is_compatible": not messages}
        if verbose:
            out["messages"] = messages
        return out

    def _incompatibilities(self, subject: str, new, previous: list[SchemaValue], metadata: dict | None) -> list[str]:
        config = self.config_in_scope(subject)
        group = config.get("compatibilityGroup")
        if group:  # only the versions of the same group value are checked (Confluent's compatibilityGroup)
            value = contracts.property_of(metadata, group)
            previous = [v for v in previous if contracts.property_of(v.metadata, group) == value]
        found = compat.check(self.level(subject), new, previous, self.parsed,
                             lenient=str(config.get("compatibilityPolicy") or "").upper() == "LENIENT")
        if found:
            found.append(f"{{validateFields: '{str(bool(config.get('validateFields'))).lower()}', "
                         f"compatibility: '{self.level(subject)}'}}")
        return found

    # --- changes -------------------------------------------------------------------------------------

    def register(self, subject: str, body, *, normalize: bool = False, now: int | None = None) -> Change:
        _valid_subject(subject)
        req = SchemaRequest.of(body)
        mode = self.mode(subject)
        self._writable(subject)
        if req.id >= 0 and mode != "IMPORT":
            raise errors.not_permitted(f"Subject {subject} in context . is not in import mode")
        if req.id < 0 and mode != "READWRITE":
            raise errors.not_permitted(f"Subject {subject} in context . is not in read-write mode")
        every = self.state.subject_versions(subject, deleted=True)
        live = [v for v in every if not v.deleted]
        new_version = max([v.version for v in every], default=0) + 1
        previous = live[-1] if live else None
        if not req.schema:
            if previous is None or mode == "IMPORT":
                raise errors.invalid_schema("Empty schema")
            req = SchemaRequest(previous.schema, previous.schema_type, previous.references, req.metadata,
                                req.rule_set, req.id, req.version)
        metadata, rule_set = self._metadata_and_rules(subject, req, previous)
        parsed = self._request_schema(subject, req, is_new=req.id < 0, normalize=normalize)
        value = SchemaValue(subject, new_version, 0, parsed.canonical, req.schema_type, parsed.references,
                            metadata, rule_set, ts=now)
        schema_id = req.id
        existing = self.state.id_by_guid.get(value.guid)
        if existing is not None and (req.id < 0 or req.id == existing):
            if req.version == 0:
                for v in live:
                    if v.id == existing:
                        return Change(answer=views.register_response(v))
            schema_id = existing
        if mode != "IMPORT":
            found = self._incompatibilities(subject, parsed, live, metadata)
            if found:
                raise errors.incompatible(subject, "[" + ", ".join(found) + "]")
        if req.version > 0:
            if req.version != new_version and mode != "IMPORT":
                raise errors.invalid_schema("Version is not one more than previous version")
            new_version = req.version
        if schema_id >= 0:
            holder = self.state.by_id(schema_id)
            if holder is not None and holder.guid != value.guid:
                raise errors.not_permitted(f"Overwrite new schema with id {schema_id} in context . is not permitted.")
        else:
            schema_id = self.state.max_id + 1
            while schema_id in self.state.id_versions:
                schema_id += 1
        value = SchemaValue(subject, new_version, schema_id, parsed.canonical, req.schema_type, parsed.references,
                            metadata, rule_set, ts=now)
        change = Change(answer=views.register_response(value))
        for old in every:  # a deleted version of the same schema makes way (Confluent tombstones it)
            if old.deleted and old.id == schema_id and old.version < new_version \
                    and not self.state.referencing_ids(subject, old.version, deleted=True):
                change.records.append((rec.Key(rec.SCHEMA, subject, old.version), None))
        change.records.append((rec.Key(rec.SCHEMA, subject, new_version), rec.schema_value(value)))
        return change

    def _metadata_and_rules(self, subject: str, req: SchemaRequest, previous: SchemaValue | None):
        """The request's metadata and rule set, or the previous version's, between the
        config's defaults and overrides (Confluent's maybeSetMetadataRuleSet)."""
        config = self.config_in_scope(subject)
        metadata = req.metadata if req.metadata is not None else (previous.metadata if previous else None)
        rule_set = req.rule_set if req.rule_set is not None else (previous.rule_set if previous else None)
        metadata = contracts.merge_metadata(contracts.merge_metadata(config.get("defaultMetadata"), metadata),
                                   config.get("overrideMetadata"))
        rule_set = contracts.merge_rules(contracts.merge_rules(config.get("defaultRuleSet"), rule_set), config.get("overrideRuleSet"))
        return metadata, rule_set

    def delete_version(self, subject: str, version_text, *, permanent: bool = False) -> Change:
        version = parse_version(version_text)
        if version is None:
            raise errors.invalid_version(version_text)
        value = self.state.latest(subject) if version == -1 else self.state.get(subject, version)
        if value is not None and value.deleted and not permanent:
            raise errors.version_soft_deleted(subject, version)
        if value is None:
            if not self.state.has_subject(subject, deleted=True):
                raise errors.subject_not_found(subject)
            raise errors.version_not_found(version)
        self._writable(subject)
        if self.state.referencing_ids(subject, value.version, deleted=permanent):
            raise errors.reference_exists(subject, value.version)
        key = rec.Key(rec.SCHEMA, subject, value.version)
        if not permanent:
            return Change([(key, rec.schema_value(value.as_deleted()))], value.version)
        if not value.deleted:
            raise errors.version_not_soft_deleted(subject, value.version)
        change = Change([(key, None)], value.version)
        if len(self.state.versions.get(subject, {})) == 1:  # the last version: the subject's config and mode go
            change.records += self._forget_subject(subject)
        return change

    def delete_subject(self, subject: str, *, permanent: bool = False) -> Change:
        if not self.state.has_subject(subject, deleted=True):
            raise errors.subject_not_found(subject)
        if not permanent and not self.state.has_subject(subject):
            raise errors.subject_soft_deleted(subject)
        self._writable(subject)
        doomed = self.state.subject_versions(subject, deleted=permanent)
        for v in doomed:
            others = {r.subject for i in self.state.referencing_ids(subject, v.version, deleted=permanent)
                      for r in self.state.versions_of_id(i, deleted=permanent)} - {subject}
            if others:
                raise errors.reference_exists(subject, v.version)
            if permanent and not v.deleted:
                raise errors.subject_not_soft_deleted(subject)
        versions = [v.version for v in doomed]
        if not permanent:
            key = rec.Key(rec.DELETE_SUBJECT, subject)
            return Change([(key, rec.delete_subject_value(subject, versions[-1]))], versions)
        change = Change([(rec.Key(rec.SCHEMA, subject, v), None) for v in reversed(versions)], versions)
        change.records += self._forget_subject(subject)
        return change

    def _forget_subject(self, subject: str) -> list:
        out = []
        if subject in self.state.modes:
            out.append((rec.Key(rec.MODE, subject), None))
        if subject in self.state.configs:
            out.append((rec.Key(rec.CONFIG, subject), None))
        return out

    def get_config(self, subject: str | None, *, default_to_global: bool = False) -> dict:
        if subject is None:
            return views.config_entity(self.state.configs.get(GLOBAL, {}), self.default_level)
        if subject in self.state.configs:
            return views.config_entity(self.state.configs[subject], self.level(GLOBAL))
        if default_to_global:
            return views.config_entity(self.config_in_scope(subject), self.default_level)
        raise errors.subject_compatibility_not_configured(subject)

    def set_config(self, subject: str | None, body) -> Change:
        if not isinstance(body, dict):
            raise errors.unprocessable("The request body must be a JSON object")
        level = body.get("compatibility", body.get("compatibilityLevel"))
        if level is not None and not compat.valid_level(level):
            raise errors.invalid_compatibility()
        if subject is not None:
            _valid_subject(subject)
        self._writable(subject)
        config = dict(self.state.configs.get(subject, {}))
        for name, value in body.items():
            if name in CONFIG_FIELDS:
                upper = CONFIG_FIELDS[name] in ("compatibilityLevel", "compatibilityPolicy") and isinstance(value, str)
                config[CONFIG_FIELDS[name]] = value.upper() if upper else value
        return Change([(rec.Key(rec.CONFIG, subject), rec.config_value(subject, config))],
                      views.config_update(config))

    def delete_config(self, subject: str | None) -> Change:
        if subject is not None and subject not in self.state.configs:
            raise errors.subject_not_found(subject)
        self._writable(subject)
        answer = views.config_entity(self.state.configs.get(subject, {}), self.default_level)
        records = [(rec.Key(rec.CONFIG, subject), None)] if subject in self.state.configs else []
        return Change(records, answer)

    def get_mode(self, subject: str | None, *, default_to_global: bool = False) -> dict:
        if subject is None or subject in self.state.modes or default_to_global:
            return {"mode": self.mode(subject)}
        raise errors.subject_mode_not_configured(subject)

    def set_mode(self, subject: str | None, body, *, force: bool = False) -> Change:
        mode = body.get("mode") if isinstance(body, dict) else None
        if not isinstance(mode, str) or mode.upper() not in errors.MODES:
            raise errors.invalid_mode()
        mode = mode.upper()
        if subject is not None:
            _valid_subject(subject)
        change = Change(answer={"mode": mode})
        if mode == "IMPORT" and self.mode(subject) != "IMPORT" and not force:
            prefix = subject or ""
            if any(self.state.has_subject(s) for s in self.state.versions if s.startswith(prefix)):
                raise errors.not_permitted("Cannot import since found existing subjects")
            for s in [s for s in self.state.versions if s.startswith(prefix)]:
                change.records += [(rec.Key(rec.SCHEMA, s, v), None) for v in sorted(self.state.versions[s])]
            change.records.append((rec.Key(rec.CLEAR_SUBJECT, prefix), rec.clear_subject_value(prefix)))
        change.records.append((rec.Key(rec.MODE, subject), rec.mode_value(subject, mode)))
        return change

    def delete_mode(self, subject: str | None) -> Change:
        old = self.state.modes.get(subject)
        if old is None and subject is not None:
            raise errors.subject_not_found(subject)
        records = [(rec.Key(rec.MODE, subject), None)] if old is not None else []
        return Change(records, {"mode": old or "READWRITE"})


def _valid_subject(subject: str) -> None:
    if not subject or not subject.strip() or any(ord(c) < 32 for c in subject) or subject in ("__GLOBAL", "__EMPTY"):
        raise errors.invalid_subject(subject)
