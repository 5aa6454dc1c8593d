"""JSON Schema, checked with the ``jsonschema`` library against its draft's metaschema.

``jsonschema`` is the reference Python implementation of every draft Confluent accepts
(draft-04, -06, -07, 2019-09 and 2020-12; a schema without ``$schema`` is draft-07, as
Confluent reads it): ``check_schema`` refuses what the draft's metaschema refuses. Each
``$ref`` must resolve, within the schema or to one of its references (by the reference's
name or the referenced schema's ``$id``), as Confluent's loader needs it to. The canonical
text is the compact JSON Confluent stores (key order kept); compatibility is Confluent's
rules (``json_compat``) over ``json_model``'s tree.
"""

from __future__ import annotations

import json

import jsonschema
from jsonschema.exceptions import SchemaError

from kipper.broker.schema_registry import json_compat
from kipper.broker.schema_registry.json_model import Loader, UnresolvedRef
from kipper.broker.schema_registry.model import JSON, Reference

DEFAULT_DRAFT = jsonschema.Draft7Validator


class InvalidSchema(ValueError):
    pass


class JsonSchema:
    schema_type = JSON

    def __init__(self, doc, dependencies: dict[str, str], references: tuple[Reference, ...]):
        self.doc = doc
        self.dependencies = dependencies
        self.references = references
        self.canonical = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
        self._tree = None

    def tree(self):
        if self._tree is None:
            self._tree = _loader(self.doc, self.dependencies).load(self.doc)
        return self._tree

    def normalized(self) -> "JsonSchema":
        return JsonSchema(_sorted(self.doc), self.dependencies, tuple(sorted(set(self.references))))

    def formatted(self, fmt: str) -> str:
        return self.canonical

    def backward_errors(self, previous: "JsonSchema", lenient: bool = False) -> list[str]:
        compatible = json_compat.COMPATIBLE_LENIENT if lenient else json_compat.COMPATIBLE_STRICT
        try:
            found = json_compat.differences(previous.tree(), self.tree(), compatible)
        except (UnresolvedRef, ValueError) as exc:
            return [f"Unexpected exception during compatibility check: {exc}"]
        return [f"{{errorType:\"{kind}\", description:\"The schemas differ at path '{path}' between the "
                f"<reader> and <writer> schema'}}" for kind, path in found if kind not in compatible]


def parse(text: str, dependencies: dict[str, str], references: tuple[Reference, ...] = (), *,
          is_new: bool) -> JsonSchema:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InvalidSchema(f"Invalid JSON: {exc}") from None
    if not isinstance(doc, (dict, bool)):
        raise InvalidSchema("A JSON Schema is an object or a boolean")
    try:
        validator = jsonschema.validators.validator_for(doc, default=DEFAULT_DRAFT) if isinstance(doc, dict) \
            else DEFAULT_DRAFT
        validator.check_schema(doc)
    except SchemaError as exc:
        raise InvalidSchema(f"{exc.message} at {'/'.join(map(str, exc.absolute_path)) or 'the root'}") from None
    schema = JsonSchema(doc, dict(dependencies), references)
    try:
        schema.tree()
    except (UnresolvedRef, ValueError, TypeError, AttributeError) as exc:
        raise InvalidSchema(str(exc)) from None
    return schema


def _loader(doc, dependencies: dict[str, str]) -> Loader:
    documents: dict[str, object] = {}
    for name, text in dependencies.items():
        dep = json.loads(text)
        documents[name] = dep
        if isinstance(dep, dict) and isinstance(dep.get("$id"), str):
            documents[dep["$id"]] = dep
    documents[""] = doc
    if isinstance(doc, dict) and isinstance(doc.get("$id", doc.get("id")), str):
        documents[doc.get("$id", doc.get("id"))] = doc
    return Loader(documents)


def _sorted(doc):
    if isinstance(doc, dict):
        return {k: _sorted(doc[k]) for k in sorted(doc)}
    if isinstance(doc, list):
        return [_sorted(v) for v in doc]
    return doc
