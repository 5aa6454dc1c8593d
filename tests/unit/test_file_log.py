"""FileLog and its segments on a real directory, with a manual clock: appends, reads,
the sparse indexes, rolling, retention, DeleteRecords, and reopening after a clean stop."""

from __future__ import annotations

import os

import pytest

from kipper.broker.storage.file_log import FileLog, LogConfig
from kipper.broker.storage.segment import LogSegment
from kipper.protocol import batch as b
from kipper.protocol import records


def batch(n: int = 1, size: int = 10, ts: int = 1000, **kw) -> bytes:
    return records.build_batch([(None, b"x" * size, ts)] * n, **kw)


def append(log: FileLog, data: bytes, now: int = 0) -> int:
    rolled = log.maybe_roll(len(data), now, max(h.max_timestamp for _, _, h in b.split_batches(data)))
    del rolled
    return log.append(data, b.split_batches(data), now)[0]


def new_log(tmp_path, **config) -> FileLog:
    return FileLog.create(tmp_path / "t-0", LogConfig(**config), 0)


def offsets(log: FileLog, start: int = 0) -> list[int]:
    out = []
    for chunk in log.read(start, 1 << 30).chunks:
        for got in records.decode_all(chunk):
            out += [r.offset for r in got.records]
    return out


def test_appended_batches_read_back_from_the_file_with_their_offsets(tmp_path):
    log = new_log(tmp_path)
    assert append(log, batch(3)) == 0
    assert append(log, batch(2)) == 3
    assert log.log_end_offset == 5
    assert offsets(log) == [0, 1, 2, 3, 4]
    assert offsets(log, 3) == [3, 4]
    got = log.read(1, 1 << 20)
    assert (got.records, got.last_offset) == (5, 4)  # from the batch holding offset 1
    assert os.path.getsize(tmp_path / "t-0" / "00000000000000000000.log") == log.size_bytes


def test_a_read_stops_at_max_bytes_but_always_returns_one_batch(tmp_path):
    log = new_log(tmp_path)
    for _ in range(5):
        append(log, batch(1, size=100))
    one = len(batch(1, size=100))
    assert log.read(0, one * 2).size == one * 2
    assert log.read(0, 1).size == one  # KIP-74
    assert log.read(0, 1, always_one=False).chunks == []
    assert log.read(0, 1 << 20, end_offset=3).last_offset == 2


def test_the_sparse_index_finds_positions_without_scanning_from_the_start(tmp_path):
    log = new_log(tmp_path, index_interval_bytes=256)
    for _ in range(100):
        append(log, batch(1, size=100))
    seg = log.active
    assert len(seg._idx_offsets) > 10
    for target in (0, 17, 50, 99):
        pos = seg.position_for(target)
        pos_found, h = seg.find(target)
        assert pos <= pos_found and h.base_offset == target


def test_segments_roll_at_segment_bytes_and_the_old_one_gets_its_index_files(tmp_path):
    size = len(batch(1, size=100))
    log = new_log(tmp_path, segment_bytes=size * 3)
    for _ in range(7):
        append(log, batch(1, size=100))
    assert [s.base_offset for s in log.segments] == [0, 3, 6]
    names = sorted(os.listdir(tmp_path / "t-0"))
    assert "00000000000000000000.index" in names and "00000000000000000003.timeindex" in names
    assert offsets(log) == list(range(7))
    assert offsets(log, 4) == [4, 5, 6]


def test_segments_roll_at_segment_ms(tmp_path):
    log = new_log(tmp_path, segment_ms=1000)
    append(log, batch(ts=0), now=0)
    append(log, batch(ts=1000), now=999)
    append(log, batch(ts=1001), now=1000)
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_segment_ms_counts_record_time_as_kafka_does(tmp_path):
    """Kafka's LogSegment.shouldRoll: the incoming batch's largest timestamp against the
    segment's first batch's, not the wall clock: records stamped close together share a
    segment however late they come, and a jump in record time rolls at once."""
    log = new_log(tmp_path, segment_ms=100)
    append(log, batch(ts=5000), now=0)
    append(log, batch(ts=5050), now=10_000)
    assert [s.base_offset for s in log.segments] == [0]
    append(log, batch(ts=9_999_999), now=10_001)
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_retention_deletes_whole_segments_by_their_largest_record_timestamp(tmp_path):
    """Kafka's deleteRetentionMsBreachedSegments: a segment's largest record timestamp, not
    when it was written, and the active segment too once it is wholly past (rolled first)."""
    size = len(batch(1, size=100))
    log = new_log(tmp_path, segment_bytes=size * 2)
    for i in range(6):
        append(log, batch(1, size=100, ts=i * 1000), now=10**6)
    assert [s.base_offset for s in log.segments] == [0, 2, 4]
    assert log.apply_retention(3500, retention_ms=2000, retention_bytes=-1) == 1  # 0-1 stamped up to 1000
    assert log.log_start_offset == 2 and not (tmp_path / "t-0" / "00000000000000000000.log").exists()
    assert log.apply_retention(10**9, retention_ms=1, retention_bytes=-1) == 2
    assert [s.base_offset for s in log.segments] == [6] and log.log_start_offset == log.log_end_offset == 6
    assert append(log, batch(1, size=100, ts=10**9), now=10**9) == 6


