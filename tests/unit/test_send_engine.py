"""The producer's SendEngine driven by hand: a manual clock, no sockets. The
test plays the shell (which nodes are ready, what was written) and the broker
(responses are real encoded frames, decoded as the connection would)."""

from __future__ import annotations

import pytest

from kipper.client.accumulator import Accumulator
from kipper.client.batch import RecordFuture
from kipper.client.config import ProducerConfig
from kipper.client.partitioner import murmur2, to_positive
from kipper.client.send_engine import SendEngine
from kipper.protocol.errors import ErrorCode, KafkaError
from kipper.protocol.header import decode_response, encode_response
from kipper.protocol.messages.init_producer_id import INIT_PRODUCER_ID
from kipper.protocol.messages.metadata import METADATA
from kipper.protocol.messages.produce import PRODUCE


def decoded(api, version: int, body: dict):
    """A response body as the connection hands it over: encoded, then parsed."""
    return decode_response(api, version, encode_response(api, version, 1, body)[4:])[1]


def metadata_response(leaders: dict[str, list[int]], brokers=(1, 2), errors: dict[str, int] | None = None):
    topics = [{"error_code": 0, "name": t, "partitions": [
        {"error_code": 0, "partition_index": i, "leader_id": node, "leader_epoch": 0,
         "replica_nodes": [node], "isr_nodes": [node], "offline_replicas": []}
        for i, node in enumerate(nodes)]} for t, nodes in leaders.items()]
    topics += [{"error_code": code, "name": t, "partitions": []} for t, code in (errors or {}).items()]
    return decoded(METADATA, 9, {"throttle_time_ms": 0, "cluster_id": "c", "controller_id": 1, "topics": topics,
                                 "brokers": [{"node_id": n, "host": "127.0.0.1", "port": 9000 + n}
                                             for n in brokers]})


def produce_response(request, codes: dict | None = None, base_offset: int = 100):
    """Every partition of ``request`` answered; ``codes`` maps (topic, partition) to an error."""
    by_topic: dict[str, list] = {}
    for b in request.batches:
        code = (codes or {}).get((b.topic, b.partition), 0)
        by_topic.setdefault(b.topic, []).append(
            {"index": b.partition, "error_code": code, "base_offset": base_offset, "record_errors": []})
    return decoded(PRODUCE, 9, {"responses": [{"name": t, "partition_responses": p}
                                              for t, p in by_topic.items()]})


class Shell:
    """What the send thread would do, one explicit step at a time."""

    def __init__(self, **conf):
        cfg = ProducerConfig.from_dict({"bootstrap.servers": "127.0.0.1:9092", "linger.ms": 0,
                                        "retry.backoff.ms": 100, **conf})
        self.engine = SendEngine(cfg, Accumulator(batch_size=cfg.batch_size, linger_ms=cfg.linger_ms,
                                                  buffer_memory=cfg.buffer_memory))
        self.now = 0.0
        self.ready = {1, 2}  # nodes whose connection is ready

    def send(self, value=b"v", topic="t", key=None, partition=None, callback=None) -> RecordFuture:
        """What Producer.send does with the engine."""
        future = RecordFuture(topic, 1000)
        new = self.engine.append(topic, key, value, 1000, None, partition, future, callback, lambda: self.now)
        if new is None:
            future = self.engine.park(topic, key, value, 1000, None, partition, callback, 30, self.now)
        return future

    def control(self, request, body, node_id=-1):
        assert request is not None
        self.engine.sent(request, node_id, self.now)
        self.engine.on_control_response(request, body, self.now)

    def start(self, leaders=None, window=None):
        """A producer id, then metadata for ``leaders``."""
        self.control(self.engine.producer_id_request(), decoded(INIT_PRODUCER_ID, 4, {
            "throttle_time_ms": 0, "error_code": 0, "producer_id": 7, "producer_epoch": 0,
            "max_in_flight_sequence_number_per_connection": window or -1}))
        self.control(self.engine.metadata_request(self.now), metadata_response(leaders or {"t": [1]}))

    def drain(self):
        """Drain and 'write' every request (sealing it, as the shell does)."""
        self.engine.poll(self.now)
        _, requests = self.engine.drain(self.now, self.ready.__contains__)
        for r in requests:
            r.body()
            self.engine.sent(r, r.node_id, self.now)
        return requests

    def answer(self, request, codes=None, base_offset=100):
        failed = self.engine.on_produce_response(request, produce_response(request, codes, base_offset), self.now)
        self.engine.retry_or_fail(failed, self.now)
        self.engine.run_completions()

    def complete(self):
        self.engine.run_completions()


