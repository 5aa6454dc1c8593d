"""A ``.proto`` file written back from its descriptor (``FileDescriptorProto``).

The registry keeps Protobuf schemas as ``.proto`` text, as Confluent's does, whether a
client sent text or (as confluent-kafka's serializer does) a base64 descriptor; this
printer makes that text, and the text protoc makes of it is the same descriptor again.
One spelling per schema: type names fully qualified (``.pkg.Msg``), maps as ``map<K, V>``,
oneofs where their first field stood, options (custom ones too, read through a pool that
holds the files that declare them) after what they qualify. Proto2 groups are written as
the message and a message-typed field.
"""

from __future__ import annotations

import json

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

F = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    F.TYPE_DOUBLE: "double", F.TYPE_FLOAT: "float", F.TYPE_INT64: "int64", F.TYPE_UINT64: "uint64",
    F.TYPE_INT32: "int32", F.TYPE_FIXED64: "fixed64", F.TYPE_FIXED32: "fixed32", F.TYPE_BOOL: "bool",
    F.TYPE_STRING: "string", F.TYPE_BYTES: "bytes", F.TYPE_UINT32: "uint32", F.TYPE_SFIXED32: "sfixed32",
    F.TYPE_SFIXED64: "sfixed64", F.TYPE_SINT32: "sint32", F.TYPE_SINT64: "sint64",
}
LABELS = {F.LABEL_OPTIONAL: "optional", F.LABEL_REQUIRED: "required", F.LABEL_REPEATED: "repeated"}
MAX_FIELD = 536870911
MAIN = "__schema__.proto"  # the file name a schema itself is compiled under
OPTION_TYPES = {  # which options message each kind of descriptor carries
    "file": "google.protobuf.FileOptions", "message": "google.protobuf.MessageOptions",
    "field": "google.protobuf.FieldOptions", "oneof": "google.protobuf.OneofOptions",
    "enum": "google.protobuf.EnumOptions", "enum_value": "google.protobuf.EnumValueOptions",
    "service": "google.protobuf.ServiceOptions", "method": "google.protobuf.MethodOptions",
}


class Options:
    """Reads options messages; one with custom options (fields descriptor.proto does not
    declare) through a pool of the schema's files, where their declarations are."""

    def __init__(self, files: list[descriptor_pb2.FileDescriptorProto]):
        self.files = files
        self.pool: descriptor_pool.DescriptorPool | None = None  # made on the first custom option
        self.classes: dict[str, type] = {}

    def _with_extensions(self, kind: str, options):
        if self.pool is None:
            self.pool = descriptor_pool.DescriptorPool()
            if "google/protobuf/descriptor.proto" not in {f.name for f in self.files}:
                self.pool.AddSerializedFile(descriptor_pb2.DESCRIPTOR.serialized_pb)
            for f in self.files:
                try:
                    self.pool.Add(f)
                except (TypeError, ValueError):
                    pass  # a file the pool cannot take: its extensions are then not known
        cls = self.classes.get(kind)
        if cls is None:
            cls = self.classes[kind] = message_factory.GetMessageClass(
                self.pool.FindMessageTypeByName(OPTION_TYPES[kind]))
        return cls.FromString(options.SerializeToString())

    def entries(self, kind: str, options) -> list[str]:
        if not options.ByteSize():
            return []
        known = type(options)()
        known.CopyFrom(options)
        known.DiscardUnknownFields()
        message = known if known.ByteSize() == options.ByteSize() else self._with_extensions(kind, options)
        out = []
        for fd, value in message.ListFields():
            if kind == "message" and fd.name == "map_entry":
                continue
            name = f"({fd.full_name})" if fd.is_extension else fd.name
            if _repeated(fd):
                out.extend(f"{name} = {_literal(fd, v)}" for v in value)
            else:
                out.append(f"{name} = {_literal(fd, value)}")
        return out


def _repeated(fd) -> bool:
    """protobuf 6+ has is_repeated (label is gone in 7); older ones only label."""
    repeated = getattr(fd, "is_repeated", None)
    return repeated if repeated is not None else fd.label == fd.LABEL_REPEATED


def _literal(fd, value) -> str:
    if fd.type == fd.TYPE_MESSAGE or fd.type == fd.TYPE_GROUP:
        return "{ " + text_format.MessageToString(value, as_one_line=True) + " }"
    if fd.type == fd.TYPE_ENUM:
        return fd.enum_type.values_by_number[value].name if value in fd.enum_type.values_by_number else str(value)
    if fd.type == fd.TYPE_BOOL:
        return "true" if value else "false"
    if fd.type == fd.TYPE_STRING:
        return json.dumps(value, ensure_ascii=False)
    if fd.type == fd.TYPE_BYTES:
        return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03o}" for b in value) + '"'
    return repr(value) if isinstance(value, float) else str(value)


