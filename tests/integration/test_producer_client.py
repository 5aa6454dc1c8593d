"""Our Producer against real brokers: kipper (and Tansu, a broker we did not
write), read back by an independent reader or by confluent-kafka."""

from __future__ import annotations

import threading
import time

import pytest

from kipper.client import BufferExhausted, Producer
from kipper.client.config import ConfigError
from tests.support import requires
from tests.support.broker import BrokerProcess, free_port
from tests.support.proxy import FaultProxy
from tests.support.readback import read_topic
from tests.support.tansu import TansuProcess
from tests.support.topics import create_topics


def _values(by_partition) -> list[bytes]:
    return [r.value for recs in by_partition.values() for r in recs]


def test_keyed_and_unkeyed_records_are_delivered_with_their_offsets(broker, unique):
    topic = f"pc-{unique}"
    create_topics(broker.bootstrap, topic)
    with Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 2}) as p:
        keyed = [p.send(topic, f"k{i}".encode(), key=f"key{i % 7}".encode()) for i in range(500)]
        unkeyed = [p.send(topic, f"u{i}".encode()) for i in range(500)]
        assert p.flush(30) == 0
    metas = [f.get(5) for f in keyed + unkeyed]
    stored = read_topic(broker.bootstrap, topic)
    by_offset = {(r.partition, r.offset): r for r in stored_records(stored)}
    for f, m in zip(keyed + unkeyed, metas):
        assert by_offset[(m.partition, m.offset)].value is not None
    # same key, same partition
    parts = {}
    for i, m in enumerate(metas[:500]):
        assert parts.setdefault(i % 7, m.partition) == m.partition
    assert sorted(_values(stored)) == sorted([f"k{i}".encode() for i in range(500)] +
                                             [f"u{i}".encode() for i in range(500)])


def stored_records(by_partition):
    class R:
        def __init__(self, partition, rec):
            self.partition, self.offset, self.value = partition, rec.offset, rec.value
    return [R(p, r) for p, recs in by_partition.items() for r in recs]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_compression_type_is_read_back_by_confluent_kafka(broker, unique, codec):
    from confluent_kafka import Consumer, TopicPartition

    topic = f"pc-{codec}-{unique}"
    create_topics(broker.bootstrap, topic, partitions=1)
    with Producer({"bootstrap.servers": broker.bootstrap, "compression.type": codec}) as p:
        for i in range(300):
            p.send(topic, f"{codec}-{i}".encode() * 3, headers=[("n", str(i).encode())])
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"g-{unique}"})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.time() + 20
    while len(got) < 300 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append((m.value(), m.headers()))
    c.close()
    assert [v for v, _ in got] == [f"{codec}-{i}".encode() * 3 for i in range(300)]
    assert got[7][1] == [("n", b"7")]


def test_records_for_a_topic_created_after_the_producer_started_are_delivered_in_order(unique):
    with BrokerProcess({"auto.create.topics.enable": "false"}) as broker:
        topic = f"late-{unique}"
        with Producer({"bootstrap.servers": broker.bootstrap, "max.block.ms": 20000,
                       "metadata.max.age.ms": 100, "retry.backoff.ms": 20}) as p:
            start = time.monotonic()
            futures = [p.send(topic, f"{i:06d}".encode()) for i in range(50)]
            assert time.monotonic() - start < 1.0, "send() must not block on metadata"
            time.sleep(1.0)
            assert not any(f.done() for f in futures)
            create_topics(broker.bootstrap, topic, partitions=1)
            # keep sending while the parked records are being placed: the new
            # ones must queue behind them, not jump ahead
            futures += [p.send(topic, f"{i:06d}".encode()) for i in range(50, 20000)]
            metas = [f.get(20) for f in futures]
        assert all(m.offset >= 0 for m in metas)
        values = _values(read_topic(broker.bootstrap, topic))
        assert values == [f"{i:06d}".encode() for i in range(20000)]


def test_full_buffer_blocks_for_max_block_ms_then_raises():
    dead = f"127.0.0.1:{free_port()}"  # nothing listens: records stay parked
    p = Producer({"bootstrap.servers": dead, "buffer.memory": 4096, "max.block.ms": 300})
    try:
        with pytest.raises(BufferExhausted):
            for _ in range(1000):
                p.send("t", b"x" * 100)
    finally:
        p.close(0.5)


def test_unknown_config_key_raises_a_clear_error():
    with pytest.raises(ConfigError, match="linger.mss"):
        Producer({"bootstrap.servers": "127.0.0.1:1", "linger.mss": 5})


def _send_from_threads(config: dict, worker, threads: int = 4) -> dict:
    """``worker(producer, n)`` in ``threads`` threads at once on one Producer;
    everything flushed; returns the producer's metrics."""
    with Producer(config) as p:
        running = [threading.Thread(target=worker, args=(p, n)) for n in range(threads)]
        for t in running:
            t.start()
        for t in running:
            t.join()
        assert p.flush(30) == 0
        return p.metrics()


def test_send_is_thread_safe_and_callbacks_fire_once_per_record(broker, unique):
    topic = f"threads-{unique}"
    create_topics(broker.bootstrap, topic)
    delivered = []
    lock = threading.Lock()

    def cb(err, meta):
        with lock:
            delivered.append((err, meta))

    def worker(p, n):
        for i in range(2000):
            p.send(topic, f"{n}-{i}".encode(), key=str(i).encode(), on_delivery=cb)

    m = _send_from_threads({"bootstrap.servers": broker.bootstrap}, worker)
    assert len(delivered) == 8000 and all(err is None for err, _ in delivered)
    assert len(set(_values(read_topic(broker.bootstrap, topic)))) == 8000
    assert m["records"] == 8000 and m["errors"] == 0 and m["producer_id"] >= 0