def error_code(future: RecordFuture) -> int | None:
    exc = future.exception(0)
    return exc.code if isinstance(exc, KafkaError) else None


# --- retries and requeue --------------------------------------------------------------

def test_a_retriable_error_requeues_the_batch_with_its_sequence_after_retry_backoff():
    s = Shell()
    s.start()
    f = s.send()
    (req,) = s.drain()
    (batch,) = req.batches
    assert (batch.producer_id, batch.base_sequence, batch.attempts) == (7, 0, 1)
    s.answer(req, {("t", 0): ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND})
    assert not f.done() and s.engine.metrics["retries"] == 1
    s.now = 0.099
    assert s.drain() == [], "the retry waits retry.backoff.ms"
    s.now = 0.1
    (again,) = s.drain()
    assert again.batches == [batch] and (batch.base_sequence, batch.attempts) == (0, 2)
    s.answer(again, base_offset=42)
    assert f.get(0).offset == 42


def test_a_batch_fails_once_its_retries_are_used_up():
    s = Shell(retries=1)
    s.start()
    f = s.send()
    (req,) = s.drain()
    s.answer(req, {("t", 0): ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND})
    s.now = 1.0
    (req,) = s.drain()
    s.answer(req, {("t", 0): ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND})
    assert error_code(f) == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    assert s.engine.metrics["errors"] == 1


def test_a_requeued_retry_goes_out_before_newer_batches_of_its_partition():
    s = Shell(**{"batch.size": 1})  # one record per batch
    s.start()
    first = s.send(b"1")
    (r1,) = s.drain()
    second = s.send(b"2")
    (r2,) = s.drain()
    s.answer(r1, {("t", 0): ErrorCode.REQUEST_TIMED_OUT})
    third = s.send(b"3")
    s.answer(r2, {("t", 0): ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER})  # the broker saw a gap
    s.now = 1.0
    order = []
    for req in s.drain():
        order.append(req.batches[0].base_sequence)
        s.answer(req)
    assert order == [0, 1, 2]
    assert [f.get(0).offset for f in (first, second, third)] == [100, 100, 100]


def test_the_in_flight_limit_of_a_classic_broker_is_five_requests_per_node():
    s = Shell(**{"batch.size": 1})
    s.start(window=None)
    futures = [s.send(bytes([i])) for i in range(7)]
    sent = []
    for _ in range(7):
        sent += s.drain()
    assert len(sent) == 5
    s.answer(sent[0])
    assert len(s.drain()) == 1
    assert futures[0].get(0).offset == 100


# --- leaders -----------------------------------------------------------------------------

def test_not_leader_refreshes_metadata_and_resends_to_the_new_leader():
    s = Shell()
    s.start({"t": [1]})
    f = s.send()
    (req,) = s.drain()
    assert req.node_id == 1
    s.answer(req, {("t", 0): ErrorCode.NOT_LEADER_OR_FOLLOWER})
    s.now = 0.2
    refresh = s.engine.metadata_request(s.now)
    assert refresh is not None, "a leader error must ask for metadata at once"
    s.control(refresh, metadata_response({"t": [2]}))
    (again,) = s.drain()
    assert again.node_id == 2 and again.batches[0].base_sequence == 0
    s.answer(again)
    assert f.get(0).offset == 100


def test_a_partition_without_leader_waits_and_asks_for_metadata():
    s = Shell()
    s.start({"t": [-1]})
    s.send()
    s.now = 0.1  # retry.backoff.ms after the first metadata request
    assert s.drain() == []
    assert s.engine.metadata_request(s.now) is not None


def test_metadata_is_not_asked_for_again_while_one_request_is_in_flight():
    s = Shell()
    s.start()
    s.engine.metadata.refresh_requested = True
    s.now = 1.0
    req = s.engine.metadata_request(s.now)
    s.engine.sent(req, 1, s.now)
    assert s.engine.metadata_request(s.now + 5) is None


# --- delivery and request timeouts -------------------------------------------------------

def test_a_batch_never_sent_expires_after_delivery_timeout():
    s = Shell(**{"delivery.timeout.ms": 40000, "request.timeout.ms": 30000})
    s.start()
    f = s.send()
    s.ready = set()  # the leader cannot be reached
    s.now = 40.0
    s.drain()
    assert not f.done()
    s.now = 40.001
    s.drain()
    s.complete()
    assert f.done() and "expired after 40000 ms" in str(f.exception(0))