def render(fd: descriptor_pb2.FileDescriptorProto, files: list[descriptor_pb2.FileDescriptorProto]) -> str:
    """``fd`` as .proto text; ``files``: every file it imports (for custom options)."""
    options = Options([*files, fd])
    out: list[str] = []
    if fd.syntax == "editions":
        out.append(f'edition = "{descriptor_pb2.Edition.Name(fd.edition).removeprefix("EDITION_")}";')
    else:
        out.append(f'syntax = "{fd.syntax or "proto2"}";')
    if fd.package:
        out.append(f"package {fd.package};")
    public, weak = set(fd.public_dependency), set(fd.weak_dependency)
    for i, dep in enumerate(fd.dependency):
        out.append(f'import {"public " if i in public else "weak " if i in weak else ""}"{dep}";')
    out.extend(f"option {o};" for o in options.entries("file", fd.options))
    proto3 = fd.syntax == "proto3"
    for m in fd.message_type:
        out.extend(_message(m, options, proto3, ""))
    for e in fd.enum_type:
        out.extend(_enum(e, options, ""))
    out.extend(_extensions(fd.extension, options, proto3, ""))
    for s in fd.service:
        out.append(f"service {s.name} {{")
        out.extend(f"  option {o};" for o in options.entries("service", s.options))
        for m in s.method:
            rpc = (f"  rpc {m.name} ({'stream ' if m.client_streaming else ''}{m.input_type}) returns "
                   f"({'stream ' if m.server_streaming else ''}{m.output_type})")
            method_options = options.entries("method", m.options)
            out.append(rpc + (" {\n" + "".join(f"    option {o};\n" for o in method_options) + "  }"
                              if method_options else ";"))
        out.append("}")
    return "\n".join(out) + "\n"


def _message(m, options: Options, proto3: bool, pad: str) -> list[str]:
    out = [f"{pad}message {m.name} {{"]
    inner = pad + "  "
    out.extend(f"{inner}option {o};" for o in options.entries("message", m.options))
    entries = {n.name: n for n in m.nested_type if n.options.map_entry}
    written_oneofs: set[int] = set()
    for f in m.field:
        real_oneof = f.HasField("oneof_index") and not f.proto3_optional
        if real_oneof:
            if f.oneof_index in written_oneofs:
                continue
            written_oneofs.add(f.oneof_index)
            decl = m.oneof_decl[f.oneof_index]
            out.append(f"{inner}oneof {decl.name} {{")
            out.extend(f"{inner}  option {o};" for o in options.entries("oneof", decl.options))
            out.extend(_field(g, options, proto3, inner + "  ", entries, in_oneof=True)
                       for g in m.field if g.HasField("oneof_index") and g.oneof_index == f.oneof_index
                       and not g.proto3_optional)
            out.append(f"{inner}}}")
        else:
            out.append(_field(f, options, proto3, inner, entries))
    for n in m.nested_type:
        if not n.options.map_entry:
            out.extend(_message(n, options, proto3, inner))
    for e in m.enum_type:
        out.extend(_enum(e, options, inner))
    out.extend(_extensions(m.extension, options, proto3, inner))
    for r in m.extension_range:
        out.append(f"{inner}extensions {_range(r.start, r.end - 1)};")
    if m.reserved_range:
        out.append(f"{inner}reserved {', '.join(_range(r.start, r.end - 1) for r in m.reserved_range)};")
    if m.reserved_name:
        out.append(f"{inner}reserved {', '.join(json.dumps(n) for n in m.reserved_name)};")
    out.append(f"{pad}}}")
    return out


def _field(f, options: Options, proto3: bool, pad: str, entries: dict, in_oneof: bool = False) -> str:
    entry_name = f.type_name.rsplit(".", 1)[-1]
    if f.type == F.TYPE_MESSAGE and f.label == F.LABEL_REPEATED and entry_name in entries:
        entry = entries[entry_name]
        key, value = entry.field[0], entry.field[1]
        head = f"map<{_type(key)}, {_type(value)}> {f.name} = {f.number}"
    else:
        label = ""
        if not in_oneof:
            if f.label == F.LABEL_REPEATED:
                label = "repeated "
            elif f.label == F.LABEL_REQUIRED:
                label = "required "
            elif not proto3 or f.proto3_optional:
                label = "optional "
        head = f"{label}{_type(f)} {f.name} = {f.number}"
    extra = []
    if f.HasField("default_value"):
        extra.append(f"default = {_default(f)}")
    if f.HasField("json_name"):
        extra.append(f"json_name = {json.dumps(f.json_name)}")
    extra.extend(options.entries("field", f.options))
    return f"{pad}{head}{' [' + ', '.join(extra) + ']' if extra else ''};"


def _type(f) -> str:
    return SCALARS.get(f.type) or f.type_name


def _default(f) -> str:
    if f.type == F.TYPE_STRING:
        return json.dumps(f.default_value, ensure_ascii=False)
    if f.type == F.TYPE_BYTES:
        return '"' + f.default_value + '"'  # kept escaped as protoc gives it
    return f.default_value


def _enum(e, options: Options, pad: str) -> list[str]:
    out = [f"{pad}enum {e.name} {{"]
    inner = pad + "  "
    out.extend(f"{inner}option {o};" for o in options.entries("enum", e.options))
    for v in e.value:
        value_options = options.entries("enum_value", v.options)
        out.append(f"{inner}{v.name} = {v.number}{' [' + ', '.join(value_options) + ']' if value_options else ''};")
    if e.reserved_range:
        out.append(f"{inner}reserved {', '.join(_range(r.start, r.end) for r in e.reserved_range)};")
    if e.reserved_name:
        out.append(f"{inner}reserved {', '.join(json.dumps(n) for n in e.reserved_name)};")
    out.append(f"{pad}}}")
    return out


def _extensions(fields, options: Options, proto3: bool, pad: str) -> list[str]:
    out: list[str] = []
    by_extendee: dict[str, list] = {}
    for f in fields:
        by_extendee.setdefault(f.extendee, []).append(f)
    for extendee, group in by_extendee.items():
        out.append(f"{pad}extend {extendee} {{")
        out.extend(_field(f, options, proto3, pad + "  ", {}) for f in group)
        out.append(f"{pad}}}")
    return out


def _range(start: int, end: int) -> str:
    if start == end:
        return str(start)
    return f"{start} to {'max' if end >= MAX_FIELD else end}"
