"""Wire encodings of every primitive in protocol.primitives.

Each encoding is checked on both paths a message can take: the interpreted one
(``.parse``/``.build`` on the primitive itself) and the compiled one (the
primitive inside a ``KStruct`` wrapped by ``protocol.schema.Schema``).
"""

from __future__ import annotations

import io
import struct
import uuid

import pytest
from construct import ConstructError, StreamError
from hypothesis import given, settings
from hypothesis import strategies as st

from kipper.protocol import primitives as p
from kipper.protocol import structs as ks
from kipper.protocol.schema import Schema

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
# Malformed input may surface as construct's errors (interpreted) or as the
# struct module's (compiled fixed-width fields); both are "cannot parse".
BAD_INPUT = (ConstructError, struct.error, ValueError)


class Interpreted:
    name = "interpreted"

    def __init__(self, con):
        self.con = con

    def build(self, value) -> bytes:
        return self.con.build(value)

    def parse(self, data: bytes):
        stream = io.BytesIO(data)
        value = self.con.parse_stream(stream)
        assert stream.tell() == len(data), "parse left bytes unread"
        return value


class Compiled:
    """The primitive as the only field of a compiled struct without tags."""

    name = "compiled"

    def __init__(self, con):
        self.schema = Schema(ks.KStruct([("v", con, None)]))

    def build(self, value) -> bytes:
        return self.schema.build({"v": value})

    def parse(self, data: bytes):
        stream = io.BytesIO(data)
        value = self.schema.parse_stream(stream).v
        assert stream.tell() == len(data), "parse left bytes unread"
        return value


@pytest.fixture(params=[Interpreted, Compiled], ids=lambda c: c.name)
def codec(request):
    """codec(primitive) -> object with build(value) and parse(bytes), on one path."""
    return request.param


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


# --- fixed-width ---------------------------------------------------------------

@pytest.mark.parametrize(("con", "value", "wire"), [
    (p.Int8, 0, "00"), (p.Int8, -1, "ff"), (p.Int8, -128, "80"), (p.Int8, 127, "7f"),
    (p.Int16, 1, "0001"), (p.Int16, -1, "ffff"), (p.Int16, -32768, "8000"), (p.Int16, 32767, "7fff"),
    (p.Int32, 1, "00000001"), (p.Int32, INT32_MIN, "80000000"), (p.Int32, INT32_MAX, "7fffffff"),
    (p.Int64, 1, "0000000000000001"), (p.Int64, -1, "ffffffffffffffff"),
    (p.Int64, INT64_MIN, "8000000000000000"), (p.Int64, INT64_MAX, "7fffffffffffffff"),
    (p.UInt16, 65535, "ffff"), (p.UInt16, 0x1234, "1234"),
    (p.UInt32, 0xFFFFFFFF, "ffffffff"), (p.UInt32, 0x01020304, "01020304"),
    (p.Float64, 1.5, "3ff8000000000000"), (p.Float64, -2.0, "c000000000000000"),
    (p.Float64, float("inf"), "7ff0000000000000"),
    (p.Boolean, True, "01"), (p.Boolean, False, "00"),
])
def test_fixed_width_values_encode_big_endian_and_parse_back(codec, con, value, wire):
    c = codec(con)
    assert c.build(value) == h(wire)
    assert c.parse(h(wire)) == value


def test_unsigned_ints_parse_high_bit_as_large_positive(codec):
    assert codec(p.UInt16).parse(h("8000")) == 0x8000
    assert codec(p.UInt32).parse(h("80000000")) == 0x80000000


def test_float64_keeps_the_sign_of_negative_zero(codec):
    c = codec(p.Float64)
    assert c.build(-0.0) == h("8000000000000000")
    assert str(c.parse(h("8000000000000000"))) == "-0.0"


def test_boolean_reads_any_nonzero_byte_as_true(codec):
    assert codec(p.Boolean).parse(b"\x02") is True


@pytest.mark.parametrize(("con", "value"), [
    (p.Int8, 128), (p.Int8, -129), (p.Int16, 1 << 15), (p.Int32, 1 << 31),
    (p.Int64, 1 << 63), (p.UInt16, -1), (p.UInt16, 1 << 16), (p.UInt32, -1),
])
def test_fixed_width_out_of_range_values_are_rejected(codec, con, value):
    with pytest.raises(BAD_INPUT):
        codec(con).build(value)


