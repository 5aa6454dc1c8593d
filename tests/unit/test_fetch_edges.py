"""Fetch, ApiVersions and the describe APIs at the edges Kafka 4.4 answers in its own way
(issue 36): sessions this broker never opened, a last fetched epoch it does not have, a
partition_max_bytes that cuts into a batch, client software names Kafka's pattern refuses,
and error_message "" where Kafka leaves it at its default. A whole broker in the process
(tests/support/inproc.py) through its real dispatcher; tests/conformance/scenarios/
data_edges.py puts the same requests to Kafka."""

from __future__ import annotations

import pytest

from kipper.broker.dispatcher import Later
from kipper.broker.handlers.replies import Reply
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS
from tests.support.inproc import InProcessBroker

FETCH, API_VERSIONS, DESCRIBE_CONFIGS, DESCRIBE_PRODUCERS = 1, 18, 32, 61
TS = 1_700_000_000_000
FIRST = records.build_batch([(b"k%d" % i, b"v%d" % i, TS + i) for i in range(3)])
SECOND = records.build_batch([(b"k%d" % i, b"v%d" % i, TS + i) for i in range(3, 6)])


@pytest.fixture(scope="module")
def broker():
    inproc = InProcessBroker(now=TS)
    inproc.state.topics.create("t", 2)
    for partition, data in ((0, FIRST), (0, SECOND), (1, records.build_batch([(b"k", b"p1", TS)]))):
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": partition, "records": data}]}]}
        assert inproc.call(0, 9, body).responses[0].partition_responses[0].error_code == 0
    return inproc


def call(broker, api_key: int, version: int, body: dict):
    """``InProcessBroker.call`` for answers that carry stored batches (a list of buffers)."""
    broker.cid += 1
    frame = encode_request(APIS[api_key], version, broker.cid, "test", body)[4:]
    [result], _ = broker.dispatcher.dispatch([frame], 0, broker.session)
    if type(result) is Reply:
        result = result.body
    assert type(result) is not Later
    if type(result) is list:
        result = b"".join(bytes(x) for x in result)
    return decode_response(APIS[api_key], version, result[4:])[1]


def fetch(broker, *, version: int = 16, session_id: int = 0, session_epoch: int = -1, offset: int = 0,
          last_fetched_epoch: int = -1, partition_max_bytes: int = 1 << 20, max_bytes: int = 1 << 20,
          partitions=(0,)):
    topic_id = broker.state.topics.get("t").topic_id
    return call(broker, FETCH, version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": max_bytes, "isolation_level": 0,
        "session_id": session_id, "session_epoch": session_epoch,
        "topics": [{"topic": "t", "topic_id": topic_id, "partitions": [
            {"partition": p, "current_leader_epoch": -1, "fetch_offset": offset,
             "last_fetched_epoch": last_fetched_epoch, "log_start_offset": -1,
             "partition_max_bytes": partition_max_bytes} for p in partitions]}],
        "forgotten_topics_data": [], "rack_id": ""})


def records_of(part) -> bytes:
    return b"".join(bytes(c) for c in part.records) if isinstance(part.records, list) else bytes(part.records or b"")


# --- sessions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("session_id, epoch", [(123456, 1), (123456, 7), (0, 3), (5, -2)])
def test_a_session_this_broker_never_opened_is_fetch_session_id_not_found(broker, session_id, epoch):
    answer = fetch(broker, session_id=session_id, session_epoch=epoch)
    assert (answer.error_code, answer.session_id, answer.responses) == (
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, [])


@pytest.mark.parametrize("session_id, epoch", [(0, -1), (0, 0), (123456, -1), (123456, 0)])
def test_a_full_fetch_is_answered_without_a_session(broker, session_id, epoch):
    answer = fetch(broker, session_id=session_id, session_epoch=epoch)
    assert (answer.error_code, answer.session_id) == (0, 0)
    assert len(records.decode_all(records_of(answer.responses[0].partitions[0]))) == 2


# --- the last fetched epoch (KIP-595's check, on the leader's one epoch) -------------------------

def test_a_last_fetched_epoch_above_the_leaders_is_offset_out_of_range(broker):
    part = fetch(broker, offset=1, last_fetched_epoch=5).responses[0].partitions[0]
    assert (part.error_code, part.high_watermark, part.log_start_offset, records_of(part)) == (
        ErrorCode.OFFSET_OUT_OF_RANGE, -1, -1, b"")


