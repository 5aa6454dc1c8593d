"""Kafka structs: an ordered list of fields plus, in flexible versions, a
tagged-field section (KIP-482); and the nullable-struct marker form.

Like the primitives, ``KStruct`` parses and builds on its own and emits lean
source for construct's compiler, with tagged fields flattened into the same
Container as the inline ones.
"""

from __future__ import annotations

import struct as _struct
import uuid as _uuid

from construct import StreamError

from kipper.protocol.primitives import (
    HELPERS, ZERO_UUID, Primitive, install_helpers, read_exact, read_uvarint, write_uvarint,
)

_MISSING = object()


class KStruct(Primitive):
    """An ordered Kafka struct, optionally ending with a tagged-field section.

    ``fields`` is a list of (name, construct, default); ``tagged`` maps
    tag -> (name, construct, default). Parsed structs are construct Containers
    with the tagged fields flattened in (filled with defaults when absent), so
    handlers never care whether a field travels inline or tagged. Building
    takes any mapping and fills missing fields from the defaults.
    """

    def __init__(self, fields, tagged=None):
        super().__init__()
        self.fields = list(fields)
        self.tagged = None if tagged is None else dict(sorted(tagged.items()))

    # interpreted path
    def _parse(self, stream, context, path):
        from construct import Container

        out = Container()
        for name, con, _ in self.fields:
            out[name] = con._parsereport(stream, context, path)
        if self.tagged is not None:
            self._parse_tags(stream, out)
        return out

    def _parse_tags(self, stream, out):
        count = read_uvarint(stream)
        seen = {}
        last = -1
        for _ in range(count):
            tag = read_uvarint(stream)
            size = read_uvarint(stream)
            if tag <= last:
                raise StreamError(f"tagged fields out of order at tag {tag}")
            last = tag
            raw = read_exact(stream, size)
            spec = self.tagged.get(tag)
            if spec is None:
                out.setdefault("_unknown_tags", {})[tag] = raw
            else:
                seen[spec[0]] = spec[1].parse(raw)
        for name, _, default in self.tagged.values():
            out[name] = seen.get(name, _MISSING)
            if out[name] is _MISSING:
                out[name] = _fresh(default)
        return out

    def _build(self, obj, stream, context, path):
        for name, con, default in self.fields:
            value = obj.get(name, _MISSING)
            if value is _MISSING or (value is None and default is not None and not _nullable(con)):
                value = _fresh(default)
            con._build(value, stream, context, path)
        if self.tagged is not None:
            self._build_tags(obj, stream)
        return obj

    def _build_tags(self, obj, stream):
        chunks = []
        for tag, (name, con, default) in self.tagged.items():
            value = obj.get(name, _MISSING)
            if value is _MISSING or value is None or value == default:
                continue
            chunks.append((tag, con.build(value)))
        unknown = obj.get("_unknown_tags")
        if unknown:
            chunks.extend((t, bytes(r)) for t, r in unknown.items())
            chunks.sort(key=lambda c: c[0])
        write_uvarint(stream, len(chunks))
        for tag, raw in chunks:
            write_uvarint(stream, tag)
            write_uvarint(stream, len(raw))
            stream.write(raw)

    # compiled path
    def _emitparse(self, code):
        install_helpers(code)
        code.linkedinstances[id(self)] = self
        fname = f"parse_kstruct_{code.allocateId()}"
        lines = [f"def {fname}(io, this):", "    result = Container()"]
        for name, con, _ in self.fields:
            lines.append(f"    result[{name!r}] = {con._compileparse(code)}")
        if self.tagged is not None:
            lines.append(f"    linkedinstances[{id(self)}]._parse_tags(io, result)")
        lines.append("    return result")
        code.append("\n".join(lines) + "\n")
        return f"{fname}(io, this)"

    def _emitbuild(self, code):
        install_helpers(code)
        code.linkedinstances[id(self)] = self
        fname = f"build_kstruct_{code.allocateId()}"
        lines = [f"def {fname}(objdict, io, this):"]
        for name, con, default in self.fields:
            lines.append(f"    obj = objdict.get({name!r}, _k_MISSING)")
            fallback = _default_source(default)
            if _nullable(con) or default is None:
                lines.append(f"    if obj is _k_MISSING: obj = {fallback}")
            else:
                # None means "unset" for a field that cannot be null on the wire
                lines.append(f"    if obj is _k_MISSING or obj is None: obj = {fallback}")
            lines.append(f"    {con._compilebuild(code)}")
        if self.tagged is not None:
            lines.append(f"    linkedinstances[{id(self)}]._build_tags(objdict, io)")
        lines.append("    return objdict")
        code.append("\n".join(lines) + "\n")
        return f"{fname}(obj, io, this)"


def _nullable(con) -> bool:
    return bool(getattr(con, "nullable", False))


def _fresh(default):
    """Mutable defaults (lists, dicts) must not be shared between messages."""
    if isinstance(default, list):
        return []
    if isinstance(default, dict):
        return {}
    return default


def _default_source(default) -> str:
    if isinstance(default, list):
        return "[]"
    if isinstance(default, dict):
        return "{}"
    if isinstance(default, _uuid.UUID):
        return "_k_ZERO_UUID" if default == ZERO_UUID else f"_k_UUID({str(default)!r})"
    return repr(default)


HELPERS["_k_MISSING"] = _MISSING


class NullableStructC(Primitive):
    """A struct that may be null: int8 marker (-1 null, 1 present) before it."""

    def __init__(self, subcon):
        super().__init__()
        self.subcon = subcon
        self.nullable = True

    def _parse(self, stream, context, path):
        marker = _struct.unpack(">b", read_exact(stream, 1))[0]
        if marker < 0:
            return None
        return self.subcon._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        if obj is None:
            stream.write(b"\xff")
            return obj
        stream.write(b"\x01")
        return self.subcon._build(obj, stream, context, path)
