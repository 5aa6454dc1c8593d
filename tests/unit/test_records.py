"""RecordBatch v2: encode/decode per codec, CRC-32C coverage, splitting, bad input.

Batches written by real clients (captured by scripts/capture_golden.py into
tests/golden/batches/) must decode too.
"""

from __future__ import annotations

import struct
from pathlib import Path

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kipper.protocol import batch as b
from kipper.protocol import compression
from kipper.protocol import records as r
from kipper.protocol import records_builder as rb

CODECS = [compression.NONE, compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD]
CODEC_IDS = [compression.NAMES[c] for c in CODECS]
GOLDEN_BATCHES = Path(__file__).resolve().parents[1] / "golden" / "batches"

SAMPLE = [
    (b"k0", b"v0", 1_700_000_000_000, (("h1", b"x"), ("h2", None))),
    (None, b"no key", 1_700_000_000_005),
    (b"no value", None, 1_700_000_000_002),
    (None, None, 1_700_000_000_001),
    (b"", b"", 1_699_999_999_000),  # empty is not null; timestamp before the first
]


def sample_batch(codec=compression.NONE, **kw) -> bytes:
    return r.build_batch(SAMPLE, compression_type=codec, **kw)


def flip(data: bytes, pos: int) -> bytes:
    out = bytearray(data)
    out[pos] ^= 0x01
    return bytes(out)


def rewrite(data: bytes, fmt: str, pos: int, value, *, fix_crc: bool = True) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, pos, value)
    if fix_crc:
        b.write_crc(out)
    return bytes(out)


# --- round trips -------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS, ids=CODEC_IDS)
def test_batch_round_trips_records_for_every_codec(codec):
    data = sample_batch(codec, base_offset=100, producer_id=7, producer_epoch=2, base_sequence=40)
    batch = r.decode_batch(data)
    h = batch.header
    assert h.magic == 2
    assert h.compression == codec
    assert (h.base_offset, h.producer_id, h.producer_epoch, h.base_sequence) == (100, 7, 2, 40)
    assert h.records_count == len(SAMPLE) and h.last_offset_delta == len(SAMPLE) - 1
    assert h.batch_length + b.LOG_OVERHEAD == len(data)
    assert [rec.offset for rec in batch.records] == [100, 101, 102, 103, 104]
    assert [(rec.key, rec.value, rec.timestamp) for rec in batch.records] == [s[:3] for s in SAMPLE]
    assert batch.records[0].headers == (("h1", b"x"), ("h2", None))
    assert all(rec.headers == () for rec in batch.records[1:])


@pytest.mark.parametrize("codec", [c for c in CODECS if c != compression.NONE], ids=CODEC_IDS[1:])
def test_compressed_payload_differs_from_the_plain_one(codec):
    plain = sample_batch(compression.NONE)
    packed = sample_batch(codec)
    assert packed[b.HEADER_SIZE:] != plain[b.HEADER_SIZE:]
    assert compression.decompress(codec, packed[b.HEADER_SIZE:]) == plain[b.HEADER_SIZE:]


@pytest.mark.parametrize("codec", CODECS, ids=CODEC_IDS)
def test_large_batch_round_trips_across_codec_block_boundaries(codec):
    recs = [(f"key-{i}".encode(), bytes([i % 251]) * 700, 1000 + i) for i in range(200)]  # ~140 KiB
    batch = r.decode_batch(r.build_batch(recs, compression_type=codec))
    assert [(x.key, x.value, x.timestamp) for x in batch.records] == recs


def test_header_timestamps_are_first_and_max():
    h = r.decode_batch(sample_batch()).header
    assert h.base_timestamp == 1_700_000_000_000
    assert h.max_timestamp == 1_700_000_000_005


def test_empty_batch_is_refused():
    with pytest.raises(ValueError):
        r.build_batch([])


record_strategy = st.tuples(
    st.none() | st.binary(max_size=40),
    st.none() | st.binary(max_size=200),
    st.integers(0, 1 << 42),
    st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8)), max_size=3).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(recs=st.lists(record_strategy, min_size=1, max_size=12), codec=st.sampled_from(CODECS),
       base_offset=st.integers(0, 1 << 40))
