"""The producer's sans-I/O engine: accumulator, sequence bookkeeping,
in-flight tracker, partitioner and config -- no sockets."""

from __future__ import annotations

import pytest

from kipper.client import idempotence as idem
from kipper.client.accumulator import Accumulator, PendingRecord
from kipper.client.batch import RecordFuture
from kipper.client.config import ConfigError, ProducerConfig
from kipper.client.inflight import InFlight, InFlightRequests
from kipper.client.partitioner import Partitioner, murmur2
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode

TP = ("t", 0)


def acc(batch_size=1000, linger_ms=10, buffer_memory=1 << 20) -> Accumulator:
    return Accumulator(batch_size=batch_size, linger_ms=linger_ms, buffer_memory=buffer_memory)


def append(a: Accumulator, value=b"x" * 50, tp=TP, now=0.0, key=None):
    f = RecordFuture(tp[0], 1000)
    return a.append(tp, key, value, 1000, None, f, None, lambda: now), f


# --- accumulator --------------------------------------------------------------------

def test_records_share_a_batch_until_batch_size_is_reached():
    a = acc(batch_size=300)
    news = [append(a)[0][1] for _ in range(10)]
    assert news[0] is True
    assert sum(news) > 1, "a full batch must start a new one"
    assert all(len(bt.buf) <= 300 for bt in a.queues[TP])
    assert sum(bt.count for bt in a.queues[TP]) == 10


def test_a_batch_is_not_ready_before_linger_expires():
    a = acc(linger_ms=10)
    append(a, now=0.0)
    out, next_ready = a.drain([TP], 0.005, 1 << 20, lambda tp, bt: True)
    assert out == [] and next_ready == pytest.approx(0.010)
    out, _ = a.drain([TP], 0.011, 1 << 20, lambda tp, bt: True)
    assert len(out) == 1


def test_a_full_batch_is_ready_at_once():
    a = acc(batch_size=200, linger_ms=1000)
    for _ in range(5):
        append(a)
    out, _ = a.drain([TP], 0.0, 1 << 20, lambda tp, bt: True)
    assert len(out) == 1 and out[0].closed


def test_flush_makes_every_batch_ready():
    a = acc(linger_ms=1000)
    append(a)
    a.flushing = 1
    out, _ = a.drain([TP], 0.0, 1 << 20, lambda tp, bt: True)
    assert len(out) == 1


def test_drain_takes_one_batch_per_partition_and_respects_can_send():
    a = acc(linger_ms=0)
    append(a, tp=("t", 0))
    append(a, tp=("t", 1))
    out, _ = a.drain([("t", 0), ("t", 1)], 1.0, 1 << 20, lambda tp, bt: tp[1] == 1)
    assert [(bt.topic, bt.partition) for bt in out] == [("t", 1)]


def test_sealed_batch_decodes_to_the_appended_records():
    a = acc(linger_ms=0)
    futures = []
    for i in range(3):
        f = RecordFuture("t", 1000 + i)
        a.append(TP, f"k{i}".encode(), f"v{i}".encode(), 1000 + i, [("h", b"1")] if i == 2 else None,
                 f, None, lambda: 0.0)
        futures.append(f)
    (batch,), _ = a.drain([TP], 1.0, 1 << 20, lambda tp, bt: True)
    data = batch.seal(3)  # lz4
    decoded = records.decode_batch(data)
    assert [r.value for r in decoded.records] == [b"v0", b"v1", b"v2"]
    assert decoded.records[2].headers == (("h", b"1"),)
    assert decoded.records[1].timestamp == 1001
    assert b.read_header(data).compression == 3


def test_requeued_retry_goes_ahead_of_newer_batches_in_sequence_order():
    a = acc(batch_size=60, linger_ms=0)
    for _ in range(3):
        append(a)
    first, second, third = list(a.queues[TP])
    for i, bt in enumerate((first, second, third)):
        bt.base_sequence = i * 10
    a.queues[TP].clear()
    a.queues[TP].append(third)
    a.requeue(second, retry_at=5.0)
    a.requeue(first, retry_at=5.0)
    assert list(a.queues[TP]) == [first, second, third]


def test_records_for_a_topic_without_metadata_are_parked_and_counted():
    a = acc()
    gate = a.gate_for("new", 0.0)
    f = RecordFuture("new", 1, gate)
    a.park("new", PendingRecord(None, b"v", 1, None, f, None, -1, 30, 0.0))
    assert a.waiting_topics() == ["new"] and a.used == 30
    parked = a.take_undesignated("new")
    assert len(parked.records) == 1 and a.used == 0


