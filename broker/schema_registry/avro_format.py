"""Avro schemas, with Apache Avro's Python library (``avro``).

Apache ``avro`` is chosen over fastavro because it carries Avro's own schema-resolution
rules (``avro.compatibility``, the port of Java's SchemaCompatibility that Confluent's
registry runs): BACKWARD, FORWARD and FULL are answered by the reader/writer check the
Avro specification defines, not by rules of our own. What the library leaves out is done
here: the canonical text Confluent stores (Java Avro's ``Schema.toString``: compact JSON,
its key order, names relative to the enclosing namespace, referenced types by name),
Confluent's normalized form, and the check of field defaults that Java Avro makes of a new
schema (``validateDefaults``).
"""

from __future__ import annotations

import json
import warnings

import avro.errors
import avro.schema as avs
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType
from avro.name import Names

from kipper.broker.schema_registry.model import AVRO, Reference

NAMED = ("record", "error", "enum", "fixed")
PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
SCHEMA_KEYS = frozenset(avs.SCHEMA_RESERVED_PROPS) | {"aliases", "default"}
FIELD_KEYS = frozenset(avs.FIELD_RESERVED_PROPS) | {"aliases"}


class InvalidSchema(ValueError):
    pass


class AvroSchema:
    schema_type = AVRO

    def __init__(self, parsed: avs.Schema, dependencies: dict[str, str], references: tuple[Reference, ...],
                 known: frozenset[str]):
        self.parsed = parsed
        self.dependencies = dependencies
        self.references = references
        self.known = known  # full names defined by the references
        self.canonical = _dumps(to_json(parsed, set(known), None))

    def normalized(self) -> "AvroSchema":
        text = _dumps(_normalized(self.parsed, {n: True for n in self.known}))
        return parse(text, self.dependencies, tuple(sorted(set(self.references))), is_new=False)

    def formatted(self, fmt: str) -> str:
        if fmt == "resolved":  # the schema with its references' types written in
            return _dumps(to_json(self.parsed, set(), None))
        return self.canonical

    def backward_errors(self, previous: "AvroSchema") -> list[str]:
        """Can this schema (the reader) read what ``previous`` (the writer) wrote?"""
        result = ReaderWriterCompatibilityChecker().get_compatibility(self.parsed, previous.parsed)
        if result.compatibility is not SchemaCompatibilityType.incompatible:
            return []
        where = ", ".join(sorted(result.locations))
        kinds = dict.fromkeys(result.incompatibilities)  # the library merges them: one message per kind
        return [f"{{errorType:'{kind.name.upper()}', description:'{_describe(kind.name, where)}', "
                f"additionalInfo:'{'; '.join(sorted(result.messages))}'}}" for kind in kinds]


def _describe(kind: str, where: str) -> str:
    return {
        "reader_field_missing_default_value": f"The field at path '{where}' in the <reader> schema has no "
                                              "default value and is missing in the <writer> schema",
        "type_mismatch": f"The type (path '{where}') of a field in the <reader> schema does not match "
                         "with the <writer> schema",
        "name_mismatch": f"The type name at path '{where}' in the <reader> schema does not match the "
                         "<writer> schema",
        "missing_enum_symbols": f"The <reader> schema is missing enum symbols at path '{where}' in the "
                                "<writer> schema",
        "missing_union_branch": f"The <reader> schema is missing a type inside a union field at path "
                                f"'{where}' in the <writer> schema",
        "fixed_size_mismatch": f"The size of FIXED type field at path '{where}' in the <reader> schema "
                               "does not match with the <writer> schema",
    }.get(kind, f"{kind} at path '{where}'")


def parse(text: str, dependencies: dict[str, str], references: tuple[Reference, ...] = (), *,
          is_new: bool) -> AvroSchema:
    """``dependencies``: every schema the references name (transitively), those a schema
    uses before it, by reference name. Raises InvalidSchema with the library's reason."""
    names = Names(validate_names=True)
    known: set[str] = set()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an unknown or invalid logical type is ignored, as in Java
            for dep in dependencies.values():
                before = set(names.names)
                avs.make_avsc_object(_json(dep), names)
                known |= set(names.names) - before
            parsed = avs.make_avsc_object(_json(text), names)
    except InvalidSchema:
        raise
    except (avro.errors.AvroException, TypeError, ValueError, AttributeError, KeyError) as exc:
        raise InvalidSchema(str(exc)) from None
    if is_new:
        check_defaults(parsed, set())
    return AvroSchema(parsed, dict(dependencies), references, frozenset(known))


def _json(text: str):
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidSchema(f"not JSON: {exc}") from None


def _dumps(doc) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


# --- Java Avro's toString ------------------------------------------------------------------

