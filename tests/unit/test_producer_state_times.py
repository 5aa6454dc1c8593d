"""The time a partition's producer state keeps for each producer is Kafka's BatchMetadata
timestamp: the last batch's max timestamp. A retry answered from producer state carries it
as log_append_time_ms, and expiry counts from it (Kafka's isProducerExpired), except while
the producer has a transaction open on the partition."""

from __future__ import annotations

import pytest

from kipper.broker.config import load
from kipper.broker.server import open_engines
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

PID, EPOCH = 4000, 0


def _broker(**overrides) -> InProcessBroker:
    b = InProcessBroker(**{"producer.id.expiration.ms": 10_000, **overrides})
    b.state.topics.create("t", 1)
    return b


def _send(b, ts: int, seq: int = 0, **batch):
    return b.produce("t", 0, [(None, b"v", ts)], producer_id=PID, producer_epoch=EPOCH,
                     base_sequence=seq, **batch)


def test_an_exact_retry_answers_with_the_stored_batchs_timestamp():
    b = _broker()
    first = _send(b, b.now - 3_000)
    assert (first.error_code, first.log_append_time_ms) == (0, -1)  # CreateTime: -1, as Kafka
    b.now += 1_000
    retry = _send(b, b.now - 4_000)  # same sequence: answered from producer state
    assert (retry.error_code, retry.base_offset) == (0, first.base_offset)
    assert retry.log_append_time_ms == b.now - 4_000  # the original batch's max timestamp


def test_an_exact_retry_on_a_log_append_time_topic_answers_the_original_append_time():
    b = InProcessBroker()
    b.state.topics.create("t", 1, configs={"message.timestamp.type": "LogAppendTime"})
    appended_at = b.now
    assert _send(b, 0).log_append_time_ms == appended_at
    b.now += 1_000
    retry = _send(b, 0)
    assert (retry.error_code, retry.base_offset, retry.log_append_time_ms) == (0, 0, appended_at)


def test_expiry_counts_from_the_last_batchs_timestamp_not_the_append_time():
    b = _broker()
    assert _send(b, b.now - 6_000).error_code == 0  # appended now, stamped 6 s ago
    expire = b.state.producer_states.expire
    assert expire(b.now + 3_999) == 0
    assert expire(b.now + 4_000) == 1  # 10 s after the batch's timestamp


def test_a_producer_with_an_open_transaction_does_not_expire():
    b = _broker()
    r = b.state.txn.init_producer_id("app", 600_000, -1, -1, b.now)
    assert b.state.txn.coordinator.add_partitions("app", r.producer_id, r.producer_epoch, [("t", 0)], b.now) == E.NONE
    assert b.produce("t", 0, [(None, b"v", b.now)], producer_id=r.producer_id, producer_epoch=r.producer_epoch,
                     base_sequence=0, transactional=True, transactional_id="app").error_code == 0
    assert b.state.producer_states.expire(b.now + 60_000) == 0
    b.now += 60_000
    assert b.state.txn.end_txn("app", r.producer_id, r.producer_epoch, True, b.now) == E.NONE
    assert b.state.producer_states.expire(b.now + 9_999) == 0  # the marker's time counts
    assert b.state.producer_states.expire(b.now + 10_000) == 1


@pytest.mark.parametrize("stop", ["close", "crash"])
def test_times_and_coordinator_epochs_survive_a_restart(tmp_path, stop):
    def engines():
        return open_engines(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path),
                                            "offsets.topic.num.partitions": "1",
                                            "transaction.state.log.num.partitions": "1"}),
                            clock=lambda: 1_000_000)

    first = engines()
    first.topics.create("t", 1)
    partition = first.topics.partition("t", 0)
    data = records.build_batch([(None, b"v", 400_000)], producer_id=PID, producer_epoch=EPOCH, base_sequence=0)
    partition.append(data, b.split_batches(data), 900_000)
    r = first.txn.init_producer_id("app", 60_000, -1, -1, 900_000)
    first.txn.coordinator.add_partitions("app", r.producer_id, r.producer_epoch, [("t", 0)], 900_000)
    data = records.build_batch([(None, b"t", 500_000)], producer_id=r.producer_id, producer_epoch=r.producer_epoch,
                               base_sequence=0, transactional=True)
    partition.append(data, b.split_batches(data), 900_000)
    assert first.txn.write_markers(r.producer_id, r.producer_epoch, True, 7, "t", 0, 950_000) == E.NONE
    before = sorted(partition.active_producers())
    assert before == sorted([(PID, EPOCH, 0, 400_000, -1, -1), (r.producer_id, r.producer_epoch, 0, 950_000, 7, -1)])
    if stop == "close":  # a snapshot as of the log end
        first.close()
    else:  # no snapshot: the batches and the marker are replayed
        first.storage.release()
    again = engines()
    assert sorted(again.topics.partition("t", 0).active_producers()) == before
