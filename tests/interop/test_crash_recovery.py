"""A real SIGKILL of a broker with log.dirs under idempotent load from real clients.

The producer keeps sending while the broker is killed and started again on the
same port and directory; librdkafka and kafka-python reconnect and retry. Every
acknowledged record must be stored, none twice, and each key's records in the
order they were sent: the broker's producer state comes back from its snapshot
and the batches after it, so retries of batches that reached the log before the
kill are recognised as duplicates. A batch whose records do not parse (CRC intact),
put in the tail while the broker is down, is cut at recovery like a torn one.
"""

from __future__ import annotations

import threading
import time

import pytest

from kipper.client.blocking import connect_any
from tests.support.broker import BrokerProcess, free_port
from tests.support.readback import read_topic
from tests.support.topics import create_topics

pytestmark = pytest.mark.interop

N = 12_000
KEYS = 17
KILL_AFTER = 3_000


def _key(i: int) -> bytes:
    return f"k{i % KEYS}".encode()


def _value(i: int) -> bytes:
    return f"{i:08d}".encode()


@pytest.fixture
def durable_broker(tmp_path):
    broker = BrokerProcess({"log.dirs": str(tmp_path / "data"), "log.segment.bytes": "262144"},
                           port=free_port()).start()
    yield broker
    broker.stop()


def _kill_when(broker: BrokerProcess, acked, at: int, done: threading.Event) -> None:
    """SIGKILL once ``at`` records are acknowledged, then start again."""
    while acked() < at and not done.is_set():
        time.sleep(0.005)
    broker.kill()
    time.sleep(0.3)
    broker.start()
    done.set()


def _confluent(bootstrap: str, topic: str, broker: BrokerProcess) -> tuple[set[int], int]:
    from confluent_kafka import Producer

    acked: set[int] = set()
    failed = []

    def on_delivery(err, msg):
        if err:
            failed.append(err)
        else:
            acked.add(int(msg.value()))

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                  "linger.ms": 5, "batch.num.messages": 100, "message.timeout.ms": 120_000,
                  "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 200})
    killed = threading.Event()
    killer = threading.Thread(target=_kill_when, args=(broker, lambda: len(acked), KILL_AFTER, killed))
    killer.start()
    for i in range(N):
        while True:
            try:
                p.produce(topic, key=_key(i), value=_value(i), on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.01)
        p.poll(0.001 if i % 50 == 0 else 0)  # a steady pace: the kill lands mid-stream
    while killer.is_alive():  # callbacks (and so the acked count) need polls
        p.poll(0.05)
    assert killed.is_set()
    assert p.flush(120) == 0
    return acked, len(failed)


def _kafka_python(bootstrap: str, topic: str, broker: BrokerProcess) -> tuple[set[int], int]:
    from kafka import KafkaProducer

    acked: set[int] = set()
    failed = [0]
    p = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all",
                      linger_ms=2, batch_size=2048, retries=2**31 - 1, delivery_timeout_ms=120_000,
                      request_timeout_ms=5_000, reconnect_backoff_ms=50, reconnect_backoff_max_ms=200)
    killed = threading.Event()
    killer = threading.Thread(target=_kill_when, args=(broker, lambda: len(acked), KILL_AFTER, killed))
    killer.start()
    for i in range(N):
        f = p.send(topic, key=_key(i), value=_value(i))
        f.add_callback(lambda md, i=i: acked.add(i))
        f.add_errback(lambda exc: failed.__setitem__(0, failed[0] + 1))
        if i % 50 == 0:
            time.sleep(0.001)  # a steady pace: the kill lands mid-stream
    killer.join(60)
    assert killed.is_set()
    p.flush(120)
    p.close(30)
    return acked, failed[0]


@pytest.mark.parametrize("client", ["confluent_kafka", "kafka_python"])
def test_sigkill_under_idempotent_load_loses_nothing_and_duplicates_nothing(durable_broker, client,
                                                                             unique):
    broker = durable_broker
    topic = f"crash-{client}-{unique}"
    create_topics(broker.bootstrap, topic)
    produce = _confluent if client == "confluent_kafka" else _kafka_python
    acked, failed = produce(broker.bootstrap, topic, broker)
    assert broker.log_text().count("storage_opened") == 2, "the broker was not restarted"
    stored = read_topic(broker.bootstrap, topic)
    values = [int(r.value) for recs in stored.values() for r in recs]
    assert len(values) == len(set(values)), f"{len(values) - len(set(values))} records stored twice"
    missing = acked - set(values)
    assert not missing, f"{len(missing)} acknowledged records were lost, e.g. {sorted(missing)[:5]}"
    assert len(acked) + failed == N and failed == 0
    for recs in stored.values():
        last: dict[bytes, int] = {}
        for r in recs:
            assert last.get(r.key, -1) < int(r.value), f"key {r.key!r} out of order"
            last[r.key] = int(r.value)


# --- a corrupt record in the tail, CRC intact (issue 28) ------------------------------------------

