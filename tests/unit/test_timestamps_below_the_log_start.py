"""ListOffsets by time and MAX_TIMESTAMP read segments as Kafka's UnifiedLog does, and
DeleteRecords leaves the segments below the log start until the next retention check
(the client generator's fourth run; scenarios list-offsets/by-a-time-only-deleted-records-have
and list-offsets/max-timestamp-below-the-log-start)."""

from __future__ import annotations

import pytest

from kipper.broker.log.partition import Partition
from kipper.broker.producer_state.settings import ProducerStateSettings
from kipper.broker.storage.file_log import FileLog
from kipper.broker.storage.log_config import LogConfig
from kipper.broker.storage.memory_log import MemoryLog
from kipper.protocol import batch as b
from kipper.protocol import records

TS = 1_700_000_000_000
WEEK_AND_A_DAY = 8 * 86_400_000  # past segment.ms after a segment's first record: the log rolls


@pytest.fixture(params=["memory", "disk"])
def partition(request, tmp_path) -> Partition:
    config = LogConfig()
    log = MemoryLog(config) if request.param == "memory" else FileLog.create(tmp_path / "t-0", config, 0)
    return Partition("t", 0, log, ProducerStateSettings())


def produce(p: Partition, *stamps: int) -> None:
    data = records.build_batch([(b"k", b"v", ts) for ts in stamps])
    p.append(data, b.split_batches(data), TS)


def test_a_time_only_a_deleted_record_has_finds_nothing_while_its_segment_is_kept(partition):
    produce(partition, TS + 1)
    partition.delete_records_before(1)
    produce(partition, TS + WEEK_AND_A_DAY)  # rolls
    # the first segment whose largest time reaches TS+1 holds nothing from the log start on
    assert partition.offset_for_timestamp(TS + 1) is None
    assert partition.offset_for_timestamp(TS + 2) == (1, TS + WEEK_AND_A_DAY)
    assert partition.log.apply_retention(TS, -1, -1) == 1  # the next check deletes it
    assert partition.offset_for_timestamp(TS + 1) == (1, TS + WEEK_AND_A_DAY)


def test_a_later_segment_is_not_searched_when_the_first_that_reaches_the_time_has_no_match(partition):
    produce(partition, TS, TS + 5)
    produce(partition, TS + WEEK_AND_A_DAY, TS + 3)  # rolls: 2 and 3 in the second segment
    partition.delete_records_before(2)
    assert partition.offset_for_timestamp(TS + 4) is None  # the first segment's TS+5 is below the start
    assert partition.offset_for_timestamp(TS + 6) == (2, TS + WEEK_AND_A_DAY)


def test_max_timestamp_below_the_log_start_is_answered_while_its_segment_is_kept(partition):
    produce(partition, TS)
    produce(partition, TS + 1, TS + WEEK_AND_A_DAY, TS + WEEK_AND_A_DAY)  # rolls; the largest is offset 2
    produce(partition, TS + 2)
    partition.delete_records_before(4)
    assert partition.max_timestamp() == (2, TS + WEEK_AND_A_DAY)
    partition.delete_records_before(5)
    assert partition.max_timestamp() == (2, TS + WEEK_AND_A_DAY)
    partition.log.apply_retention(TS, -1, -1)  # the first segment goes; the active one stays
    assert partition.max_timestamp() == (2, TS + WEEK_AND_A_DAY)
    partition.log.apply_retention(TS + 5 * WEEK_AND_A_DAY, WEEK_AND_A_DAY, -1)  # past time retention: rolled, gone
    assert partition.log.log_start_offset == 5 and partition.max_timestamp() is None


def test_the_size_counts_segments_below_the_log_start_until_retention(partition):
    produce(partition, TS)
    produce(partition, TS + WEEK_AND_A_DAY)
    size = partition.log.size_bytes
    partition.delete_records_before(2)
    assert partition.log.size_bytes == size
    assert partition.log.apply_retention(TS, -1, -1) == 1
    assert partition.log.size_bytes < size