def test_any_records_round_trip_with_any_codec(recs, codec, base_offset):
    data = r.build_batch(recs, compression_type=codec, base_offset=base_offset)
    batch = r.decode_batch(data)
    assert [(x.key, x.value, x.timestamp, x.headers) for x in batch.records] == recs
    assert [x.offset for x in batch.records] == list(range(base_offset, base_offset + len(recs)))
    [(start, end, header)] = b.split_batches(data)
    assert (start, end) == (0, len(data)) and b.crc_valid(data, start, end, header)


# --- CRC-32C -------------------------------------------------------------------------

def test_crc_is_crc32c_of_attributes_to_end():
    import crc32c

    data = sample_batch()
    assert b.read_header(data).crc == crc32c.crc32c(data[b.CRC_START:])
    assert b.CRC_START == 21


@pytest.mark.parametrize("codec", CODECS, ids=CODEC_IDS)
def test_flipping_any_byte_after_offset_21_breaks_the_crc(codec):
    data = sample_batch(codec)
    for pos in range(b.CRC_START, len(data)):
        corrupt = flip(data, pos)
        header = b.read_header(corrupt)
        assert not b.crc_valid(corrupt, 0, len(corrupt), header), f"flip at {pos} went unnoticed"
    with pytest.raises(b.InvalidBatch) as exc:
        r.decode_batch(flip(data, len(data) - 1))
    assert exc.value.code == b.CORRUPT_MESSAGE == 2


def test_flipping_a_crc_byte_is_a_mismatch():
    with pytest.raises(b.InvalidBatch) as exc:
        r.decode_batch(flip(sample_batch(), b.CRC_OFFSET))
    assert exc.value.code == b.CORRUPT_MESSAGE


def test_changing_base_offset_keeps_the_crc_valid():
    data = sample_batch(compression.GZIP)
    moved = b.with_base_offset(data, 0, len(data), 5000)
    # the partition leader epoch is stamped too (bytes 12-15), as Kafka's leader does
    assert moved[8:12] == data[8:12] and moved[16:] == data[16:]
    assert b.read_header(moved).partition_leader_epoch == b.LEADER_EPOCH
    assert b.crc_valid(moved, 0, len(moved), b.read_header(moved))
    assert [x.offset for x in r.decode_batch(moved).records] == [5000, 5001, 5002, 5003, 5004]


def test_changing_partition_leader_epoch_keeps_the_crc_valid():
    data = bytearray(sample_batch())
    b.set_partition_leader_epoch(data, 17)
    assert r.decode_batch(bytes(data)).header.partition_leader_epoch == 17


def test_decode_can_skip_crc_verification():
    corrupt = flip(sample_batch(), len(sample_batch()) - 1)
    assert len(r.decode_batch(corrupt, verify_crc=False).records) == len(SAMPLE)


# --- splitting -----------------------------------------------------------------------

def test_split_batches_finds_each_batch_in_concatenated_data():
    parts = [sample_batch(codec, base_offset=i * 10) for i, codec in enumerate(CODECS)]
    data = b"".join(parts)
    found = b.split_batches(data)
    assert [h.base_offset for _, _, h in found] == [0, 10, 20, 30, 40]
    assert [h.compression for _, _, h in found] == CODECS
    pos = 0
    for (start, end, h), part in zip(found, parts):
        assert (start, end) == (pos, pos + len(part))
        assert b.crc_valid(data, start, end, h)
        assert r.decode_batch(data, start, end).records[0].offset == h.base_offset
        pos = end
    assert [len(x.records) for x in r.decode_all(data)] == [len(SAMPLE)] * 5


def test_split_batches_of_nothing_is_empty():
    assert b.split_batches(b"") == []


def test_decode_all_ignores_a_partial_trailing_batch():
    data = sample_batch(base_offset=0) + sample_batch(base_offset=5)[:-3]
    assert [x.header.base_offset for x in r.decode_all(data)] == [0]


