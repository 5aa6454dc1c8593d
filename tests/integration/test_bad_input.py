"""Hostile and broken input against a real broker: each bad frame costs only
its own connection, never stored data or other clients; per-partition
Produce errors are Kafka error codes; pipelined responses keep request order.

Frames are written by hand on raw sockets so that nothing in the client
library can tidy them up first.
"""

from __future__ import annotations

import re
import socket
import struct
import time
from dataclasses import dataclass

import pytest

from kipper.client.blocking import BlockingConnection
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS
from kipper.protocol.messages.api_versions import API_VERSIONS
from kipper.protocol.records import build_batch, decode_all
from tests.support.broker import BrokerProcess

REQUEST_LIMIT = 16384  # socket.request.max.bytes of the broker under test
MESSAGE_LIMIT = 4096  # message.max.bytes of the broker under test
PRODUCE_VERSION = 9  # first flexible Produce version
METADATA, PRODUCE, FETCH, CREATE_TOPICS = 3, 0, 1, 19


@pytest.fixture(scope="module")
def broker():
    proc = BrokerProcess({"socket.request.max.bytes": str(REQUEST_LIMIT),
                          "message.max.bytes": str(MESSAGE_LIMIT)}).start()
    yield proc
    proc.stop()


@pytest.fixture
def client(broker):
    with BlockingConnection("127.0.0.1", broker.port, timeout=10) as conn:
        yield conn


# --- helpers -------------------------------------------------------------------------------

def create_topic(conn: BlockingConnection, name: str, partitions: int = 1) -> None:
    body = conn.request(CREATE_TOPICS, {"topics": [{
        "name": name, "num_partitions": partitions, "replication_factor": 1,
        "assignments": [], "configs": []}], "timeout_ms": 5000})
    assert body.topics[0].error_code == 0, body


def produce(conn: BlockingConnection, topic_data: list[dict]):
    """topic_data: [{"name": ..., "partition_data": [{"index": .., "records": ..}]}]."""
    body = conn.request(PRODUCE, {"transactional_id": None, "acks": -1, "timeout_ms": 5000,
                                  "topic_data": topic_data}, version=PRODUCE_VERSION)
    return {(t.name, p.index): p.error_code for t in body.responses for p in t.partition_responses}


def produce_values(conn, topic: str, partition: int, values: list[bytes]) -> int:
    batch = build_batch([(None, v) for v in values])
    codes = produce(conn, [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}])
    return codes[(topic, partition)]


def fetch_values(conn: BlockingConnection, topic: str, partition: int = 0) -> list[bytes]:
    body = conn.request(FETCH, {"max_wait_ms": 0, "min_bytes": 0, "topics": [{
        "topic": topic, "partitions": [{"partition": partition, "fetch_offset": 0,
                                        "partition_max_bytes": 1 << 20}]}]}, max_version=12)
    part = body.responses[0].partitions[0]
    assert part.error_code == 0, part
    return [r.value for batch in decode_all(part.records or b"") for r in batch.records]


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def request_header(api_key: int, version: int, correlation_id: int, *, flexible: bool = False,
                   client_id: bytes = b"raw") -> bytes:
    head = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    return head + (b"\x00" if flexible else b"")  # empty tagged-field section


