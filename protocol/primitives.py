"""Kafka wire primitives as construct classes.

Fixed-width integers come from construct. The forms Kafka adds (unsigned and
zig-zag varints, classic and compact strings/bytes/arrays with their null
encodings, uuids, tagged-field sections) are Construct subclasses here. Each
one parses and builds on its own and also emits lean source for construct's
compiler, so a compiled message is one flat function with no per-field
context objects.
"""

from __future__ import annotations

import struct as _struct
import uuid as _uuid

from construct import (
    Construct,
    Flag,
    Float64b,
    Int8sb,
    Int16sb,
    Int16ub,
    Int32sb,
    Int32ub,
    Int64sb,
    SizeofError,
    StreamError,
    stream_read,
    stream_write,
)

Int8 = Int8sb
Int16 = Int16sb
Int32 = Int32sb
Int64 = Int64sb
UInt16 = Int16ub
UInt32 = Int32ub
Float64 = Float64b
Boolean = Flag

ZERO_UUID = _uuid.UUID(int=0)

_I16 = _struct.Struct(">h")
_I32 = _struct.Struct(">i")


# --- plain-python varint helpers (also used by the record codec) -------------

def encode_uvarint(value: int) -> bytes:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_uvarint(buf, pos: int = 0) -> tuple[int, int]:
    """Decode an unsigned varint from ``buf`` at ``pos``; return (value, new_pos)."""
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def encode_varint(value: int) -> bytes:
    """Zig-zag signed varint (record fields); valid for 32- and 64-bit values."""
    return encode_uvarint((value << 1) ^ (value >> 63))


def decode_varint(buf, pos: int = 0) -> tuple[int, int]:
    raw, pos = decode_uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def read_exact(io, n: int) -> bytes:
    data = io.read(n)
    if len(data) != n:
        raise StreamError(f"needed {n} bytes, got {len(data)}")
    return data


def read_uvarint(io) -> int:
    result = 0
    shift = 0
    while True:
        b = io.read(1)
        if not b:
            raise StreamError("truncated varint")
        b = b[0]
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result
        shift += 7
        if shift > 63:
            raise StreamError("varint too long")


def write_uvarint(io, value: int) -> None:
    io.write(encode_uvarint(value))


# Names the emitted source refers to. Installed once per compilation.
HELPERS = {
    "_k_read": read_exact,
    "_k_uvarint": read_uvarint,
    "_k_wuvarint": write_uvarint,
    "_k_I16": _I16,
    "_k_I32": _I32,
    "_k_UUID": _uuid.UUID,
    "_k_ZERO_UUID": ZERO_UUID,
    "_k_StreamError": StreamError,
}


def install_helpers(code) -> None:
    """Make HELPERS visible to source emitted into a construct CodeGen."""
    if getattr(code, "_kafka_helpers", False):
        return
    code._kafka_helpers = True
    code.append("from kipper.protocol.primitives import HELPERS as _k_helpers\n"
                "globals().update(_k_helpers)\n")


class Primitive(Construct):
    def _sizeof(self, context, path):
        raise SizeofError("variable size", path=path)


class UVarIntC(Primitive):
    """Unsigned varint: the length prefix of flexible (KIP-482) encodings."""

    def _parse(self, stream, context, path):
        return read_uvarint(stream)

    def _build(self, obj, stream, context, path):
        write_uvarint(stream, obj)
        return obj

    def _emitparse(self, code):
        install_helpers(code)
        return "_k_uvarint(io)"

    def _emitbuild(self, code):
        install_helpers(code)
        return "(_k_wuvarint(io, obj), obj)[1]"


class ZigZagC(Primitive):
    """Zig-zag signed varint, as used inside record batches."""

    def _parse(self, stream, context, path):
        raw = read_uvarint(stream)
        return (raw >> 1) ^ -(raw & 1)

    def _build(self, obj, stream, context, path):
        write_uvarint(stream, (obj << 1) ^ (obj >> 63))
        return obj


UVarInt = UVarIntC()
VarInt = ZigZagC()
VarLong = VarInt  # same encoding; only the range differs


class UuidC(Primitive):
    """16 raw bytes as uuid.UUID; None builds the all-zero "unset" uuid."""

    def _parse(self, stream, context, path):
        return _uuid.UUID(bytes=read_exact(stream, 16))

    def _build(self, obj, stream, context, path):
        stream.write((obj or ZERO_UUID).bytes)
        return obj

    def _sizeof(self, context, path):
        return 16

    def _emitparse(self, code):
        install_helpers(code)
        return "_k_UUID(bytes=_k_read(io, 16))"

    def _emitbuild(self, code):
        install_helpers(code)
        return "(io.write((obj or _k_ZERO_UUID).bytes), obj)[1]"


Uuid = UuidC()


# --- strings and bytes ---------------------------------------------------------

