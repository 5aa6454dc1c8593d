"""Producer state on a running broker: InitProducerId (KIP-360), DeleteRecords
and retention that keep producer state (prolonged retention), and expiry."""

from __future__ import annotations

import time


from kipper.client import admin as builders
from kipper.client.blocking import BlockingConnection
from kipper.client.consumer_requests import list_offsets
from kipper.client.producer_requests import init_producer_id
from kipper.client.producer_requests import produce as produce_request
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from tests.support.broker import BrokerProcess


def create(conn, topic: str, partitions: int = 1, configs: dict | None = None) -> None:
    body = builders.create_topics(conn, [builders.NewTopic(topic, partitions, 1, configs or {})], timeout_ms=5000)
    assert body.topics[0].error_code == 0, body.topics[0]


def init_pid(conn, pid: int = -1, epoch: int = -1, version: int = 4):
    return init_producer_id(conn, producer_id=pid, producer_epoch=epoch, version=version)


def produce(conn, topic: str, batch: bytes, partition: int = 0):
    body = produce_request(conn, {(topic, partition): batch}, timeout_ms=5000)
    return body.responses[0].partition_responses[0]


def idem_batch(pid: int, epoch: int, seq: int, n: int = 5, tag: str = "v") -> bytes:
    return records.build_batch([(None, f"{tag}{seq + i}".encode()) for i in range(n)],
                               producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def delete_records(conn, topic: str, offset: int, partition: int = 0):
    return builders.delete_records(conn, {(topic, partition): offset}, timeout_ms=5000).topics[0].partitions[0]


def list_offset(conn, topic: str, timestamp: int, partition: int = 0) -> int:
    return list_offsets(conn, {(topic, partition): timestamp}).topics[0].partitions[0].offset


def test_init_producer_id_bumps_the_epoch_and_fences_the_old_one(conn, unique):
    topic = f"bump-{unique}"
    create(conn, topic)
    first = init_pid(conn)
    assert (first.error_code, first.producer_epoch) == (0, 0)
    assert first.max_in_flight_sequence_number_per_connection == 10_000_000
    assert produce(conn, topic, idem_batch(first.producer_id, 0, 0)).error_code == 0
    bumped = init_pid(conn, first.producer_id, 0)
    assert (bumped.error_code, bumped.producer_id, bumped.producer_epoch) == (0, first.producer_id, 1)
    # as in Kafka, a partition learns of the new epoch from the first batch that carries it
    assert produce(conn, topic, idem_batch(first.producer_id, 1, 0)).error_code == 0
    assert produce(conn, topic, idem_batch(first.producer_id, 0, 5)).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert init_pid(conn, first.producer_id, 0).error_code == 0, "a retried bump gets the same answer"
    assert init_pid(conn, first.producer_id, 5).error_code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_init_producer_id_with_one_of_id_and_epoch_unset_is_invalid_request(conn):
    assert init_pid(conn, 1234, -1).error_code == ErrorCode.INVALID_REQUEST


def test_init_producer_id_v0_as_aiokafka_sends_it(conn):
    body = init_producer_id(conn, transaction_timeout_ms=60000, version=0)
    assert body.error_code == 0 and body.producer_id >= 0 and body.producer_epoch == 0


def test_transactional_id_gets_its_id_from_the_transaction_coordinator(conn):
    # tests/integration/test_txn_broker.py covers transactions themselves
    body = init_producer_id(conn, "tx-1", transaction_timeout_ms=60000, version=3)
    assert body.error_code == 0 and body.producer_id >= 0 and body.producer_epoch == 0


def test_producer_state_survives_delete_records(conn, unique):
    topic = f"dr-{unique}"
    create(conn, topic)
    pid = init_pid(conn).producer_id
    for seq in range(0, 20, 5):
        assert produce(conn, topic, idem_batch(pid, 0, seq)).error_code == 0
    gone = delete_records(conn, topic, -1)  # up to the high watermark
    assert (gone.error_code, gone.low_watermark) == (0, 20)
    assert list_offset(conn, topic, -2) == 20
    retry = produce(conn, topic, idem_batch(pid, 0, 15))
    assert (retry.error_code, retry.base_offset) == (0, 15), "the latest batch's retry is still recognised"
    assert produce(conn, topic, idem_batch(pid, 0, 20)).error_code == 0, "the producer simply continues"
    assert list_offset(conn, topic, -1) == 25


def test_delete_records_beyond_the_high_watermark_is_out_of_range(conn, unique):
    topic = f"dr-oor-{unique}"
    create(conn, topic)
    produce(conn, topic, records.build_batch([(None, b"x")]))
    assert delete_records(conn, topic, 5).error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_kafka_python_admin_delete_records_moves_the_log_start(broker, unique):
    from kafka import KafkaAdminClient, KafkaProducer, TopicPartition

    topic = f"dr-kp-{unique}"
    p = KafkaProducer(bootstrap_servers=broker.bootstrap)
    for i in range(10):
        p.send(topic, f"{i}".encode(), partition=0)
    p.flush()
    p.close()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    result = admin.delete_records({TopicPartition(topic, 0): 4})
    admin.close()
    assert list(result.values())[0]["low_watermark"] == 4


def test_time_and_size_retention_drop_old_batches_but_keep_producer_state(unique):
    overrides = {"log.retention.check.interval.ms": "100", "log.segment.bytes": "300"}  # a batch a segment
    with BrokerProcess(overrides) as broker:
        with BlockingConnection("127.0.0.1", broker.port) as conn:
            conn.negotiate()
            timed, sized = f"ret-time-{unique}", f"ret-size-{unique}"
            create(conn, timed, configs={"retention.ms": "200"})
            create(conn, sized, configs={"retention.bytes": "400"})
            pid = init_pid(conn).producer_id
            for seq in range(0, 25, 5):
                assert produce(conn, timed, idem_batch(pid, 0, seq)).error_code == 0
                assert produce(conn, sized, records.build_batch([(None, b"x" * 100)] * 2)).error_code == 0
            deadline = time.time() + 10
            while time.time() < deadline and (list_offset(conn, timed, -2) < 25 or list_offset(conn, sized, -2) == 0):
                time.sleep(0.1)
            assert list_offset(conn, timed, -2) == 25, "every segment ages out, the active one too (rolled, as Kafka)"
            assert 0 < list_offset(conn, sized, -2) < 10, "the oldest batches go once the partition is over 400 bytes"
            retry = produce(conn, timed, idem_batch(pid, 0, 20))
            assert (retry.error_code, retry.base_offset) == (0, 20)
            assert produce(conn, timed, idem_batch(pid, 0, 25)).error_code == 0


def test_producer_state_expires_after_producer_id_expiration_ms(unique):
    overrides = {"producer.id.expiration.ms": "300", "producer.id.expiration.check.interval.ms": "50"}
    with BrokerProcess(overrides) as broker:
        with BlockingConnection("127.0.0.1", broker.port) as conn:
            conn.negotiate()
            topic = f"exp-{unique}"
            create(conn, topic)
            pid = init_pid(conn).producer_id
            assert produce(conn, topic, idem_batch(pid, 0, 0)).error_code == 0
            assert produce(conn, topic, idem_batch(pid, 0, 0)).base_offset == 0  # dedup while alive
            time.sleep(1.0)
            # state gone: the producer resumes at any sequence (and a retry is no longer caught)
            assert produce(conn, topic, idem_batch(pid, 0, 500)).error_code == 0
            assert list_offset(conn, topic, -1) == 10
        broker.stop()
        assert "'expired': 1" in broker.log_text()