# --- truncated and garbage input -------------------------------------------------------

def codes(fn, data) -> int:
    with pytest.raises(b.InvalidBatch) as exc:
        fn(data)
    return exc.value.code


@pytest.mark.parametrize("cut", [1, 20, 60])
def test_truncated_batch_is_corrupt_message(cut):
    data = sample_batch()[:cut]
    assert codes(b.split_batches, data) == b.CORRUPT_MESSAGE
    assert codes(r.decode_batch, data) == b.CORRUPT_MESSAGE


def test_batch_missing_its_last_byte_is_corrupt_message():
    data = sample_batch()
    assert codes(b.split_batches, data[:-1]) == b.CORRUPT_MESSAGE
    assert codes(b.split_batches, data + data[:-1]) == b.CORRUPT_MESSAGE


def test_trailing_garbage_after_a_batch_is_corrupt_message():
    assert codes(b.split_batches, sample_batch() + b"\x00" * 10) == b.CORRUPT_MESSAGE


@pytest.mark.parametrize("magic", [0, 1, 3])
def test_other_magic_is_unsupported_for_message_format(magic):
    data = rewrite(sample_batch(), ">b", b.MAGIC_OFFSET, magic)
    assert codes(b.split_batches, data) == b.UNSUPPORTED_FOR_MESSAGE_FORMAT == 43
    assert codes(r.decode_batch, data) == b.UNSUPPORTED_FOR_MESSAGE_FORMAT


@pytest.mark.parametrize("length", [0, 48, -5, 1 << 30])
def test_batch_length_that_does_not_fit_is_corrupt_message(length):
    data = rewrite(sample_batch(), ">i", 8, length)
    assert codes(b.split_batches, data) == b.CORRUPT_MESSAGE


def test_negative_record_count_is_invalid_record():
    data = rewrite(sample_batch(), ">i", 57, -1)
    assert codes(b.split_batches, data) == b.INVALID_RECORD == 87


def test_negative_last_offset_delta_is_invalid_record():
    data = rewrite(sample_batch(), ">i", 23, -1)
    assert codes(b.split_batches, data) == b.INVALID_RECORD


def test_record_count_beyond_the_payload_is_corrupt_message():
    data = rewrite(sample_batch(), ">i", 57, len(SAMPLE) + 3)
    assert codes(r.decode_batch, data) == b.CORRUPT_MESSAGE


def test_garbage_payload_with_a_valid_crc_is_corrupt_message():
    data = bytearray(sample_batch()[:b.HEADER_SIZE]) + b"\xff" * 30
    struct.pack_into(">i", data, 8, len(data) - b.LOG_OVERHEAD)
    b.write_crc(data)
    assert codes(r.decode_batch, bytes(data)) == b.CORRUPT_MESSAGE


@pytest.mark.parametrize("codec", CODECS[1:], ids=CODEC_IDS[1:])
def test_corrupt_compressed_payload_is_corrupt_message(codec):
    data = bytearray(sample_batch(codec))
    data[b.HEADER_SIZE:] = b"\x00\x01garbage" + bytes(data[b.HEADER_SIZE + 9:])
    b.write_crc(data)
    assert codes(r.decode_batch, bytes(data)) == b.CORRUPT_MESSAGE


def test_unknown_codec_is_unsupported_compression_type():
    data = rewrite(sample_batch(), ">h", 21, 5)
    assert codes(r.decode_batch, data) == b.UNSUPPORTED_COMPRESSION_TYPE == 76
    with pytest.raises(compression.UnsupportedCodec):
        compression.compress(6, b"x")


# --- headers, nulls -------------------------------------------------------------------------

def test_record_headers_keep_order_duplicates_and_null_values():
    headers = (("a", b"1"), ("a", b"2"), ("", b""), ("n", None), ("ü", b"\xff"))
    [rec] = r.decode_batch(r.build_batch([(b"k", b"v", 5, headers)])).records
    assert rec.headers == headers


