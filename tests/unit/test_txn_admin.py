"""The operator's view of producer state and transactions (DescribeProducers,
DescribeTransactions, ListTransactions), and ListOffsets MAX_TIMESTAMP as Kafka
3.8+ answers it after KAFKA-16310: the record carrying the largest timestamp."""

from __future__ import annotations

from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS, LIST_OFFSETS = 61, 65, 66, 2
TID = "app"


def open_transaction(b, tid=TID, partitions=(0,)):
    r = b.state.txn.init_producer_id(tid, 60_000, -1, -1, b.now)
    assert r.error == E.NONE
    assert b.state.txn.coordinator.add_partitions(tid, r.producer_id, r.producer_epoch,
                                                  [("t", p) for p in partitions], b.now) == E.NONE
    return r.producer_id, r.producer_epoch


def broker():
    b = InProcessBroker()
    b.state.topics.create("t", 2)
    return b


def test_describe_producers_shows_idempotent_and_transactional_producers():
    b = broker()
    assert b.produce("t", 0, [(None, b"a", b.now), (None, b"b", b.now)], producer_id=4000,
                     producer_epoch=2, base_sequence=0).error_code == 0
    pid, epoch = open_transaction(b)
    answer = b.produce("t", 0, [(None, b"t", b.now - 5_000)], producer_id=pid, producer_epoch=epoch,
                       base_sequence=0, transactional=True, transactional_id=TID)
    assert answer.error_code == 0
    r = b.call(DESCRIBE_PRODUCERS, 0, {"topics": [{"name": "t", "partition_indexes": [0, 1, 9]},
                                                  {"name": "nope", "partition_indexes": [0]}]})
    parts = {p.partition_index: p for p in r.topics[0].partitions}
    producers = {p.producer_id: p for p in parts[0].active_producers}
    assert (producers[4000].producer_epoch, producers[4000].last_sequence) == (2, 1)
    assert producers[4000].current_txn_start_offset == -1 and producers[4000].coordinator_epoch == -1
    assert producers[pid].current_txn_start_offset == answer.base_offset
    # as Kafka's ProducerStateEntry: the last batch's max timestamp (not the append time), and
    # no coordinator epoch before the producer's first marker on the partition
    assert producers[pid].coordinator_epoch == -1 and producers[pid].last_timestamp == b.now - 5_000
    assert parts[1].active_producers == [] and parts[1].error_code == 0
    assert parts[9].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert r.topics[1].partitions[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def test_describe_producers_reports_the_coordinator_epoch_of_the_last_marker():
    b = broker()
    pid, epoch = open_transaction(b)
    assert b.produce("t", 0, [(None, b"t", b.now - 5_000)], producer_id=pid, producer_epoch=epoch,
                     base_sequence=0, transactional=True, transactional_id=TID).error_code == 0
    b.now += 1_000
    assert b.state.txn.write_markers(pid, epoch, True, 7, "t", 0, b.now) == E.NONE  # WriteTxnMarkers
    r = b.call(DESCRIBE_PRODUCERS, 0, {"topics": [{"name": "t", "partition_indexes": [0]}]})
    [producer] = r.topics[0].partitions[0].active_producers
    assert (producer.producer_id, producer.coordinator_epoch, producer.current_txn_start_offset) == (pid, 7, -1)
    assert producer.last_timestamp == b.now  # the marker's timestamp


def test_describe_transactions_reports_the_coordinators_state():
    b = broker()
    pid, epoch = open_transaction(b, partitions=(1, 0))
    r = b.call(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [TID, "unknown"]})
    known, unknown = r.transaction_states
    assert (known.error_code, known.transaction_state, known.producer_id, known.producer_epoch) == (
        0, "Ongoing", pid, epoch)
    assert known.transaction_timeout_ms == 60_000 and known.transaction_start_time_ms == b.now
    assert [(t.topic, t.partitions) for t in known.topics] == [("t", [0, 1])]
    assert unknown.error_code == E.TRANSACTIONAL_ID_NOT_FOUND


def test_list_transactions_filters_by_state_producer_duration_and_pattern():
    b = broker()
    pid, _ = open_transaction(b, "orders-1")
    b.state.txn.init_producer_id("orders-2", 60_000, -1, -1, b.now)  # Empty
    b.state.txn.init_producer_id("billing", 60_000, -1, -1, b.now)
    b.now += 10_000

    def listed(version=2, **body):
        full = {"state_filters": [], "producer_id_filters": [], "duration_filter": -1,
                "transactional_id_pattern": None, **body}
        r = b.call(LIST_TRANSACTIONS, version, full)
        return r, sorted((t.transactional_id, t.transaction_state) for t in r.transaction_states)

    assert listed()[1] == [("billing", "Empty"), ("orders-1", "Ongoing"), ("orders-2", "Empty")]
    r, found = listed(state_filters=["Ongoing", "Nonsense"])
    assert found == [("orders-1", "Ongoing")] and r.unknown_state_filters == ["Nonsense"]
    assert listed(producer_id_filters=[pid])[1] == [("orders-1", "Ongoing")]
    assert listed(transactional_id_pattern="orders-.*")[1] == [("orders-1", "Ongoing"), ("orders-2", "Empty")]
    assert listed(state_filters=["Ongoing"], duration_filter=5_000)[1] == [("orders-1", "Ongoing")]
    assert listed(state_filters=["Ongoing"], duration_filter=20_000)[1] == []
    assert listed(transactional_id_pattern="(")[0].error_code == E.INVALID_REGULAR_EXPRESSION


def test_max_timestamp_is_the_record_that_carries_it_not_the_last_of_its_batch():
    b = broker()
    t0 = b.now - 1000
    b.produce("t", 0, [(None, b"a", t0), (None, b"b", t0 + 900), (None, b"c", t0 + 100)])
    b.produce("t", 0, [(None, b"d", t0 + 900), (None, b"e", t0 + 5)])  # a tie comes later
    body = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                     "timestamp": -3}]}]}
    p = b.call(LIST_OFFSETS, 7, body).topics[0].partitions[0]
    assert (p.error_code, p.offset, p.timestamp) == (0, 1, t0 + 900)


def test_max_timestamp_of_a_log_append_time_topic_is_the_first_record_of_the_newest_batch():
    b = InProcessBroker()
    b.state.topics.create("lat", 1, configs={"message.timestamp.type": "LogAppendTime"})
    b.produce("lat", 0, [(None, b"a", 1), (None, b"b", 2)])
    b.now += 10
    b.produce("lat", 0, [(None, b"c", 1), (None, b"d", 2), (None, b"e", 3)])
    body = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "lat", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                       "timestamp": -3}]}]}
    p = b.call(LIST_OFFSETS, 7, body).topics[0].partitions[0]
    assert (p.offset, p.timestamp) == (2, b.now)
