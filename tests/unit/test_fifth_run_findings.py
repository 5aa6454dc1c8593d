"""What the generator's fifth run handed on (issue 36, docs/FUZZ_FINDINGS.md), fixed: each test
states Kafka 4.4's answer; each sequence is a named scenario in
tests/conformance/scenarios/generated_run5.py."""

from __future__ import annotations

from kipper.broker.storage.log_config import EMPTY_SEGMENT, rolling_mark, waited_for_roll
from kipper.protocol import records
from tests.support.inproc import InProcessBroker

PRODUCE, FETCH, WRITE_TXN_MARKERS = 0, 1, 27
CREATED = 1_700_000_000_000  # the first batch's timestamp
DAY = 86_400_000
UNKNOWN = 999_999_999_000


def _fetch_batches(b, topics: list[list[int]]) -> list[int]:
    answer = b.call(FETCH, 4, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                               "isolation_level": 0, "topics": [
        {"topic": "t", "partitions": [{"partition": p, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
                                      for p in ps]} for ps in topics]})
    return [len(records.decode_all(bytes(p.records or b""))) for t in answer.responses for p in t.partitions]


def test_a_batch_without_timestamps_does_not_roll_a_segment_that_began_by_record_time():
    # Kafka's timeWaitedForRoll: the incoming largest timestamp (-1) minus the first batch's:
    # negative, no roll, however long ago the first batch's time was; a fetch reads both
    b = InProcessBroker(now=CREATED + 30 * DAY)
    b.state.topics.create("t", 1)
    b.produce("t", 0, [(b"k0", b"v0", CREATED)], version=3)
    b.produce("t", 0, [(b"k0", b"v0", -1), (b"k1", b"v1", -1)], version=3)
    assert _fetch_batches(b, [[0]]) == [2]
    # one partition named three times is read once (seed 6002)
    assert _fetch_batches(b, [[0, 0], [0]]) == [2]


def test_the_roll_mark_counts_record_time_or_else_wall_clock_time():
    assert waited_for_roll(EMPTY_SEGMENT, CREATED, CREATED) == -1
    by_record = rolling_mark(CREATED, CREATED + 30 * DAY)
    assert waited_for_roll(by_record, CREATED + 30 * DAY, -1) < 0
    assert waited_for_roll(by_record, CREATED, CREATED + 8 * DAY) == 8 * DAY
    by_clock = rolling_mark(-1, CREATED)  # a first batch with no timestamp: since the segment began
    assert waited_for_roll(by_clock, CREATED + 8 * DAY, -1) == 8 * DAY
    assert waited_for_roll(by_clock, CREATED + DAY, CREATED + 9 * DAY) == DAY


def _marker(pid: int, partitions: list[int]) -> dict:
    return {"producer_id": pid, "producer_epoch": 0, "transaction_result": False, "coordinator_epoch": 0,
            "transaction_version": 0, "topics": [{"name": "t", "partition_indexes": partitions}]}


def test_write_txn_markers_answers_in_the_order_of_kafkas_map_by_producer_id():
    # seed 6005: Kafka's answer iterates a ConcurrentHashMap by producer id, not the request
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = b.call(WRITE_TXN_MARKERS, 2, {"markers": [_marker(UNKNOWN + 2, [7]), _marker(UNKNOWN, [0]),
                                                        _marker(UNKNOWN + 1, [])]})
    assert [(m.producer_id, [(p.partition_index, p.error_code) for t in m.topics for p in t.partitions])
            for m in answer.markers] == [(UNKNOWN, [(0, 0)]), (UNKNOWN + 2, [(7, 3)])]
    # markers of one producer id are one answer; the later marker's answer stands
    answer = b.call(WRITE_TXN_MARKERS, 2, {"markers": [_marker(17, [0, 3]), _marker(5, [0]), _marker(17, [3])]})
    assert [m.producer_id for m in answer.markers] == [17, 5]  # buckets 1 and 5 of 16
    assert sorted(p.partition_index for p in answer.markers[0].topics[0].partitions) == [0, 3]
