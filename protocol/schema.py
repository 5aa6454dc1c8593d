"""Declarative Kafka message schemas, turned into one construct per version.

A message module declares its fields once, the way Kafka's JSON schemas do
(type, versions, nullableVersions, tag/taggedVersions, default). ``Api``
builds the construct for any (version, request|response) from that single
declaration and compiles it the first time it is needed. Flexible versions
(KIP-482) only change which primitives are chosen; messages never special-case
them.
"""

from __future__ import annotations

import io as _io
import threading
from dataclasses import dataclass, field as dc_field
from typing import Callable

from construct import Container

from kipper.protocol import primitives as p
from kipper.protocol.structs import KStruct, NullableStructC

_UNSET = object()
INF = 1 << 15


@dataclass(frozen=True)
class Versions:
    """A version range as written in Kafka schemas: "3+", "0-12", "5", "none"."""

    lo: int
    hi: int

    @classmethod
    def parse(cls, text: str | None) -> "Versions":
        if text is None or text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), INF)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        return self.lo <= version <= self.hi


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    versions: Versions
    nullable: Versions
    tag: int | None
    tagged: Versions
    default: object
    fields: tuple = ()
    flexible: Versions | None = None  # per-field override, e.g. header ClientId


def F(name: str, type: str, versions: str = "0+", *, nullable: str | None = None,
      tag: int | None = None, tagged: str | None = None, default=_UNSET,
      fields=(), flexible: str | None = None) -> Field:
    """Declare one field. ``type`` is a Kafka type name, "[]<type>" for arrays,
    "[]" for an array of structs (with ``fields``) or "{}" for a struct."""
    return Field(name, type, Versions.parse(versions), Versions.parse(nullable), tag,
                 Versions.parse(tagged), default, tuple(fields),
                 Versions.parse(flexible) if flexible is not None else None)


_FIXED = {
    "int8": (p.Int8, 0), "int16": (p.Int16, 0), "int32": (p.Int32, 0),
    "int64": (p.Int64, 0), "uint16": (p.UInt16, 0), "uint32": (p.UInt32, 0),
    "float64": (p.Float64, 0.0), "bool": (p.Boolean, False), "uuid": (p.Uuid, p.ZERO_UUID),
}


def _sized(type_: str, flexible: bool, nullable: bool):
    text = type_ == "string"
    table = {
        (True, False, False): p.String, (True, False, True): p.NullableString,
        (True, True, False): p.CompactString, (True, True, True): p.CompactNullableString,
        (False, False, False): p.KBytes, (False, False, True): p.NullableBytes,
        (False, True, False): p.CompactBytes, (False, True, True): p.CompactNullableBytes,
    }
    return table[(text, flexible, nullable)]


def _default_for(f: Field, nullable: bool):
    if f.default is not _UNSET:
        d = f.default
        if isinstance(d, str) and f.type in _FIXED and f.type != "uuid":
            # schema defaults arrive as text ("-1", "true")
            return {"true": True, "false": False}.get(d, d) if f.type == "bool" else (
                float(d) if f.type == "float64" else int(d, 0))
        if d == "null":
            return None
        return d
    if f.type in _FIXED:
        return _FIXED[f.type][1]
    if f.type == "string":
        return ""
    if f.type in ("bytes", "records"):
        return None if nullable else b""
    if f.type.startswith("[]"):
        return []
    return {}


def build_struct(fields, version: int, flexible: bool) -> KStruct:
    regular = []
    tagged = {} if flexible else None
    for f in fields:
        if version not in f.versions:
            continue
        nullable = version in f.nullable
        con = _construct_for(f, version, flexible, nullable)
        default = _default_for(f, nullable)
        if flexible and f.tag is not None and version in f.tagged:
            tagged[f.tag] = (f.name, con, default)
        else:
            regular.append((f.name, con, default))
    return KStruct(regular, tagged)


def _construct_for(f: Field, version: int, flexible: bool, nullable: bool):
    if f.flexible is not None:
        flexible = version in f.flexible
    t = f.type
    if t in _FIXED:
        return _FIXED[t][0]
    if t in ("string", "bytes", "records"):
        return _sized(t, flexible, nullable)
    if t.startswith("[]"):
        inner = t[2:]
        if inner and not f.fields:
            elem = _FIXED[inner][0] if inner in _FIXED else _sized(inner, flexible, False)
        else:
            elem = build_struct(f.fields, version, flexible)
        return p.KArray(elem, compact=flexible, nullable=nullable)
    struct = build_struct(f.fields, version, flexible)
    return NullableStructC(struct) if nullable else struct


def _has_records(fields) -> bool:
    return any(f.type == "records" or _has_records(f.fields) for f in fields)


class Schema:
    """One message at one version: compiled parse/build of a KStruct."""

    def __init__(self, struct: KStruct):
        self.struct = struct
        compiled = struct.compile()
        self._parse = compiled.parsefunc
        self._build = compiled.buildfunc

    def parse(self, data, offset: int = 0) -> Container:
        stream = _io.BytesIO(data)
        if offset:
            stream.seek(offset)
        return self._parse(stream, None)

    def parse_stream(self, stream) -> Container:
        return self._parse(stream, None)

    def build(self, obj) -> bytes:
        stream = _io.BytesIO()
        self._build(obj, stream, None)
        return stream.getvalue()

    def build_into(self, obj, stream) -> None:
        self._build(obj, stream, None)


