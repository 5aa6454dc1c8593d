"""Transactions on a running broker, driven request by request (the transaction
APIs as raw bodies, the rest through the client's builders): KIP-890 produce
verification, LSO and aborted transactions in Fetch, ListOffsets read_committed,
TxnOffsetCommit staging, fencing through markers, timeouts, version mapping."""

from __future__ import annotations

import time

import pytest

from kipper.client import consumer_requests, producer_requests
from kipper.client.admin import NewTopic, create_topics
from kipper.client.consumer_requests import LATEST_TIMESTAMP, READ_COMMITTED, READ_UNCOMMITTED
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode
from tests.support.broker import make_broker

E = ErrorCode


@pytest.fixture(scope="module")
def broker():
    """The module's broker (tests/integration/conftest.py's ``conn`` connects to it), with a quick
    sweep of timed-out transactions."""
    with make_broker({"transaction.abort.timed.out.transaction.cleanup.interval.ms": "50",
                        "transaction.max.timeout.ms": "120000"}) as proc:
        yield proc


def create(conn, topic: str, partitions: int = 1) -> None:
    body = create_topics(conn, [NewTopic(topic, partitions, 1)], timeout_ms=5000)
    assert body.topics[0].error_code == 0


def init(conn, tid: str, timeout: int = 60000, pid: int = -1, epoch: int = -1, version: int = 4):
    return producer_requests.init_producer_id(conn, tid, transaction_timeout_ms=timeout, producer_id=pid,
                                              producer_epoch=epoch, version=version)


def init_ok(conn, tid: str, **kw) -> tuple[int, int]:
    for _ in range(20):
        body = init(conn, tid, **kw)
        if body.error_code != E.CONCURRENT_TRANSACTIONS:
            break
        time.sleep(0.05)
    assert body.error_code == 0, body
    return body.producer_id, body.producer_epoch


def add_partitions(conn, tid, pid, epoch, topic, partitions=(0,), version=3) -> list[int]:
    body = conn.request(24, {"v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
                             "v3_and_below_producer_epoch": epoch,
                             "v3_and_below_topics": [{"name": topic, "partitions": list(partitions)}]},
                        version=version)
    return [p.partition_error_code for t in body.results_by_topic_v3_and_below
            for p in t.results_by_partition]


def end_txn(conn, tid, pid, epoch, commit: bool, version: int = 3) -> int:
    return conn.request(26, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                             "committed": commit}, version=version).error_code


def produce(conn, topic, pid, epoch, seq, values, partition=0, transactional=True, tid=None):
    batch = records.build_batch([(None, v) for v in values], producer_id=pid, producer_epoch=epoch,
                                base_sequence=seq, transactional=transactional)
    body = producer_requests.produce(conn, {(topic, partition): batch}, timeout_ms=5000,
                                     transactional_id=tid if transactional else None)
    return body.responses[0].partition_responses[0]


def fetch(conn, topic, isolation, offset=0, partition=0):
    body = consumer_requests.fetch(conn, {(topic, partition): offset}, max_bytes=1 << 20,
                                   partition_max_bytes=1 << 20, isolation_level=isolation)
    return body.responses[0].partitions[0]


def latest(conn, topic, isolation, partition=0) -> int:
    body = consumer_requests.list_offsets(conn, {(topic, partition): LATEST_TIMESTAMP}, isolation_level=isolation)
    return body.topics[0].partitions[0].offset


def batches(part):
    return records.decode_all(part.records or b"")


# --- produce verification (KIP-890 part 1) -------------------------------------------------------

def test_transactional_batch_needs_its_partition_in_the_open_transaction(conn, unique):
    topic, tid = f"v-{unique}", f"tx-{unique}"
    create(conn, topic, 2)
    pid, epoch = init_ok(conn, tid)
    assert produce(conn, topic, pid, epoch, 0, [b"a"], tid=tid).error_code == E.INVALID_TXN_STATE
    assert add_partitions(conn, tid, pid, epoch, topic, [0]) == [0]
    assert produce(conn, topic, pid, epoch, 0, [b"a"], tid=tid).error_code == 0
    assert produce(conn, topic, pid, epoch, 0, [b"b"], partition=1, tid=tid).error_code == E.INVALID_TXN_STATE
    assert end_txn(conn, tid, pid, epoch, True) == 0
    # a late batch after the commit would dangle: refused
    assert produce(conn, topic, pid, epoch, 1, [b"c"], tid=tid).error_code == E.INVALID_TXN_STATE


def test_add_partitions_for_an_unknown_partition_adds_nothing(conn, unique):
    topic, tid = f"u-{unique}", f"tx-{unique}"
    create(conn, topic, 1)
    pid, epoch = init_ok(conn, tid)
    assert add_partitions(conn, tid, pid, epoch, topic, [0, 5]) == [E.OPERATION_NOT_ATTEMPTED,
                                                                    E.UNKNOWN_TOPIC_OR_PARTITION]
    assert produce(conn, topic, pid, epoch, 0, [b"a"], tid=tid).error_code == E.INVALID_TXN_STATE


# --- LSO, read_committed and the aborted transactions -----------------------------------------------

