"""protocol/fetch_codec.py, the hand-written Fetch fast paths, against FETCH's
declaration: for every supported version, a request the schema builds parses to the
same fields, and a response packs to exactly the bytes the schema builds, with the
stored batches handed on as the same objects (not copied)."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kipper.protocol import fetch_codec
from kipper.protocol.header import encode_request, encode_response, frame_bytes, read_client_id
from kipper.protocol.messages.fetch import FETCH

VERSIONS = range(4, 18)
names = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), min_size=1, max_size=20)
i32 = st.integers(-(1 << 31), (1 << 31) - 1)
i64 = st.integers(-(1 << 63), (1 << 63) - 1)

PARTITION_FIELDS = ("partition", "current_leader_epoch", "fetch_offset", "last_fetched_epoch",
                    "log_start_offset", "partition_max_bytes")
REQUEST_FIELDS = ("max_wait_ms", "min_bytes", "max_bytes", "isolation_level", "session_id",
                  "session_epoch", "rack_id")


def request_bodies():
    partition = st.fixed_dictionaries({
        "partition": i32, "current_leader_epoch": i32, "fetch_offset": i64,
        "last_fetched_epoch": i32, "log_start_offset": i64, "partition_max_bytes": i32})
    topic = st.fixed_dictionaries({"topic": names, "topic_id": st.uuids(),
                                   "partitions": st.lists(partition, max_size=4)})
    forgotten = st.fixed_dictionaries({"topic": names, "topic_id": st.uuids(),
                                       "partitions": st.lists(i32, max_size=4)})
    return st.fixed_dictionaries({
        "replica_id": i32, "max_wait_ms": i32, "min_bytes": i32, "max_bytes": i32,
        "isolation_level": st.sampled_from([0, 1]), "session_id": i32, "session_epoch": i32,
        "topics": st.lists(topic, max_size=3), "forgotten_topics_data": st.lists(forgotten, max_size=2),
        "rack_id": st.one_of(st.just(""), names)})


def _parse_both(version: int, body: dict):
    frame = memoryview(encode_request(FETCH, version, 7, "c", body))[4:]
    _, pos = read_client_id(frame, FETCH.is_flexible(version))
    return FETCH.parse_request(frame, pos, version), FETCH.request_schema(version).parse(bytes(frame[pos:]))


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=60, deadline=None)
@given(body=request_bodies())
def test_fast_request_parse_agrees_with_the_schema(version, body):
    got, expected = _parse_both(version, body)
    assert isinstance(got, fetch_codec.FetchRequestData)
    for name in REQUEST_FIELDS:
        assert got.get(name) == expected.get(name), name
    if version < 15:
        assert got.replica_id == expected.replica_id
    assert len(got.topics) == len(expected.topics)
    for g, e in zip(got.topics, expected.topics):
        assert (g.get("topic"), g.get("topic_id")) == (e.get("topic"), e.get("topic_id"))
        assert [[gp.get(f) for f in PARTITION_FIELDS] for gp in g.partitions] == \
            [[ep.get(f) for f in PARTITION_FIELDS] for ep in e.partitions]
    assert [(f.get("topic"), f.get("topic_id"), f.partitions) for f in got.get("forgotten_topics_data", [])] == \
        [(f.get("topic"), f.get("topic_id"), list(f.partitions)) for f in expected.get("forgotten_topics_data", [])]


def test_a_request_with_tagged_fields_is_read_by_the_schema():
    body = {"replica_state": {"replica_id": 3, "replica_epoch": 9}, "cluster_id": "c1", "max_wait_ms": 5,
            "min_bytes": 1, "max_bytes": 100, "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic_id": uuid.uuid4(), "partitions": [
                {"partition": 0, "fetch_offset": 4, "partition_max_bytes": 10,
                 "replica_directory_id": uuid.uuid4()}]}],
            "forgotten_topics_data": [], "rack_id": ""}
    got, expected = _parse_both(17, body)
    assert got == expected and got.replica_state.replica_id == 3


def test_fast_request_parse_refuses_a_truncated_frame():
    body = {"max_wait_ms": 5, "min_bytes": 1, "max_bytes": 100, "isolation_level": 0,
            "topics": [{"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 4,
                                                      "partition_max_bytes": 10}]}]}
    frame = encode_request(FETCH, 11, 1, "c", body)[4:]
    _, pos = read_client_id(frame, False)
    with pytest.raises(ValueError):
        FETCH.parse_request(frame[:-12], pos, 11)


def response_bodies():
    aborted = st.fixed_dictionaries({"producer_id": i64, "first_offset": i64})
    records = st.one_of(st.none(), st.just(b""), st.binary(min_size=1, max_size=50),
                        st.lists(st.binary(min_size=1, max_size=80), max_size=3))
    row = st.fixed_dictionaries({
        "partition_index": i32, "error_code": st.integers(-1, 120), "high_watermark": i64,
        "last_stable_offset": i64, "log_start_offset": i64,
        "aborted_transactions": st.one_of(st.none(), st.lists(aborted, max_size=3)),
        "preferred_read_replica": i32, "records": records})
    topic = st.fixed_dictionaries({"topic": names, "topic_id": st.uuids(),
                                   "partitions": st.lists(row, max_size=3)})
    return st.fixed_dictionaries({"throttle_time_ms": st.integers(0, 1 << 20), "error_code": st.integers(0, 120),
                                  "session_id": i32, "responses": st.lists(topic, max_size=3)})


def _general(version: int, correlation_id: int, body) -> bytes:
    fast, FETCH.fast = FETCH.fast, replace(FETCH.fast, encode_response=None)
    try:
        return frame_bytes(encode_response(FETCH, version, correlation_id, body))
    finally:
        FETCH.fast = fast


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=60, deadline=None)
@given(body=response_bodies())
def test_fast_response_encoding_is_byte_for_byte_the_schemas(version, body):
    fast = fetch_codec.encode_response(version, 42, body)
    assert frame_bytes(fast) == _general(version, 42, body)
    chunks = [c for t in body["responses"] for p in t["partitions"] if type(p["records"]) is list
              for c in p["records"]]
    if chunks:  # the stored batches go out as they are, between the packed fields
        assert type(fast) is list
        assert [id(b) for b in fast if any(b is c for c in chunks)] == [id(c) for c in chunks]


def test_a_response_with_tagged_fields_goes_to_the_schema():
    row = {"partition_index": 0, "error_code": 6, "high_watermark": -1, "records": None,
           "current_leader": {"leader_id": 1, "leader_epoch": 3}}
    body = {"responses": [{"topic_id": uuid.uuid4(), "partitions": [row]}]}
    assert fetch_codec.encode_response(16, 1, body) is None
    assert fetch_codec.encode_response(16, 1, {"responses": [], "node_endpoints": [
        {"node_id": 1, "host": "h", "port": 1, "rack": None}]}) is None
