"""Fetch reads one segment per partition and segments roll on record time, as Kafka's
UnifiedLog.read and LogSegment.shouldRoll do (issue 29: measured against Kafka 4.4, a
transaction's records stamped long ago and the marker stamped now land in two segments, and
a fetch from the start returns the first one only)."""

from __future__ import annotations

from kipper.protocol import records
from tests.support.inproc import InProcessBroker

OLD = 1_700_000_000_000


def _read(plog, offset: int) -> list[int]:
    """What the Fetch handler reads (broker/handlers/fetch.py: one segment)."""
    got = plog.read(offset, 1 << 20, one_segment=True)
    data = b"".join(bytes(c) for c in got.chunks)
    return [batch.header.base_offset for batch in records.decode_all(data, verify_crc=False)]


def test_a_jump_in_record_time_rolls_and_fetch_stops_at_the_segment_end():
    b = InProcessBroker()
    b.state.topics.create("t", 1, configs={"segment.ms": "100"})
    plog = b.state.topics.partition("t", 0)
    for i in range(3):  # stamped 10 ms apart, appended whenever: one segment
        plog.append_batch(records.build_batch([(None, b"v%d" % i, OLD + 10 * i)]), b.now + 1000 * i)
    plog.append_batch(records.build_batch([(None, b"late", OLD + 500)]), b.now)  # 500 ms of record time later
    plog.append_batch(records.build_batch([(None, b"next", OLD + 510)]), b.now)
    assert [s.base_offset for s in plog.log.segments_info()] == [0, 3]
    assert _read(plog, 0) == [0, 1, 2]
    assert _read(plog, 3) == [3, 4]


def test_durable_logs_roll_and_read_the_same_way(tmp_path):
    b = InProcessBroker(**{"log.dirs": str(tmp_path)})
    b.state.topics.create("t", 1, configs={"segment.ms": "100"})
    plog = b.state.topics.partition("t", 0)
    for i in range(3):
        plog.append_batch(records.build_batch([(None, b"v%d" % i, OLD + 10 * i)]), b.now + 1000 * i)
    plog.append_batch(records.build_batch([(None, b"late", OLD + 500)]), b.now)
    assert [s.base_offset for s in plog.log.segments_info()] == [0, 3]
    assert _read(plog, 0) == [0, 1, 2] and _read(plog, 1) == [1, 2] and _read(plog, 3) == [3]
    assert len(plog.read(0, 1 << 20).chunks) == 2  # other readers still get the whole log