def test_read_committed_stops_at_the_open_transaction_until_it_commits(conn, unique):
    topic, tid = f"lso-{unique}", f"tx-{unique}"
    create(conn, topic)
    produce(conn, topic, -1, -1, -1, [b"plain0"], transactional=False)
    pid, epoch = init_ok(conn, tid)
    add_partitions(conn, tid, pid, epoch, topic)
    assert produce(conn, topic, pid, epoch, 0, [b"t1", b"t2"], tid=tid).base_offset == 1
    produce(conn, topic, -1, -1, -1, [b"plain3"], transactional=False)

    part = fetch(conn, topic, READ_COMMITTED)
    assert (part.high_watermark, part.last_stable_offset) == (4, 1)
    assert [r.value for bt in batches(part) for r in bt.records] == [b"plain0"]
    assert latest(conn, topic, READ_COMMITTED) == 1 and latest(conn, topic, READ_UNCOMMITTED) == 4
    assert fetch(conn, topic, READ_COMMITTED, offset=2).records in (None, b"")
    assert fetch(conn, topic, READ_UNCOMMITTED).last_stable_offset == 1

    assert end_txn(conn, tid, pid, epoch, True) == 0
    part = fetch(conn, topic, READ_COMMITTED)
    assert (part.high_watermark, part.last_stable_offset) == (5, 5)
    assert list(part.aborted_transactions) == []
    marker = batches(part)[-1]
    assert marker.header.is_control and marker.header.is_transactional
    assert (marker.header.producer_id, marker.header.producer_epoch, marker.header.base_offset) == (pid, epoch, 4)
    assert records.control_type(marker.records[0].key) == records.COMMIT
    assert marker.records[0].value == records.end_txn_marker(0)
    assert latest(conn, topic, READ_COMMITTED) == 5


def test_aborted_transaction_is_listed_for_read_committed_only(conn, unique):
    topic, tid = f"ab-{unique}", f"tx-{unique}"
    create(conn, topic)
    pid, epoch = init_ok(conn, tid)
    add_partitions(conn, tid, pid, epoch, topic)
    produce(conn, topic, pid, epoch, 0, [b"x1", b"x2"], tid=tid)
    assert end_txn(conn, tid, pid, epoch, False) == 0
    add_partitions(conn, tid, pid, epoch, topic)
    produce(conn, topic, pid, epoch, 2, [b"y1"], tid=tid)
    assert end_txn(conn, tid, pid, epoch, True) == 0

    part = fetch(conn, topic, READ_COMMITTED)
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(pid, 0)]
    assert [records.control_type(bt.records[0].key) for bt in batches(part) if bt.header.is_control] == [
        records.ABORT, records.COMMIT]
    assert list(fetch(conn, topic, READ_COMMITTED, offset=3).aborted_transactions) == []
    assert fetch(conn, topic, READ_UNCOMMITTED).aborted_transactions is None


# --- offsets in a transaction ---------------------------------------------------------------------

def offset_fetch(conn, group, topic, require_stable: bool):
    body = consumer_requests.offset_fetch(conn, group, {topic: [0]}, require_stable=require_stable, version=7)
    p = body.topics[0].partitions[0]
    return p.error_code, p.committed_offset


def offset_fetch_v8(conn, group, topic, require_stable: bool):
    body = consumer_requests.offset_fetch(conn, group, {topic: [0]}, require_stable=require_stable, version=8)
    p = body.groups[0].topics[0].partitions[0]
    return p.error_code, p.committed_offset


def txn_offset_commit(conn, tid, group, pid, epoch, topic, offset) -> int:
    body = conn.request(28, {"transactional_id": tid, "group_id": group, "producer_id": pid,
                             "producer_epoch": epoch, "topics": [{"name": topic, "partitions": [
                                 {"partition_index": 0, "committed_offset": offset,
                                  "committed_metadata": None}]}]}, version=3)
    return body.topics[0].partitions[0].error_code


def add_offsets(conn, tid, pid, epoch, group) -> int:
    return conn.request(25, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                             "group_id": group}, version=3).error_code


def test_txn_offset_commit_stays_pending_until_the_transaction_commits(conn, unique):
    topic, tid, group = f"o-{unique}", f"tx-{unique}", f"g-{unique}"
    create(conn, topic)
    pid, epoch = init_ok(conn, tid)
    assert txn_offset_commit(conn, tid, group, pid, epoch, topic, 1) == E.INVALID_TXN_STATE
    assert add_offsets(conn, tid, pid, epoch, group) == 0
    assert txn_offset_commit(conn, tid, group, pid, epoch, topic, 42) == 0
    assert offset_fetch(conn, group, topic, True) == (E.UNSTABLE_OFFSET_COMMIT, -1)
    assert offset_fetch_v8(conn, group, topic, True) == (E.UNSTABLE_OFFSET_COMMIT, -1)
    assert offset_fetch(conn, group, topic, False) == (0, -1)
    assert end_txn(conn, tid, pid, epoch, True) == 0
    assert offset_fetch(conn, group, topic, True) == (0, 42)

    assert add_offsets(conn, tid, pid, epoch, group) == 0
    assert txn_offset_commit(conn, tid, group, pid, epoch, topic, 99) == 0
    assert end_txn(conn, tid, pid, epoch, False) == 0
    assert offset_fetch(conn, group, topic, True) == (0, 42)


