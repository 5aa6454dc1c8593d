"""What the generator's twentieth and twenty-first runs (the hour-long ones, seeds 10201 and
10301) met (issue 36, docs/FUZZ_FINDINGS.md): a join after one that named a protocol twice, a
TxnOffsetCommit naming a partition twice, a segment's size after DeleteRecords, retention by
record time, transactional batches of two producers in one Produce, and the order of a
default BROKER resource's checks; each is a scenario in
tests/conformance/scenarios/generated_run20.py (retention's timing aside)."""

from __future__ import annotations

import pytest

from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.broker.storage.log_config import LogConfig
from kipper.broker.storage.memory_log import MemoryLog
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.conformance.fuzz.bodies import _BROKER_KEYS, make_safe
from tests.support.inproc import InProcessBroker

JOIN_GROUP, TXN_OFFSET_COMMIT, LIST_TRANSACTIONS, INIT_PRODUCER_ID = 11, 28, 66, 22
DELETE_RECORDS, DESCRIBE_LOG_DIRS = 21, 35


def _join(protocols: int, version: int) -> dict:
    body = {"group_id": "g", "session_timeout_ms": 45000, "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}] * protocols}
    if version:
        body["rebalance_timeout_ms"] = 1000
    return body


def test_a_member_that_named_a_protocol_twice_outvotes_every_later_join():
    """Kafka counts a member's protocol entries, duplicates too (ClassicGroup.supportedProtocols):
    after a join that named `range` twice, `range` has two votes for one member, so a new
    member's `range` is supported by no count equal to the members: INCONSISTENT_GROUP_PROTOCOL
    at once, where kipper used to add it and wait for a join that could never complete."""
    broker = InProcessBroker()
    [answer], _ = broker.dispatcher.dispatch([encode_request(APIS[JOIN_GROUP], 2, 1, "test", _join(2, 2))[4:]],
                                             0, broker.session)
    assert type(answer) is Reply and answer.body is NO_RESPONSE  # (Kafka fails inside and closes)
    refused = broker.call(JOIN_GROUP, 0, _join(1, 0))
    assert (refused.error_code, refused.member_id, refused.generation_id) == (23, "", -1)


def test_a_txn_offset_commit_whose_partitions_the_broker_all_refuses_adds_nothing_to_the_transaction():
    """Every partition refused before the coordinator (here an unknown topic named with a
    partition twice): Kafka answers without asking its group coordinator, so at transaction
    version 2 (v5) nothing is added and the transaction stays Empty."""
    broker = InProcessBroker()
    init = broker.call(INIT_PRODUCER_ID, 5, {"transactional_id": "x", "transaction_timeout_ms": 60000,
                                             "producer_id": -1, "producer_epoch": -1})
    answer = broker.call(TXN_OFFSET_COMMIT, 5, {
        "transactional_id": "x", "group_id": "g", "producer_id": init.producer_id, "producer_epoch": 0,
        "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "nope", "partitions": [
            {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1, "committed_metadata": ""}] * 2}]})
    assert [p.error_code for p in answer.topics[0].partitions] == [3, 3]
    listing = broker.call(LIST_TRANSACTIONS, 0, {"state_filters": [], "producer_id_filters": []})
    assert [(t.transactional_id, t.transaction_state) for t in listing.transaction_states] == [("x", "Empty")]


def _batch(ts: int, n: int = 1) -> bytes:
    return records.build_batch([(None, b"x" * 50, ts)] * n)


def _append(log: MemoryLog, data: bytes, now: int) -> None:
    log.maybe_roll(len(data), now, max(h.max_timestamp for _, _, h in b.split_batches(data)))
    log.append(data, b.split_batches(data), now)


def test_a_segment_keeps_its_size_after_delete_records_until_it_goes():
    """Kafka's segment file keeps the batches below the log start until the whole segment is
    deleted: DescribeLogDirs (and retention.bytes) count them."""
    log = MemoryLog(LogConfig())
    for i in range(3):
        _append(log, _batch(1000 + i), 0)
    size = log.size_bytes
    assert log.delete_records_before(2) == 2
    assert log.size_bytes == size and len(log) == 1  # the bytes stay counted, the batches are gone
    _append(log, _batch(2000), 0)
    assert log.size_bytes == size + len(_batch(2000))


