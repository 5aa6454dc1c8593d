"""The request path's costs that no timing test can show (issue 15): a large Produce's
bytes are not copied at all (the in-memory log keeps them in the frame's own mapping, where
the kernel received them) and a small one's once (into the stored batch), a Fetch answer refers to the stored batches
instead of copying them, requests leave no cyclic garbage behind, and Metadata keeps a
topic's encoded partitions until its partition count changes. A whole broker
(open_engines) behind a real KafkaConnection, with a recording transport."""

from __future__ import annotations

import gc
import time
import tracemalloc

import pytest
from kipper.broker.dispatcher import Dispatcher
from kipper.broker.server import open_engines
from kipper.broker.config import load
from kipper.broker.connection import KafkaConnection
from kipper.broker.context import Session
from kipper.protocol import batch as batch_mod, records
from kipper.protocol.framing import ChunkPool, FrameMemory
from kipper.protocol.header import decode_response, encode_request, frame_bytes
from kipper.protocol.messages import APIS
from kipper.protocol.primitives import Encoded

from tests.support.transport import RecordingTransport as Transport

PRODUCE, FETCH, METADATA, CREATE_PARTITIONS = APIS[0], APIS[1], APIS[3], APIS[37]


@pytest.fixture
def wired():
    state = open_engines(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"}), clock=lambda: int(time.time() * 1000))
    state.advertised["PLAINTEXT"] = ("127.0.0.1", 9092)
    state.topics.create("t", 1)
    conn = KafkaConnection(Dispatcher.of(state), lambda t, peer: Session("PLAINTEXT", peer), set(),
                           max_frame=1 << 28)
    transport = Transport()
    conn.connection_made(transport)
    return state, conn, transport


def receive(conn: KafkaConnection, data: bytes) -> None:
    """As uvloop does for a BufferedProtocol: the bytes land in the connection's buffers."""
    pos = 0
    while pos < len(data):
        room = conn.get_buffer(-1)
        n = min(len(room), len(data) - pos)
        room[:n] = data[pos:pos + n]
        del room
        pos += n
        conn.buffer_updated(n)


def produce_frame(cid: int, batch: bytes, *, idempotent_seq: int | None = None) -> bytes:
    return encode_request(PRODUCE, 9, cid, "c", {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}]})


def fetch_frame(cid: int, offset: int = 0, max_wait_ms: int = 0) -> bytes:
    return encode_request(FETCH, 12, cid, "c", {
        "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 24, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
        "topics": [{"topic": "t", "partitions": [
            {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 24}]}]})