# --- fencing, versions, timeouts ----------------------------------------------------------------------

def test_new_instance_fences_the_old_one_in_the_coordinator_and_the_partition(conn, unique):
    topic, tid = f"f-{unique}", f"tx-{unique}"
    create(conn, topic)
    pid, epoch = init_ok(conn, tid)
    add_partitions(conn, tid, pid, epoch, topic)
    produce(conn, topic, pid, epoch, 0, [b"old"], tid=tid)
    first = init(conn, tid)
    assert first.error_code == E.CONCURRENT_TRANSACTIONS  # the open transaction is being aborted
    pid2, epoch2 = init_ok(conn, tid)
    assert (pid2, epoch2) == (pid, epoch + 2)
    # the ABORT marker carries epoch + 1 and fences the old epoch in the partition
    part = fetch(conn, topic, READ_COMMITTED)
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(pid, 0)]
    assert batches(part)[-1].header.producer_epoch == epoch + 1
    assert produce(conn, topic, pid, epoch, 1, [b"late"], tid=tid).error_code == E.INVALID_PRODUCER_EPOCH
    assert end_txn(conn, tid, pid, epoch, True, version=1) == E.INVALID_PRODUCER_EPOCH
    assert end_txn(conn, tid, pid, epoch, True, version=3) == E.PRODUCER_FENCED
    assert add_partitions(conn, tid, pid, epoch, topic, version=1) == [E.INVALID_PRODUCER_EPOCH]
    assert init(conn, tid, pid=pid, epoch=epoch, version=3).error_code == E.INVALID_PRODUCER_EPOCH
    assert init(conn, tid, pid=pid, epoch=epoch, version=4).error_code == E.PRODUCER_FENCED
    # the new instance starts its sequences at 0 in the new epoch
    add_partitions(conn, tid, pid2, epoch2, topic)
    assert produce(conn, topic, pid2, epoch2, 0, [b"new"], tid=tid).error_code == 0
    assert end_txn(conn, tid, pid2, epoch2, True) == 0


def test_kip_360_bump_with_the_current_pair_and_its_retry(conn, unique):
    tid = f"tx-{unique}"
    pid, epoch = init_ok(conn, tid)
    bumped = init(conn, tid, pid=pid, epoch=epoch)
    again = init(conn, tid, pid=pid, epoch=epoch)
    assert (bumped.error_code, bumped.producer_id, bumped.producer_epoch) == (0, pid, epoch + 1)
    assert (again.error_code, again.producer_id, again.producer_epoch) == (0, pid, epoch + 1)


def test_transaction_timeout_above_the_maximum_is_refused(conn, unique):
    assert init(conn, f"tx-{unique}", timeout=120001).error_code == E.INVALID_TRANSACTION_TIMEOUT


def test_transaction_open_past_its_timeout_is_aborted_by_the_broker(conn, unique):
    topic, tid = f"to-{unique}", f"tx-{unique}"
    create(conn, topic)
    pid, epoch = init_ok(conn, tid, timeout=300)
    add_partitions(conn, tid, pid, epoch, topic)
    produce(conn, topic, pid, epoch, 0, [b"doomed"], tid=tid)
    assert latest(conn, topic, READ_COMMITTED) == 0
    deadline = time.time() + 10
    while latest(conn, topic, READ_COMMITTED) == 0 and time.time() < deadline:
        time.sleep(0.05)
    part = fetch(conn, topic, READ_COMMITTED)
    assert part.last_stable_offset == part.high_watermark == 2
    assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(pid, 0)]
    assert end_txn(conn, tid, pid, epoch, True) == E.PRODUCER_FENCED


def test_write_txn_markers_appends_a_marker(conn, unique):
    topic = f"w-{unique}"
    create(conn, topic)
    body = conn.request(27, {"markers": [{"producer_id": 777, "producer_epoch": 3,
                                          "transaction_result": False, "coordinator_epoch": 5,
                                          "topics": [{"name": topic, "partition_indexes": [0, 9]}]}]},
                        version=1)
    # (in the order of Kafka's hash map of partitions, which hangs on the topic's name)
    codes = {p.partition_index: p.error_code for p in body.markers[0].topics[0].partitions}
    assert codes == {0: 0, 9: E.UNKNOWN_TOPIC_OR_PARTITION}
    [marker] = batches(fetch(conn, topic, READ_UNCOMMITTED))
    assert marker.header.producer_id == 777 and marker.records[0].value == records.end_txn_marker(5)
    assert records.control_type(marker.records[0].key) == records.ABORT


def test_transaction_apis_are_advertised_at_kafka_44s_versions(conn):
    """Transaction version 2 (EndTxn 5, TxnOffsetCommit 5-6) and the brokers' AddPartitionsToTxn
    4-5, as Kafka 4.4 advertises them."""
    versions = conn.negotiate()
    assert {k: versions[k] for k in (24, 25, 26, 27, 28)} == {
        24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 6)}
