"""JSON Schemas as the typed tree Confluent's compatibility rules walk.

Confluent compares JSON Schemas through the model of the Everit loader: a schema object is
an object, array, string, number, boolean or null schema (from ``type``, or from the
keywords of one type when ``type`` is absent), an enum, a const, a ``not``, a combination
(allOf/anyOf/oneOf; a list of types is an anyOf), a reference, or the empty (``{}``,
``true``) or false schema; an object with several of these is their allOf. ``load`` builds
that tree from the parsed JSON, resolving ``$ref`` against the schema itself and its
references (by name and by ``$id``); a reference met twice yields the same node, so a
recursive schema is a cycle the comparison can detect.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin

OBJECT_WORDS = ("properties", "required", "additionalProperties", "patternProperties", "dependencies",
                "minProperties", "maxProperties", "propertyNames", "dependentRequired", "dependentSchemas",
                "unevaluatedProperties")
ARRAY_WORDS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "prefixItems",
               "unevaluatedItems", "minContains", "maxContains")
STRING_WORDS = ("minLength", "maxLength", "pattern", "format")
NUMBER_WORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
NO_DEFAULT = object()


class UnresolvedRef(ValueError):
    pass


@dataclass(eq=False)
class Node:
    kind: str  # object array string number boolean null enum const combined not ref empty true false
    raw: object = None
    id: str | None = None
    title: str | None = None
    description: str | None = None
    default: object = NO_DEFAULT
    target: "Node | None" = None  # a reference's schema, once resolved
    # object
    properties: dict = field(default_factory=dict)
    required: list = field(default_factory=list)
    permits_additional: bool = True
    additional: "Node | None" = None
    patterns: dict = field(default_factory=dict)
    property_dependencies: dict = field(default_factory=dict)
    schema_dependencies: dict = field(default_factory=dict)
    max_properties: int | None = None
    min_properties: int | None = None
    # array (permits_additional and additional are its additional items)
    all_items: "Node | None" = None
    item_schemas: list = field(default_factory=list)
    max_items: int | None = None
    min_items: int | None = None
    unique: bool = False
    # string
    max_length: int | None = None
    min_length: int | None = None
    pattern: str | None = None
    # number
    maximum: float | None = None
    minimum: float | None = None
    exclusive_maximum: float | None = None
    exclusive_minimum: float | None = None
    multiple_of: float | None = None
    integer: bool = False
    # enum, const, not, combined
    values: frozenset = frozenset()
    value: str | None = None
    negated: "Node | None" = None
    criterion: str | None = None
    subschemas: list = field(default_factory=list)
    # what Everit keeps aside as unprocessed properties
    unevaluated_properties: "Node | None" = None
    unevaluated_items: "Node | None" = None
    max_contains: int | None = None
    min_contains: int | None = None
    connect_type: str | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def is_empty(self) -> bool:  # Everit's TrueSchema extends EmptySchema
        return self.kind in ("empty", "true")

    def canonical(self) -> str:
        return json.dumps(self.raw, sort_keys=True, separators=(",", ":"))


class Loader:
    """One schema and its references: ``documents`` maps a URI (a reference's name or a
    schema's $id) to its JSON."""

    def __init__(self, documents: dict[str, object]):
        self.documents = documents
        self.by_pointer: dict[tuple[str, str], Node] = {}

    def load(self, doc, base: str = "") -> Node:
        if isinstance(doc, bool):
            return Node("true" if doc else "false", raw=doc)
        if not isinstance(doc, dict):
            raise ValueError(f"a schema must be an object or a boolean, not {json.dumps(doc)[:40]}")
        ident = doc.get("$id", doc.get("id"))
        if isinstance(ident, str):
            base = urljoin(base, ident)
        if isinstance(doc.get("$ref"), str):
            node = Node("ref", raw=doc, target=self._resolve(doc["$ref"], base))
            return _describe(node, doc, ident)
        parts = self._typed(doc, base)
        if "enum" in doc:
            parts.append(Node("enum", raw={"enum": doc["enum"]},
                              values=frozenset(json.dumps(v, sort_keys=True) for v in doc["enum"])))
        if "const" in doc:
            parts.append(Node("const", raw={"const": doc["const"]}, value=json.dumps(doc["const"], sort_keys=True)))
        if "not" in doc:
            parts.append(Node("not", raw={"not": doc["not"]}, negated=self.load(doc["not"], base)))
        for criterion in ("allOf", "anyOf", "oneOf"):
            if isinstance(doc.get(criterion), list):
                parts.append(self._combined(criterion, [self.load(s, base) for s in doc[criterion]],
                                            {criterion: doc[criterion]}))
        if not parts:
            node = Node("empty")
        elif len(parts) == 1:
            node = parts[0]
        else:
            node = self._combined("allOf", parts, doc)
        node.raw = doc
        self._unprocessed(node, doc, base)
        return _describe(node, doc, ident)

    def _combined(self, criterion: str, subschemas: list[Node], raw) -> Node:
        unique, seen = [], set()
        for s in subschemas:  # Confluent compares the set of distinct subschemas
            key = s.canonical()
            if key not in seen:
                seen.add(key)
                unique.append(s)
        return Node("combined", raw=raw, criterion=criterion, subschemas=unique)

    def _typed(self, doc: dict, base: str) -> list[Node]:
        declared = doc.get("type")
        if isinstance(declared, str):
            return [self._of_type(declared, doc, base, True)]
        if isinstance(declared, list):
            typed = [self._of_type(t, doc, base, True) for t in declared if isinstance(t, str)]
            if len(typed) == 1:
                return typed
            return [self._combined("anyOf", typed, {"type": declared})]
        out = []
        for kind, words in (("object", OBJECT_WORDS), ("array", ARRAY_WORDS), ("string", STRING_WORDS),
                            ("number", NUMBER_WORDS)):
            if any(w in doc for w in words):
                out.append(self._of_type(kind, doc, base, False))
        return out

    def _of_type(self, kind: str, doc: dict, base: str, required: bool) -> Node:
        raw = {"type": kind}
        if kind == "object":
            return self._object(Node("object", raw=raw), doc, base)
        if kind == "array":
            return self._array(Node("array", raw=raw), doc, base)
        if kind == "string":
            return Node("string", raw=raw, max_length=doc.get("maxLength"), min_length=doc.get("minLength"),
                        pattern=doc.get("pattern"))
        if kind in ("number", "integer"):
            return _number(Node("number", raw=raw, integer=kind == "integer"), doc)
        if kind in ("boolean", "null"):
            return Node(kind, raw=raw)
        raise ValueError(f"unknown type '{kind}'")

    def _object(self, node: Node, doc: dict, base: str) -> Node:
        additional = doc.get("additionalProperties", True)
        deps = dict(doc.get("dependencies") or {})
        deps.update(doc.get("dependentRequired") or {})
        deps.update(doc.get("dependentSchemas") or {})
        node.properties = {k: self.load(v, base) for k, v in (doc.get("properties") or {}).items()}
        node.required = list(doc.get("required") or ())
        node.permits_additional = additional is not False
        node.additional = self.load(additional, base) if isinstance(additional, dict) else None
        node.patterns = {k: self.load(v, base) for k, v in (doc.get("patternProperties") or {}).items()}
        node.property_dependencies = {k: set(v) for k, v in deps.items() if isinstance(v, list)}
        node.schema_dependencies = {k: self.load(v, base) for k, v in deps.items() if not isinstance(v, list)}
        node.max_properties, node.min_properties = doc.get("maxProperties"), doc.get("minProperties")
        return node

    def _array(self, node: Node, doc: dict, base: str) -> Node:
        items, prefix = doc.get("items"), doc.get("prefixItems")
        tuple_items = prefix if isinstance(prefix, list) else items if isinstance(items, list) else None
        if isinstance(prefix, list):  # 2020-12: items is what follows the prefix
            additional = items if items is not None else True
            all_items = None
        else:
            additional = doc.get("additionalItems", True)
            all_items = items if isinstance(items, (dict, bool)) else None
        node.all_items = self.load(all_items, base) if all_items is not None else None
        node.item_schemas = [self.load(s, base) for s in tuple_items] if tuple_items is not None else []
        node.permits_additional = additional is not False
        node.additional = self.load(additional, base) if isinstance(additional, dict) else None
        node.max_items, node.min_items = doc.get("maxItems"), doc.get("minItems")
        node.unique = bool(doc.get("uniqueItems", False))
        return node

    def _unprocessed(self, node: Node, doc: dict, base: str) -> None:
        if "unevaluatedProperties" in doc:
            node.unevaluated_properties = self.load(doc["unevaluatedProperties"], base)
        if "unevaluatedItems" in doc:
            node.unevaluated_items = self.load(doc["unevaluatedItems"], base)
        node.min_contains, node.max_contains = doc.get("minContains"), doc.get("maxContains")
        node.connect_type = doc.get("connect.type")

    def _resolve(self, ref: str, base: str) -> Node:
        uri, fragment = urldefrag(urljoin(base, ref))
        key = (uri, fragment)
        if key in self.by_pointer:
            return self.by_pointer[key]
        doc = self.documents.get(uri)
        if doc is None:
            doc = self.documents.get(ref.split("#", 1)[0])
        if doc is None:
            raise UnresolvedRef(f"$ref '{ref}' cannot be resolved")
        target = _pointer(doc, fragment, ref)
        placeholder = Node("ref", raw={"$ref": ref})
        self.by_pointer[key] = placeholder  # a cycle comes back to this node
        node = self.load(target, uri)
        placeholder.target = node
        self.by_pointer[key] = node
        return node


def _pointer(doc, fragment: str, ref: str):
    if not fragment or fragment == "/":
        return doc
    if not fragment.startswith("/"):  # a plain-name fragment: an anchor
        for value in _walk(doc):
            if isinstance(value, dict) and value.get("$anchor") == fragment:
                return value
        raise UnresolvedRef(f"$ref '{ref}' cannot be resolved")
    node = doc
    for part in fragment.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise UnresolvedRef(f"$ref '{ref}' cannot be resolved") from None
    return node


def _walk(doc):
    yield doc
    if isinstance(doc, dict):
        for v in doc.values():
            yield from _walk(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _walk(v)


def _number(node: Node, doc: dict) -> Node:
    node.minimum, node.maximum, node.multiple_of = doc.get("minimum"), doc.get("maximum"), doc.get("multipleOf")
    low, high = doc.get("exclusiveMinimum"), doc.get("exclusiveMaximum")
    if isinstance(low, bool):  # draft-04: the bound itself is exclusive
        low, node.minimum = (node.minimum, None) if low else (None, node.minimum)
    if isinstance(high, bool):
        high, node.maximum = (node.maximum, None) if high else (None, node.maximum)
    node.exclusive_minimum, node.exclusive_maximum = low, high
    return node


def _describe(node: Node, doc: dict, ident) -> Node:
    node.id = ident if isinstance(ident, str) else None
    node.title, node.description = doc.get("title"), doc.get("description")
    node.default = doc.get("default", NO_DEFAULT)
    return node