def raw_socket(broker) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", broker.port), timeout=5)
    sock.settimeout(5)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the broker sends before closing; fails if it keeps the
    connection open (socket timeout)."""
    data = bytearray()
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return bytes(data)


def read_frame(sock: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed by the broker")
            buf += chunk
        return bytes(buf)
    (size,) = struct.unpack(">i", exactly(4))
    return exactly(size)


def assert_warning_names_peer(broker, port: int, *, mentions: str) -> None:
    pattern = re.compile(rf"warning.*peer=127\.0\.0\.1:{port}(?!\d)")
    deadline = time.time() + 5
    while True:
        lines = [line for line in broker.log_text().splitlines() if pattern.search(line)]
        if lines or time.time() > deadline:
            break
        time.sleep(0.05)
    assert lines, f"no warning naming peer port {port} in:\n{broker.log_text()}"
    assert mentions in lines[0], lines[0]


@dataclass
class Seeded:
    topic: str
    values: list[bytes]
    bystander: BlockingConnection


@pytest.fixture
def seeded(broker, client, unique):
    """A topic with records stored before the bad input, and a second client
    connected before it that must keep being served."""
    topic = f"bad-input-{unique}"
    create_topic(client, topic)
    values = [f"before-{i}".encode() for i in range(3)]
    assert produce_values(client, topic, 0, values) == 0
    with BlockingConnection("127.0.0.1", broker.port, timeout=10) as bystander:
        bystander.negotiate()
        yield Seeded(topic, values, bystander)


def assert_broker_unharmed(broker, seeded: Seeded) -> None:
    # the connection that was open during the bad input is still served
    assert fetch_values(seeded.bystander, seeded.topic) == seeded.values
    # and so is a new one, which can still write
    with BlockingConnection("127.0.0.1", broker.port, timeout=10) as after:
        assert fetch_values(after, seeded.topic) == seeded.values
        assert produce_values(after, seeded.topic, 0, [b"after"]) == 0
        assert fetch_values(after, seeded.topic) == [*seeded.values, b"after"]


def send_and_expect_close(broker, seeded, data: bytes, *, mentions: str) -> None:
    sock = raw_socket(broker)
    port = sock.getsockname()[1]
    with sock:
        sock.sendall(data)
        assert read_until_closed(sock) == b""
    assert_warning_names_peer(broker, port, mentions=mentions)
    assert_broker_unharmed(broker, seeded)


# --- frame size ------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [REQUEST_LIMIT + 1, 2**31 - 1])
def test_size_prefix_above_socket_request_max_bytes_closes_connection_before_body_arrives(
        broker, seeded, size):
    # Only the four-byte prefix is sent: a broker that waited for (or reserved
    # room for) the body would keep the connection open and the read would time out.
    send_and_expect_close(broker, seeded, struct.pack(">i", size), mentions=str(size))


def test_negative_size_prefix_closes_connection(broker, seeded):
    send_and_expect_close(broker, seeded, struct.pack(">i", -5), mentions="-5")


def test_frame_of_exactly_socket_request_max_bytes_is_served(broker):
    header_size = 2 + 2 + 4 + 2  # key, version, correlation id, client id length
    payload = request_header(API_VERSIONS.key, 0, 77, client_id=b"x" * (REQUEST_LIMIT - header_size))
    assert len(payload) == REQUEST_LIMIT
    with raw_socket(broker) as sock:
        sock.sendall(frame(payload))
        cid, body = decode_response(API_VERSIONS, 0, read_frame(sock))
    assert cid == 77
    assert body.error_code == 0


# --- unknown APIs, broken headers and bodies ---------------------------------------------------

@pytest.mark.parametrize("api_key", [99, 1000, -1])
def test_unknown_api_key_closes_only_that_connection(broker, seeded, api_key):
    send_and_expect_close(broker, seeded, frame(request_header(api_key, 0, 1)),
                          mentions=f"unknown API key {api_key}")


def test_answers_to_requests_before_a_bad_frame_are_still_sent(broker, seeded):
    good = encode_request(API_VERSIONS, 0, 41, "raw", {})
    bad = frame(request_header(99, 0, 42))
    with raw_socket(broker) as sock:
        sock.sendall(good + bad)
        data = read_until_closed(sock)
    (size,) = struct.unpack_from(">i", data)
    assert len(data) == 4 + size, "exactly one response, then the close"
    cid, body = decode_response(API_VERSIONS, 0, data[4:])
    assert (cid, body.error_code) == (41, 0)
    assert_broker_unharmed(broker, seeded)


def test_answer_to_a_request_in_the_same_read_as_an_oversized_prefix_is_still_sent(broker, seeded):
    good = encode_request(API_VERSIONS, 0, 43, "raw", {})
    with raw_socket(broker) as sock:
        sock.sendall(good + struct.pack(">i", 2**31 - 1))
        data = read_until_closed(sock)
    (size,) = struct.unpack_from(">i", data)
    assert len(data) == 4 + size, "exactly one response, then the close"
    assert decode_response(API_VERSIONS, 0, data[4:])[0] == 43
    assert_broker_unharmed(broker, seeded)


@pytest.mark.parametrize("payload", [
    pytest.param(struct.pack(">hh", 18, 0) + b"\x00\x00", id="shorter-than-fixed-header"),
    pytest.param(struct.pack(">hhih", 18, 0, 5, 50) + b"abc", id="client-id-runs-past-frame"),
    pytest.param(struct.pack(">hhih", 3, 9, 5, 3) + b"abc", id="flexible-header-without-tags"),
])
def test_unparseable_request_header_closes_only_that_connection(broker, seeded, payload):
    send_and_expect_close(broker, seeded, frame(payload), mentions="reason=")


def _metadata_v9_topic(name_field: bytes) -> bytes:
    # compact array of one topic (count + 1 = 2), the topic's name, its empty
    # tags, then allow_auto_topic_creation, include_cluster_authorized_operations,
    # include_topic_authorized_operations and the request's empty tags
    return b"\x02" + name_field + b"\x00" + b"\x01\x00\x00\x00"


@pytest.mark.parametrize("payload", [
    pytest.param(request_header(METADATA, 1, 9) + struct.pack(">i", 1000),
                 id="array-of-1000-with-no-elements"),
    pytest.param(request_header(METADATA, 9, 9, flexible=True)
                 + _metadata_v9_topic(b"\x05\xff\xfe\xfd\xfc"), id="compact-string-not-utf8"),
    pytest.param(request_header(METADATA, 9, 9, flexible=True)
                 + _metadata_v9_topic(b"\x64abc"), id="compact-string-longer-than-frame"),
    pytest.param(request_header(METADATA, 9, 9, flexible=True)
                 + _metadata_v9_topic(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
                 id="compact-string-length-varint-too-long"),
    pytest.param(request_header(METADATA, 1, 9) + struct.pack(">ih", 1, -7),
                 id="negative-string-length"),
])
def test_unparseable_request_body_closes_only_that_connection(broker, seeded, payload):
    send_and_expect_close(broker, seeded, frame(payload), mentions="malformed Metadata")


def test_well_formed_metadata_v9_frame_built_like_the_broken_ones_is_answered(broker, unique):
    # Guards the body tests above: the same hand-built layout with a valid
    # name parses, so they fail for the reason they name.
    name = f"raw-{unique}".encode()
    payload = request_header(METADATA, 9, 9, flexible=True) + _metadata_v9_topic(
        bytes([len(name) + 1]) + name)
    with raw_socket(broker) as sock:
        sock.sendall(frame(payload))
        cid, body = decode_response(APIS[METADATA], 9, read_frame(sock))
    assert cid == 9
    assert [t.name for t in body.topics] == [name.decode()]


# --- unsupported versions ---------------------------------------------------------------------

@pytest.mark.parametrize("api_key,version", [(METADATA, 50), (PRODUCE, 2), (FETCH, 99)])
def test_unsupported_version_of_other_apis_closes_the_connection(broker, seeded, api_key, version):
    send_and_expect_close(broker, seeded, frame(request_header(api_key, version, 3)),
                          mentions=f"v{version} is not supported")


def test_unsupported_api_versions_version_gets_error_35_in_v0_format(broker):
    with raw_socket(broker) as sock:
        # a v9 request may carry a body we do not know; the answer must not depend on it
        sock.sendall(frame(request_header(API_VERSIONS.key, 9, 1234, flexible=True) + b"\x07junk"))
        response = read_frame(sock)
        # v0 layout by hand: correlation id, error code, int32 count, (key, min, max)...
        cid, error_code, count = struct.unpack_from(">ihi", response)
        assert (cid, error_code) == (1234, ErrorCode.UNSUPPORTED_VERSION)
        assert len(response) == 10 + 6 * count
        entries = [struct.unpack_from(">hhh", response, 10 + 6 * i) for i in range(count)]
        assert entries == [(API_VERSIONS.key, API_VERSIONS.min_version, API_VERSIONS.max_version)]

        # the client then retries with v0 on the same connection, as Kafka clients do
        sock.sendall(encode_request(API_VERSIONS, 0, 1235, "raw", {}))
        cid, body = decode_response(API_VERSIONS, 0, read_frame(sock))
    assert (cid, body.error_code) == (1235, 0)
    advertised = {a.api_key: (a.min_version, a.max_version) for a in body.api_keys}
    assert advertised[API_VERSIONS.key] == entries[0][1:]


# --- produce errors are per partition ------------------------------------------------------------

def corrupt(batch: bytes) -> bytes:
    out = bytearray(batch)
    out[-1] ^= 0xFF  # inside the last record, covered by the CRC-32C
    return bytes(out)


def test_produce_with_crc_mismatch_gets_corrupt_message_and_stores_nothing(client, seeded):
    batch = corrupt(build_batch([(None, b"bad-crc")]))
    assert produce(client, [{"name": seeded.topic, "partition_data": [
        {"index": 0, "records": batch}]}]) == {(seeded.topic, 0): ErrorCode.CORRUPT_MESSAGE}
    assert fetch_values(client, seeded.topic) == seeded.values


def test_two_batches_for_one_partition_get_invalid_record_and_store_nothing(client, seeded):
    """Kafka's rule: a Produce carries one record batch per partition (magic v2)."""
    batches = build_batch([(None, b"first")]) + build_batch([(None, b"second")])
    assert produce(client, [{"name": seeded.topic, "partition_data": [
        {"index": 0, "records": batches}]}]) == {(seeded.topic, 0): ErrorCode.INVALID_RECORD}
    assert fetch_values(client, seeded.topic) == seeded.values


