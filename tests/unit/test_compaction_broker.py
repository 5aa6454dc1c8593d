"""Compaction in a whole broker (open_engines), without sockets: keyless records refused on
a compacted topic, retention by policy, and the internal topics compacted and replayed."""

from __future__ import annotations

import time

from kipper.broker.dispatcher import Dispatcher
from kipper.broker.server import open_engines
from kipper.broker.config import load
from kipper.broker.context import Session
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages.produce import PRODUCE


def broker(**overrides):
    values = {"listeners": "PLAINTEXT://127.0.0.1:0", "offsets.topic.num.partitions": "1",
              "offsets.topic.segment.bytes": "400",
              # records carry today's time, the clock says 1970: no future-timestamp limit
              "log.message.timestamp.after.max.ms": str(2**63 - 1), **overrides}
    return open_engines(load(overrides=values), clock=lambda: 1_000_000)


def produce(state, topic: str, data: bytes, version: int = 9):
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000,
            "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": data}]}]}
    frame = encode_request(PRODUCE, version, 1, "test", body)[4:]
    [answer], _ = Dispatcher.of(state).dispatch([frame], 0, Session("PLAINTEXT", "peer"))
    return decode_response(PRODUCE, version, answer[4:])[1].responses[0].partition_responses[0]


def test_a_compacted_topic_refuses_keyless_records_and_lists_each_one():
    state = broker()
    state.topics.create("c", 1, configs={"cleanup.policy": "compact"})
    data = records.build_batch([(b"k", b"1"), (None, b"2"), (b"k", b"3"), (None, b"4")])
    got = produce(state, "c", data)
    assert got.error_code == ErrorCode.INVALID_RECORD
    assert [e.batch_index for e in got.record_errors] == [1, 3]
    assert "without key" in got.record_errors[0].batch_index_error_message and got.error_message
    assert state.topics.partition("c", 0).log_end_offset == 0, "nothing of the batch is appended"
    assert produce(state, "c", records.build_batch([(b"k", b"ok")])).error_code == 0
    plain = records.build_batch([(None, b"fine elsewhere")])
    state.topics.create("d", 1)
    assert produce(state, "d", plain).error_code == 0


def test_retention_applies_to_delete_and_compact_delete_but_not_compact_alone():
    state = broker(**{"retention.ms": "1"})
    for name, policy in (("del", "delete"), ("both", "compact,delete"), ("cmp", "compact")):
        state.topics.create(name, 1, configs={"cleanup.policy": policy})
        p = state.topics.partition(name, 0)
        for _ in range(3):
            data = records.build_batch([(b"k", b"v")])
            p.append(data, b.split_batches(data), 0)
    state.apply_retention(int(time.time() * 1000) + 10_000)  # (the records are stamped now)
    starts = {n: state.topics.partition(n, 0).log_start_offset for n in ("del", "both", "cmp")}
    assert starts == {"del": 3, "both": 3, "cmp": 0}  # the active segment too, rolled as Kafka rolls it


def test_consumer_offsets_is_compacted_and_still_replays(tmp_path):
    state = broker(**{"log.dirs": str(tmp_path)})
    state.topics.create("t", 1)
    for i in range(40):  # about 100 bytes a record: segments of 400 bytes roll often
        state.offsets.commit_all("g", [("t", 0, i, -1, None)], 1000 + i)
    internal = state.topics.get("__consumer_offsets").partitions[0]
    before = sum(1 for _ in internal.batches_from(0))
    assert internal.log.config.compact
    assert state.cleaner.clean_now(2_000_000) >= 1
    after = sum(1 for _ in internal.batches_from(0))
    assert after < before / 2
    state.close()
    again = broker(**{"log.dirs": str(tmp_path)})
    assert again.offsets.get("g", "t", 0).offset == 39
