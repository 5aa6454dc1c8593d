"""Recovery after an unclean stop: a log cut or corrupted anywhere comes back as exactly
its whole, valid prefix, with its indexes rebuilt; producer state comes back from the
newest snapshot plus the batches after it."""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kipper.broker.log.partition import Partition
from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.storage.file_log import FileLog, LogConfig
from kipper.protocol import batch as b
from kipper.protocol import compression, records
from kipper.protocol.errors import ErrorCode
from tests.support import malformed


def _write(directory, sizes, **config) -> tuple[FileLog, list[int]]:
    """A log of one batch per size; the end position of each batch in the active file."""
    log = FileLog.create(directory, LogConfig(**config), 0)
    ends = []
    for i, n in enumerate(sizes):
        data = records.build_batch([(b"k", os.urandom(n), 1000 + i)])
        log.maybe_roll(len(data), 0)
        log.append(data, b.split_batches(data), 0)
        ends.append(log.active.size)
    return log, ends


def _reopen(directory, **config) -> FileLog:
    return FileLog.open(directory, LogConfig(**config), log_start_offset=0, recovery_point=0,
                        clean=False, now_ms=0)


def _stored(log: FileLog) -> list[int]:
    return [r.offset for c in log.read(0, 1 << 30).chunks for bt in records.decode_all(c)
            for r in bt.records]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 300), min_size=1, max_size=12), data=st.data())
def test_a_segment_cut_at_any_byte_keeps_exactly_its_whole_batches(tmp_path_factory, sizes, data):
    directory = tmp_path_factory.mktemp("cut") / "t-0"
    log, ends = _write(directory, sizes)
    log.close()
    path = directory / "00000000000000000000.log"
    cut = data.draw(st.integers(0, ends[-1]), label="cut")
    os.truncate(path, cut)
    again = _reopen(directory)
    whole = sum(1 for e in ends if e <= cut)
    assert again.log_end_offset == whole
    assert _stored(again) == list(range(whole))
    assert os.path.getsize(path) == (ends[whole - 1] if whole else 0)
    assert again.append(records.build_batch([(None, b"next")]),
                        b.split_batches(records.build_batch([(None, b"next")])), 0)[0] == whole


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(1, 200), min_size=2, max_size=10), data=st.data())
def test_a_corrupt_byte_cuts_the_log_before_the_batch_that_holds_it(tmp_path_factory, sizes, data):
    directory = tmp_path_factory.mktemp("flip") / "t-0"
    log, ends = _write(directory, sizes)
    log.close()
    path = directory / "00000000000000000000.log"
    raw = bytearray(path.read_bytes())
    at = data.draw(st.integers(b.CRC_START, len(raw) - 1), label="byte")
    starts = [0, *ends[:-1]]
    victim = max(i for i, s in enumerate(starts) if s <= at)
    if at - starts[victim] < b.CRC_START:
        return  # a header field before the CRC's range: framing checks decide, not the CRC
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    again = _reopen(directory)
    assert again.log_end_offset == victim
    assert _stored(again) == list(range(victim))


@pytest.mark.parametrize("codec", malformed.CODECS, ids=[compression.NAMES[c] for c in malformed.CODECS])
@pytest.mark.parametrize("fault", ["records_count 3 with two records", "negative header count",
                                   "key length beyond its record", "bytes left over after the last record"])
def test_a_batch_whose_records_do_not_parse_is_cut_though_its_crc_holds(tmp_path, fault, codec):
    directory = tmp_path / "t-0"
    log, ends = _write(directory, [40, 60, 80])
    log.close()
    case = malformed.MALFORMED[fault]
    bad = bytearray(malformed.batch(case.payload, case.count, codec, base_offset=3))
    with open(directory / "00000000000000000000.log", "ab") as f:  # a corrupt tail, CRC intact
        f.write(bytes(bad) + records.build_batch([(b"k", b"after")], base_offset=3 + case.count))
    assert b.crc_valid(bad, 0, len(bad), b.read_header(bad))
    again = _reopen(directory)
    assert again.log_end_offset == 3 and _stored(again) == [0, 1, 2]
    assert os.path.getsize(directory / "00000000000000000000.log") == ends[-1]
    assert again.append(records.build_batch([(None, b"next")]),
                        b.split_batches(records.build_batch([(None, b"next")])), 0)[0] == 3


