"""What the hand-written fast paths of the hot APIs (protocol/produce_codec.py,
protocol/fetch_codec.py) share: their parsed structs, the error for a frame that
ends early, and the few readers and writers of lengths and strings they do not
inline. Everything else about those APIs is declared in protocol/messages/.
"""

from __future__ import annotations

import struct

from kipper.protocol.primitives import decode_uvarint, encode_uvarint

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class Part:
    """One parsed struct: attribute access like the general codec's Containers."""

    __slots__ = ()

    def get(self, name: str, default=None):
        return getattr(self, name, default)

    def __getitem__(self, name: str):
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None


class Truncated(ValueError):
    pass


def compact_length(buf, pos: int) -> tuple[int, int]:
    """A compact length (unsigned varint N+1, 0 = null) of more than one byte: (N, pos after)."""
    n, pos = decode_uvarint(buf, pos)
    return n - 1, pos


def read_text(buf, pos: int, n: int) -> tuple[str, int]:
    """The ``n``-byte UTF-8 string at ``pos``, and the position after it."""
    end = pos + n
    if n < 0 or end > len(buf):
        raise Truncated(f"a string of {n} bytes at {pos} in a frame of {len(buf)}")
    return str(buf[pos:end], "utf-8"), end


def read_count(buf, pos: int, flexible: bool) -> tuple[int, int]:
    """An array's length, classic int32 or compact; null reads as empty, as the general
    codec does."""
    if flexible:
        n, pos = (buf[pos] - 1, pos + 1) if buf[pos] < 0x80 else compact_length(buf, pos)
    else:
        n, pos = _I32.unpack_from(buf, pos)[0], pos + 4
    if n < -1:
        raise Truncated(f"negative array length {n}")
    return max(n, 0), pos


def read_length(buf, pos: int, flexible: bool) -> tuple[int, int]:
    """A (nullable) string's length, classic int16 or compact; -1 for null."""
    if flexible:
        return (buf[pos] - 1, pos + 1) if buf[pos] < 0x80 else compact_length(buf, pos)
    return _I16.unpack_from(buf, pos)[0], pos + 2


def read_string(buf, pos: int, flexible: bool) -> tuple[str | None, int]:
    """A (nullable) string and the position after it."""
    n, pos = read_length(buf, pos, flexible)
    if n == -1:
        return None, pos
    return read_text(buf, pos, n)


# array (and bytes) lengths as written, by flexibility: responses hold a few of each
_SMALL_COUNTS = {True: [encode_uvarint(n + 1) for n in range(127)], False: [_I32.pack(n) for n in range(127)]}


def count_bytes(n: int, flexible: bool) -> bytes:
    """An array's (or a bytes field's) length as a classic int32 or a compact varint."""
    if n < 127:
        return _SMALL_COUNTS[flexible][n]
    return encode_uvarint(n + 1) if flexible else _I32.pack(n)


def put_count(out: bytearray, n: int, flexible: bool) -> None:
    out += _SMALL_COUNTS[flexible][n] if n < 127 else count_bytes(n, flexible)


def put_string(out: bytearray, text: str | None, flexible: bool) -> None:
    """A (nullable) string, classic or compact."""
    if text is None:
        out += b"\x00" if flexible else b"\xff\xff"
        return
    raw = text.encode("utf-8")
    out += encode_uvarint(len(raw) + 1) if flexible else _I16.pack(len(raw))
    out += raw