def metadata_frame(cid: int, version: int = 12, topic: str = "t") -> bytes:
    return encode_request(METADATA, version, cid, "c", {
        "topics": [{"name": topic, "topic_id": None}], "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False})


def as_stored(batch: bytes) -> bytes:
    """A batch at base offset 0 as the leader stores it: with the partition leader epoch
    stamped, as Kafka's leader does (neither field is covered by the CRC)."""
    stored = bytearray(batch)
    batch_mod.set_partition_leader_epoch(stored, batch_mod.LEADER_EPOCH)
    return bytes(stored)


def test_a_large_produce_is_stored_where_the_socket_put_it(wired):
    state, conn, transport = wired
    batch = records.build_batch([(None, bytes(1000))] * 1000)  # about 1 MB (message.max.bytes)
    frame = produce_frame(1, batch)
    # the frame's first bytes arrive, then the rest goes straight into the frame's own buffer
    head = conn.get_buffer(-1)
    head[:100] = frame[:100]
    del head
    conn.buffer_updated(100)
    rest = conn.get_buffer(-1)
    assert len(rest) == len(frame) - 100
    assert type(rest.obj) is FrameMemory
    rest[:] = frame[100:]
    del rest
    tracemalloc.start()
    try:
        conn.buffer_updated(len(frame) - 100)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    answer = decode_response(PRODUCE, 9, frame_bytes(transport.frames[0])[4:])[1]
    assert answer.responses[0].partition_responses[0].error_code == 0
    stored = state.topics.partition("t", 0).batch_at_offset(0)[1]
    assert stored == as_stored(batch)  # base offset 0, as the producer sent it
    # the stored batch is a read-only view of the frame's mapping: no allocation the size of
    # the data (the first version of the path made five, the last one one)
    assert type(stored.obj) is FrameMemory and stored.readonly
    assert peak < 0.1 * len(batch)


def test_a_kept_frame_is_never_received_into_again(wired):
    state, conn, transport = wired
    batches = [records.build_batch([(None, bytes([i]) * 1000)] * 200) for i in range(3)]
    for i, batch in enumerate(batches):
        receive(conn, produce_frame(i, batch))
    conn.decoder.release()
    stored = [data for _, data in state.topics.partition("t", 0).batches()]
    assert [type(s.obj) for s in stored] == [FrameMemory] * 3
    assert len({id(s.obj) for s in stored}) == 3  # each frame got its own mapping
    base = 0
    for data, batch in zip(stored, batches):  # base offsets patched in place, the rest intact
        assert int.from_bytes(data[:8], "big") == base and data[8:] == as_stored(batch)[8:]
        base += 200
    fetched = [data for _, data in state.topics.partition("t", 0).batches()]
    assert all(a is b for a, b in zip(fetched, stored))


def test_a_small_batch_in_a_large_frame_is_copied(wired):
    """A batch that fills less than half its frame's mapping is copied, so it does not keep
    the whole mapping alive (two 40 KB batches for two partitions in one 80 KB frame)."""
    state, conn, transport = wired
    state.topics.create("two", 2)
    batch = records.build_batch([(None, bytes(1000))] * 40)
    frame = encode_request(PRODUCE, 9, 1, "c", {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000,
        "topic_data": [{"name": "two", "partition_data": [{"index": 0, "records": batch},
                                                          {"index": 1, "records": batch}]}]})
    receive(conn, frame)
    for p in (0, 1):
        stored = state.topics.partition("two", p).batch_at_offset(0)[1]
        assert type(stored) is bytes and stored == as_stored(batch)


def test_a_frame_the_log_did_not_keep_is_received_into_again(wired):
    """A refused Produce (an unknown partition) leaves its mapping free: the connection's
    next large frame reuses it instead of mapping fresh memory."""
    state, conn, transport = wired
    batch = records.build_batch([(None, bytes(1000))] * 200)
    refused = encode_request(PRODUCE, 9, 1, "c", {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 7, "records": batch}]}]})
    receive(conn, refused)
    (spare,) = conn.decoder._pool._big  # given back to the connections' pool, still mapped
    assert type(spare) is FrameMemory
    first = id(spare)  # alive in the pool until taken, so no other object can have its id
    del spare
    frame = produce_frame(2, batch)
    receive(conn, frame[:100])
    room = conn.get_buffer(-1)
    assert id(room.obj) == first
    del room
    receive(conn, frame[100:])
    stored = state.topics.partition("t", 0).batch_at_offset(0)[1]
    assert id(stored.obj) == first and stored == as_stored(batch)


def test_a_fetch_answer_is_a_list_of_buffers_holding_the_stored_batches_themselves(wired):
    state, conn, transport = wired
    for i in range(3):
        receive(conn, produce_frame(i, records.build_batch([(None, b"v%d" % i)])))
    stored = [data for _, data in state.topics.partition("t", 0).batches()]
    transport.frames.clear()
    receive(conn, fetch_frame(10))
    (answer,) = transport.frames
    assert isinstance(answer, list)
    assert [part for part in answer if any(part is s for s in stored)] == stored
    size = int.from_bytes(bytes(answer[0][:4]), "big")
    whole = frame_bytes([bytes(p) for p in answer])
    assert size == len(whole) - 4
    body = decode_response(FETCH, 12, whole[4:])[1]
    got = body.responses[0].partitions[0].records
    assert got == b"".join(stored)