def test_segments_after_a_torn_one_are_removed_and_indexes_are_rebuilt(tmp_path):
    directory = tmp_path / "t-0"
    size = len(records.build_batch([(b"k", b"x" * 50, 0)]))
    log, _ = _write(directory, [50] * 9, segment_bytes=size * 3, index_interval_bytes=1)
    log.close()
    os.truncate(directory / "00000000000000000003.log", size + 5)  # tear the second segment
    for name in os.listdir(directory):
        if name.endswith(".index"):
            os.unlink(directory / name)
    again = _reopen(directory, segment_bytes=size * 3, index_interval_bytes=1)
    assert [s.base_offset for s in again.segments] == [0, 3]
    assert again.log_end_offset == 4 and _stored(again) == [0, 1, 2, 3]
    assert not (directory / "00000000000000000006.log").exists()
    assert len(again.segments[0]._idx_offsets) == 2  # rebuilt while scanning (none at the start)


def test_recovery_starts_at_the_segment_holding_the_recovery_point(tmp_path):
    directory = tmp_path / "t-0"
    size = len(records.build_batch([(b"k", b"x" * 50, 0)]))
    log, _ = _write(directory, [50] * 6, segment_bytes=size * 3)
    log.close()
    first = directory / "00000000000000000000.log"
    raw = bytearray(first.read_bytes())
    raw[-1] ^= 0xFF  # damage below the recovery point: trusted, not scanned
    first.write_bytes(bytes(raw))
    again = FileLog.open(directory, LogConfig(segment_bytes=size * 3), log_start_offset=0,
                         recovery_point=3, clean=False, now_ms=0)
    assert again.log_end_offset == 6


def _idempotent(pid: int, seq: int, n: int = 2) -> bytes:
    return records.build_batch([(b"k", b"v")] * n, producer_id=pid, producer_epoch=0, base_sequence=seq)


def test_producer_state_comes_back_from_the_snapshot_and_the_batches_after_it(tmp_path):
    directory = tmp_path / "t-0"
    settings_ = ProducerStateSettings()
    size = len(_idempotent(7, 0))
    p = Partition("t", 0, FileLog.create(directory, LogConfig(segment_bytes=size * 2), 0), settings_)
    for seq in range(0, 8, 2):  # four batches: a roll after two writes a snapshot
        data = _idempotent(7, seq)
        assert p.append(data, b.split_batches(data), 0).error == ErrorCode.NONE
    assert any(n.endswith(".snapshot") for n in os.listdir(directory))
    # a crash: no clean stop, no snapshot at the end
    again = Partition("t", 0, _reopen(directory, segment_bytes=size * 2), settings_)
    assert again.recover() >= 1
    retry = _idempotent(7, 6)  # the last batch again: a duplicate, answered with its offset
    got = again.append(retry, b.split_batches(retry), 0)
    assert (got.error, got.base_offset, got.appended) == (ErrorCode.NONE, 6, False)
    nxt = _idempotent(7, 8)
    assert again.append(nxt, b.split_batches(nxt), 0).base_offset == 8
    gap = _idempotent(7, 20)
    assert again.append(gap, b.split_batches(gap), 0).error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_open_and_aborted_transactions_come_back_for_read_committed(tmp_path):
    directory = tmp_path / "t-0"
    p = Partition("t", 0, FileLog.create(directory, LogConfig(), 0), ProducerStateSettings())

    def txn(pid, seq):
        data = records.build_batch([(None, b"v")], producer_id=pid, producer_epoch=0,
                                   base_sequence=seq, transactional=True)
        p.append(data, b.split_batches(data), 0)

    txn(1, 0)
    p.append_batch(records.build_control_batch(records.ABORT, records.end_txn_marker(0), producer_id=1,
                                               producer_epoch=0, transactional=True), 0)
    txn(2, 0)  # still open at the crash
    assert p.last_stable_offset == 2
    again = Partition("t", 0, _reopen(directory), ProducerStateSettings())
    again.recover()
    assert again.last_stable_offset == 2
    assert again.aborted_transactions(0, 3) == [{"producer_id": 1, "first_offset": 0}]


def test_a_random_crash_point_never_loses_a_whole_batch_before_it(tmp_path):
    rng = random.Random(3)
    directory = tmp_path / "t-0"
    log, ends = _write(directory, [rng.randrange(1, 400) for _ in range(200)], segment_bytes=4096)
    total = log.log_end_offset
    log.close()
    again = _reopen(directory, segment_bytes=4096)
    assert again.log_end_offset == total and _stored(again) == list(range(total))
