"""Tagged fields (KIP-482) of protocol.structs.KStruct, on both paths a message can
take: interpreted and compiled (see test_primitives.py for the primitives)."""

from __future__ import annotations

import io

import pytest
from construct import StreamError

from kipper.protocol import primitives as p
from kipper.protocol import structs as ks
from kipper.protocol.schema import Schema
from tests.unit.test_primitives import Interpreted, arr, h


# --- tagged fields ----------------------------------------------------------------------------

def tagged_struct():
    return ks.KStruct(
        [("a", p.Int32, 0)],
        {5: ("name", p.CompactNullableString, None), 0: ("epoch", p.Int32, -1)},
    )


class InterpretedStruct(Interpreted):
    pass


class CompiledStruct:
    """A tagged struct compiled as the top-level message, like a real schema."""

    name = "compiled"

    def __init__(self, con):
        self.schema = Schema(con)

    def build(self, value) -> bytes:
        return self.schema.build(value)

    def parse(self, data: bytes):
        stream = io.BytesIO(data)
        value = self.schema.parse_stream(stream)
        assert stream.tell() == len(data), "parse left bytes unread"
        return value


@pytest.fixture(params=[InterpretedStruct, CompiledStruct], ids=lambda c: c.name)
def scodec(request):
    return request.param(tagged_struct())


def test_tagged_fields_at_their_defaults_are_not_written(scodec):
    assert scodec.build({"a": 1}) == h("00000001 00")
    assert scodec.build({"a": 1, "epoch": -1, "name": None}) == h("00000001 00")


def test_absent_tagged_fields_parse_as_their_defaults(scodec):
    parsed = scodec.parse(h("00000001 00"))
    assert parsed == {"a": 1, "epoch": -1, "name": None}


def test_tagged_fields_are_written_in_ascending_tag_order_with_sizes(scodec):
    wire = h("00000001 02 00 04 00000009 05 03 036869")
    assert scodec.build({"a": 1, "name": "hi", "epoch": 9}) == wire
    assert scodec.parse(wire) == {"a": 1, "epoch": 9, "name": "hi"}


def test_unknown_tags_are_skipped_and_kept_for_rebuilding(scodec):
    # tag 0 known, tag 3 unknown (3 bytes), tag 5 known
    wire = h("00000001 03 00 04 00000009 03 03 aabbcc 05 02 0278")
    parsed = scodec.parse(wire)
    assert parsed["epoch"] == 9 and parsed["name"] == "x"
    assert parsed["_unknown_tags"] == {3: h("aabbcc")}
    assert scodec.build(parsed) == wire


def test_unknown_tag_beyond_the_known_ones_is_skipped(scodec):
    wire = h("00000002 01 c801 02 ffff")  # tag 200 (two-byte varint), two bytes
    parsed = scodec.parse(wire)
    assert parsed["a"] == 2 and parsed["epoch"] == -1
    assert parsed["_unknown_tags"] == {200: h("ffff")}
    assert scodec.build(parsed) == wire


def test_out_of_order_tags_are_rejected(scodec):
    wire = h("00000001 02 05 02 0278 00 04 00000009")
    with pytest.raises(StreamError, match="out of order"):
        scodec.parse(wire)


def test_repeated_tag_is_rejected(scodec):
    wire = h("00000001 02 00 04 00000009 00 04 00000008")
    with pytest.raises(StreamError):
        scodec.parse(wire)


def test_tagged_field_running_past_the_end_is_rejected(scodec):
    with pytest.raises(StreamError):
        scodec.parse(h("00000001 01 00 04 0000"))


def test_nested_struct_keeps_its_own_tag_section():
    inner = ks.KStruct([("x", p.Int8, 0)], {})
    outer = ks.KStruct([("items", arr(inner, compact=True, nullable=False), [])], {})
    wire = h("02 07 01 01 02 00ff 00")  # one item: x=7, one unknown tag 1 = 00ff; outer: no tags
    for c in (Interpreted(outer), CompiledStruct(outer)):
        parsed = c.parse(wire)
        assert parsed["items"][0]["x"] == 7
        assert parsed["items"][0]["_unknown_tags"] == {1: h("00ff")}
        assert c.build(parsed) == wire