def test_header_keys_given_as_bytes_decode_as_text():
    [rec] = r.decode_batch(r.build_batch([(b"k", b"v", 5, ((b"key", b"val"),))])).records
    assert rec.headers == (("key", b"val"),)


def test_null_key_and_value_are_encoded_as_minus_one_lengths():
    enc = r.encode_record(0, 0, None, None)
    # length, attributes, ts delta, offset delta, key -1, value -1, 0 headers
    assert enc == bytes([12, 0, 0, 0, 1, 1, 0])  # zig-zag: 6 -> 12, -1 -> 1


def test_null_and_empty_keys_and_values_stay_distinct():
    [a, bb] = r.decode_batch(r.build_batch([(None, b"", 1), (b"", None, 1)])).records
    assert (a.key, a.value) == (None, b"")
    assert (bb.key, bb.value) == (b"", None)


# --- control records ---------------------------------------------------------------------------

def test_control_key_is_version_then_type_int16():
    assert r.control_key(r.ABORT) == b"\x00\x00\x00\x00"
    assert r.control_key(r.COMMIT) == b"\x00\x00\x00\x01"
    assert r.control_key(r.SHARE_DELTA, version=1) == b"\x00\x01\x00\x06"


@pytest.mark.parametrize("kind", [r.ABORT, r.COMMIT, r.LEADER_CHANGE, r.SHARE_CHECKPOINT, r.SHARE_DELTA])
def test_control_type_reads_back_what_control_key_wrote(kind):
    assert r.control_type(r.control_key(kind)) == kind


def test_control_type_of_a_short_or_missing_key_is_minus_one():
    assert r.control_type(None) == -1
    assert r.control_type(b"\x00\x01") == -1


def test_commit_marker_batch_is_a_transactional_control_batch():
    data = r.build_control_batch(r.COMMIT, r.end_txn_marker(3), base_offset=9, producer_id=42,
                                 producer_epoch=1, transactional=True, timestamp=123)
    batch = r.decode_batch(data)
    h = batch.header
    assert h.is_control and h.is_transactional
    assert h.attributes & b.CONTROL and h.attributes & b.TRANSACTIONAL
    assert (h.producer_id, h.producer_epoch, h.base_offset) == (42, 1, 9)
    [rec] = batch.records
    assert r.control_type(rec.key) == r.COMMIT
    assert struct.unpack(">hi", rec.value) == (0, 3)
    assert rec.timestamp == 123


def test_data_batch_is_neither_control_nor_transactional():
    h = r.decode_batch(sample_batch()).header
    assert not h.is_control and not h.is_transactional


def test_last_sequence_wraps_at_int32_max():
    h = b.read_header(r.build_batch([(None, b"x")] * 3, base_sequence=0x7FFFFFFF - 1, producer_id=1))
    assert h.last_sequence == 0
    assert b.read_header(sample_batch()).last_sequence == b.NO_SEQUENCE


# --- snappy framings --------------------------------------------------------------------------

def _batch_with_payload(payload: bytes, codec: int, count: int) -> bytes:
    header = b.pack_header(base_offset=0, batch_length=b.HEADER_SIZE - b.LOG_OVERHEAD + len(payload),
                           partition_leader_epoch=-1, magic=2, attributes=codec,
                           last_offset_delta=count - 1, base_timestamp=10, max_timestamp=10,
                           producer_id=-1, producer_epoch=-1, base_sequence=-1, records_count=count)
    out = bytearray(header + payload)
    b.write_crc(out)
    return bytes(out)


def test_snappy_writes_xerial_framing():
    packed = compression.compress(compression.SNAPPY, b"hello" * 100)
    assert packed.startswith(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))


def test_xerial_snappy_with_several_blocks_decodes():
    data = bytes(range(256)) * 400  # > 32 KiB: several xerial blocks
    packed = compression.compress(compression.SNAPPY, data)
    assert compression.decompress(compression.SNAPPY, packed) == data