def test_a_retriable_error_after_delivery_timeout_fails_the_batch():
    s = Shell(**{"delivery.timeout.ms": 40000, "request.timeout.ms": 30000})
    s.start()
    f = s.send()
    (req,) = s.drain()
    s.now = 40.5
    s.answer(req, {("t", 0): ErrorCode.NOT_ENOUGH_REPLICAS})
    assert error_code(f) == ErrorCode.NOT_ENOUGH_REPLICAS


def test_an_unanswered_request_times_out_its_node_and_its_batch_is_resent():
    s = Shell(**{"request.timeout.ms": 30000})
    s.start()
    f = s.send()
    (req,) = s.drain()
    s.now = 30.0
    assert s.engine.timed_out_nodes(s.now) == []
    s.now = 30.001
    assert s.engine.timed_out_nodes(s.now) == [1]
    assert s.engine.on_disconnected(1, s.now, "request timed out") == 1
    assert s.engine.metrics["disconnects"] == 1 and s.engine.metadata.refresh_requested
    assert s.engine.timed_out_nodes(s.now) == []
    s.now = 31.0
    (again,) = s.drain()
    assert again.batches == req.batches and again.batches[0].attempts == 2
    s.answer(again)
    assert f.get(0).offset == 100


def test_a_lost_metadata_request_is_asked_again_without_waiting_for_a_timeout():
    s = Shell()
    meta = s.engine.metadata_request(s.now)
    s.engine.sent(meta, -1, s.now)
    assert s.engine.metadata_request(1.0) is None
    s.engine.on_disconnected(-1, 0.5, "connection reset")
    assert s.engine.metadata_request(1.0) is not None


def test_a_lost_init_producer_id_request_is_asked_again():
    s = Shell()
    pid = s.engine.producer_id_request()
    s.engine.sent(pid, -1, s.now)
    assert s.engine.producer_id_request() is None
    s.engine.on_disconnected(-1, 0.5, "connection reset")
    again = s.engine.producer_id_request()
    assert again is not None
    s.control(again, decoded(INIT_PRODUCER_ID, 4, {"throttle_time_ms": 0, "error_code": 0,
                                                  "producer_id": 9, "producer_epoch": 0}))
    assert s.engine.stats()["producer_id"] == 9


def test_a_request_that_could_not_be_written_is_retried_once():
    s = Shell()
    s.start()
    s.send()
    s.engine.poll(s.now)
    _, (req,) = s.engine.drain(s.now, s.ready.__contains__)
    s.engine.on_disconnected(1, s.now, "reset")  # the connection went before the write
    s.engine.on_send_failed(req, s.now, "connection closed")
    assert len(s.engine.accumulator.queues[("t", 0)]) == 1
    assert s.engine.metrics["retries"] == 1


# --- KIP-360 ---------------------------------------------------------------------------------

def test_a_failed_batch_fails_the_later_batches_of_its_partition_and_bumps_the_epoch():
    s = Shell(**{"batch.size": 1})
    s.start()
    futures = [s.send(bytes([i])) for i in range(3)]
    requests = [r for _ in range(3) for r in s.drain()]
    assert [r.batches[0].base_sequence for r in requests] == [0, 1, 2]
    s.answer(requests[0], {("t", 0): ErrorCode.MESSAGE_TOO_LARGE})
    assert error_code(futures[0]) == ErrorCode.MESSAGE_TOO_LARGE
    assert [error_code(f) for f in futures[1:]] == [ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER] * 2
    assert s.engine.metrics["epoch_bump_requests"] == 1
    nxt = s.send(b"next")
    (fresh,) = s.drain()
    assert (fresh.batches[0].producer_epoch, fresh.batches[0].base_sequence) == (1, 0)
    s.answer(fresh)
    assert nxt.get(0).offset == 100


def test_late_answers_for_batches_failed_by_kip_360_change_nothing():
    s = Shell(**{"batch.size": 1})
    s.start()
    futures = [s.send(bytes([i])) for i in range(3)]
    requests = s.drain()
    s.answer(requests[0], {("t", 0): ErrorCode.MESSAGE_TOO_LARGE})
    nxt = s.send(b"next")
    (fresh,) = s.drain()
    # the broker saw a gap at sequence 1 and 2: it answers them out of order
    s.answer(requests[1], {("t", 0): ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER})
    s.engine.on_disconnected(1, s.now, "reset")  # and requests[2] is lost
    s.now = 1.0
    resent = s.drain()
    assert [(r.batches[0].producer_epoch, r.batches[0].base_sequence) for r in resent] == [(1, 0)]
    s.answer(resent[0])
    assert nxt.get(0).offset == 100
    assert [error_code(f) for f in futures[1:]] == [ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER] * 2
    assert s.engine.metrics["errors"] == 3 and s.engine.metrics["retries"] == 1