def test_batch_above_message_max_bytes_gets_message_too_large_and_stores_nothing(client, seeded):
    batch = build_batch([(None, b"x" * MESSAGE_LIMIT)])
    assert MESSAGE_LIMIT < len(batch) < REQUEST_LIMIT - 200
    assert produce(client, [{"name": seeded.topic, "partition_data": [
        {"index": 0, "records": batch}]}]) == {(seeded.topic, 0): ErrorCode.MESSAGE_TOO_LARGE}
    assert fetch_values(client, seeded.topic) == seeded.values


def test_batch_of_exactly_message_max_bytes_is_stored(client, seeded):
    # varint lengths grow with the value, so find the value size by trying
    value = next(b"y" * n for n in range(MESSAGE_LIMIT - 100, MESSAGE_LIMIT)
                 if len(build_batch([(None, b"y" * n)])) == MESSAGE_LIMIT)
    assert produce_values(client, seeded.topic, 0, [value]) == 0
    assert fetch_values(client, seeded.topic) == [*seeded.values, value]


def test_produce_to_unknown_topic_gets_unknown_topic_or_partition_and_creates_nothing(
        client, unique):
    topic = f"never-created-{unique}"
    assert produce_values(client, topic, 0, [b"v"]) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    meta = client.request(METADATA, {"topics": [{"name": topic, "topic_id": None}],
                                     "allow_auto_topic_creation": False}, max_version=12)
    assert meta.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_one_bad_partition_does_not_fail_the_others_in_the_same_request(client, unique):
    topic = f"mixed-{unique}"
    create_topic(client, topic, partitions=3)
    good = build_batch([(None, b"good-0"), (None, b"good-1")])
    codes = produce(client, [
        {"name": topic, "partition_data": [
            {"index": 0, "records": good},
            {"index": 1, "records": corrupt(build_batch([(None, b"bad")]))},
            {"index": 2, "records": good},
            {"index": 7, "records": good},
        ]},
        {"name": f"missing-{unique}", "partition_data": [{"index": 0, "records": good}]},
    ])
    assert codes == {
        (topic, 0): ErrorCode.NONE,
        (topic, 1): ErrorCode.CORRUPT_MESSAGE,
        (topic, 2): ErrorCode.NONE,
        (topic, 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        (f"missing-{unique}", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert fetch_values(client, topic, 0) == [b"good-0", b"good-1"]
    assert fetch_values(client, topic, 1) == []
    assert fetch_values(client, topic, 2) == [b"good-0", b"good-1"]


# --- pipelining -----------------------------------------------------------------------------------

def test_fifty_pipelined_requests_are_answered_in_request_order(broker, client, unique):
    topic = f"pipeline-{unique}"
    create_topic(client, topic)
    metadata = APIS[METADATA]
    fetch = APIS[FETCH]
    requests = []
    for cid in range(1, 51):
        if cid % 10 == 1:
            # long-polls on an empty partition, each shorter than the one
            # before: left alone they would finish in reverse order
            wait_ms = 400 - 8 * cid
            requests.append((fetch, 12, encode_request(fetch, 12, cid, "pipe", {
                "max_wait_ms": wait_ms, "min_bytes": 1, "topics": [{"topic": topic, "partitions": [
                    {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1024}]}]})))
        else:
            requests.append((metadata, 12, encode_request(metadata, 12, cid, "pipe", {
                "topics": [{"name": topic, "topic_id": None}],
                "allow_auto_topic_creation": False})))
    with raw_socket(broker) as sock:
        sock.sendall(b"".join(r[2] for r in requests))
        answered = []
        for api, version, _ in requests:
            cid, body = decode_response(api, version, read_frame(sock))
            answered.append(cid)
            if api is fetch:
                assert body.responses[0].partitions[0].error_code == 0
            else:
                assert body.topics[0].name == topic
    assert answered == list(range(1, 51))