def test_buffer_memory_is_accounted_until_release():
    a = acc(buffer_memory=1000)
    (batch, _), _ = append(a, value=b"x" * 400)
    assert not a.has_room(700)
    a.release(batch)
    assert a.has_room(700)


# --- idempotence bookkeeping ----------------------------------------------------------

def sequenced(state: idem.IdempotenceState, a: Accumulator, n: int):
    out = []
    for _ in range(n):
        (batch, _), _ = append(a)
        batch.closed = True
        state.assign(TP, batch)
        out.append(batch)
    return out


def ready_state(window=None) -> idem.IdempotenceState:
    s = idem.IdempotenceState(True)
    s.set_producer_id(7, 0, window)
    return s


def test_sequences_are_assigned_once_and_follow_record_counts():
    s = ready_state()
    a = acc(batch_size=10_000)
    b1, b2 = sequenced(s, a, 2)
    assert (b1.base_sequence, b2.base_sequence) == (0, b1.count)
    s.assign(TP, b1)  # a retry keeps its sequence
    assert b1.base_sequence == 0 and b1.producer_id == 7


def test_sequences_wrap_at_int32_max():
    s = ready_state()
    s._next_seq[TP] = 0x7FFFFFFF
    a = acc()
    (bt,) = sequenced(s, a, 1)
    assert bt.base_sequence == 0x7FFFFFFF
    assert s._next_seq[TP] == 0


def test_classic_brokers_keep_the_five_request_limit():
    s = ready_state(window=None)
    assert s.max_in_flight(5, explicit=False) == 5
    assert s.max_in_flight(50, explicit=True) == 5


def test_advertised_window_lifts_the_request_limit_and_throttles_on_sequences():
    s = ready_state(window=3)
    assert s.max_in_flight(5, explicit=False) > 1000
    a = acc(batch_size=10_000)
    (batch, _), _ = append(a)
    batch.closed = True
    assert s.can_send(TP, batch, 0, 10**6)
    s.assign(TP, batch)
    batch.in_flight = True
    for _ in range(2):
        append(a)  # same open batch, count 1 each? new batch per call below
    nxt = a.queues[TP][-1]
    nxt.count = 3
    assert not s.can_send(TP, nxt, 1, 10**6), "4 sequences in flight would exceed the window of 3"


def test_the_window_counts_the_records_still_unacknowledged():
    s = ready_state(window=3)
    a = acc(batch_size=10_000)
    b1, b2 = sequenced(s, a, 2)
    b1.in_flight = b2.in_flight = True
    (fresh, _), _ = append(a)
    fresh.count = 2
    assert not s.can_send(TP, fresh, 2, 10**6), "2 + 2 sequences would exceed the window of 3"
    s.on_success(TP, b1)
    s.on_success(TP, b1)  # a second answer for the same batch changes nothing
    assert s.can_send(TP, fresh, 1, 10**6)
    s.on_success(TP, b2)
    fresh.count = 3
    assert s.can_send(TP, fresh, 0, 10**6)


def test_explicit_max_in_flight_one_is_honoured_with_the_window():
    s = ready_state(window=1000)
    assert s.max_in_flight(1, explicit=True) == 1


def test_a_retry_waits_until_every_earlier_batch_is_on_the_wire():
    s = ready_state()
    a = acc(batch_size=60)
    b1, b2 = sequenced(s, a, 2)
    b1.in_flight = False  # b1 failed and waits for its retry
    b2.in_flight = False
    assert s.can_send(TP, b1, 0, 5)
    assert not s.can_send(TP, b2, 0, 5)
    b1.in_flight = True
    assert s.can_send(TP, b2, 1, 5)


def test_new_batches_wait_behind_a_pending_retry():
    s = ready_state()
    a = acc(batch_size=60)
    (b1,) = sequenced(s, a, 1)
    b1.in_flight = False
    (fresh, _), _ = append(a, tp=TP)
    fresh.base_sequence = -1
    assert not s.can_send(TP, fresh, 0, 5)


def test_out_of_order_behind_an_earlier_batch_is_retried_and_at_the_head_fails():
    s = ready_state()
    a = acc(batch_size=60)
    b1, b2 = sequenced(s, a, 2)
    assert s.classify(TP, b2, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) == idem.RETRY
    assert s.classify(TP, b1, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) == idem.FAIL


