"""protocol.framing.FrameDecoder: whole frames out, however the bytes arrive."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kipper.protocol.framing import (
    CHUNK_SIZE, DEFAULT_MAX_FRAME, ChunkPool, FrameDecoder, FrameMemory, FrameTooLarge, InvalidFrame,
)


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def test_one_whole_frame_is_returned_without_its_size_prefix():
    d = FrameDecoder()
    assert d.feed(frame(b"hello")) == [b"hello"]
    assert d.buffered == 0


def test_several_frames_in_one_feed_come_out_in_order():
    d = FrameDecoder()
    assert d.feed(frame(b"a") + frame(b"bc") + frame(b"")) == [b"a", b"bc", b""]


def test_zero_length_frame_is_a_valid_empty_frame():
    assert FrameDecoder().feed(b"\x00\x00\x00\x00") == [b""]


def test_partial_frame_waits_for_the_rest():
    d = FrameDecoder()
    data = frame(b"abcdef")
    assert d.feed(data[:7]) == []
    assert d.buffered == 7  # the prefix and three payload bytes are held until the frame is whole
    assert d.feed(data[7:]) == [b"abcdef"]
    assert d.buffered == 0


def test_fed_byte_by_byte_a_frame_appears_only_with_its_last_byte():
    d = FrameDecoder()
    data = frame(b"xyz") + frame(b"\x00\x01")
    out = []
    for i in range(len(data)):
        got = d.feed(data[i:i + 1])
        if i not in (6, len(data) - 1):
            assert got == [], f"frame emitted early at byte {i}"
        out += got
    assert out == [b"xyz", b"\x00\x01"]
    assert d.buffered == 0


def test_trailing_bytes_of_the_next_frame_stay_buffered():
    d = FrameDecoder()
    assert d.feed(frame(b"ab") + b"\x00\x00") == [b"ab"]
    assert d.buffered == 2
    assert d.feed(b"\x00\x01z") == [b"z"]


def test_accepts_memoryview_and_bytearray_input():
    d = FrameDecoder()
    assert d.feed(memoryview(frame(b"m"))) == [b"m"]
    assert d.feed(bytearray(frame(b"b"))) == [b"b"]


@settings(max_examples=200, deadline=None)
@given(
    payloads=st.lists(st.binary(max_size=300), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=30),
)
def test_any_chunking_yields_the_same_frames(payloads, cuts):
    data = b"".join(frame(p) for p in payloads)
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    d = FrameDecoder()
    out = []
    for start, end in zip(bounds, bounds[1:]):
        out += d.feed(data[start:end])
    assert out == payloads
    assert d.buffered == 0


def test_frame_over_the_limit_is_rejected_as_soon_as_its_prefix_arrives():
    d = FrameDecoder(max_size=100)
    assert d.feed(b"\x00\x00") == []
    with pytest.raises(FrameTooLarge) as exc:
        d.feed(b"\x00\x65")  # 101: the prefix is complete, no payload byte has arrived
    assert exc.value.size == 101
    assert exc.value.limit == 100


def test_frame_exactly_at_the_limit_is_accepted():
    d = FrameDecoder(max_size=4)
    assert d.feed(frame(b"abcd")) == [b"abcd"]


def test_huge_frame_size_is_rejected_without_reserving_memory():
    # 2 GiB - 1 announced with four bytes: the decoder must refuse before
    # allocating or waiting for the payload.
    d = FrameDecoder()
    with pytest.raises(FrameTooLarge) as exc:
        d.feed(b"\x7f\xff\xff\xff")
    assert exc.value.size == 0x7FFFFFFF
    assert exc.value.limit == DEFAULT_MAX_FRAME
    assert d.buffered <= 4


def test_good_frame_before_an_oversized_prefix_is_delivered_then_the_error_raised():
    d = FrameDecoder(max_size=10)
    assert d.feed(frame(b"ok") + struct.pack(">i", 11)) == [b"ok"]
    assert isinstance(d.error, FrameTooLarge)
    with pytest.raises(FrameTooLarge):
        d.feed(b"more")


def test_good_frame_before_a_negative_prefix_is_delivered_then_the_error_raised():
    d = FrameDecoder()
    assert d.feed(frame(b"ok") + struct.pack(">i", -1)) == [b"ok"]
    assert isinstance(d.error, InvalidFrame)
    with pytest.raises(InvalidFrame):
        d.feed(b"")


def test_decoder_without_a_bad_prefix_has_no_error():
    d = FrameDecoder()
    d.feed(frame(b"ok") + b"\x00\x00")
    assert d.error is None


@pytest.mark.parametrize("size", [-1, -2, -(1 << 31)])
def test_negative_frame_size_is_rejected(size):
    d = FrameDecoder()
    with pytest.raises(InvalidFrame):
        d.feed(struct.pack(">i", size))


def test_negative_size_is_not_a_frame_too_large():
    # InvalidFrame and FrameTooLarge are distinct, so the shell can log which one it was.
    with pytest.raises(InvalidFrame) as exc:
        FrameDecoder(max_size=10).feed(b"\xff\xff\xff\xff")
    assert not isinstance(exc.value, FrameTooLarge)


# --- frames are views into buffers the decoder owns (one copy per byte, issue 15) ---------


def receive(d: FrameDecoder, data: bytes) -> list[memoryview]:
    """What a BufferedProtocol does: the bytes land in the decoder's own buffers."""
    frames = []
    pos = 0
    while pos < len(data):
        room = d.get_buffer()
        n = min(len(room), len(data) - pos)
        room[:n] = data[pos:pos + n]
        del room
        pos += n
        frames += d.buffer_updated(n)
    return frames