def to_json(s: avs.Schema, defined: set[str], space: str | None):
    """Java Avro's JSON of a schema: a named type already written (or defined by a
    reference) is written by name, relative to the enclosing namespace."""
    t = s.type
    if isinstance(s, avs.UnionSchema):
        return [to_json(b, defined, space) for b in s.schemas]
    if t in NAMED:
        full = s.fullname
        if full in defined:
            return s.name if (s.namespace or None) == space else full
        defined.add(full)
        out = {"type": t, "name": s.name}
        ns = s.namespace or None
        if ns != space:
            out["namespace"] = ns or ""
        inner = ns
        if s.get_prop("doc") is not None:
            out["doc"] = s.get_prop("doc")
        if t in ("record", "error"):
            out["fields"] = [_field(f, defined, inner) for f in s.fields]
        elif t == "enum":
            out["symbols"] = list(s.symbols)
            if s.get_prop("default") is not None:
                out["default"] = s.get_prop("default")
        else:
            out["size"] = s.size
        out.update(_props(s.props, SCHEMA_KEYS))
        if s.get_prop("aliases"):
            out["aliases"] = s.get_prop("aliases")
        return out
    if t == "array":
        return {"type": "array", "items": to_json(s.items, defined, space), **_props(s.props, SCHEMA_KEYS)}
    if t == "map":
        return {"type": "map", "values": to_json(s.values, defined, space), **_props(s.props, SCHEMA_KEYS)}
    extra = _props(s.props, SCHEMA_KEYS)
    return {"type": t, **extra} if extra else t


def _field(f: avs.Field, defined: set[str], space: str | None) -> dict:
    out = {"name": f.name, "type": to_json(f.type, defined, space)}
    if f.doc is not None:
        out["doc"] = f.doc
    if f.has_default:
        out["default"] = f.default
    if f.order not in (None, "ascending"):
        out["order"] = f.order
    if f.get_prop("aliases"):
        out["aliases"] = f.get_prop("aliases")
    out.update(_props(f.props, FIELD_KEYS))
    return out


def _props(props: dict, reserved: frozenset[str]) -> dict:
    return {k: v for k, v in props.items() if k not in reserved}


# --- Confluent's normalized form (AvroSchemaUtils.toNormalizedString) ----------------------

def _normalized(s: avs.Schema, env: dict[str, bool]):
    """Full names everywhere, a named type written once, properties sorted, docs and
    aliases after the structure: two spellings of one schema normalize alike."""
    t = s.type
    if isinstance(s, avs.UnionSchema):
        return [_normalized(b, env) for b in s.schemas]
    logical = {k: s.props[k] for k in ("logicalType", "precision", "scale") if k in s.props}
    simple = dict(sorted((k, v) for k, v in _props(s.props, SCHEMA_KEYS).items() if k not in logical))
    if t in ("array", "map"):
        inner = _normalized(s.items if t == "array" else s.values, env)
        return {"type": t, ("items" if t == "array" else "values"): inner, **logical, **simple}
    if t in NAMED:
        if s.fullname in env:
            return s.fullname
        env[s.fullname] = True
        out = {"name": s.fullname, "type": t}
        if t == "enum":
            out["symbols"] = list(s.symbols)
        elif t == "fixed":
            out["size"] = s.size
        else:
            out["fields"] = [_normalized_field(f, env) for f in s.fields]
        out.update(logical)
        if s.get_prop("doc"):
            out["doc"] = s.get_prop("doc")
        if s.get_prop("aliases"):
            out["aliases"] = sorted(s.get_prop("aliases"))
        if t == "enum" and s.get_prop("default") is not None:
            out["default"] = s.get_prop("default")
        out.update(simple)
        return out
    return {"type": t, **logical, **simple} if (logical or simple) else t


def _normalized_field(f: avs.Field, env: dict[str, bool]) -> dict:
    out = {"name": f.name, "type": _normalized(f.type, env)}
    if f.order not in (None, "ascending"):
        out["order"] = f.order
    if f.doc is not None:
        out["doc"] = f.doc
    if f.get_prop("aliases"):
        out["aliases"] = sorted(f.get_prop("aliases"))
    if f.has_default:
        out["default"] = f.default
    out.update(sorted(_props(f.props, FIELD_KEYS).items()))
    return out


# --- defaults (Java Avro's validateDefaults) -------------------------------------------------

def check_defaults(s: avs.Schema, seen: set[str]) -> None:
    if isinstance(s, avs.UnionSchema):
        for b in s.schemas:
            check_defaults(b, seen)
    elif s.type in ("array", "map"):
        check_defaults(s.items if s.type == "array" else s.values, seen)
    elif s.type in ("record", "error") and s.fullname not in seen:
        seen.add(s.fullname)
        for f in s.fields:
            if f.has_default and not valid_default(f.type, f.default):
                raise InvalidSchema(f"Invalid default for field {f.name}: {json.dumps(f.default)} "
                                    f"not a {_dumps(to_json(f.type, set(), None))}")
            check_defaults(f.type, seen)
    elif s.type == "enum" and s.get_prop("default") is not None and s.get_prop("default") not in s.symbols:
        raise InvalidSchema(f"The Enum Default: {s.get_prop('default')} is not in the enum symbol set: "
                            f"{list(s.symbols)}")


def valid_default(s: avs.Schema, value) -> bool:
    t = s.type
    if isinstance(s, avs.UnionSchema):
        return any(valid_default(b, value) for b in s.schemas)
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t in ("int", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if t in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t in ("bytes", "string"):
        return isinstance(value, str)
    if t == "fixed":
        return isinstance(value, str) and len(value) == s.size
    if t == "enum":
        return isinstance(value, str) and value in s.symbols
    if t == "array":
        return isinstance(value, list) and all(valid_default(s.items, v) for v in value)
    if t == "map":
        return isinstance(value, dict) and all(valid_default(s.values, v) for v in value.values())
    if t in ("record", "error"):
        if not isinstance(value, dict):
            return False
        return all(valid_default(f.type, value[f.name]) if f.name in value else f.has_default for f in s.fields)
    return True
