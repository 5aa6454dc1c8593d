"""Producer.send's fast path (unkeyed records appended to their topic's known
open batch) against the general path, with no send thread and no sockets: the
test plays the send thread by draining and sealing batches itself."""

from __future__ import annotations

import threading
import time

import pytest

from kipper.client import producer as producer_module
from kipper.client.batch import BatchedFuture, RecordFuture
from kipper.client.metadata import TopicInfo
from kipper.client.partitioner import murmur2, to_positive
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode, KafkaError


class IdleSender:
    """Stands in for the send thread: never started, never sends."""

    def __init__(self, config, engine, lock):
        self.sleeping = False
        self.waiters = 0

    def start(self):
        pass

    def wakeup(self):
        pass

    def is_alive(self):
        return False

    def stop(self, force):
        pass

    def join(self, timeout):
        pass


@pytest.fixture
def producer(monkeypatch):
    monkeypatch.setattr(producer_module, "Sender", IdleSender)

    def make(partitions=1, **conf):
        p = producer_module.Producer({"bootstrap.servers": "127.0.0.1:9", **conf})
        p._engine.metadata.topics["t"] = TopicInfo([1] * partitions)
        return p

    return make


def batches(p, topic="t"):
    return [b for (t, _), dq in p._acc.queues.items() if t == topic for b in dq]


def decoded(batch):
    return records.decode_batch(batch.seal(0)).records


def test_unkeyed_records_after_the_first_take_the_fast_path_into_one_batch(producer):
    p = producer()
    futures = [p.send("t", b"v%d" % i) for i in range(100)]
    assert isinstance(futures[0], RecordFuture), "the first record chooses the partition"
    assert all(isinstance(f, BatchedFuture) for f in futures[1:])
    (batch,) = batches(p)
    assert [f.index for f in futures] == list(range(100)) and all(f.batch is batch for f in futures)
    recs = decoded(batch)
    assert [r.value for r in recs] == [b"v%d" % i for i in range(100)]
    assert [r.timestamp for r in recs] == [f.timestamp for f in futures]
    assert p._acc.used == batch.size and batch.size >= batch.sealed_size - 61


@pytest.mark.parametrize("odd", [
    {"value": b"longer value"},  # another length, on the fast path
    {"value": b"x" * 10, "key": b"k"},  # a key, on the general path
    {"value": None},  # a null value
])
def test_a_batch_knows_its_values_share_a_length_until_one_differs(producer, odd):
    p = producer()
    for i in range(50):
        p.send("t", b"%010d" % i)
    (batch,) = batches(p)
    assert batch.value_size == 10  # the send thread skips measuring each value
    p.send("t", **odd)
    for i in range(50, 60):
        p.send("t", b"%010d" % i)
    assert batch.value_size == -1
    recs = decoded(batch)
    assert [r.value for r in recs] == [b"%010d" % i for i in range(50)] + [odd["value"]] + [
        b"%010d" % i for i in range(50, 60)]
    assert [r.offset for r in recs] == list(range(61))


def test_keyed_and_headed_records_between_unkeyed_ones_keep_their_fields_and_order(producer):
    p = producer()
    p.send("t", b"a")
    p.send("t", b"b")
    p.send("t", b"c", key=b"k")
    p.send("t", b"d")
    p.send("t", b"e", headers=[("h", b"1")])
    p.send("t", b"f", timestamp=1_600_000_000_000)
    (batch,) = batches(p)
    recs = decoded(batch)
    assert [(r.key, r.value, r.headers) for r in recs] == [
        (None, b"a", ()), (None, b"b", ()), (b"k", b"c", ()), (None, b"d", ()),
        (None, b"e", (("h", b"1"),)), (None, b"f", ())]
    assert recs[5].timestamp == 1_600_000_000_000


def test_a_full_batch_is_closed_and_the_next_record_starts_another(producer):
    p = producer(**{"batch.size": 1000})
    futures = [p.send("t", bytes(100)) for _ in range(30)]
    bs = batches(p)
    assert len(bs) > 1 and all(b.size <= 1000 for b in bs) and all(b.closed for b in bs[:-1])
    assert sum(b.count for b in bs) == 30
    assert [len(decoded(b)) for b in bs] == [b.count for b in bs]
    assert futures[-1].batch is bs[-1]


def test_a_drained_batch_is_not_appended_to(producer):
    p = producer(**{"linger.ms": 0})
    p.send("t", b"1")
    p.send("t", b"2")
    (first,) = batches(p)
    out, _ = p._acc.drain([("t", 0)], time.monotonic() + 1, 1 << 20, lambda tp, b: True)
    assert out == [first]
    f = p.send("t", b"3")
    assert f.batch is not first and first.count == 2