def _corrupt_tails(data_dir, topic: str) -> int:
    """While the broker is down: after the last whole batch of each partition's active
    segment, a batch whose CRC is right but whose records do not parse, and a sound one
    after it (neither was ever acknowledged). How many partitions got one."""
    from kipper.protocol import batch as b
    from kipper.protocol import records
    from tests.support import malformed

    done = 0
    for part_dir in sorted(data_dir.glob(f"{topic}-*")):
        segment = max(part_dir.glob("*.log"))
        data = segment.read_bytes()
        pos, next_offset = 0, int(segment.stem)
        while len(data) - pos >= b.HEADER_SIZE and pos + b.read_header(data, pos).size <= len(data):
            h = b.read_header(data, pos)
            pos, next_offset = pos + h.size, h.last_offset + 1
        case = malformed.MALFORMED["key length beyond its record"]
        bad = malformed.batch(case.payload, case.count, base_offset=next_offset)
        after = records.build_batch([(b"x", b"-1")], base_offset=next_offset + case.count)
        with open(segment, "r+b") as f:
            f.truncate(pos)  # a torn batch (never acknowledged) would be cut anyway
            f.seek(pos)
            f.write(bad + after)
        done += 1
    return done


def test_a_corrupt_record_in_the_tail_is_cut_at_recovery_and_nothing_acknowledged_is_lost(tmp_path, unique):
    from confluent_kafka import Producer

    broker = BrokerProcess({"log.dirs": str(tmp_path / "data")}, port=free_port()).start()
    try:
        topic = f"tail-{unique}"
        create_topics(broker.bootstrap, topic)
        acked: set[int] = set()
        failed = []
        p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "acks": "all",
                      "linger.ms": 5, "batch.num.messages": 100, "message.timeout.ms": 120_000,
                      "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 200})
        corrupted = []

        def kill_corrupt_start():
            while len(acked) < KILL_AFTER:
                time.sleep(0.005)
            broker.kill()
            corrupted.append(_corrupt_tails(tmp_path / "data", topic))
            broker.start()

        killer = threading.Thread(target=kill_corrupt_start)
        killer.start()
        for i in range(N):
            while True:
                try:
                    p.produce(topic, key=_key(i), value=_value(i),
                              on_delivery=lambda err, msg: failed.append(err) if err else acked.add(int(msg.value())))
                    break
                except BufferError:
                    p.poll(0.01)
            p.poll(0.001 if i % 50 == 0 else 0)
        while killer.is_alive():
            p.poll(0.05)
        assert p.flush(120) == 0 and not failed
        assert corrupted == [3]
        log_text = broker.log_text()
        assert log_text.count("log_truncated") == 3 and log_text.count("does not parse") == 3, log_text[-3000:]
        stored = read_topic(broker.bootstrap, topic)
        values = [int(r.value) for recs in stored.values() for r in recs]
        assert -1 not in values  # the sound batch after the corrupt one went with it
        assert len(values) == len(set(values)) and acked == set(values) == set(range(N))
    finally:
        broker.stop()


# --- feature levels and client-metrics subscriptions (issue 38) -------------------------------------

def test_feature_levels_and_client_metrics_subscriptions_survive_a_sigkill_under_load(tmp_path, unique):
    """kafka-features and kafka-client-metrics change the metadata store; a SIGKILL while a
    producer writes loses neither, nor a record."""
    from kipper.protocol.messages import APIS

    broker = BrokerProcess({"log.dirs": str(tmp_path / "data"), "metrics.http.listener": "http://127.0.0.1:0"},
                           port=free_port()).start()
    try:
        with connect_any(broker.bootstrap) as conn:
            r = conn.send_raw(APIS[57], 2, {"timeout_ms": 60000, "validate_only": False, "feature_updates": [
                {"feature": "transaction.version", "max_version_level": 1, "upgrade_type": 2}]})
            assert r.error_code == 0
            r = conn.send_raw(APIS[44], 1, {"validate_only": False, "resources": [{
                "resource_type": 16, "resource_name": "producers", "configs": [
                    {"name": "metrics", "config_operation": 0, "value": "org.apache.kafka.producer."}]}]})
            assert r.responses[0].error_code == 0
        topic = f"crash-features-{unique}"
        create_topics(broker.bootstrap, topic)
        acked, failed = _confluent(broker.bootstrap, topic, broker)
        values = [int(r.value) for recs in read_topic(broker.bootstrap, topic).values() for r in recs]
        assert len(values) == len(set(values)) and acked <= set(values) and failed == 0
        with connect_any(broker.bootstrap) as conn:
            versions = conn.send_raw(APIS[18], 4, {"client_software_name": "t", "client_software_version": "1"})
            finalized = {f.name: f.max_version_level for f in versions.finalized_features}
            listed = conn.send_raw(APIS[74], 1, {"resource_types": [16]}).config_resources
        assert "transaction.version" in finalized and finalized["transaction.version"] == 1
        assert finalized["share.version"] == 2 and [c.resource_name for c in listed] == ["producers"]
    finally:
        broker.stop()
