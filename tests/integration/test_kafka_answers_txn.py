"""Transactions as the conformance suite (tests/conformance, issue 29) found Apache Kafka 4.4
answering them, over a socket to a real kipper broker; these hold without Kafka."""

from __future__ import annotations


from kipper.client.admin import NewTopic, create_topics
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages import APIS

E = ErrorCode
PRODUCE, FETCH, OFFSET_FETCH, INIT_PRODUCER_ID = APIS[0], APIS[1], APIS[9], APIS[22]
ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = APIS[24], APIS[25], APIS[26], APIS[28]


def _begin(conn, unique):
    topic, txn = f"txn-{unique}", f"app-{unique}"
    assert create_topics(conn, [NewTopic(topic, 1, 1)], timeout_ms=5000).topics[0].error_code == 0
    r = conn.send_raw(INIT_PRODUCER_ID, 4, {"transactional_id": txn, "transaction_timeout_ms": 60000,
                                            "producer_id": -1, "producer_epoch": -1})
    assert r.error_code == 0
    return topic, txn, r.producer_id, r.producer_epoch


def _produce(conn, version, topic, txn, pid, epoch, seq):
    batch = records.build_batch([(b"k", b"v%d" % seq, 1_700_000_000_000)], producer_id=pid,
                                producer_epoch=epoch, base_sequence=seq, transactional=True)
    return conn.send_raw(PRODUCE, version, {"transactional_id": txn, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]}).responses[0].partition_responses[0]


def _read_committed(conn, topic):
    return conn.send_raw(FETCH, 11, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 1,
        "session_id": 0, "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
        "forgotten_topics_data": [], "rack_id": ""}).responses[0].partitions[0]


def _end(conn, txn, pid, epoch, committed):
    return conn.send_raw(END_TXN, 3, {"transactional_id": txn, "producer_id": pid, "producer_epoch": epoch,
                                      "committed": committed}).error_code


def test_txn_offset_commit_before_add_offsets_is_refused_and_stores_nothing(conn, unique):
    topic, txn, pid, epoch = _begin(conn, unique)
    group = f"g-{unique}"
    body = {"transactional_id": txn, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
            "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                "committed_leader_epoch": -1, "committed_metadata": ""}]}]}

    def commit(version):
        return conn.send_raw(TXN_OFFSET_COMMIT, version, body).topics[0].partitions[0].error_code

    # Kafka 4.4: TRANSACTION_ABORTABLE from v4 (KIP-890), INVALID_TXN_STATE before
    assert (commit(3), commit(4)) == (E.INVALID_TXN_STATE, E.TRANSACTION_ABORTABLE)
    fetched = conn.send_raw(OFFSET_FETCH, 7, {"group_id": group, "topics": [
        {"name": topic, "partition_indexes": [0]}], "require_stable": True}).topics[0].partitions[0]
    assert (fetched.error_code, fetched.committed_offset) == (0, -1)  # nothing stored, nothing pending
    assert conn.send_raw(ADD_OFFSETS, 3, {"transactional_id": txn, "producer_id": pid, "producer_epoch": epoch,
                                          "group_id": group}).error_code == 0
    assert commit(4) == E.NONE


def test_produce_v12_adds_its_partition_where_v11_is_transaction_abortable(conn, unique):
    topic, txn, pid, epoch = _begin(conn, unique)
    refused = _produce(conn, 11, topic, txn, pid, epoch, 0)
    assert (refused.error_code, refused.base_offset, refused.log_start_offset) == (E.TRANSACTION_ABORTABLE, -1, -1)
    assert _produce(conn, 12, topic, txn, pid, epoch, 0).error_code == E.NONE  # KIP-890 part 2: added
    assert _end(conn, txn, pid, epoch, True) == E.NONE
    read = _read_committed(conn, topic)
    assert (read.high_watermark, read.last_stable_offset) == (2, 2)  # the batch and its commit marker
    assert [r.value for b in records.decode_all(read.records) for r in b.records if not b.header.is_control] \
        == [b"v0"]


def test_a_fenced_producers_write_is_refused_and_its_transaction_shown_aborted(conn, unique):
    # kipper writes the fence's abort markers within InitProducerId; Kafka sends them just after
    # answering it, and answers the same once they are written (KAFKA_DIFFERENCES.md)
    topic, txn, pid, epoch = _begin(conn, unique)
    assert conn.send_raw(ADD_PARTITIONS, 3, {"v3_and_below_transactional_id": txn, "v3_and_below_producer_id": pid,
                                             "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [
                                                 {"name": topic, "partitions": [0]}]}) \
        .results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
    assert _produce(conn, 11, topic, txn, pid, epoch, 0).error_code == E.NONE
    again = conn.send_raw(INIT_PRODUCER_ID, 4, {"transactional_id": txn, "transaction_timeout_ms": 60000,
                                                "producer_id": -1, "producer_epoch": -1})
    assert again.error_code == E.CONCURRENT_TRANSACTIONS  # the client retries and gets the bumped epoch
    assert _produce(conn, 11, topic, txn, pid, epoch, 1).error_code == E.INVALID_PRODUCER_EPOCH
    assert _end(conn, txn, pid, epoch, True) == E.PRODUCER_FENCED
    read = _read_committed(conn, topic)
    assert [(a.producer_id, a.first_offset) for a in read.aborted_transactions] == [(pid, 0)]
    assert read.high_watermark == 2  # the fenced batch and the abort marker, nothing after