@dataclass(frozen=True)
class FastCodec:
    """An API's hand-written hot paths, declared in its ``Api(fast=...)`` beside the
    schema they stand in for. Each returns None for what it does not handle, and the
    schema does that instead; property tests check that both agree
    (tests/property/test_produce_codec.py, test_fetch_codec.py)."""

    parse_request: Callable | None = None  # (buf, pos, version) -> body
    encode_response: Callable | None = None  # (version, correlation_id, body) -> frame
    encode_request: Callable | None = None  # (version, correlation_id, client_id, body) -> buffers
    parse_response: Callable | None = None  # (frame, version) -> (correlation_id, body)
    # Requests answered in runs (Produce: protocol/produce_codec.py). parse_frame(frame,
    # version, kept) -> (client_id, body, kept) reads the header and the body together, with
    # what the connection keeps of its earlier requests (``kept``, whose ``found`` is the
    # head the frame repeated); repeat(frame, version, head) -> what a frame repeating
    # ``head`` adds to it (its records), or None; run(body, parts) -> what the handler gets
    # for a run of more than one (a request alone comes as ``(body,)``).
    parse_frame: Callable | None = None
    repeat: Callable | None = None
    run: Callable | None = None


NO_FAST_CODEC = FastCodec()


@dataclass
class Api:
    """A Kafka API: its key, version ranges and the fields of both messages.

    ``valid`` is what the upstream schema declares; ``supported`` is what this
    project implements and advertises in ApiVersions.
    """

    key: int
    name: str
    valid: str
    flexible: str
    request: tuple
    response: tuple
    supported: str | None = None
    advertise: bool = True
    fast: FastCodec = dc_field(default=NO_FAST_CODEC, repr=False)
    # (body, version) -> None, raising ValueError for a request Kafka refuses to read at
    # all: its request classes check some fields while parsing (the ACL APIs' UNKNOWN
    # codes), and such a request closes the connection like a malformed one
    check: Callable | None = dc_field(default=None, repr=False)
    _cache: dict = dc_field(default_factory=dict, repr=False)
    _lock: threading.Lock = dc_field(default_factory=threading.Lock, repr=False)

    def __post_init__(self):
        self.valid_range = Versions.parse(self.valid)
        self.flexible_range = Versions.parse(self.flexible)
        self._flexible_lo, self._flexible_hi = self.flexible_range.lo, self.flexible_range.hi
        rng = Versions.parse(self.supported or self.valid)
        self.min_version, self.max_version = rng.lo, rng.hi
        # responses that carry stored batches are sent as a list of buffers (no join)
        self.carries_records = _has_records(self.response)

    def parse_request(self, buf, pos: int, version: int):
        """A request body from ``buf[pos:]`` (after the header): the fast path's, or the
        schema's for what it leaves."""
        fast = self.fast.parse_request
        if fast is not None:
            body = fast(buf, pos, version)
            if body is not None:
                return body
        body = self.request_schema(version).parse(bytes(buf[pos:]))
        if self.check is not None:
            self.check(body, version)
        return body

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def is_flexible(self, version: int) -> bool:
        return self._flexible_lo <= version <= self._flexible_hi

    def request_header_version(self, version: int) -> int:
        return 2 if self.is_flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        if self.key == 18:  # ApiVersions: always v0 so any client can read it
            return 0
        return 1 if self.is_flexible(version) else 0

    def _schema(self, which: str, version: int) -> Schema:
        key = (which, version)
        schema = self._cache.get(key)
        if schema is None:
            with self._lock:
                schema = self._cache.get(key)
                if schema is None:
                    if version not in self.valid_range:
                        raise KeyError(f"{self.name} has no version {version}")
                    fields = self.request if which == "request" else self.response
                    schema = Schema(build_struct(fields, version, self.is_flexible(version)))
                    self._cache[key] = schema
        return schema

    def request_schema(self, version: int) -> Schema:
        return self._schema("request", version)

    def response_schema(self, version: int) -> Schema:
        return self._schema("response", version)

    def field_schema(self, which: str, version: int, path: tuple[str, ...]) -> Schema:
        """A nested field of the request or response alone (an array, a struct), compiled
        for ``version``: ``field_schema("response", 12, ("topics", "partitions"))``
        encodes a topic's partitions the way Metadata v12 carries them."""
        key = (which, version, path)
        schema = self._cache.get(key)
        if schema is None:
            con = self._schema(which, version).struct
            for name in path:
                con = dict((n, c) for n, c, _ in con.fields)[name]
                if isinstance(con, p.KArray) and name != path[-1]:
                    con = con.subcon
            schema = self._cache[key] = Schema(con)
        return schema

    def compile_supported(self) -> None:
        for v in range(self.min_version, self.max_version + 1):
            if v in self.valid_range:
                self.request_schema(v)
                self.response_schema(v)
