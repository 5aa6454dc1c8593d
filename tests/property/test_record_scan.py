"""The record parser's forms against each other and against an independent reading.

Three readers of the records section: the compiled ``_record_scan``, the pure-Python
``record_scan`` (its reference) and ``oracle`` below, written apart from both in a
different style (a bounded reader that raises on underflow; each record read from its
own slice). The two forms must give the same answer, message included, on every input;
the oracle must agree on whether a batch is refused and at which record. Inputs:
generated sound batches (every codec), those batches mutated byte by byte with the
CRC recomputed, and unstructured bytes.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kipper.protocol import batch as b
from kipper.protocol import compression, record_check
from tests.support import malformed as m
from tests.support.requires import unavailable

INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
INT64 = st.integers(-(1 << 63), (1 << 63) - 1)


def forms():
    """Every form installed: without the compiled one the Python form still meets the
    oracle here, and the test below reports the missing form (a failure under CI)."""
    return [record_check.SCANS[name] for name in ("c", "python") if name in record_check.SCANS]


def test_both_forms_are_here_to_be_compared():
    if "c" not in record_check.SCANS:
        unavailable(f"the compiled record parser is not installed ({record_check.COMPILED_IMPORT_ERROR})")


# --- the oracle -------------------------------------------------------------------------------

class _Bad(Exception):
    pass


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or n > len(self.data) - self.pos:
            raise _Bad
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def signed(self, max_bytes: int) -> int:
        """Kafka's zig-zag varint (5 bytes, 32 bits) or varlong (10 bytes, 64 bits)."""
        bits = 32 if max_bytes == 5 else 64
        raw = 0
        for i in range(max_bytes):
            byte = self.take(1)[0]
            raw |= (byte & 0x7F) << (7 * i)
            if byte < 0x80:
                raw %= 1 << bits
                return (raw >> 1) ^ -(raw & 1)
        raise _Bad

    def nullable(self) -> None:
        n = self.signed(5)
        if n < -1:
            raise _Bad
        if n >= 0:
            self.take(n)

    def done(self) -> bool:
        return self.pos == len(self.data)


def oracle(payload: bytes, count: int):
    """None when ``payload`` is ``count`` sound records, else the record at fault (-1: none)."""
    if count < 0:
        return -1
    reader = _Reader(payload)
    for index in range(count):
        try:
            one = _Reader(reader.take(reader.signed(5)))
            one.take(1)
            one.signed(10)
            one.signed(5)
            one.nullable()
            one.nullable()
            headers = one.signed(5)
            if headers < 0:
                raise _Bad
            for _ in range(headers):
                key = one.signed(5)
                if key < 0:  # a header key is never null
                    raise _Bad
                one.take(key)
                one.nullable()
            if not one.done():
                raise _Bad
        except _Bad:
            return index
    return None if reader.done() else -1


def oracle_max_timestamp(payload: bytes, count: int, base: int) -> int:
    """The max timestamp of ``count`` sound records as Kafka's LogValidator takes it: from
    -1 up, each record's base + delta computed as a Java long."""
    reader = _Reader(payload)
    top = -1
    for _ in range(count):
        one = _Reader(reader.take(reader.signed(5)))
        one.take(1)
        timestamp = (base + one.signed(10) + (1 << 63)) % (1 << 64) - (1 << 63)
        top = max(top, timestamp)
    return top


# --- generated records -----------------------------------------------------------------------

nullable_bytes = st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=64, max_size=300))
headers = st.lists(st.tuples(st.binary(max_size=12), nullable_bytes), max_size=3)
record_fields = st.builds(lambda key, value, hs, ts, off: m.body(key, value, tuple(hs), timestamp_delta=ts,
                                                                offset_delta=off),
                          nullable_bytes, nullable_bytes, headers, INT64, INT32)
payloads = st.lists(record_fields, min_size=1, max_size=12).map(
    lambda bodies: (b"".join(m.record(x) for x in bodies), len(bodies)))


def answers(payload: bytes, count: int, base: int = 1_700_000_000_000):
    """The forms' one answer, checked against the oracle: None for sound records (whose max
    timestamp the oracle computes too), else the problem."""
    first, *others = forms()
    got = first(payload, 0, len(payload), count, base)
    for other in others:
        assert other(payload, 0, len(payload), count, base) == got
    found = oracle(payload, count)
    if type(got) is int:
        assert found is None, (got, found)
        assert got == oracle_max_timestamp(payload, count, base)
        return None
    assert got[1] == found, (got, found)
    return got