@pytest.mark.parametrize("con", [p.Int16, p.Int32, p.Int64, p.Float64])
def test_fixed_width_truncated_input_is_rejected(codec, con):
    with pytest.raises(BAD_INPUT):
        codec(con).parse(b"\x00")


# --- varints ---------------------------------------------------------------------

UVARINT_VECTORS = [
    (0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (16383, "ff7f"),
    (16384, "808001"), ((1 << 32) - 1, "ffffffff0f"),
    ((1 << 64) - 1, "ffffffffffffffffff01"),
]


@pytest.mark.parametrize(("value", "wire"), UVARINT_VECTORS)
def test_unsigned_varint_uses_seven_bit_little_endian_groups(codec, value, wire):
    c = codec(p.UVarInt)
    assert c.build(value) == h(wire)
    assert c.parse(h(wire)) == value
    assert p.encode_uvarint(value) == h(wire)
    assert p.decode_uvarint(h(wire) + b"\xaa", 0) == (value, len(h(wire)))


def test_unsigned_varint_rejects_negative_values(codec):
    with pytest.raises(ValueError):
        codec(p.UVarInt).build(-1)
    with pytest.raises(ValueError):
        p.encode_uvarint(-1)


def test_unsigned_varint_longer_than_ten_bytes_is_rejected(codec):
    too_long = b"\x80" * 10 + b"\x01"
    with pytest.raises(StreamError):
        codec(p.UVarInt).parse(too_long)
    with pytest.raises(ValueError):
        p.decode_uvarint(too_long)


def test_unsigned_varint_truncated_after_continuation_bit_is_rejected(codec):
    with pytest.raises(StreamError):
        codec(p.UVarInt).parse(b"\xff\xff")
    with pytest.raises(IndexError):
        p.decode_uvarint(b"\xff\xff")


ZIGZAG_VECTORS = [
    (0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (2, "04"), (-64, "7f"), (64, "8001"),
    (INT32_MAX, "feffffff0f"), (INT32_MIN, "ffffffff0f"),
    (INT64_MAX, "feffffffffffffffff01"), (INT64_MIN, "ffffffffffffffffff01"),
]


@pytest.mark.parametrize(("value", "wire"), ZIGZAG_VECTORS)
def test_zigzag_varint_maps_signed_values_to_interleaved_unsigned(codec, value, wire):
    for con in (p.VarInt, p.VarLong):
        c = codec(con)
        assert c.build(value) == h(wire)
        assert c.parse(h(wire)) == value
    assert p.encode_varint(value) == h(wire)
    assert p.decode_varint(h(wire), 0) == (value, len(h(wire)))


@settings(max_examples=200, deadline=None)
@given(st.integers(INT64_MIN, INT64_MAX))
def test_zigzag_varlong_round_trips_the_whole_int64_range(value):
    wire = p.encode_varint(value)
    assert len(wire) <= 10
    assert p.decode_varint(wire, 0) == (value, len(wire))
    assert p.VarLong.parse(p.VarLong.build(value)) == value
    assert Compiled(p.VarLong).parse(wire) == value


@settings(max_examples=200, deadline=None)
@given(st.integers(0, (1 << 64) - 1))
def test_unsigned_varint_round_trips_the_whole_uint64_range(value):
    wire = p.encode_uvarint(value)
    assert p.decode_uvarint(wire, 0) == (value, len(wire))
    assert Compiled(p.UVarInt).parse(Compiled(p.UVarInt).build(value)) == value


# --- uuid --------------------------------------------------------------------------

def test_uuid_is_sixteen_raw_bytes(codec):
    u = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
    c = codec(p.Uuid)
    assert c.build(u) == h("00112233445566778899aabbccddeeff")
    assert c.parse(h("00112233445566778899aabbccddeeff")) == u


def test_uuid_none_builds_the_all_zero_uuid(codec):
    c = codec(p.Uuid)
    assert c.build(None) == bytes(16)
    assert c.parse(bytes(16)) == p.ZERO_UUID


def test_uuid_truncated_input_is_rejected(codec):
    with pytest.raises(StreamError):
        codec(p.Uuid).parse(bytes(15))


# --- strings -----------------------------------------------------------------------

@pytest.mark.parametrize(("con", "value", "wire"), [
    (p.String, "abc", "0003616263"),
    (p.String, "", "0000"),
    (p.String, "é", "0002c3a9"),  # length counts utf-8 bytes, not characters
    (p.NullableString, "abc", "0003616263"),
    (p.NullableString, None, "ffff"),
    (p.CompactString, "abc", "04616263"),
    (p.CompactString, "", "01"),
    (p.CompactString, "é", "03c3a9"),
    (p.CompactNullableString, "abc", "04616263"),
    (p.CompactNullableString, "", "01"),
])
def test_strings_encode_length_prefix_then_utf8(codec, con, value, wire):
    c = codec(con)
    assert c.build(value) == h(wire)
    assert c.parse(h(wire)) == value


def test_classic_nullable_string_encodes_null_as_minus_one_int16(codec):
    c = codec(p.NullableString)
    assert c.build(None) == h("ffff")
    assert c.parse(h("ffff")) is None


def test_compact_nullable_string_encodes_null_as_zero(codec):
    c = codec(p.CompactNullableString)
    assert c.build(None) == b"\x00"
    assert c.parse(b"\x00") is None


def test_compact_string_length_above_127_uses_a_two_byte_varint(codec):
    value = "x" * 200
    assert codec(p.CompactString).build(value) == h("c901") + value.encode()


@pytest.mark.parametrize("con", [p.String, p.CompactString])
def test_non_nullable_string_refuses_to_build_null(codec, con):
    with pytest.raises(StreamError):
        codec(con).build(None)


@pytest.mark.parametrize(("con", "wire"), [(p.String, "ffff"), (p.CompactString, "00")])
def test_non_nullable_string_rejects_null_on_the_wire(codec, con, wire):
    with pytest.raises(StreamError):
        codec(con).parse(h(wire))


@pytest.mark.parametrize("con", [p.String, p.NullableString])
def test_classic_string_length_below_minus_one_is_rejected(codec, con):
    with pytest.raises(StreamError):
        codec(con).parse(h("fffe"))


@pytest.mark.parametrize(("con", "wire"), [(p.String, "000561"), (p.CompactString, "0661")])
def test_string_shorter_than_its_length_prefix_is_rejected(codec, con, wire):
    with pytest.raises(StreamError):
        codec(con).parse(h(wire))


# --- bytes ---------------------------------------------------------------------------

@pytest.mark.parametrize(("con", "value", "wire"), [
    (p.KBytes, b"ab", "000000026162"),
    (p.KBytes, b"", "00000000"),
    (p.NullableBytes, b"ab", "000000026162"),
    (p.NullableBytes, None, "ffffffff"),
    (p.CompactBytes, b"ab", "036162"),
    (p.CompactBytes, b"", "01"),
    (p.CompactNullableBytes, b"ab", "036162"),
    (p.CompactNullableBytes, None, "00"),
])
def test_bytes_encode_length_prefix_then_raw_bytes(codec, con, value, wire):
    c = codec(con)
    assert c.build(value) == h(wire)
    assert c.parse(h(wire)) == value


def test_classic_bytes_length_prefix_is_int32_not_int16(codec):
    assert codec(p.KBytes).build(b"\x00" * 3) == h("00000003 000000")


@pytest.mark.parametrize(("con", "prefix"), [(p.NullableBytes, "00000005"), (p.CompactNullableBytes, "06")])
def test_bytes_build_from_a_list_of_chunks_as_if_joined(codec, con, prefix):
    assert codec(con).build([b"ab", b"", b"cde"]) == h(prefix) + b"abcde"


@pytest.mark.parametrize("con", [p.KBytes, p.CompactBytes])
def test_non_nullable_bytes_refuse_null_both_ways(codec, con):
    c = codec(con)
    with pytest.raises(StreamError):
        c.build(None)
    with pytest.raises(StreamError):
        c.parse(h("ffffffff") if con is p.KBytes else b"\x00")


def test_bytes_shorter_than_their_length_prefix_are_rejected(codec):
    with pytest.raises(StreamError):
        codec(p.NullableBytes).parse(h("00000004 6162"))


# --- arrays ------------------------------------------------------------------------------

def arr(elem, *, compact: bool, nullable: bool):
    return p.KArray(elem, compact=compact, nullable=nullable)


def test_classic_array_is_int32_count_then_items(codec):
    c = codec(arr(p.Int32, compact=False, nullable=False))
    assert c.build([1, 2]) == h("00000002 00000001 00000002")
    assert c.parse(h("00000002 00000001 00000002")) == [1, 2]
    assert c.build([]) == h("00000000")


def test_compact_array_is_varint_count_plus_one_then_items(codec):
    c = codec(arr(p.Int16, compact=True, nullable=False))
    assert c.build([1, 2]) == h("03 0001 0002")
    assert c.parse(h("03 0001 0002")) == [1, 2]
    assert c.build([]) == b"\x01"
    assert c.parse(b"\x01") == []


def test_classic_nullable_array_encodes_null_as_minus_one(codec):
    c = codec(arr(p.Int32, compact=False, nullable=True))
    assert c.build(None) == h("ffffffff")
    assert c.parse(h("ffffffff")) is None


def test_compact_nullable_array_encodes_null_as_zero(codec):
    c = codec(arr(p.Int32, compact=True, nullable=True))
    assert c.build(None) == b"\x00"
    assert c.parse(b"\x00") is None


@pytest.mark.parametrize(("compact", "wire"), [(False, "ffffffff"), (True, "00")])
def test_null_for_a_non_nullable_array_reads_as_empty(codec, compact, wire):
    assert codec(arr(p.Int32, compact=compact, nullable=False)).parse(h(wire)) == []


def test_classic_array_count_below_minus_one_is_rejected(codec):
    with pytest.raises(StreamError):
        codec(arr(p.Int32, compact=False, nullable=True)).parse(h("fffffffe"))


def test_array_with_fewer_items_than_its_count_is_rejected(codec):
    with pytest.raises(BAD_INPUT):
        codec(arr(p.Int32, compact=False, nullable=False)).parse(h("00000002 00000001"))


def test_array_of_compact_strings_and_of_structs(codec):
    strings = codec(arr(p.CompactString, compact=True, nullable=False))
    assert strings.build(["a", ""]) == h("03 0261 01")
    assert strings.parse(h("03 0261 01")) == ["a", ""]
    inner = ks.KStruct([("id", p.Int16, 0), ("name", p.String, "")])
    structs = codec(arr(inner, compact=False, nullable=False))
    wire = h("00000002 0001 000161 0002 0000")
    assert structs.build([{"id": 1, "name": "a"}, {"id": 2, "name": ""}]) == wire
    assert structs.parse(wire) == [{"id": 1, "name": "a"}, {"id": 2, "name": ""}]


# --- structs ---------------------------------------------------------------------------

def test_struct_fills_missing_fields_from_defaults(codec):
    ints = arr(p.Int8, compact=False, nullable=False)
    s = ks.KStruct([("a", p.Int32, -1), ("b", p.String, "x"), ("c", ints, [])])
    c = codec(s)
    assert c.build({}) == h("ffffffff 000178 00000000")


def test_struct_treats_none_for_a_non_nullable_field_as_its_default(codec):
    s = ks.KStruct([("a", p.Int32, 7), ("b", p.String, "")])
    assert codec(s).build({"a": None, "b": None}) == h("00000007 0000")


def test_struct_keeps_none_for_a_nullable_field(codec):
    s = ks.KStruct([("a", p.NullableString, "dflt")])
    assert codec(s).build({"a": None}) == h("ffff")


def test_nullable_struct_marks_presence_with_an_int8(codec):
    s = ks.NullableStructC(ks.KStruct([("a", p.Int16, 0)]))
    c = codec(s)
    assert c.build(None) == b"\xff"
    assert c.build({"a": 5}) == h("01 0005")
    assert c.parse(b"\xff") is None
    assert c.parse(h("01 0005")) == {"a": 5}
