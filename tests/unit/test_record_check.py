"""The record parser (protocol/record_check.py): every fault refused with Kafka's code.

Each test runs against every form of the parser: the compiled ``_record_scan`` and the
pure-Python ``record_scan``. Where the compiled form is not installed its tests are
skipped with the reason, and fail under CI=true (tests/support/requires.py): a build
step that quietly stopped compiling it must not pass.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from kipper.protocol import batch as b
from kipper.protocol import compression, record_check, record_scan
from kipper.protocol import records as rec
from tests.support import malformed as m
from tests.support.requires import unavailable

ROOT = Path(__file__).resolve().parents[2]
FORMS = ("c", "python")
CODEC_IDS = [compression.NAMES[c] for c in m.CODECS]


def form(name: str):
    if name not in record_check.SCANS:
        unavailable(f"the compiled record parser is not installed ({record_check.COMPILED_IMPORT_ERROR}): "
                    "pip install -e . builds it where a C compiler and Python's headers are present")
    return record_check.SCANS[name]


@pytest.fixture(params=FORMS)
def scan(request):
    return form(request.param)


def check(data: bytes, scan):
    """The parser's answer for one batch (its header read as is: split_batches would
    refuse a negative count before the parser sees it)."""
    header = b.read_header(data)
    assert header.size == len(data) and b.crc_valid(data, 0, len(data), header)
    return record_check.check_batch(data, 0, len(data), header, scan=scan)


# --- the forms ------------------------------------------------------------------------------

def test_the_compiled_form_is_installed_and_is_the_default():
    form("c")
    assert record_check.COMPILED
    assert record_check.SCAN_NAME == "c" and record_check.scan is record_check.SCANS["c"]


def test_the_compiled_form_was_built_from_the_source_in_this_tree():
    form("c")
    from kipper.protocol import _record_scan

    source = (ROOT / "protocol" / "_record_scan.c").read_bytes()
    assert _record_scan.SOURCE_DIGEST == hashlib.sha256(source).hexdigest()[:16], (
        "protocol/_record_scan.c changed since it was compiled: run pip install -e . (make does it)")


# --- what every client sends is accepted -------------------------------------------------------

def golden_batches():
    out = []
    for path in sorted((ROOT / "tests" / "golden" / "batches").glob("*.hex")):
        out.append(pytest.param(bytes.fromhex(path.read_text().strip()), id=path.stem))
    return out


def golden_produce_batches():
    """The batches inside the Produce requests captured from each client."""
    import io

    from kipper.protocol.header import REQUEST_HEADERS
    from kipper.protocol.messages.produce import PRODUCE

    out = []
    for path in sorted((ROOT / "tests" / "golden").glob("*/Produce_v*.hex")):
        version = int(path.stem.rsplit("_v", 1)[1])
        stream = io.BytesIO(bytes.fromhex(path.read_text().strip()))
        REQUEST_HEADERS[PRODUCE.request_header_version(version)].parse_stream(stream)
        body = PRODUCE.request_schema(version).parse_stream(stream)
        for topic in body.topic_data:
            for part in topic.partition_data:
                out.append(pytest.param(bytes(part.records), id=f"{path.parent.name}-{path.stem}-{part.index}"))
    return out


def test_golden_batches_cover_every_client_and_codec():
    names = {p.id for p in golden_batches()}
    for client in ("aiokafka", "confluent-kafka"):
        assert {f"{client}_{name}" for name in compression.NAMES.values()} <= names
    assert {"kafka-python_none", "kafka-python_gzip"} <= names


@pytest.mark.parametrize("data", golden_batches() + golden_produce_batches())
def test_every_batch_a_client_produced_is_accepted(data, scan):
    assert check(data, scan) is None


def test_the_golden_produce_requests_hold_batches_of_every_client():
    assert {p.id.split("-Produce")[0] for p in golden_produce_batches()} == {
        "aiokafka", "confluent-kafka", "kafka-python"}


@pytest.mark.parametrize("codec", m.CODECS, ids=CODEC_IDS)
def test_kipper_built_batches_are_accepted(codec, scan):
    recs = [(b"k", b"v"), (None, b"x" * 5000), (b"", None), (b"h", b"w", 5, (("a", b"1"), ("b", None)))]
    assert check(rec.build_batch(recs * 50, compression_type=codec), scan) is None
    assert check(rec.build_control_batch(rec.COMMIT, rec.end_txn_marker(3)), scan) is None


@pytest.mark.parametrize("codec", m.CODECS, ids=CODEC_IDS)
@pytest.mark.parametrize("name", sorted(m.ODD_BUT_SOUND))
def test_odd_but_sound_records_are_accepted(name, codec, scan):
    payload, count = m.ODD_BUT_SOUND[name]
    assert check(m.batch(payload, count, codec), scan) is None


def test_a_varint_carrying_bits_past_32_reads_as_java_truncates_it(scan):
    # key length 0 written in five bytes whose last carries bits 32-34: Java drops them
    fields = b"\x00\x00\x00" + b"\x80\x80\x80\x80\x70" + m.field(b"v") + b"\x00"
    assert check(m.batch(m.record(fields), 1), scan) is None


# --- every fault refused, with Kafka's code and the record at fault ------------------------------

@pytest.mark.parametrize("codec", m.CODECS, ids=CODEC_IDS)
@pytest.mark.parametrize("name", sorted(m.MALFORMED))
def test_malformed_records_are_refused_with_kafkas_code(name, codec, scan):
    case = m.MALFORMED[name]
    problem = check(m.batch(case.payload, case.count, codec), scan)
    assert problem is not None, f"{name} was accepted"
    assert (problem.code, problem.batch_index) == (case.code, case.index), problem.message


@pytest.mark.parametrize("name, message", [
    ("record length past the batch end", "record 2: length 40 runs past the end of the batch (8 bytes left)"),
    ("bytes left over after the last record", "3 bytes follow the last of the 2 records"),
    ("records_count 3 with two records", "record 2: the batch ends after 2 of its 3 records"),
    ("key length beyond its record", "record 0: key of 50 bytes runs past the end of the record"),
    ("record shorter than its length prefix", "record 0: 3 bytes left over after its fields"),
    ("negative header count", "record 0: header count -1 is negative"),
    ("header key length past the record", "record 0: header key of 9 bytes runs past the end of the record"),
    ("record length varint longer than 5 bytes", "record 0: length varint is longer than 5 bytes"),
    ("empty records section claiming one record", "record 0: the batch ends after 0 of its 1 records"),
    ("timestamp delta varlong longer than 10 bytes", "record 0: timestamp delta varlong is longer than 10 bytes"),
    ("key length -2", "record 0: key length -2 is negative"),
    ("header count beyond the record", "record 0: header count 1000 exceeds the 2 bytes left in the record"),
    ("negative header key length", "record 0: header key length -1 is negative"),
    ("record ends inside its timestamp delta", "record 0: timestamp delta runs past the end of the record"),
    ("negative records count", "record count -1 is negative"),
])
def test_a_refusal_says_what_is_wrong(name, message, scan):
    case = m.MALFORMED[name]
    assert check(m.batch(case.payload, case.count), scan).message == message


@pytest.mark.parametrize("codec", m.CODECS[1:], ids=CODEC_IDS[1:])
@pytest.mark.parametrize("section", [b"", b"not compressed at all", b"\x1f\x8b\x08\x00\x00\x00\x00\x00"],
                         ids=["empty", "text", "gzip-header-only"])
def test_a_payload_that_does_not_decompress_is_corrupt_message(codec, section, scan):
    problem = check(m.batch(section, 1, codec, compress=False), scan)
    assert (problem.code, problem.batch_index) == (m.CORRUPT_MESSAGE, -1)
    assert problem.message.startswith(f"the {compression.NAMES[codec]} payload of the record batch does not decompress")


@pytest.mark.parametrize("codec", m.CODECS[1:], ids=CODEC_IDS[1:])
def test_a_truncated_compressed_payload_is_refused(codec, scan):
    good = compression.compress(codec, m.records(200))
    problem = check(m.batch(good[:len(good) // 2], 200, codec, compress=False), scan)
    assert problem is not None and problem.code in (m.CORRUPT_MESSAGE, m.INVALID_RECORD)


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_an_unknown_codec_is_unsupported_compression_type(codec, scan):
    problem = check(m.batch(m.GOOD, 1, codec, compress=False), scan)
    assert problem == (m.UNSUPPORTED_COMPRESSION_TYPE, -1, f"unknown compression codec {codec}")


def test_the_fault_found_is_the_first_in_the_batch(scan):
    payload = m.records(4) + m.record(m.body(), length=-2) + m.record(b"")
    assert check(m.batch(payload, 6), scan).batch_index == 4


# --- the scan's contract ---------------------------------------------------------------------------

@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview, lambda d: memoryview(d).toreadonly()],
                         ids=["bytes", "bytearray", "memoryview", "readonly"])
def test_scan_reads_any_buffer_and_only_its_span(wrap, scan):
    payload = m.records(3)
    data = wrap(b"\xff" * 7 + payload + b"\xff" * 5)
    assert scan(data, 7, 7 + len(payload), 3, 1000) == 1000
    assert scan(data, 7, 8 + len(payload), 3, 1000) == (m.INVALID_RECORD, -1, "1 bytes follow the last of the 3 records")
    assert scan(data, 0, 0, 0, 1000) == -1


@pytest.mark.parametrize("start, end", [(-1, 5), (5, 4), (0, 100)])
def test_a_span_outside_the_buffer_is_a_value_error(start, end, scan):
    with pytest.raises(ValueError, match="is not within a buffer of 10 bytes"):
        scan(b"\x00" * 10, start, end, 1, 0)


@pytest.mark.parametrize("count", [1 << 31, -(1 << 31) - 1, 1 << 70])
def test_a_count_outside_int32_is_a_value_error(count, scan):
    with pytest.raises(ValueError, match=f"record count {count} is not an int32"):
        scan(b"", 0, 0, count, 0)


@pytest.mark.parametrize("base", [1 << 63, -(1 << 63) - 1])
def test_a_base_timestamp_outside_int64_is_a_value_error(base, scan):
    with pytest.raises(ValueError, match=f"base timestamp {base} is not an int64"):
        scan(m.GOOD, 0, len(m.GOOD), 1, base)


def test_the_largest_counts_end_at_the_buffer(scan):
    assert scan(m.GOOD, 0, len(m.GOOD), 0x7FFFFFFF, 0) == (
        m.INVALID_RECORD, 1, "record 1: the batch ends after 1 of its 2147483647 records")
    assert scan(m.GOOD, 0, len(m.GOOD), -0x80000000, 0)[2] == "record count -2147483648 is negative"


def test_both_forms_give_the_same_answer_for_every_case():
    c, python = form("c"), form("python")
    for case in m.MALFORMED.values():
        assert c(case.payload, 0, len(case.payload), case.count, 7) == \
            python(case.payload, 0, len(case.payload), case.count, 7)


# --- the max timestamp the walk takes (Kafka's LogValidator recomputes the header's) -------------

def timed_records(deltas, *, headers=False, long_deltas=False) -> bytes:
    """Records with these timestamp deltas (as 10-byte varlongs when ``long_deltas``)."""
    out = b""
    for i, delta in enumerate(deltas):
        fields = m.body(b"k", b"v" * 150, ((b"h", b"x"),) if headers else (), offset_delta=i)
        if long_deltas:
            fields = fields[:1] + m.long_varint(delta, 10) + fields[1 + len(m.varint(0)):]
        else:
            fields = fields[:1] + m.varint(delta) + fields[1 + len(m.varint(0)):]
        out += m.record(fields)
    return out


@pytest.mark.parametrize("shape", ["plain", "headers", "long varlongs"])
@pytest.mark.parametrize("deltas, base, top", [
    ([0, 5, 2], 1_700_000_000_000, 1_700_000_000_005),
    ([0, -70_000, 90_000, 64, -64], 1_700_000_000_000, 1_700_000_090_000),
    ([0, 0], -1, -1),  # records without timestamps
    ([-5, -9], -1, -1),  # all below -1: the max stays at Kafka's NO_TIMESTAMP
    ([3, 1], -1, 2),
    ([(1 << 63) - 1, 0], 5, 5),  # a delta that wraps the Java long past 2^63 becomes negative
    ([-(1 << 63), 0], -3, (1 << 63) - 3),  # and one that wraps below -2^63 becomes huge
])
def test_the_walk_answers_the_records_max_timestamp(deltas, base, top, shape, scan):
    payload = timed_records(deltas, headers=shape == "headers", long_deltas=shape == "long varlongs")
    assert scan(payload, 0, len(payload), len(deltas), base) == top


@pytest.mark.parametrize("codec", m.CODECS, ids=CODEC_IDS)
def test_walk_batch_answers_the_max_of_the_records_not_of_the_header(codec, scan):
    data = m.batch(timed_records([0, 40, 7]), 3, codec, base_timestamp=1000, max_timestamp=99_999)
    assert record_check.walk_batch(data, 0, len(data), b.read_header(data), scan=scan) == 1040
    assert check(data, scan) is None


def test_the_python_form_is_the_module_the_c_form_mirrors():
    assert record_check.SCANS["python"] is record_scan.scan


# --- a payload that expands past the limit -------------------------------------------------------

def zeros_record(size: int) -> bytes:
    return m.record(m.body(None, bytes(size)))


@pytest.mark.parametrize("codec", m.CODECS[1:], ids=CODEC_IDS[1:])
def test_a_batch_expanding_past_the_limit_is_message_too_large(codec, scan):
    data = m.batch(zeros_record(2 << 20), 1, codec)
    header = b.read_header(data)
    assert record_check.check_batch(data, 0, len(data), header, scan=scan, max_uncompressed_bytes=3 << 20) is None
    problem = record_check.check_batch(data, 0, len(data), header, scan=scan, max_uncompressed_bytes=1 << 20)
    assert problem == (record_check.MESSAGE_TOO_LARGE, -1, f"the {compression.NAMES[codec]} payload of the "
                       f"record batch is too large: it decompresses to more than {1 << 20} bytes")


def _resident_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / (1 << 20)


def test_a_decompression_bomb_costs_no_memory(scan):
    import cramjam
    import resource

    compressor = cramjam.zstd.Compressor()
    chunk = bytes(1 << 20)
    for _ in range(record_check.MAX_UNCOMPRESSED_BYTES // len(chunk) + 8):
        compressor.compress(chunk)
    data = m.batch(bytes(compressor.finish()), 1, compression.ZSTD, compress=False)
    assert len(data) < 20_000
    resident = _resident_mib()
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resident * 1024)
    problem = check(data, scan)
    assert problem.code == record_check.MESSAGE_TOO_LARGE
    # the pages it filled up to the limit are given back after the refusal
    assert _resident_mib() - resident < compression.KEEP_BYTES / (1 << 20) + 8
    # and it never held more than the limit (a whole expansion would add 136 MiB and more)
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024 < \
        record_check.MAX_UNCOMPRESSED_BYTES / (1 << 20) + 8


def test_batches_larger_than_what_the_scratch_area_keeps_are_read_whole(scan):
    for fill in (b"a", b"b"):
        payload = m.record(m.body(None, fill * (compression.KEEP_BYTES + 4096))) + m.records(3, 1)
        assert check(m.batch(payload, 4, compression.LZ4), scan) is None
    assert check(m.batch(m.records(5), 5, compression.LZ4), scan) is None