def test_frames_of_one_read_are_views_into_the_same_receive_buffer():
    d = FrameDecoder()
    a, b = receive(d, frame(b"first") + frame(b"second"))
    assert isinstance(a, memoryview) and isinstance(b, memoryview)
    assert a.obj is b.obj  # no frame was copied out of the chunk
    assert bytes(a) == b"first" and bytes(b) == b"second"


def test_a_frame_larger_than_the_chunk_is_received_straight_into_a_buffer_of_its_size():
    payload = bytes(range(256)) * 1000  # 256,000 bytes: more than a 64 KiB chunk
    data = frame(payload)
    d = FrameDecoder()
    room = d.get_buffer()
    room[:100] = data[:100]
    del room
    assert d.buffer_updated(100) == []
    target = d.get_buffer()  # the rest goes where the frame will live
    rest = data[100:]
    assert len(target) == len(rest)
    target[:] = rest
    owner = target.obj
    del target
    (got,) = d.buffer_updated(len(rest))
    assert got.obj is owner and len(owner) == len(payload)
    assert got == payload


def test_a_frame_someone_still_holds_is_never_overwritten_by_later_reads():
    d = FrameDecoder()
    kept = receive(d, frame(b"keep me"))[0]
    d.release()  # the frame is alive: the chunk is not given back
    filler = frame(b"x" * 1000)
    for _ in range(3 * CHUNK_SIZE // len(filler)):  # wraps past the chunk several times
        receive(d, filler)
        d.release()
    assert kept == b"keep me"


def test_a_chunk_no_frame_refers_to_goes_back_to_the_pool_and_is_used_again():
    pool = ChunkPool()
    d = FrameDecoder(pool=pool)
    (f,) = receive(d, frame(b"done"))
    first = id(f.obj)  # an id: holding the chunk itself would keep it in use
    del f
    d.release()
    assert d.buffered == 0
    other = FrameDecoder(pool=pool)  # another connection of the same broker
    (g,) = receive(other, frame(b"next"))
    assert id(g.obj) == first


def test_release_keeps_the_chunk_while_part_of_a_frame_is_pending():
    pool = ChunkPool()
    d = FrameDecoder(pool=pool)
    assert receive(d, frame(b"abcdef")[:6]) == []
    d.release()
    assert receive(d, frame(b"abcdef")[6:]) == [b"abcdef"]


def test_the_buffer_of_a_large_frame_is_used_again_once_the_frame_is_dropped():
    d = FrameDecoder()
    big = frame(bytes(200_000))
    (first,) = receive(d, big)
    kept = first  # still held: the next large frame must get another buffer
    (second,) = receive(d, big)
    assert second.obj is not kept.obj
    owner = id(second.obj)
    del first, kept, second
    d.release()
    (third,) = receive(d, frame(b"y" * 150_000))  # smaller: fits in the freed buffer
    assert id(third.obj) == owner and third == b"y" * 150_000


@pytest.mark.parametrize("mapped", [True, False])
def test_a_frame_larger_than_a_chunk_gets_a_mapping_only_in_a_mapped_pool(mapped):
    """A mapped pool (the in-memory broker's: its log keeps large frames' batches where they
    landed) gives such a frame its own FrameMemory; an unmapped one (the durable broker's)
    a bytearray, as for a smaller frame that did not fit in what was left of the chunk."""
    d = FrameDecoder(pool=ChunkPool(mapped=mapped))
    (large,) = receive(d, frame(b"z" * (CHUNK_SIZE + 10)))
    assert large == b"z" * (CHUNK_SIZE + 10)
    assert type(large.obj) is (FrameMemory if mapped else bytearray)
    assert len(large.obj) == CHUNK_SIZE + 10
    filler = frame(b"f" * (CHUNK_SIZE - 100))
    (_, straddling) = receive(d, filler + frame(b"s" * 200))  # does not fit in the chunk's rest
    assert type(straddling.obj) is bytearray and straddling == b"s" * 200


def test_an_in_memory_broker_maps_large_frames_and_a_durable_one_does_not(tmp_path):
    from kipper.broker.config import load
    from kipper.broker.server import BrokerServer

    listeners = {"listeners": "PLAINTEXT://127.0.0.1:0"}
    assert BrokerServer(load(overrides=listeners)).chunks.mapped
    durable = BrokerServer(load(overrides={**listeners, "log.dirs": str(tmp_path)}))
    try:
        assert not durable.chunks.mapped
    finally:
        durable.engines.close()