def test_a_whole_segment_below_the_log_start_goes_with_its_bytes_at_the_next_retention_check():
    """Kafka's DeleteRecords moves the log start only; the segments below it are deleted by
    the next retention check (deleteLogStartOffsetBreachedSegments)."""
    one = len(_batch(0))
    log = MemoryLog(LogConfig(segment_bytes=one * 2))
    for i in range(5):
        _append(log, _batch(1000 + i), 0)
    assert [s.base_offset for s in log.segments_info()] == [0, 2, 4]
    log.delete_records_before(3)
    assert log.size_bytes == one * 5  # every segment is still there
    assert log.apply_retention(0, -1, -1) == 1
    assert log.size_bytes == one * 3  # segment 0-1 is gone; 2-3 keeps 2's bytes below the start
    log.delete_records_before(5)
    assert log.apply_retention(0, -1, -1) == 1
    assert log.size_bytes == one  # the active segment keeps 4's


def test_memory_retention_reads_record_time_and_rolls_the_active_segment():
    one = len(_batch(0))
    log = MemoryLog(LogConfig(segment_bytes=one * 2))
    for i in range(6):
        _append(log, _batch(i * 1000), 10**6)  # written late, stamped early
    assert log.apply_retention(3500, 2000, -1) == 1 and log.log_start_offset == 2
    assert log.apply_retention(2500, 2000, -1) == 0  # stamped after now: never
    assert log.apply_retention(10**9, 1, -1) == 2
    assert (log.log_start_offset, log.log_end_offset, log.size_bytes, len(log)) == (6, 6, 0, 0)
    _append(log, _batch(10**9), 10**9)
    assert log.log_end_offset == 7


@pytest.mark.parametrize("floor, start", [(None, 4), (3, 2)])
def test_memory_size_retention_is_by_segment_and_held_by_a_floor(floor, start):
    one = len(_batch(0))
    log = MemoryLog(LogConfig(segment_bytes=one * 2))
    for i in range(6):
        _append(log, _batch(10**12 + i), 0)
    assert log.apply_retention(0, -1, one * 2, floor) == start // 2
    assert log.log_start_offset == start