def test_duplicate_sequence_number_counts_as_success():
    s = ready_state()
    a = acc()
    (b1,) = sequenced(s, a, 1)
    assert s.classify(TP, b1, ErrorCode.DUPLICATE_SEQUENCE_NUMBER) == idem.SUCCESS


def test_a_failed_batch_fails_later_sequenced_batches_and_bumps_the_epoch_after_they_settle():
    s = ready_state()
    a = acc(batch_size=60)
    b1, b2, b3 = sequenced(s, a, 3)
    assert s.classify(TP, b1, ErrorCode.UNKNOWN_PRODUCER_ID) == idem.FAIL
    later = s.on_failure(TP, b1, ErrorCode.UNKNOWN_PRODUCER_ID)
    assert later == [b2, b3]
    assert s.state == idem.BUMPING
    assert s.maybe_finish_bump()
    assert (s.state, s.producer_epoch) == (idem.READY, 1)
    (fresh,) = sequenced(s, a, 1)
    assert fresh.base_sequence == 0 and fresh.producer_epoch == 1


def test_no_new_sequences_while_a_bump_is_pending():
    s = ready_state()
    a = acc(batch_size=60)
    (b1,) = sequenced(s, a, 1)
    s.on_failure(TP, b1, ErrorCode.MESSAGE_TOO_LARGE)
    (fresh, _), _ = append(a)
    fresh.base_sequence = -1
    other = ("t", 1)
    s._unacked[other] = [fresh]  # another partition still has a batch out
    assert not s.maybe_finish_bump() or s.state == idem.BUMPING
    assert not s.can_send(TP, fresh, 0, 5)


def test_exhausted_epoch_asks_for_a_new_producer_id():
    s = ready_state()
    s.producer_epoch = idem.EPOCH_EXHAUSTED
    s.state = idem.BUMPING
    assert s.maybe_finish_bump() is False
    assert s.needs_producer_id()


def test_fencing_errors_are_fatal():
    s = ready_state()
    a = acc()
    (b1,) = sequenced(s, a, 1)
    assert s.classify(TP, b1, ErrorCode.INVALID_PRODUCER_EPOCH) == idem.FAIL
    assert ErrorCode.INVALID_PRODUCER_EPOCH in idem.FATAL_ERRORS


# --- in-flight tracker ------------------------------------------------------------------

def test_responses_must_come_back_in_request_order():
    t = InFlightRequests()
    t.add(InFlight(1, 0, 9, 0.0))
    t.add(InFlight(2, 0, 9, 0.1))
    with pytest.raises(ConnectionError):
        t.complete(2)
    assert t.complete(1).correlation_id == 1
    assert t.oldest_sent_at() == 0.1
    assert [e.correlation_id for e in t.drain()] == [2] and len(t) == 0


# --- partitioner and config --------------------------------------------------------------

def test_murmur2_matches_kafkas_java_values():
    assert murmur2(b"21") == -973932308
    assert murmur2(b"foobar") == -790332482


def test_keyed_records_always_map_to_the_same_partition():
    p = Partitioner()
    assert len({p.partition("t", b"user-42", 12) for _ in range(10)}) == 1


def test_unkeyed_records_stick_to_one_partition_until_a_batch_is_sent():
    p = Partitioner()
    first = p.partition("t", None, 8)
    assert all(p.partition("t", None, 8) == first for _ in range(20))
    p.on_new_batch("t", first, 8)
    assert p.partition("t", None, 8) != first


@pytest.mark.parametrize("conf,message", [
    ({"bootstrap.servers": "h:1", "acks": "2"}, "acks"),
    ({"bootstrap.servers": "h:1", "linger.ms": -1}, "linger.ms"),
    ({"bootstrap.servers": "h:1", "compression.type": "brotli"}, "compression.type"),
    ({"bootstrap.servers": "h:1", "no.such": 1}, "no.such"),
    ({"bootstrap.servers": "nohostport"}, "bootstrap.servers"),
    ({"bootstrap.servers": "h:1", "enable.idempotence": True, "acks": "1"}, "acks=all"),
    ({}, "bootstrap.servers"),
])
def test_bad_producer_config_is_refused_with_the_key_named(conf, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        ProducerConfig.from_dict(conf)


def test_config_defaults_follow_kafka():
    cfg = ProducerConfig.from_dict({"bootstrap.servers": "h:1"})
    assert (cfg.acks, cfg.enable_idempotence, cfg.batch_size, cfg.max_in_flight_requests_per_connection) == (-1, True, 131072, 5)
