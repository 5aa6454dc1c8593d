"""Confluent's compatibility rules for Protobuf, over compiled descriptors.

Messages are matched by name within their scope, fields by number; each change is a named
difference at a path and Confluent counts some as compatible (``COMPATIBLE``): a field or a
message added, a field removed or renamed, an enum value added or removed, a string field
becoming bytes. The rest are not: the package changed, a message removed, a field's kind
(scalar, message, map) or scalar kind (varint, zigzag, fixed32, fixed64, float, double,
length-delimited) changed, a numeric field's label changed, a required field added or
removed, a oneof losing a field or gaining fields moved out of the message. A field's
message type is compared by its name without the package and, when it comes from another
file, message by message. Restated from Confluent's ``protobuf.diff`` package; the
descriptors come from protoc, so every type name is already resolved.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2

from kipper.broker.schema_registry.protobuf_text import MAIN

F = descriptor_pb2.FieldDescriptorProto
COMPATIBLE = frozenset({
    "MESSAGE_ADDED", "MESSAGE_MOVED", "ENUM_ADDED", "ENUM_REMOVED", "ENUM_CONST_ADDED", "ENUM_CONST_CHANGED",
    "ENUM_CONST_REMOVED", "FIELD_ADDED", "FIELD_REMOVED", "FIELD_NAME_CHANGED",
    "FIELD_STRING_OR_BYTES_LABEL_CHANGED", "ONEOF_ADDED", "ONEOF_REMOVED", "ONEOF_FIELD_ADDED",
})
SCALAR_KINDS = {
    F.TYPE_INT32: "GENERAL_NUMBER", F.TYPE_INT64: "GENERAL_NUMBER", F.TYPE_UINT32: "GENERAL_NUMBER",
    F.TYPE_UINT64: "GENERAL_NUMBER", F.TYPE_BOOL: "GENERAL_NUMBER", F.TYPE_ENUM: "GENERAL_NUMBER",
    F.TYPE_SINT32: "SIGNED_NUMBER", F.TYPE_SINT64: "SIGNED_NUMBER",
    F.TYPE_STRING: "STRING_OR_BYTES", F.TYPE_BYTES: "STRING_OR_BYTES",
    F.TYPE_FIXED32: "FIXED32", F.TYPE_SFIXED32: "FIXED32", F.TYPE_FIXED64: "FIXED64", F.TYPE_SFIXED64: "FIXED64",
    F.TYPE_FLOAT: "FLOAT", F.TYPE_DOUBLE: "DOUBLE",
}


class TypeInfo:
    def __init__(self, proto, package: str, file: str, is_map: bool, syntax: str):
        self.proto, self.package, self.file, self.is_map, self.syntax = proto, package, file, is_map, syntax

    @property
    def is_enum(self) -> bool:
        return isinstance(self.proto, descriptor_pb2.EnumDescriptorProto)


def types_of(schema) -> dict[str, TypeInfo]:
    """Every message and enum the schema can name (its own and its imports'), by full name."""
    out: dict[str, TypeInfo] = {}
    for name, fd in schema.files.items():
        prefix = f".{fd.package}" if fd.package else ""
        syntax = fd.syntax or "proto2"
        for m in fd.message_type:
            _collect(out, m, prefix, fd.package, name, syntax)
        for e in fd.enum_type:
            out[f"{prefix}.{e.name}"] = TypeInfo(e, fd.package, name, False, syntax)
    return out


def _collect(out: dict, m, prefix: str, package: str, file: str, syntax: str) -> None:
    full = f"{prefix}.{m.name}"
    out[full] = TypeInfo(m, package, file, m.options.map_entry, syntax)
    for n in m.nested_type:
        _collect(out, n, full, package, file, syntax)
    for e in m.enum_type:
        out[f"{full}.{e.name}"] = TypeInfo(e, package, file, False, syntax)


class Context:
    def __init__(self, original: dict[str, TypeInfo], update: dict[str, TypeInfo], refs_o: dict, refs_u: dict):
        self.original, self.update = original, update
        self.refs_o, self.refs_u = refs_o, refs_u  # file name -> (subject, version)
        self.syntax = ("proto3", "proto3")  # of the messages being compared (original, update)
        self.path: list[str] = []
        self.inside: set[int] = set()
        self.diffs: list[tuple[str, str]] = []

    def sub(self) -> "Context":
        ctx = Context(self.original, self.update, self.refs_o, self.refs_u)
        ctx.path, ctx.inside, ctx.syntax = list(self.path), set(self.inside), self.syntax
        return ctx

    def add(self, kind: str) -> None:
        self.diffs.append((kind, "#/" + "/".join(self.path)))

    def compatible(self) -> bool:
        return all(kind in COMPATIBLE for kind, _ in self.diffs)


def differences(original, update) -> list[tuple[str, str]]:
    """``update`` against ``original`` (both ProtobufSchema)."""
    ctx = Context(types_of(original), types_of(update),
                  {r.name: (r.subject, r.version) for r in original.references},
                  {r.name: (r.subject, r.version) for r in update.references})
    ctx.syntax = (original.main.syntax or "proto2", update.main.syntax or "proto2")
    if original.main.package != update.main.package:
        ctx.add("PACKAGE_CHANGED")
    _types(ctx, original.main.message_type, original.main.enum_type,
           update.main.message_type, update.main.enum_type)
    return ctx.diffs


def _types(ctx: Context, messages_o, enums_o, messages_u, enums_u) -> None:
    index_o = {m.name: (i, m) for i, m in enumerate(messages_o)}
    index_u = {m.name: (i, m) for i, m in enumerate(messages_u)}
    for name in sorted(set(index_o) | set(index_u)):
        ctx.path.append(name)
        a, b = index_o.get(name), index_u.get(name)
        if b is None:
            if not a[1].options.map_entry:
                ctx.add("MESSAGE_REMOVED")
        elif a is None:
            if not b[1].options.map_entry:
                ctx.add("MESSAGE_ADDED")
        else:
            _message(ctx, a[1], b[1])
            if a[0] != b[0]:
                ctx.add("MESSAGE_MOVED")
        ctx.path.pop()
    enum_o, enum_u = {e.name: e for e in enums_o}, {e.name: e for e in enums_u}
    for name in sorted(set(enum_o) | set(enum_u)):
        ctx.path.append(name)
        if name not in enum_u:
            ctx.add("ENUM_REMOVED")
        elif name not in enum_o:
            ctx.add("ENUM_ADDED")
        else:
            _enum(ctx, enum_o[name], enum_u[name])
        ctx.path.pop()


def _enum(ctx: Context, a, b) -> None:
    by_o = {v.number: v for v in a.value}
    by_u = {v.number: v for v in b.value}
    for number in sorted(set(by_o) | set(by_u)):
        ctx.path.append(str(number))
        if number not in by_u:
            ctx.add("ENUM_CONST_REMOVED")
        elif number not in by_o:
            ctx.add("ENUM_CONST_ADDED")
        elif by_o[number].name != by_u[number].name:
            ctx.add("ENUM_CONST_CHANGED")
        ctx.path.pop()


def _oneof_groups(m) -> tuple[dict[int, object], dict[str, list]]:
    """(fields outside real oneofs by number, oneof name -> its fields); a proto3
    ``optional`` field's synthetic oneof is not a oneof."""
    plain, groups = {}, {}
    for f in m.field:
        if f.HasField("oneof_index") and not f.proto3_optional:
            groups.setdefault(m.oneof_decl[f.oneof_index].name, []).append(f)
        else:
            plain[f.number] = f
    return plain, groups


def _message(ctx: Context, a, b) -> None:
    if id(a) in ctx.inside:
        return
    ctx.inside.add(id(a))
    plain_o, oneofs_o = _oneof_groups(a)
    plain_u, oneofs_u = _oneof_groups(b)
    in_oneof_o = {f.number for fields in oneofs_o.values() for f in fields}
    for name, fields in oneofs_u.items():
        ctx.path.append(name)
        moved = sum(1 for f in fields if plain_o.pop(f.number, None) is not None)
        existing = sum(1 for f in fields if f.number in in_oneof_o)
        if moved > 1:
            ctx.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF")
        elif moved == 1 and existing > 0:
            ctx.add("FIELD_MOVED_TO_EXISTING_ONEOF")
        ctx.path.pop()
    for name in sorted(set(oneofs_o) | set(oneofs_u)):
        ctx.path.append(name)
        if name not in oneofs_u:
            ctx.add("ONEOF_REMOVED")
        elif name not in oneofs_o:
            ctx.add("ONEOF_ADDED")
        else:
            by_o = {f.number: f for f in oneofs_o[name]}
            by_u = {f.number: f for f in oneofs_u[name]}
            for number in sorted(set(by_o) | set(by_u)):
                ctx.path.append(str(number))
                if number not in by_u:
                    ctx.add("ONEOF_FIELD_REMOVED")
                elif number not in by_o:
                    ctx.add("ONEOF_FIELD_ADDED")
                else:
                    _field(ctx, by_o[number], by_u[number], True)
                ctx.path.pop()
        ctx.path.pop()
    for number in sorted(set(plain_o) | set(plain_u)):
        ctx.path.append(str(number))
        fa, fb = plain_o.get(number), plain_u.get(number)
        if fb is None:
            ctx.add("REQUIRED_FIELD_REMOVED" if fa.label == F.LABEL_REQUIRED else "FIELD_REMOVED")
        elif fa is None:
            ctx.add("REQUIRED_FIELD_ADDED" if fb.label == F.LABEL_REQUIRED else "FIELD_ADDED")
        else:
            _field(ctx, fa, fb, False)
        ctx.path.pop()
    _types(ctx, a.nested_type, a.enum_type, b.nested_type, b.enum_type)
    ctx.inside.discard(id(a))


def _label(f, in_oneof: bool, syntax: str) -> str | None:
    """The label as the .proto spelled it: none for proto3's implicit presence and oneofs."""
    if in_oneof:
        return None
    if f.label == F.LABEL_REPEATED:
        return "REPEATED"
    if f.label == F.LABEL_REQUIRED:
        return "REQUIRED"
    return "OPTIONAL" if f.proto3_optional or syntax != "proto3" else None


def _field(ctx: Context, a, b, in_oneof: bool) -> None:
    if a.name != b.name:
        ctx.add("FIELD_NAME_CHANGED")
    _labels_and_types(ctx, _label(a, in_oneof, ctx.syntax[0]), _label(b, in_oneof, ctx.syntax[1]),
                      _kind_of(ctx.original, a), _kind_of(ctx.update, b))


def _kind_of(types: dict[str, TypeInfo], f):
    """(kind, detail): ("scalar", type) / ("message", full name) / ("map", (key, value))."""
    if f.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        info = types.get(f.type_name)
        if info is not None and info.is_map:
            entry = info.proto
            return "map", (_kind_of(types, entry.field[0]), _kind_of(types, entry.field[1]))
        return "message", f.type_name
    return "scalar", f.type


def _labels_and_types(ctx: Context, label_a, label_b, kind_a, kind_b) -> None:
    if kind_a[0] != kind_b[0]:
        ctx.add("FIELD_KIND_CHANGED")
    elif kind_a[0] == "scalar":
        sa, sb = SCALAR_KINDS[kind_a[1]], SCALAR_KINDS[kind_b[1]]
        if sa != sb:
            ctx.add("FIELD_SCALAR_KIND_CHANGED")
        elif label_a is not None and label_b is not None and label_a != label_b:
            ctx.add("FIELD_STRING_OR_BYTES_LABEL_CHANGED" if sa == "STRING_OR_BYTES" else "FIELD_NUMERIC_LABEL_CHANGED")
    elif kind_a[0] == "message":
        _message_types(ctx, kind_a[1], kind_b[1])
    else:
        _labels_and_types(ctx, None, None, kind_a[1][0], kind_b[1][0])
        _labels_and_types(ctx, None, None, kind_a[1][1], kind_b[1][1])


def _message_types(ctx: Context, name_a: str, name_b: str) -> None:
    info_a, info_b = ctx.original.get(name_a), ctx.update.get(name_b)
    if info_a is None or info_b is None:
        if name_a != name_b:
            ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    local_a = _local(name_a, info_a.package)
    local_b = _local(name_b, info_b.package)
    if local_a != local_b:
        ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    ref_a, ref_b = _ref(ctx.refs_o, info_a.file), _ref(ctx.refs_u, info_b.file)
    if ref_a is None or ref_b is None or ref_a != ref_b:
        sub = ctx.sub()
        sub.syntax = (info_a.syntax, info_b.syntax)
        _message(sub, info_a.proto, info_b.proto)
        ctx.diffs.extend(sub.diffs)
        if not sub.compatible():
            ctx.add("FIELD_NAMED_TYPE_CHANGED")


def _ref(refs: dict, file: str):
    return ("", -1) if file == MAIN else refs.get(file)


def _local(full: str, package: str) -> str:
    full = full.lstrip(".")
    return full[len(package) + 1:] if package and full.startswith(package + ".") else full