def test_describe_log_dirs_counts_a_segment_below_the_log_start():
    broker = InProcessBroker()
    broker.state.topics.create("t", 1)
    assert broker.produce("t", 0, [(None, b"v", broker.now)]).error_code == 0
    deleted = broker.call(DELETE_RECORDS, 0, {"topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "offset": -1}]}], "timeout_ms": 30000})
    assert deleted.topics[0].partitions[0].low_watermark == 1
    dirs = broker.call(DESCRIBE_LOG_DIRS, 1, {"topics": [{"topic": "t", "partitions": [0]}]})
    [size] = [p.partition_size for r in dirs.results for t in r.topics if t.name == "t" for p in t.partitions]
    assert size > 0


@pytest.mark.parametrize("keys", [None, []])
def test_the_generator_asks_a_brokers_whole_listing_by_name(keys):
    """An empty list of configuration keys is the whole listing too, each broker's own
    deployment: the generator names the configs both describe from their defaults."""
    step = {"api": "DescribeConfigs", "body": {"resources": [
        {"resource_type": 4, "resource_name": "1", "configuration_keys": keys}], "include_synonyms": False}}
    assert make_safe(step)["body"]["resources"][0]["configuration_keys"] == _BROKER_KEYS


def test_a_segment_rolled_with_only_bytes_below_the_start_goes_at_the_next_check():
    one = len(_batch(0))
    log = MemoryLog(LogConfig(segment_bytes=one * 2))
    for i in range(2):
        _append(log, _batch(10**12 + i), 0)
    log.delete_records_before(2)
    assert (len(log), log.size_bytes) == (0, one * 2)
    _append(log, _batch(10**12 + 2), 0)  # rolls: the old segment holds nothing in memory
    assert log.apply_retention(0, -1, -1) == 1  # (Kafka's deleteLogStartOffsetBreachedSegments)
    assert log.size_bytes == one and [s.base_offset for s in log.segments_info()] == [2]


def _txn_records(pid: int, epoch: int) -> bytes:
    return records.build_batch([(None, b"v")], producer_id=pid, producer_epoch=epoch, base_sequence=0,
                               transactional=True)


@pytest.mark.parametrize("acks", [-1, 0])
def test_transactional_batches_of_two_producers_are_refused_whole(acks):
    """Kafka's ReplicaManager.handleProduceAppend: the transactional batches of a Produce must
    be one (producer id, epoch); otherwise every partition of the request, a plain batch's and
    an unknown one's too, is INVALID_PRODUCER_ID_MAPPING with Kafka's message, nothing
    appended (acks=0: the connection closes)."""
    broker = InProcessBroker()
    broker.state.topics.create("t", 3)
    pids = [broker.call(INIT_PRODUCER_ID, 4, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                              "producer_id": -1, "producer_epoch": -1}).producer_id
            for tid in ("x0", "x1")]
    body = {"transactional_id": "x0", "acks": acks, "timeout_ms": 30000, "topic_data": [{"name": "t", "partition_data": [
        {"index": 0, "records": _txn_records(pids[0], 0)}, {"index": 1, "records": _batch(-1)},
        {"index": 2, "records": _txn_records(pids[1], 0)}, {"index": 7, "records": _txn_records(pids[0], 0)}]}]}
    if acks == 0:
        [answer], _ = broker.dispatcher.dispatch([encode_request(APIS[0], 11, 1, "test", body)[4:]], 0, broker.session)
        assert type(answer) is Reply and answer.body is NO_RESPONSE and answer.abort
    else:
        rows = broker.call(0, 11, body).responses[0].partition_responses
        assert {(r.index, r.error_code, r.error_message) for r in rows} == {
            (i, 49, "Transactional records contained more than one producer ID") for i in (0, 1, 2, 7)}
    assert [broker.state.topics.partition("t", i).log_end_offset for i in range(3)] == [0, 0, 0]


def test_a_default_broker_resource_s_values_are_read_before_the_controller_s_elr_rule():
    """AlterConfigs of the cluster-wide BROKER resource: the broker's type check comes first,
    the controller's refusal of a set without min.insync.replicas (ELR) after it."""
    broker = InProcessBroker()
    answer = broker.call(33, 2, {"validate_only": True, "resources": [{"resource_type": 4, "resource_name": "", "configs": [
        {"name": "retention.ms", "value": "1"}, {"name": "compression.gzip.level", "value": "0.5"}]}]})
    assert (answer.responses[0].error_code, answer.responses[0].error_message) == (
        42, "Invalid value 0.5 for configuration compression.gzip.level: Not a number of type INT")
    answer = broker.call(33, 2, {"validate_only": True, "resources": [{"resource_type": 4, "resource_name": "", "configs": [
        {"name": "retention.ms", "value": "1"}]}]})
    assert answer.responses[0].error_code == 40


@pytest.mark.parametrize("version, code", [(5, 22), (6, 69)])
def test_a_txn_offset_commit_with_a_generation_to_no_group_is_group_id_not_found_from_v6(version, code):
    """Kafka's TxnOffsetCommitRequest.supportsGroupIdNotFoundError: v6+ (the twenty-first run, seed 11316)."""
    broker = InProcessBroker()
    broker.state.topics.create("t", 1)
    init = broker.call(INIT_PRODUCER_ID, 5, {"transactional_id": "x", "transaction_timeout_ms": 60000,
                                             "producer_id": -1, "producer_epoch": -1})
    topic = {"name": "t"} if version < 6 else {"topic_id": broker.state.topics.get("t").topic_id}
    answer = broker.call(TXN_OFFSET_COMMIT, version, {
        "transactional_id": "x", "group_id": "g", "producer_id": init.producer_id, "producer_epoch": 0,
        "generation_id_or_member_epoch": 1, "member_id": "m", "group_instance_id": None,
        "topics": [{**topic, "partitions": [{"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1,
                                             "committed_metadata": ""}]}]})
    assert answer.topics[0].partitions[0].error_code == code