def test_retention_keeps_future_stamps_and_reads_the_write_time_of_unstamped_records(tmp_path):
    log = new_log(tmp_path)
    append(log, batch(1, size=10, ts=5000), now=0)
    assert log.apply_retention(1000, retention_ms=1, retention_bytes=-1) == 0  # stamped after now
    other = new_log(tmp_path / "b")
    append(other, batch(1, size=10, ts=-1), now=1000)
    assert other.apply_retention(1500, retention_ms=1000, retention_bytes=-1) == 0
    assert other.apply_retention(2500, retention_ms=1000, retention_bytes=-1) == 1


def test_size_retention_and_the_hold_of_a_share_group(tmp_path):
    size = len(batch(1, size=100))
    log = new_log(tmp_path, segment_bytes=size * 2)
    for _ in range(8):
        append(log, batch(1, size=100))
    assert log.apply_retention(0, -1, size * 4, floor=4) == 2  # would drop 3, held at 4
    assert log.log_start_offset == 4
    assert log.apply_retention(0, -1, size * 2) == 1
    assert log.log_start_offset == 6


def test_delete_records_moves_the_start_and_retention_drops_the_segments_below_it(tmp_path):
    size = len(batch(1, size=100))
    log = new_log(tmp_path, segment_bytes=size * 2)
    for _ in range(6):
        append(log, batch(1, size=100))
    assert log.delete_records_before(3) == 3
    assert [s.base_offset for s in log.segments] == [0, 2, 4]  # until the next retention check, as Kafka's
    assert log.apply_retention(0, -1, -1) == 1
    assert [s.base_offset for s in log.segments] == [2, 4]
    assert offsets(log, 3)[0] == 3
    assert log.batch_at_offset(1) is None


def test_timestamp_lookups_use_the_time_index(tmp_path):
    log = new_log(tmp_path, index_interval_bytes=1, segment_bytes=300)
    for i in range(20):
        append(log, batch(1, ts=1000 + i * 10))
    assert log.offset_for_timestamp(1000) == (0, 1000)
    assert log.offset_for_timestamp(1055) == (6, 1060)
    assert log.offset_for_timestamp(5000) is None
    assert log.max_timestamp() == (19, 1190)


def test_a_clean_reopen_trusts_the_index_files(tmp_path):
    size = len(batch(1, size=100))
    log = new_log(tmp_path, segment_bytes=size * 3, index_interval_bytes=1)
    for i in range(8):
        append(log, batch(1, size=100, ts=2000 + i))
    log.close()
    again = FileLog.open(tmp_path / "t-0", LogConfig(segment_bytes=size * 3), log_start_offset=0,
                         recovery_point=0, clean=True, now_ms=0)
    assert again.log_end_offset == 8 and offsets(again) == list(range(8))
    assert again.max_timestamp() == (7, 2007)
    assert append(again, batch(1, size=100)) == 8


def test_index_entries_are_kafkas_formats(tmp_path):
    log = new_log(tmp_path, index_interval_bytes=1)
    for i in range(3):
        append(log, batch(2, ts=100 + i))
    log.close()
    index = (tmp_path / "t-0" / "00000000000000000000.index").read_bytes()
    # (relative last offset of the batch, its position), 8 bytes an entry; as Kafka's LogSegment,
    # one at the first batch after more than index.interval.bytes, none at the segment's start
    entries = [tuple(int.from_bytes(index[i + k:i + k + 4], "big") for k in (0, 4))
               for i in range(0, len(index), 8)]
    size = len(batch(2))
    assert entries == [(3, size), (5, 2 * size)]
    timeindex = (tmp_path / "t-0" / "00000000000000000000.timeindex").read_bytes()
    assert len(timeindex) % 12 == 0 and int.from_bytes(timeindex[-12:-4], "big") == 102