def test_requests_leave_no_cyclic_garbage(wired):
    state, conn, transport = wired
    batch = records.build_batch([(None, b"x" * 100)])
    frames = [produce_frame(i, batch) for i in range(20)] + [fetch_frame(100 + i) for i in range(20)] \
        + [metadata_frame(200 + i) for i in range(20)]
    for f in frames[:3] + frames[20:23] + frames[40:43]:  # first use: schemas compile, caches fill
        receive(conn, f)
    gc.collect()
    gc.disable()
    try:
        for f in frames:
            receive(conn, f)
        found = gc.collect()
    finally:
        gc.enable()
    assert found == 0, "a request left reference cycles for the collector"
    assert len(transport.frames) == 9 + 60


def test_metadata_encodes_a_topics_partitions_once_and_again_after_create_partitions(wired):
    state, conn, transport = wired
    state.topics.create("big", 200)
    receive(conn, metadata_frame(1, topic="big"))
    receive(conn, metadata_frame(2, topic="big"))
    first, second = (decode_response(METADATA, 12, frame_bytes(f)[4:])[1] for f in transport.frames)
    assert first == second and len(first.topics[0].partitions) == 200
    topic = state.topics.get("big")
    ((count, _), cached), = topic.derived.values()  # (partition count, metadata offset)
    assert count == 200 and isinstance(cached, Encoded)
    # the cached bytes are what the schema writes for the partitions in full
    rows = [{"error_code": 0, "partition_index": i, "leader_id": state.node_id, "leader_epoch": 0,
             "replica_nodes": [state.node_id], "isr_nodes": [state.node_id], "offline_replicas": []}
            for i in range(200)]
    assert bytes(cached) == METADATA.field_schema("response", 12, ("topics", "partitions")).build(rows)
    transport.frames.clear()
    receive(conn, encode_request(CREATE_PARTITIONS, 3, 3, "c", {
        "topics": [{"name": "big", "count": 201, "assignments": None}], "timeout_ms": 1000,
        "validate_only": False}))
    assert decode_response(CREATE_PARTITIONS, 3, frame_bytes(transport.frames[0])[4:])[1] \
        .results[0].error_code == 0
    transport.frames.clear()
    receive(conn, metadata_frame(4, topic="big"))
    assert len(decode_response(METADATA, 12, frame_bytes(transport.frames[0])[4:])[1]
               .topics[0].partitions) == 201


def test_metadata_of_a_deleted_and_recreated_topic_shows_the_new_topic(wired):
    state, conn, transport = wired
    state.topics.create("again", 5)
    receive(conn, metadata_frame(1, topic="again"))
    state.delete_topic(state.topics.get("again"))
    state.topics.create("again", 3)
    receive(conn, metadata_frame(2, topic="again"))
    before, after = (decode_response(METADATA, 12, frame_bytes(f)[4:])[1].topics[0] for f in transport.frames)
    assert len(before.partitions) == 5 and len(after.partitions) == 3
    assert before.topic_id != after.topic_id


@pytest.mark.parametrize("version", [1, 5, 7, 9, 10, 12])
def test_metadata_with_cached_partitions_is_what_the_schema_builds(wired, version):
    state, conn, transport = wired
    receive(conn, metadata_frame(1, version=version))
    body = decode_response(METADATA, version, frame_bytes(transport.frames[0])[4:])[1]
    (partition,) = body.topics[0].partitions
    assert partition.partition_index == 0 and partition.leader_id == state.node_id
    assert list(partition.replica_nodes) == [state.node_id]


def test_an_idle_connection_gives_its_receive_buffer_back_to_the_pool():
    state = open_engines(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"}), clock=lambda: int(time.time() * 1000))
    state.topics.create("t", 1)
    pool = ChunkPool()
    conns = [KafkaConnection(Dispatcher.of(state), lambda t, peer: Session("PLAINTEXT", peer), set(),
                             max_frame=1 << 20, pool=pool) for _ in range(3)]
    for i, conn in enumerate(conns):
        conn.connection_made(Transport())
        data = produce_frame(i, records.build_batch([(None, b"x")]))
        room = conn.get_buffer(65536)  # uvloop holds this region until buffer_updated returns
        room[:len(data)] = data
        conn.buffer_updated(len(data))
        del room
    assert pool.spare == 1, "the connections took turns with one buffer and hold none now"
