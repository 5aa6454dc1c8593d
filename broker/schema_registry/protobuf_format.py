"""Protobuf schemas, compiled by protoc (``grpcio-tools``) into descriptors (``protobuf``).

A ``.proto`` file is what protoc says it is: the compiler that defines the language checks
the syntax, resolves every type across the imports (which the schema's references provide,
by their names; ``google/protobuf/*`` are built in, ``google/type/*`` when
googleapis-common-protos is installed), and refuses a duplicate field number or an unknown
type with protoc's own message. A parser of our own would be a second opinion on the
language. A schema sent as a base64 ``FileDescriptorProto`` (confluent-kafka's serializer
sends that) is written as text first (``protobuf_text``) and compiled like any other. The
canonical text is the compiled descriptor written back; ``format=serialized`` is the
descriptor in base64, as Confluent answers it. Compatibility is Confluent's rules
(``protobuf_compat``).
"""

from __future__ import annotations

import ast
import atexit
import base64
import binascii
import functools
import importlib
import importlib.util
import os
import re
import shutil
import tempfile
import threading
import warnings
from pathlib import Path

import grpc_tools
from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError
from grpc_tools import _protoc_compiler

from kipper.broker.schema_registry import protobuf_compat
from kipper.broker.schema_registry.model import PROTOBUF, Reference
from kipper.broker.schema_registry.protobuf_text import MAIN, render

BUILTIN_PREFIXES = ("google/protobuf/", "google/type/", "confluent/")
_B64 = re.compile(r"^[A-Za-z0-9+/=\s]+$")


class InvalidSchema(ValueError):
    pass


class ProtobufSchema:
    schema_type = PROTOBUF

    def __init__(self, main: descriptor_pb2.FileDescriptorProto, files: dict[str, descriptor_pb2.FileDescriptorProto],
                 dependencies: dict[str, str], references: tuple[Reference, ...], text: str):
        self.main = main
        self.files = files  # every imported file, by name
        self.dependencies = dependencies
        self.references = references
        self.canonical = text

    def normalized(self) -> "ProtobufSchema":
        return ProtobufSchema(self.main, self.files, self.dependencies, tuple(sorted(set(self.references))),
                              self.canonical)

    def formatted(self, fmt: str) -> str:
        if fmt == "serialized":
            return base64.standard_b64encode(self.main.SerializeToString()).decode("ascii")
        return self.canonical

    def backward_errors(self, previous: "ProtobufSchema") -> list[str]:
        found = protobuf_compat.differences(previous, self)
        return [f"{{errorType:\"{kind}\", description:\"The change '{kind}' at path '{path}' between the "
                f"<writer> and <reader> schema is incompatible'}}" for kind, path in found
                if kind not in protobuf_compat.COMPATIBLE]


def parse(text: str, dependencies: dict[str, str], references: tuple[Reference, ...] = (), *,
          is_new: bool) -> ProtobufSchema:
    """``dependencies``: the files the references name, by name (text or base64), each after
    the files it imports."""
    deps: dict[str, str] = {}
    for name, dep in dependencies.items():
        deps[name] = as_text(dep, deps)
    main, files = compile_proto(as_text(text, deps), deps)
    imported = [files[n] for n in files if n != MAIN]
    canonical = render(main, imported)
    return ProtobufSchema(main, files, deps, references, canonical)


def as_text(schema: str, known: dict[str, str]) -> str:
    """A base64 FileDescriptorProto written as .proto text (its custom options read with
    the files it imports, from ``known``); text as it is."""
    stripped = schema.strip()
    if not stripped or not _B64.match(stripped):
        return schema
    try:
        fd = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(stripped, validate=False))
    except (binascii.Error, DecodeError, ValueError):
        return schema
    if not (fd.message_type or fd.enum_type or fd.service or fd.package or fd.dependency):
        return schema
    imports = [d for d in fd.dependency if d in known or d.startswith(BUILTIN_PREFIXES)]
    files: list = []
    if imports and _custom_options(fd):
        stub = 'syntax = "proto3";\n' + "".join(f'import "{d}";\n' for d in imports)
        try:
            _, compiled = compile_proto(stub, known)
            files = [f for n, f in compiled.items() if n != MAIN]
        except InvalidSchema:
            files = []
    return render(fd, files)


def _custom_options(fd: descriptor_pb2.FileDescriptorProto) -> bool:
    """Does an options message of the file hold fields descriptor.proto does not declare
    (custom options, whose declarations are in the imports)?"""
    def unknown(options) -> bool:
        if not options.ByteSize():
            return False
        known = type(options)()
        known.CopyFrom(options)
        known.DiscardUnknownFields()
        return known.ByteSize() != options.ByteSize()

    def message(m) -> bool:
        return (unknown(m.options) or any(unknown(f.options) for f in m.field)
                or any(unknown(o.options) for o in m.oneof_decl) or any(message(n) for n in m.nested_type)
                or any(enum(e) for e in m.enum_type))

    def enum(e) -> bool:
        return unknown(e.options) or any(unknown(v.options) for v in e.value)

    return (unknown(fd.options) or any(message(m) for m in fd.message_type) or any(enum(e) for e in fd.enum_type)
            or any(unknown(s.options) or any(unknown(m.options) for m in s.method) for s in fd.service)
            or any(unknown(f.options) for f in fd.extension))