def test_raw_snappy_decodes_too():
    data = b"librdkafka writes raw snappy " * 20
    raw = bytes(cramjam.snappy.compress_raw(data))
    assert compression.decompress(compression.SNAPPY, raw) == data


def test_batch_with_raw_snappy_payload_decodes():
    payload = b"".join(r.encode_record(i, 0, f"k{i}".encode(), f"v{i}".encode()) for i in range(3))
    data = _batch_with_payload(bytes(cramjam.snappy.compress_raw(payload)), compression.SNAPPY, 3)
    assert [(x.key, x.value) for x in r.decode_batch(data).records] == [
        (b"k0", b"v0"), (b"k1", b"v1"), (b"k2", b"v2")]


def test_truncated_xerial_block_is_corrupt_message():
    payload = r.encode_record(0, 0, b"k", b"v" * 100)
    xerial = compression.compress(compression.SNAPPY, payload)
    data = _batch_with_payload(xerial[:-5], compression.SNAPPY, 1)
    assert codes(r.decode_batch, data) == b.CORRUPT_MESSAGE


# --- batches written by real clients ------------------------------------------------------------

def _golden_batches():
    return sorted(GOLDEN_BATCHES.glob("*.hex"))


def test_golden_batches_cover_every_codec_from_confluent_kafka():
    names = {p.stem for p in _golden_batches()}
    assert {f"confluent-kafka_{n}" for n in CODEC_IDS} <= names


@pytest.mark.parametrize("path", _golden_batches(), ids=lambda p: p.stem)
def test_batch_written_by_a_real_client_decodes(path):
    client, codec_name = path.stem.rsplit("_", 1)
    data = bytes.fromhex(path.read_text().strip())
    batches = [r.decode_batch(data, start, end) for start, end, _ in b.split_batches(data)]
    assert batches, "no batch in the captured records"
    assert {x.header.compression for x in batches} == {compression.BY_NAME[codec_name]}
    recs = [rec for x in batches for rec in x.records]
    # scripts/capture_golden.py produces three records: key-<i> / "<client>-<codec>-<i>:golden golden ..."
    assert [rec.key for rec in recs] == [b"key-0", b"key-1", b"key-2"]
    assert [rec.value for rec in recs] == [
        f"{client}-{codec_name}-{i}:".encode() + b"golden " * 30 for i in range(3)]
    assert all(rec.headers == () for rec in recs)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.one_of(st.none(), st.integers(0, 9000)), st.integers(0, 3),
       st.sampled_from([0, 1, 63, 64, 8190, 9000, 10**7]), st.randoms(use_true_random=False))
def test_plain_records_encode_as_one_record_at_a_time(n, same_size, nulls, spread, rnd):
    """The producer's whole-batch encoder (a table-driven path for values of one
    size, deltas and sizes in range) gives the bytes of encode_record, joined."""
    values = [bytes([rnd.randrange(256)]) * (same_size if same_size is not None else rnd.randrange(0, 200))
              for _ in range(n)]
    if n and same_size is None and rnd.random() < 0.3:  # lengths around the tables' end (8000)
        values[rnd.randrange(n)] = b"L" * rnd.randrange(7990, 8200)
    for _ in range(nulls if n and same_size is None else 0):
        values[rnd.randrange(n)] = None
    base = 1_700_000_000_000
    stamps = [base + rnd.randrange(-1, spread + 1) for _ in range(n)]
    expected = b"".join(r.encode_record(i, ts - base, None, v) for i, (v, ts) in enumerate(zip(values, stamps)))
    deltas = [ts - base for ts in stamps]
    assert rb.encode_plain_records(values, deltas) == expected
    assert rb.encode_plain_records(values, deltas, -1) == expected  # the caller says the sizes differ
    if same_size is not None:  # the caller says every value has this size
        assert rb.encode_plain_records(values, deltas, same_size) == expected


