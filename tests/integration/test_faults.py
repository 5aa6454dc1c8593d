"""Fault injection on the wire (kipper.testing's ``faults``), in both broker modes: error
answers for chosen topics and partitions with nothing stored for them, delays, lost answers,
closed connections, request counts, and faults the broker refuses."""

from __future__ import annotations

import socket
import time

import pytest

from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import fetch, list_offsets
from kipper.client.producer_requests import produce
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages.find_coordinator import FIND_COORDINATOR
from kipper.testing import MODES, EmbeddedBroker, FaultError


@pytest.fixture(scope="module", params=MODES)
def broker(request):
    with EmbeddedBroker(mode=request.param) as b:
        yield b


@pytest.fixture
def faults(broker):
    broker.faults.clear()
    yield broker.faults
    broker.faults.clear()


def _batch(*values: bytes) -> bytes:
    return records.build_batch([(None, v) for v in values])


def _end_offsets(broker, topic: str, partitions: int) -> list[int]:
    with connect_any(broker.bootstrap_servers) as conn:
        resp = list_offsets(conn, {(topic, p): -1 for p in range(partitions)})
    return [p.offset for t in resp.topics for p in sorted(t.partitions, key=lambda p: p.partition_index)]


def _codes(resp) -> dict[int, int]:
    return {p.index: p.error_code for t in resp.responses for p in t.partition_responses}


def test_an_error_for_one_partition_leaves_the_others_handled_and_stores_nothing_for_it(broker, faults):
    topic = broker.create_topic(partitions=2)
    faults.error("Produce", ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic, partitions=[0])
    with connect_any(broker.bootstrap_servers) as conn:
        first = produce(conn, {(topic, 0): _batch(b"a"), (topic, 1): _batch(b"b")})
        second = produce(conn, {(topic, 0): _batch(b"c"), (topic, 1): _batch(b"d")})
    assert _codes(first) == {0: ErrorCode.NOT_LEADER_OR_FOLLOWER, 1: 0}
    assert _codes(second) == {0: 0, 1: 0}  # count=1: the fault is used up
    assert _end_offsets(broker, topic, 2) == [1, 2]


def test_skip_lets_requests_through_and_count_none_lasts_until_cleared(broker, faults):
    topic = broker.create_topic()
    faults.error("Produce", "KAFKA_STORAGE_ERROR", skip=1, count=None, topic=topic)
    with connect_any(broker.bootstrap_servers) as conn:
        codes = [_codes(produce(conn, {(topic, 0): _batch(b"x")}))[0] for _ in range(3)]
        faults.clear()
        codes.append(_codes(produce(conn, {(topic, 0): _batch(b"y")}))[0])
    assert codes == [0, ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.KAFKA_STORAGE_ERROR, 0]
    assert _end_offsets(broker, topic, 1) == [2]


def test_a_read_only_api_answers_for_real_with_the_code_on_the_named_entries(broker, faults):
    topic = broker.create_topic(partitions=2)
    faults.error("ListOffsets", "LEADER_NOT_AVAILABLE", topic=topic, partitions=[1])
    with connect_any(broker.bootstrap_servers) as conn:
        resp = list_offsets(conn, {(topic, 0): -1, (topic, 1): -1})
    codes = {p.partition_index: p.error_code for t in resp.topics for p in t.partitions}
    assert codes == {0: 0, 1: ErrorCode.LEADER_NOT_AVAILABLE}


def test_a_long_poll_fetch_gets_the_code_when_its_answer_comes(broker, faults):
    topic = broker.create_topic(partitions=2)
    faults.error("Fetch", "NOT_LEADER_OR_FOLLOWER", topic=topic, partitions=[0])
    with connect_any(broker.bootstrap_servers) as conn:
        resp = fetch(conn, {(topic, 0): 0, (topic, 1): 0}, max_wait_ms=200)
    codes = {p.partition_index: p.error_code for t in resp.responses for p in t.partitions}
    assert codes == {0: ErrorCode.NOT_LEADER_OR_FOLLOWER, 1: 0}