def compile_proto(text: str, deps: dict[str, str]) -> tuple[descriptor_pb2.FileDescriptorProto, dict]:
    """protoc over the schema and its dependencies in a private directory (the last
    compilations are remembered: a client sends the same schema to register and to look up)."""
    return _compiled(text, tuple(deps.items()))


@functools.lru_cache(maxsize=256)
def _compiled(text: str, dep_items: tuple) -> tuple[descriptor_pb2.FileDescriptorProto, dict]:
    deps = dict(dep_items)
    with _WORKDIR_LOCK:
        root = _workdir()
        written = []
        try:
            for name, dep in {**deps, MAIN: text}.items():
                if name.startswith("/") or ".." in Path(name).parts:
                    raise InvalidSchema(f"reference name '{name}' is not a relative .proto path")
                path = root / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(dep, encoding="utf-8")
                written.append(path)
            written += _write_builtins(root, text, deps)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # protoc's warnings (an unused import) are not refusals
                    generated = _protoc_compiler.get_protos(MAIN.encode(), [str(root).encode(), *_include_paths()])
            except _protoc_compiler.ProtocErrors as exc:
                message = str(exc).replace(str(root) + os.sep, "")
                raise InvalidSchema(message.replace(MAIN, "schema").strip()) from None
        finally:  # the files go, so that the next schema sees only its own imports
            for path in written:
                path.unlink(missing_ok=True)
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for module, code in generated:
        fd = _descriptor_of(module.decode(), code)
        files[fd.name] = fd
    return files[MAIN], files


_SERIALIZED = re.compile(rb"AddSerializedFile\((b'(?:[^'\\]|\\.)*')\)")


def _descriptor_of(module: str, code: bytes) -> descriptor_pb2.FileDescriptorProto:
    """The serialized file descriptor protoc's Python output registers (AddSerializedFile);
    a built-in file's comes from the protobuf package, parsed once."""
    name = module.removesuffix("_pb2.py") + ".proto"
    if name.startswith("google/protobuf/"):
        fd = _builtin(name)
        if fd is not None:
            return fd
    found = _SERIALIZED.search(code)
    if found is None:
        raise InvalidSchema("protoc produced no descriptor")
    return descriptor_pb2.FileDescriptorProto.FromString(ast.literal_eval(found.group(1).decode("latin-1")))


@functools.lru_cache(maxsize=64)
def _builtin(name: str) -> descriptor_pb2.FileDescriptorProto | None:
    try:
        module = importlib.import_module("google.protobuf." + name.removeprefix("google/protobuf/")
                                         .removesuffix(".proto").replace("/", ".") + "_pb2")
    except ImportError:
        return None
    return descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)


_INCLUDES: list[bytes] | None = None
_WORKDIR: Path | None = None
_WORKDIR_LOCK = threading.Lock()


def _workdir() -> Path:
    """One private directory per process for protoc's inputs (a directory made and removed
    per schema cost milliseconds on some filesystems)."""
    global _WORKDIR
    if _WORKDIR is None:
        _WORKDIR = Path(tempfile.mkdtemp(prefix="kipper-proto-"))
        atexit.register(shutil.rmtree, _WORKDIR, True)
    return _WORKDIR


def _include_paths() -> list[bytes]:
    """google/protobuf/* from grpcio-tools; google/type/* from googleapis-common-protos."""
    global _INCLUDES
    if _INCLUDES is None:
        paths = [os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")]
        spec = importlib.util.find_spec("google.type")
        if spec is not None and spec.submodule_search_locations:
            for location in spec.submodule_search_locations:
                paths.append(str(Path(location).parents[1]))
        _INCLUDES = [p.encode() for p in paths]
    return _INCLUDES


def _write_builtins(root: Path, text: str, deps: dict[str, str]) -> list[Path]:
    """confluent/*.proto a schema imports without a reference, from confluent-kafka's own
    descriptors when it is installed (Confluent's registry has them built in)."""
    wanted = {m for t in (text, *deps.values()) for m in re.findall(r'import\s+(?:public\s+|weak\s+)?"(confluent/[^"]+)"', t)}
    wanted -= set(deps)
    written = []
    for name, fd in _confluent_files().items() if wanted else ():
        if name in wanted:
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(fd, []), encoding="utf-8")
            written.append(path)
    return written


def _confluent_files() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    out = {}
    for module in ("confluent_kafka.schema_registry.confluent.meta_pb2",
                   "confluent_kafka.schema_registry.confluent.types.decimal_pb2"):
        try:
            mod = __import__(module, fromlist=["DESCRIPTOR"])
        except ImportError:
            continue
        fd = descriptor_pb2.FileDescriptorProto.FromString(mod.DESCRIPTOR.serialized_pb)
        out[fd.name] = fd
    return out