def test_plain_records_past_the_one_byte_offset_deltas_decode():
    values = [bytes([i % 256]) * 100 for i in range(3000)]
    stamps = [1_700_000_000_000 + i // 700 for i in range(3000)]
    payload = rb.encode_plain_records(values, [ts - stamps[0] for ts in stamps])
    batch = r.decode_batch(r.assemble(payload, 3000, stamps[0], stamps[-1]))
    assert [rec.value for rec in batch.records] == values
    assert [rec.timestamp for rec in batch.records] == stamps


def test_the_prefix_tables_stay_within_their_limit_and_still_encode():
    """Batches of ever new value sizes and timestamp deltas (a producer of
    varied records) rebuild the tables rather than grow them without bound."""
    for vl in range(0, 2000, 5):
        values = [b"v" * vl] * 300  # tables of 512 prefixes
        payload = rb.encode_plain_runs(values, [0, 200], [vl % 50, vl % 50 + 1], vl)
        expected = b"".join(r.encode_record(i, vl % 50 + (i >= 200), None, v) for i, v in enumerate(values))
        assert payload == expected
        assert sum(map(len, rb._PREFIXES.values())) <= rb._PREFIXES_LIMIT
    assert rb._PREFIXES  # the tables in use since the last rebuild


def test_the_tables_for_values_of_differing_lengths_stay_within_the_limit_and_still_encode():
    for td in range(0, 400, 3):
        values = [b"w" * ((i * 37 + td) % 3000) for i in range(100)]
        payload = rb.encode_plain_runs(values, [0, 70], [td, td + 2], -1)
        expected = b"".join(r.encode_record(i, td + 2 * (i >= 70), None, v) for i, v in enumerate(values))
        assert payload == expected
        assert sum(map(len, rb._HEADS.values())) <= rb._PREFIXES_LIMIT
    assert len(rb._TAILS) <= rb.PLAIN_SIZES_MAX + 1


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(0, 3), st.sampled_from([0, 1, 63, 64, 8190, 9000]),
       st.randoms(use_true_random=False))
def test_keyed_records_encode_as_one_record_at_a_time(n, nulls, spread, rnd):
    """The producer's encoder for keyed batches (tables indexed by the key and
    value lengths) gives the bytes of encode_record, joined; null keys or
    values, long fields and deltas out of range take the record-by-record way."""
    keys = [b"k" * rnd.choice([0, 1, 5, 63, 64, 200]) for _ in range(n)]
    values = [bytes([rnd.randrange(256)]) * rnd.randrange(0, 300) for _ in range(n)]
    if n and rnd.random() < 0.3:  # a field around the tables' end (8000)
        (keys if rnd.random() < 0.5 else values)[rnd.randrange(n)] = b"L" * rnd.randrange(7990, 8200)
    for _ in range(nulls if n else 0):
        (keys if rnd.random() < 0.5 else values)[rnd.randrange(n)] = None
    base = 1_700_000_000_000
    stamps = sorted(base + rnd.randrange(-1, spread + 1) for _ in range(n))
    expected = b"".join(r.encode_record(i, ts - base, k, v) for i, (k, v, ts) in enumerate(zip(keys, values, stamps)))
    run_starts, run_deltas = [], []
    for i, ts in enumerate(stamps):
        if not run_deltas or run_deltas[-1] != ts - base:
            run_starts.append(i)
            run_deltas.append(ts - base)
    assert rb.encode_keyed_runs(keys, values, run_starts, run_deltas) == expected


@pytest.mark.parametrize("level", [None, 1, 9])
def test_lz4_frames_have_independent_blocks_as_kafka_requires(level):
    # Kafka's LZ4 reader refuses linked blocks ("Dependent block stream is unsupported"):
    # the frame descriptor's FLG byte must have the block-independence bit (0x20) set and
    # no content checksum (0x04), as KafkaLZ4BlockOutputStream writes it (issue 29)
    frame = compression.compress(compression.LZ4, b"kipper " * 50_000, level)
    assert frame[:4] == bytes.fromhex("04224d18")
    flg = frame[4]
    assert flg & 0xC0 == 0x40 and flg & 0x20 and not flg & 0x04
    assert compression.decompress(compression.LZ4, frame) == b"kipper " * 50_000