def test_fast_path_callbacks_and_futures_see_offsets_and_timestamps(producer):
    p = producer()
    seen = []
    p.send("t", b"0")
    futures = [p.send("t", b"%d" % i, on_delivery=lambda err, md: seen.append((err, md))) for i in range(1, 4)]
    (batch,) = batches(p)
    batch.complete(500, None)
    assert [md.offset for _, md in seen] == [501, 502, 503] and all(err is None for err, _ in seen)
    assert [f.get(0).offset for f in futures] == [501, 502, 503]
    assert futures[0].get(0).timestamp == batch.timestamp_of(1) and futures[0].done()


def test_a_failed_batch_fails_its_fast_path_futures(producer):
    p = producer()
    p.send("t", b"0")
    f = p.send("t", b"1")
    (batch,) = batches(p)
    batch.complete(-1, KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS, "x"))
    assert isinstance(f.exception(0), KafkaError)
    with pytest.raises(KafkaError):
        f.get(0)


def test_records_too_large_for_max_request_size_are_refused_on_either_path(producer):
    p = producer(**{"max.request.size": 1024})
    p.send("t", b"x")  # the topic's open batch is known from here on
    with pytest.raises(KafkaError) as exc:
        p.send("t", bytes(1000))
    assert exc.value.code == ErrorCode.MESSAGE_TOO_LARGE
    assert p.send("t", bytes(990)).batch is not None


def test_a_full_buffer_sends_the_record_down_the_general_path_which_blocks(producer):
    p = producer(**{"buffer.memory": 1024, "max.block.ms": 50})
    p.send("t", bytes(500))
    p.send("t", bytes(400))
    with pytest.raises(producer_module.BufferExhausted):
        p.send("t", bytes(300))


def test_a_mutable_value_is_copied_when_sent(producer):
    p = producer()
    p.send("t", b"first")
    value = bytearray(b"abc")
    p.send("t", value)
    value[:] = b"xyz"
    (batch,) = batches(p)
    assert [r.value for r in decoded(batch)] == [b"first", b"abc"]


def test_with_several_partitions_unkeyed_batches_still_rotate(producer):
    p = producer(partitions=3, **{"batch.size": 1000})
    for _ in range(100):
        p.send("t", bytes(100))
    used = {tp[1] for tp, dq in p._acc.queues.items() if dq}
    assert len(used) > 1, "KIP-480: a new batch moves the sticky partition"
    assert sum(b.count for b in batches(p)) == 100


def test_bad_timestamps_and_headers_are_refused_by_send_not_by_the_send_thread(producer):
    p = producer()
    p.send("t", b"ok")
    with pytest.raises(TypeError):
        p.send("t", b"v", timestamp=1.5)
    with pytest.raises(TypeError):
        p.send("t", b"v", headers=[("h", "not bytes")])
    with pytest.raises(TypeError):
        p.send("t", b"v", headers=[(7, b"x")])
    (batch,) = batches(p)
    assert [r.value for r in decoded(batch)] == [b"ok"]


def test_a_record_with_its_own_timestamp_does_not_lend_it_to_the_fast_path_records_after_it(producer):
    p = producer()
    before = time.time_ns() // 1_000_000
    p.send("t", b"a")
    p.send("t", b"b")
    p.send("t", b"c", timestamp=1_600_000_000_000)
    futures = [p.send("t", b"d%d" % i) for i in range(3)]
    after = time.time_ns() // 1_000_000
    (batch,) = batches(p)
    recs = decoded(batch)
    assert recs[2].timestamp == 1_600_000_000_000
    assert all(before <= r.timestamp <= after for i, r in enumerate(recs) if i != 2)
    assert [r.timestamp for r in recs[3:]] == [f.timestamp for f in futures]


def test_room_held_for_the_fast_path_counts_in_buffer_memory_until_the_batch_is_drained(producer):
    p = producer(**{"batch.size": 4096, "linger.ms": 0})
    p.send("t", bytes(100))
    (batch,) = batches(p)
    assert batch.room > 0 and p._acc.used == batch.size == 4096, "the whole batch.size is held (as Java's BufferPool)"
    p.send("t", bytes(100))
    assert batch.room < 4096 - 200 and p._acc.used == 4096
    out, _ = p._acc.drain([("t", 0)], time.monotonic() + 1, 1 << 20, lambda tp, b: True)
    assert out == [batch] and batch.room == 0
    assert p._acc.used == batch.size < 300, "the unused room is given back when the batch is drained"
    p._acc.release(batch)
    assert p._acc.used == 0