def test_a_top_level_error_goes_where_the_api_puts_it(broker, faults):
    faults.error("FindCoordinator", "COORDINATOR_NOT_AVAILABLE", count=2)
    bodies = {3: {"key": "g", "key_type": 0}, 4: {"key_type": 0, "coordinator_keys": ["g"]}}
    with connect_any(broker.bootstrap_servers) as conn:
        answers = [conn.request(FIND_COORDINATOR.key, bodies[v], version=v) for v in (3, 4, 4)]
    assert answers[0].error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert answers[1].coordinators[0].error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert answers[1].coordinators[0].key == "g"
    assert answers[2].coordinators[0].error_code == 0


def test_a_delay_holds_the_answer_and_those_after_it_on_the_connection(broker, faults):
    topic = broker.create_topic()
    faults.delay("Produce", 0.5)
    with connect_any(broker.bootstrap_servers) as conn:
        started = time.monotonic()
        assert _codes(produce(conn, {(topic, 0): _batch(b"late")})) == {0: 0}
        assert time.monotonic() - started >= 0.5
    assert _end_offsets(broker, topic, 1) == [1]


def test_a_dropped_answer_closes_the_connection_after_the_request_took_effect(broker, faults):
    topic = broker.create_topic()
    faults.drop("Produce")
    with connect_any(broker.bootstrap_servers) as conn:
        with pytest.raises((ConnectionError, OSError, EOFError)):
            produce(conn, {(topic, 0): _batch(b"stored")})
    assert _end_offsets(broker, topic, 1) == [1]  # stored, though the client never heard


def test_a_closed_connection_loses_the_request(broker, faults):
    topic = broker.create_topic()
    faults.close("Produce")
    with connect_any(broker.bootstrap_servers) as conn:
        with pytest.raises((ConnectionError, OSError, EOFError)):
            produce(conn, {(topic, 0): _batch(b"lost")})
    assert _end_offsets(broker, topic, 1) == [0]


def test_an_acks_0_produce_that_fails_closes_the_connection_as_kafka_does(broker, faults):
    topic = broker.create_topic()
    faults.error("Produce", "NOT_LEADER_OR_FOLLOWER", topic=topic)
    with connect_any(broker.bootstrap_servers) as conn:
        produce(conn, {(topic, 0): _batch(b"x")}, acks=0)
        conn.sock.settimeout(5)
        assert conn.sock.recv(1) == b""  # the broker closed it
    assert _end_offsets(broker, topic, 1) == [0]


def test_requests_are_counted_per_api_and_version(broker, faults):
    topic = broker.create_topic()
    with connect_any(broker.bootstrap_servers) as conn:
        produce(conn, {(topic, 0): _batch(b"1")}, version=8)
        produce(conn, {(topic, 0): _batch(b"2")}, version=9)
        produce(conn, {(topic, 0): _batch(b"3")}, version=9)
    assert faults.requests("Produce") == 3
    assert faults.requests("Produce", version=9) == 2
    assert faults.requests("ApiVersions") >= 1
    assert faults.report()["requests"]["Produce"] == {8: 1, 9: 2}


@pytest.mark.parametrize("spec, message", [
    ({"api": "Produc", "code": "NOT_LEADER_OR_FOLLOWER"}, "unknown API 'Produc'"),
    ({"api": "Produce", "code": "NOT_A_CODE"}, "NOT_A_CODE"),
    ({"api": "Produce", "code": 0}, "other than NONE"),
    ({"api": "Produce", "code": 6, "partitions": [0]}, "partitions need a topic"),
    ({"api": "Produce", "code": 6, "count": 0}, "count must be at least 1"),
    ({"api": "AlterUserScramCredentials", "code": 6}, "cannot carry"),
])
def test_a_fault_the_broker_cannot_apply_is_refused_with_the_reason(broker, faults, spec, message):
    spec = dict(spec)
    with pytest.raises(FaultError, match=message):
        faults.error(spec.pop("api"), spec.pop("code"), **spec)
    assert faults.report()["faults"] == []


def test_reset_clears_the_faults_and_the_counts(broker, faults):
    faults.error("Metadata", "UNKNOWN_SERVER_ERROR", count=None)
    broker.reset()
    assert faults.report() == {"requests": {}, "faults": []}
    with socket.create_connection(("127.0.0.1", broker.port), timeout=5):
        pass