def test_unkeyed_records_from_many_threads_land_at_the_offsets_their_futures_give(broker, unique):
    """The fast path (ProducerLock's token) from four threads at once, while
    the send thread drains small batches: every future's offset holds its own
    value, and no record is lost or stored twice."""
    topic = f"fast-threads-{unique}"
    create_topics(broker.bootstrap, topic)
    sent: dict[bytes, object] = {}

    def worker(p, n):
        sent.update([(f"{n}-{i}".encode(), p.send(topic, f"{n}-{i}".encode())) for i in range(5000)])

    m = _send_from_threads({"bootstrap.servers": broker.bootstrap, "batch.size": 2048, "linger.ms": 0}, worker)
    stored = {(partition, r.offset): r.value
              for partition, recs in read_topic(broker.bootstrap, topic).items() for r in recs}
    assert len(stored) == 20_000 and sorted(stored.values()) == sorted(sent)
    assert all(stored[f.get(5).partition, f.get(5).offset] == value for value, f in sent.items())
    assert m["batches"] > 50  # the send thread drained while the threads appended


def test_broker_advertised_sequence_window_lifts_the_request_limit(broker, unique):
    with Producer({"bootstrap.servers": broker.bootstrap}) as p:
        p.send(f"w-{unique}", b"x").get(15)
        assert p.metrics()["max_in_flight_sequences"] == 10_000_000


@pytest.mark.parametrize("mode", ["latest", "window5"])
def test_connection_cuts_after_produce_responses_leave_20000_records_once_in_key_order(mode, unique):
    port = free_port()
    with FaultProxy("127.0.0.1", port, cut_produce_every=4, max_cuts=40) as proxy:
        with BrokerProcess({"producer.state.mode": mode}, port=port,
                           advertise=("127.0.0.1", proxy.port)) as broker:
            bootstrap = f"127.0.0.1:{proxy.port}"
            topic = f"cuts-{mode}-{unique}"
            create_topics(bootstrap, topic)
            with Producer({"bootstrap.servers": bootstrap, "linger.ms": 2, "batch.size": 4096,
                           "retry.backoff.ms": 10}) as p:
                futures = [p.send(topic, f"{i:06d}".encode(), key=f"k{i % 31}".encode())
                           for i in range(20000)]
                assert p.flush(120) == 0
                errors = [f.exception(0) for f in futures]
            assert proxy.cuts > 0
            assert errors.count(None) == 20000, {repr(e) for e in errors if e}
            stored = read_topic(broker.bootstrap, topic)
            values = _values(stored)
            assert len(values) == len(set(values)) == 20000
            for recs in stored.values():
                last: dict[bytes, int] = {}
                for r in recs:
                    assert last.get(r.key, -1) < int(r.value)
                    last[r.key] = int(r.value)


def test_produce_and_read_back_against_tansu(unique):
    requires.tansu()
    from confluent_kafka import Consumer, TopicPartition

    with TansuProcess() as tansu:
        topic = f"tansu-{unique}"
        create_topics(tansu.bootstrap, topic)
        with Producer({"bootstrap.servers": tansu.bootstrap}) as p:
            futures = [p.send(topic, f"t{i}".encode(), key=str(i).encode()) for i in range(3000)]
            assert p.flush(30) == 0
        assert all(f.get(1).offset >= 0 for f in futures)
        c = Consumer({"bootstrap.servers": tansu.bootstrap, "group.id": f"g-{unique}"})
        c.assign([TopicPartition(topic, i, 0) for i in range(3)])
        got = set()
        deadline = time.time() + 20
        while len(got) < 3000 and time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                got.add(m.value())
        c.close()
        assert got == {f"t{i}".encode() for i in range(3000)}


def test_a_fenced_producer_fails_its_records_and_refuses_further_sends(broker, unique):
    """INVALID_PRODUCER_EPOCH is fatal (KIP-360): once another instance owns a
    newer epoch of the producer id, pending records fail and send() raises."""
    from kipper.client.blocking import BlockingConnection
    from kipper.client.producer_requests import init_producer_id, produce
    from kipper.protocol import records
    from kipper.protocol.errors import ErrorCode, KafkaError

    topic = f"fence-{unique}"
    create_topics(broker.bootstrap, topic, partitions=1)
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    try:
        p.send(topic, b"first").get(10)
        m = p.metrics()
        pid, epoch = m["producer_id"], m["producer_epoch"]
        with BlockingConnection("127.0.0.1", broker.port) as other:
            other.negotiate()
            bumped = init_producer_id(other, producer_id=pid, producer_epoch=epoch)
            assert bumped.producer_epoch == epoch + 1
            resp = produce(other, {(topic, 0): records.build_batch(
                [(None, b"usurper")], producer_id=pid, producer_epoch=epoch + 1, base_sequence=0)}, timeout_ms=5000)
            assert resp.responses[0].partition_responses[0].error_code == 0
        fut = p.send(topic, b"second")
        with pytest.raises(KafkaError) as info:
            fut.get(10)
        assert info.value.code == ErrorCode.INVALID_PRODUCER_EPOCH
        with pytest.raises(KafkaError):
            p.send(topic, b"third")
    finally:
        p.close(2)