class Sized(Primitive):
    """Length-prefixed string or bytes.

    ``compact`` selects the KIP-482 form (unsigned varint N+1, 0 = null) over the
    classic one (int16 length for strings, int32 for bytes; -1 = null). Bytes
    may be built from a list of chunks, which lets Fetch hand over stored
    batches without joining them: into a GatherStream (protocol/header.py)
    they are not even copied.
    """

    def __init__(self, *, text: bool, compact: bool, nullable: bool):
        super().__init__()
        self.text = text
        self.compact = compact
        self.nullable = nullable

    def _parse(self, stream, context, path):
        if self.compact:
            n = read_uvarint(stream) - 1
        elif self.text:
            n = _I16.unpack(read_exact(stream, 2))[0]
        else:
            n = _I32.unpack(read_exact(stream, 4))[0]
        return self._finish(n, stream)

    def _finish(self, n, stream):
        if n < 0:
            if n == -1 and self.nullable:
                return None
            raise StreamError("null or negative length where the schema forbids it")
        raw = read_exact(stream, n)
        return raw.decode("utf-8") if self.text else raw

    def _build(self, obj, stream, context, path):
        if obj is None:
            if not self.nullable:
                raise StreamError("null where the schema forbids it", path=path)
            self._write_len(stream, -1)
            return obj
        if self.text:
            raw = obj.encode("utf-8")
            self._write_len(stream, len(raw))
            stream.write(raw)
        elif isinstance(obj, (list, tuple)):
            self._write_len(stream, sum(len(c) for c in obj))
            splice = getattr(stream, "splice", None)
            if splice is not None:  # a GatherStream: the chunks are sent from where they are
                splice(obj)
            else:
                for chunk in obj:
                    stream.write(chunk)
        else:
            self._write_len(stream, len(obj))
            stream.write(obj)
        return obj

    def _write_len(self, stream, n: int) -> None:
        if self.compact:
            write_uvarint(stream, n + 1)
        elif self.text:
            stream.write(_I16.pack(n))
        else:
            stream.write(_I32.pack(n))

    def _emitparse(self, code):
        install_helpers(code)
        code.linkedinstances[id(self)] = self
        if self.compact:
            n = "_k_uvarint(io) - 1"
        elif self.text:
            n = "_k_I16.unpack(_k_read(io, 2))[0]"
        else:
            n = "_k_I32.unpack(_k_read(io, 4))[0]"
        return f"linkedinstances[{id(self)}]._finish({n}, io)"

    def _emitbuild(self, code):
        code.linkedinstances[id(self)] = self
        return f"linkedinstances[{id(self)}]._build(obj, io, None, None)"


String = Sized(text=True, compact=False, nullable=False)
NullableString = Sized(text=True, compact=False, nullable=True)
CompactString = Sized(text=True, compact=True, nullable=False)
CompactNullableString = Sized(text=True, compact=True, nullable=True)
KBytes = Sized(text=False, compact=False, nullable=False)
NullableBytes = Sized(text=False, compact=False, nullable=True)
CompactBytes = Sized(text=False, compact=True, nullable=False)
CompactNullableBytes = Sized(text=False, compact=True, nullable=True)


# --- arrays ----------------------------------------------------------------------

class Encoded(bytes):
    """An array already encoded for the version being built (count and items): written
    as it is. Lets a handler cache what does not change between requests, such as the
    partitions of a 1,000-partition topic in a Metadata answer."""

    __slots__ = ()


HELPERS["_k_Encoded"] = Encoded


class KArray(Primitive):
    """Kafka array: int32 count (classic) or unsigned varint count+1 (compact)."""

    def __init__(self, subcon, *, compact: bool, nullable: bool):
        super().__init__()
        self.subcon = subcon
        self.compact = compact
        self.nullable = nullable

    def _count(self, stream) -> int:
        n = read_uvarint(stream) - 1 if self.compact else _I32.unpack(read_exact(stream, 4))[0]
        if n < -1:
            raise StreamError(f"negative array length {n}")
        return n

    def _parse(self, stream, context, path):
        n = self._count(stream)
        if n == -1:
            # Some clients send null for arrays the schema calls non-nullable;
            # reading that as empty is what Kafka's own readers tolerate best.
            return None if self.nullable else []
        parse = self.subcon._parsereport
        return [parse(stream, context, path) for _ in range(n)]

    def _build(self, obj, stream, context, path):
        if obj is None:
            stream.write(b"\x00" if self.compact else b"\xff\xff\xff\xff")
            return obj
        if type(obj) is Encoded:
            stream.write(obj)
            return obj
        if self.compact:
            write_uvarint(stream, len(obj) + 1)
        else:
            stream.write(_I32.pack(len(obj)))
        build = self.subcon._build
        for item in obj:
            build(item, stream, context, path)
        return obj

    def _emitparse(self, code):
        install_helpers(code)
        code.linkedinstances[id(self)] = self
        fname = f"parse_karray_{code.allocateId()}"
        empty = "None" if self.nullable else "[]"
        code.append(f"""
def {fname}(io, this):
    n = linkedinstances[{id(self)}]._count(io)
    if n == -1:
        return {empty}
    return [{self.subcon._compileparse(code)} for _ in range(n)]
""")
        return f"{fname}(io, this)"

    def _emitbuild(self, code):
        install_helpers(code)
        fname = f"build_karray_{code.allocateId()}"
        if self.compact:
            head = "_k_wuvarint(io, len(items) + 1)"
            null = "io.write(b'\\x00')"
        else:
            head = "io.write(_k_I32.pack(len(items)))"
            null = "io.write(b'\\xff\\xff\\xff\\xff')"
        code.append(f"""
def {fname}(items, io, this):
    if items is None:
        {null}
        return items
    if items.__class__ is _k_Encoded:
        io.write(items)
        return items
    {head}
    for obj in items:
        {self.subcon._compilebuild(code)}
    return items
""")
        return f"{fname}(obj, io, this)"


# --- structs and tagged fields -----------------------------------------------------