@settings(max_examples=300, deadline=None)
@given(payloads, st.sampled_from(m.CODECS), INT64)
def test_generated_sound_batches_are_accepted_by_every_reader(payload_count, codec, base):
    payload, count = payload_count
    assert answers(payload, count, base) is None
    data = m.batch(payload, count, codec)
    for scan in forms():
        assert record_check.check_batch(data, 0, len(data), b.read_header(data), scan=scan) is None


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads, st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
       st.integers(-2, 2), st.sampled_from(["set", "cut", "insert"]))
def test_mutated_records_get_one_answer_from_every_reader(payload_count, edits, count_change, how):
    payload, count = payload_count
    data = bytearray(payload)
    for pos, value in edits:
        pos %= len(data) + 1
        if how == "set" and pos < len(data):
            data[pos] = value
        elif how == "cut":
            del data[pos:pos + value % 8 + 1]
        else:
            data[pos:pos] = bytes([value])
    answers(bytes(data), max(count + count_change, 0) if count_change else count)


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=200), st.integers(-3, 12))
def test_unstructured_bytes_get_one_answer_from_every_reader(payload, count):
    answers(payload, count)


def test_fuzz_random_record_fragments():
    """Inputs near the format (record-shaped byte soup), many more than hypothesis runs."""
    rng = random.Random(28)
    fragments = [b"\x00", b"\x01", b"\x02", b"\x7f", b"\x80", b"\xff", b"\x80\x80\x80\x80\x80", b"\x81\x01",
                 m.varint(-1), m.varint(-2), m.varint(300), m.GOOD, m.body(), m.body(headers=((b"h", None),))]
    for _ in range(20_000):
        payload = b"".join(rng.choice(fragments) for _ in range(rng.randint(0, 12)))
        answers(payload, rng.randint(-1, 4))


# --- every byte of a batch changed, the CRC recomputed --------------------------------------------

SAMPLE = (m.record(m.body(b"key", b"v" * 70, ((b"h1", b"x"), (b"h2", None)), offset_delta=0))
          + m.record(m.body(None, b"w" * 200, offset_delta=1, timestamp_delta=-70_000))
          + m.record(m.body(b"", None, ((b"", b""),), offset_delta=2)))
VALUES = (0x00, 0x01, 0x02, 0x7F, 0x80, 0x81, 0xFE, 0xFF)


def produced_answer(data: bytes, scan):
    """What the append path decides from the batch-level checks and then the parser."""
    try:
        [(start, end, header)] = b.split_batches(data)
    except b.InvalidBatch as exc:
        return ("batch", exc.code)
    if not b.crc_valid(data, start, end, header):
        return ("crc",)
    return record_check.check_batch(data, start, end, header, scan=scan)


@pytest.mark.parametrize("codec", m.CODECS, ids=[compression.NAMES[c] for c in m.CODECS])
def test_every_byte_of_a_batch_changed_gets_one_answer_from_every_reader(codec):
    first, *others = forms()
    refused = 0
    for pos in range(len(SAMPLE)):
        for value in VALUES + (SAMPLE[pos] ^ 1,):
            if value == SAMPLE[pos]:
                continue
            payload = SAMPLE[:pos] + bytes([value]) + SAMPLE[pos + 1:]
            data = m.batch(payload, 3, codec)  # compressed after the change: the CRC covers it
            got = produced_answer(data, first)
            assert all(produced_answer(data, other) == got for other in others)
            found = oracle(payload, 3)
            assert (None if got is None else got.batch_index) == found, (pos, value, got)
            refused += got is not None
    assert refused > 150  # changes to the values pass; to the structure they do not


def test_every_byte_of_a_stored_batch_changed_with_its_crc_recomputed():
    """Header bytes too: the batch-level checks and the parser together."""
    first, *others = forms()
    data = m.batch(SAMPLE, 3)
    for pos in range(b.CRC_START, len(data)):
        for value in VALUES:
            changed = bytearray(data)
            changed[pos] = value
            changed = m.recrc(changed)
            got = produced_answer(changed, first)
            assert all(produced_answer(changed, other) == got for other in others)
            if pos >= b.HEADER_SIZE and got not in (None, ("crc",)) and got[0] != "batch":
                assert got.batch_index == oracle(bytes(changed[b.HEADER_SIZE:]), 3)