def test_a_record_waiting_for_buffer_memory_takes_back_room_held_for_the_fast_path(producer):
    p = producer(**{"buffer.memory": 2048, "batch.size": 2048, "max.block.ms": 50})
    p.send("t", bytes(100))
    assert p._acc.used == 2048
    f = p.send("t", bytes(100), key=b"k")  # the general path: no room left but the held one
    assert f.batch is batches(p)[0] and p._acc.used <= 2048


def test_after_close_a_topic_with_an_open_batch_refuses_records_on_the_fast_path_too(producer):
    p = producer()
    p.send("t", b"a")
    p.send("t", b"b")
    p.close(0)
    with pytest.raises(producer_module.ProducerClosed):
        p.send("t", b"c")
    (batch,) = batches(p)
    assert batch.count == 2


def test_a_dropped_fast_path_future_may_be_reused_but_a_kept_one_never_changes(producer):
    p = producer()
    p.send("t", b"0")
    kept = [p.send("t", b"%d" % i) for i in range(1, 50)]  # all held: each a future of its own
    assert len({id(f) for f in kept}) == 49 and [f.index for f in kept] == list(range(1, 50))
    for i in range(50, 60):
        p.send("t", b"%d" % i)  # dropped at once
    last = p.send("t", b"60")
    (batch,) = batches(p)
    batch.complete(1000, None)
    assert [f.get(0).offset for f in kept] == list(range(1001, 1050))
    assert last.index == 60 and last.get(0).offset == 1060


@pytest.mark.parametrize("key", [None, b"k"])  # the fast path, and the general path
def test_a_record_waits_while_another_thread_holds_the_producer_lock(producer, key):
    p = producer()
    p.send("t", b"first")
    (batch,) = batches(p)
    done = threading.Event()

    def sender():
        p.send("t", b"second", key=key)
        done.set()

    t = threading.Thread(target=sender)
    with p._lock:  # as the send thread holds it while it drains
        t.start()
        time.sleep(0.2)
        assert not done.is_set() and batch.count == 1
    assert done.wait(5)
    t.join(5)
    assert batch.count == 2


def test_keyed_records_take_the_keyed_fast_path_to_the_partition_their_key_hashes_to(producer):
    p = producer(partitions=4)
    keys = [b"user-%d" % i for i in range(20)]
    futures = [(k, i, p.send("t", b"v%d" % i, key=k)) for i in range(200) for k in [keys[i % 20]]]
    assert all(isinstance(f, RecordFuture) for _, i, f in futures[:20]), "a key's first record hashes it"
    assert all(isinstance(f, BatchedFuture) for _, i, f in futures[20:]), "then its partition's batch is known"
    for k, i, f in futures:
        assert f.batch.partition == to_positive(murmur2(k)) % 4
    by_partition = {}
    for b in batches(p):
        by_partition.setdefault(b.partition, []).extend((r.key, r.value) for r in decoded(b))
    for part, recs in by_partition.items():
        assert recs == [(k, b"v%d" % i) for k, i, f in futures if f.batch.partition == part]
    assert sum(len(r) for r in by_partition.values()) == 200


def test_a_keyed_batch_with_headers_or_full_leaves_the_keyed_fast_path(producer):
    p = producer(**{"batch.size": 2000})
    p.send("t", b"a", key=b"k")
    assert isinstance(p.send("t", b"b", key=b"k"), BatchedFuture)
    p.send("t", b"c", key=b"k", headers=[("h", b"1")])
    assert isinstance(p.send("t", b"d", key=b"k"), RecordFuture), "a batch with headers is not for the fast path"
    futures = [p.send("t", bytes(100), key=b"k") for _ in range(40)]
    bs = batches(p)
    assert len(bs) > 1 and all(b.size <= 2000 for b in bs)
    assert [r.value for b in bs for r in decoded(b)] == [b"a", b"b", b"c", b"d"] + [bytes(100)] * 40
    assert futures[-1].batch is bs[-1]


def test_keys_are_not_hashed_on_any_fast_path_with_the_random_partitioner(producer):
    p = producer(partitions=4, partitioner="random")
    futures = [p.send("t", b"v", key=b"k") for _ in range(50)]
    assert all(isinstance(f, RecordFuture) for f in futures)
    assert len({f.batch.partition for f in futures}) > 1


@pytest.mark.parametrize("key", [None, b"k"])
def test_a_bad_topic_or_key_gets_the_general_paths_clear_error_not_the_fast_paths(producer, key):
    p = producer()
    p.send("t", b"v", key=key)
    p.send("t", b"v", key=key)
    with pytest.raises(ValueError, match="topic must be a non-empty string"):
        p.send(["t"], b"v", key=key)
    with pytest.raises(TypeError, match="key must be bytes"):
        p.send("t", b"v", key="k")