def test_a_fencing_error_is_fatal_and_fails_everything_queued_and_parked():
    s = Shell(**{"batch.size": 1})
    s.start()
    first = s.send(b"1")
    (req,) = s.drain()
    s.ready = set()
    queued = s.send(b"2")
    parked = s.send(b"3", topic="unknown")
    s.ready = {1}
    s.answer(req, {("t", 0): ErrorCode.INVALID_PRODUCER_EPOCH})
    assert isinstance(s.engine.fatal_error, KafkaError)
    assert [error_code(f) for f in (first, queued, parked)] == [ErrorCode.INVALID_PRODUCER_EPOCH] * 3
    assert s.drain() == []


# --- parked records ----------------------------------------------------------------------------

def test_parked_records_are_placed_by_the_same_choice_as_send_once_metadata_arrives():
    s = Shell()
    s.start({"t": [1]})
    by_key = to_positive(murmur2(b"user-42")) % 3
    keyed = s.send(b"k", topic="new", key=b"user-42")
    pinned = s.send(b"p", topic="new", partition=(by_key + 1) % 3)
    bad = s.send(b"x", topic="new", partition=5)
    s.now = 0.1
    assert s.engine.metadata_request(s.now) is not None, "a parked topic asks for metadata"
    s.control(s.engine.metadata_request(s.now), metadata_response({"t": [1], "new": [1, 2, 1]}))
    later = s.send(b"later", topic="new", key=b"user-42")  # queues behind the parked ones
    assert later.batch is None
    requests = s.drain()
    assert keyed.batch.partition == by_key
    assert later.batch.partition == keyed.batch.partition
    assert later.batch is keyed.batch and later.index == 1
    assert pinned.batch.partition == (by_key + 1) % 3
    assert error_code(bad) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    direct = s.send(b"x", topic="new", partition=5)
    assert error_code(direct) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    for r in requests:
        s.answer(r)
    assert keyed.get(0).offset == 100 and later.get(0).offset == 101


def test_parked_records_fail_after_max_block_ms_without_metadata():
    s = Shell(**{"max.block.ms": 1000})
    s.start({"t": [1]})
    f = s.send(topic="missing")
    s.now = 1.0
    s.drain()
    assert not f.done()
    s.now = 1.001
    s.drain()
    assert f.done() and "not present in metadata after 1000 ms" in str(f.exception(0))
    assert s.engine.accumulator.used == 0


# --- answers -------------------------------------------------------------------------------------

def test_duplicate_sequence_number_delivers_the_batch_with_offset_minus_one():
    s = Shell()
    s.start()
    f = s.send()
    (req,) = s.drain()
    s.answer(req, {("t", 0): ErrorCode.DUPLICATE_SEQUENCE_NUMBER})
    meta = f.get(0)
    assert meta.offset == -1 and meta.partition == 0
    assert s.engine.metrics["errors"] == 0 and s.engine.idempotence.unacked_count() == 0


def test_acks_zero_completes_batches_once_written():
    s = Shell(**{"acks": "0", "enable.idempotence": "false"})
    s.control(s.engine.metadata_request(s.now), metadata_response({"t": [1]}))
    f = s.send()
    (req,) = s.drain()
    assert not req.expects_response
    s.complete()
    assert f.get(0).offset == -1
    assert s.engine.timed_out_nodes(1000.0) == [] and s.engine.idle()


def test_nothing_is_drained_before_the_producer_id_arrives():
    s = Shell()
    s.control(s.engine.metadata_request(s.now), metadata_response({"t": [1]}))
    s.send()
    next_ready, requests = s.engine.drain(s.now, s.ready.__contains__)
    assert requests == [] and next_ready == pytest.approx(0.05)


def test_the_open_batch_of_unkeyed_records_is_forgotten_when_metadata_changes_or_it_is_drained():
    s = Shell(**{"linger.ms": 1000})
    s.start({"t": [1]})
    f = s.send()
    assert s.engine.open_batches["t"] is f.batch
    s.now = 1.0
    s.engine.metadata.refresh_requested = True
    s.control(s.engine.metadata_request(s.now), metadata_response({"t": [1, 2]}))
    assert "t" not in s.engine.open_batches, "the partition count may have changed"
    g = s.send()
    assert g.batch is f.batch and s.engine.open_batches["t"] is f.batch
    s.engine.accumulator.flushing = 1
    (req,) = s.drain()
    assert req.batches == [f.batch] and f.batch.closed, "a drained batch takes no more records"