def test_a_fetch_past_the_end_of_its_last_fetched_epoch_gets_the_diverging_epoch(broker):
    part = fetch(broker, offset=9, last_fetched_epoch=0).responses[0].partitions[0]
    assert part.error_code == 0 and records_of(part) == b""
    assert (part.diverging_epoch.epoch, part.diverging_epoch.end_offset) == (0, 6)
    assert part.high_watermark == 6
    # without the epoch the same offset is out of range
    assert fetch(broker, offset=9).responses[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_the_leaders_epoch_within_the_log_reads_as_usual(broker):
    part = fetch(broker, offset=3, last_fetched_epoch=0).responses[0].partitions[0]
    assert part.error_code == 0
    assert [(bt.header.base_offset, len(bt.records)) for bt in records.decode_all(records_of(part))] == [(3, 3)]
    assert fetch(broker, offset=1, last_fetched_epoch=5, version=11).responses[0].partitions[0].error_code == 0


# --- partition_max_bytes cutting into a batch ---------------------------------------------------

def stored_second(broker) -> bytes:
    return bytes(broker.state.topics.get("t").partitions[0].batches()[1][1])


@pytest.mark.parametrize("cut", [1, 5, 30, len(SECOND) - 1])
def test_the_batch_a_limit_cuts_into_is_sent_up_to_the_limit_as_kafka_sends_it(broker, cut):
    data = records_of(fetch(broker, partition_max_bytes=len(FIRST) + cut).responses[0].partitions[0])
    assert len(data) == len(FIRST) + cut
    assert data[len(FIRST):] == stored_second(broker)[:cut]
    assert [bt.header.base_offset for bt in records.decode_all(data)] == [0]  # a reader drops the cut batch


def test_a_limit_at_a_batch_end_or_below_the_first_batch_sends_no_cut_batch(broker):
    exact = records_of(fetch(broker, partition_max_bytes=len(FIRST)).responses[0].partitions[0])
    assert len(exact) == len(FIRST)
    # below one batch: the first partition still gets its first batch whole (KIP-74), and no more;
    # a later partition whose first batch does not fit gets nothing, not a part of it
    answer = fetch(broker, partition_max_bytes=20, partitions=(0, 1))
    assert [len(records_of(p)) for p in answer.responses[0].partitions] == [len(FIRST), 0]


def test_the_responses_max_bytes_cuts_too_and_leaves_nothing_for_the_next_partition(broker):
    answer = fetch(broker, max_bytes=len(FIRST) + 40, partitions=(0, 1))
    p0, p1 = answer.responses[0].partitions
    assert records_of(p0)[len(FIRST):] == stored_second(broker)[:40]
    assert records_of(p1) == b""


@pytest.mark.parametrize("storage", ["memory", "log.dirs"])
def test_a_cut_batch_within_a_segment_and_none_across_a_segment_boundary(storage, tmp_path):
    """Kafka reads one segment, whose file ends with the batch before the boundary."""
    inproc = InProcessBroker(now=TS, **({"log.dirs": str(tmp_path)} if storage == "log.dirs" else {}))
    inproc.state.topics.create("t", 1, configs={"internal.segment.bytes": str(2 * len(FIRST) + 10)})
    for data in (FIRST, SECOND, FIRST):  # the third batch rolls a segment
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": data}]}]}
        assert inproc.call(0, 9, body).responses[0].partition_responses[0].error_code == 0
    within = records_of(fetch(inproc, partition_max_bytes=len(FIRST) + 30).responses[0].partitions[0])
    assert len(within) == len(FIRST) + 30 and within[len(FIRST):] == stored_second(inproc)[:30]
    across = records_of(fetch(inproc, offset=3, partition_max_bytes=len(SECOND) + 30).responses[0].partitions[0])
    assert len(across) == len(SECOND)


# --- ApiVersions' client software name and version ----------------------------------------------

@pytest.mark.parametrize("name, version", [("", "1.0"), ("-lead", "1"), ("trail-", "1"), ("a b", "1"),
                                           ("a_b", "1"), ("a", "1.0!"), ("a", ""), ("é", "1")])
def test_a_software_name_or_version_kafka_refuses_is_invalid_request(broker, name, version):
    answer = call(broker, API_VERSIONS, 3, {"client_software_name": name, "client_software_version": version})
    assert (answer.error_code, answer.api_keys) == (ErrorCode.INVALID_REQUEST, [])


@pytest.mark.parametrize("name, version", [("ok-client", "1.0.0"), ("x.y-z", "v2"), ("a", "1"), ("A9", "0")])
def test_a_software_name_and_version_kafka_takes_get_the_versions(broker, name, version):
    answer = call(broker, API_VERSIONS, 3, {"client_software_name": name, "client_software_version": version})
    assert answer.error_code == 0 and answer.api_keys


def test_api_versions_before_v3_names_no_software(broker):
    assert call(broker, API_VERSIONS, 2, {}).error_code == 0


# --- error_message where Kafka sends "" or its own text --------------------------------------------

def test_describe_configs_answers_an_empty_message_as_kafka(broker):
    answer = call(broker, DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": 2, "resource_name": "t", "configuration_keys": ["retention.ms"]},
        {"resource_type": 2, "resource_name": "missing", "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False})
    assert [(r.error_code, r.error_message) for r in answer.results] == [
        (0, ""), (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")]


def test_describe_producers_of_an_unknown_topic_carries_kafkas_text(broker):
    answer = call(broker, DESCRIBE_PRODUCERS, 0, {"topics": [{"name": "missing", "partition_indexes": [0]},
                                                             {"name": "t", "partition_indexes": [0, 7]}]})
    assert [[(p.error_code, p.error_message) for p in t.partitions] for t in answer.topics] == [
        [(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")],
        [(0, None), (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)]]