def test_a_time_index_entry_is_the_largest_timestamp_so_far_as_kafkas(tmp_path):
    """At an index point Kafka's LogSegment records the largest timestamp so far and its
    offset, which an earlier batch may hold (records stamped out of order)."""
    size = len(batch(2))
    log = new_log(tmp_path, index_interval_bytes=size * 3 // 2)  # an entry every second batch
    for ts in (100, 500, 200, 250, 600):
        append(log, batch(2, ts=ts))
    log.close()
    timeindex = (tmp_path / "t-0" / "00000000000000000000.timeindex").read_bytes()
    entries = [(int.from_bytes(timeindex[i:i + 8], "big"), int.from_bytes(timeindex[i + 8:i + 12], "big"))
               for i in range(0, len(timeindex), 12)]
    # at the third batch (200): 500 at offset 3; at the fifth: 600 at 9 (and again when it closes)
    assert entries == [(500, 3), (600, 9)]


def test_aborted_transactions_are_kept_in_the_txnindex(tmp_path):
    log = new_log(tmp_path)
    append(log, batch())
    log.record_aborted(7, 0, 0, 0)
    log.close()
    seg = LogSegment(tmp_path / "t-0", 0)
    seg.load_txnindex()
    assert seg.aborted == [(7, 0, 0, 0)]


def test_producer_snapshots_keep_the_two_newest(tmp_path):
    from kipper.protocol.coordinator_records import SnapshotEntry

    log = new_log(tmp_path)
    entry = SnapshotEntry(5, 0, 9, 3, 0, 1000, -1, -1)
    for offset in (0, 10, 20):
        log.write_producer_snapshot(offset, [entry])
    names = sorted(n for n in os.listdir(tmp_path / "t-0") if n.endswith(".snapshot"))
    assert names == ["00000000000000000010.snapshot", "00000000000000000020.snapshot"]
    log.segments[-1].next_offset = 20
    assert log.latest_producer_snapshot() == (20, [entry])


@pytest.mark.parametrize("config", [{}, {"segment_bytes": 500}])
def test_batches_and_headers_iterate_across_segments(tmp_path, config):
    log = new_log(tmp_path, **config)
    for _ in range(10):
        append(log, batch(2))
    assert [base for base, _ in log.batches_from(5)] == [4, 6, 8, 10, 12, 14, 16, 18]
    assert [base for base, _, _ in log.headers_from(0)][:3] == [0, 2, 4]
    assert log.batch_at_offset(7)[0] == 6


def test_an_append_of_more_batches_than_writev_takes_at_once_is_written_whole(tmp_path):
    """writev takes at most IOV_MAX (1024) buffers; an append of more (the log's own writes
    may hold many batches) is written in rounds, in order."""
    log = new_log(tmp_path)
    data = b"".join(batch(1, ts=1000 + i) for i in range(1500))
    assert append(log, data) == 0
    assert offsets(log) == list(range(1500))
    assert os.path.getsize(log.segments[0].path(".log")) == len(data)


def test_an_append_writes_the_producers_bytes_without_copying_them(tmp_path):
    """The new base offset and a view of the rest of the batch go to ``writev`` as they
    are: nothing the size of the batch is allocated on the way to the file."""
    import tracemalloc

    log = new_log(tmp_path)
    append(log, batch(1))
    data = batch(1000, size=1000)  # about 1 MB
    spans = b.split_batches(data)
    tracemalloc.start()
    try:
        log.append(memoryview(data), spans, 0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.1 * len(data)
    assert offsets(log) == list(range(1001))


def test_a_rolled_segment_wholly_below_the_log_start_goes_at_the_next_retention_check(tmp_path):
    size = len(batch(1, size=100))
    log = new_log(tmp_path, segment_bytes=size * 2)
    for _ in range(2):
        append(log, batch(1, size=100, ts=10**12))
    log.delete_records_before(2)  # the active segment keeps what is below the start
    append(log, batch(1, size=100, ts=10**12))  # and rolls
    assert [s.base_offset for s in log.segments] == [0, 2]
    assert log.apply_retention(0, -1, -1) == 1
    assert [s.base_offset for s in log.segments] == [2] and log.log_start_offset == 2
