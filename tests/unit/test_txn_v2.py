"""Transaction version 2 (KIP-890 part 2): EndTxn v5's epoch bump per transaction and its
retry table, the producer-id rotation at an exhausted epoch, partitions and groups added
by Produce v12 and TxnOffsetCommit v5, AddPartitionsToTxn v4+, and the aborts the
coordinator starts itself at the finalized transaction.version. Engines and whole
brokers with real frames, under a manual clock."""

from __future__ import annotations

import itertools

import pytest

from kipper.broker.txn import TransactionCoordinator, TxnSettings, TxnState
from kipper.broker.txn.coordinator import EPOCH_EXHAUSTED, TV2
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

S = TxnState
TID = "app"
INIT, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT, FETCH = 22, 24, 25, 26, 28, 1


def coordinator(server_tv=TV2) -> TransactionCoordinator:
    ids = itertools.count(1000)
    return TransactionCoordinator(TxnSettings(), lambda: next(ids), server_tv=lambda: server_tv)


def end(c, pid, epoch, committed=True, now=0):
    result = c.end_txn_v2(TID, pid, epoch, committed, now)
    if result.completion is not None:
        c.complete(result.completion, now)
        meta = c.transactions[TID]
        return result.error, meta.producer_id, meta.producer_epoch, result.completion
    return result.error, result.producer_id, result.producer_epoch, None


def test_each_transaction_ends_with_a_bump_and_the_markers_carry_the_new_epoch():
    c = coordinator()
    r = c.init_producer_id(TID, 60_000, -1, -1, 0)
    assert c.add_partitions(TID, r.producer_id, 0, [("t", 0)], 1, TV2) == E.NONE
    error, pid, epoch, completion = end(c, r.producer_id, 0)
    assert (error, pid, epoch) == (E.NONE, r.producer_id, 1)
    assert (completion.producer_epoch, completion.partitions) == (1, (("t", 0),))
    meta = c.transactions[TID]
    assert meta.state == S.COMPLETE_COMMIT and (meta.last_producer_id, meta.last_producer_epoch) == (pid, 0)
    assert c.add_partitions(TID, pid, 0, [("t", 0)], 2, TV2) == E.PRODUCER_FENCED  # the old epoch is gone


@pytest.mark.parametrize("state_result, committed, retry, expected", [
    # Kafka's table (TransactionCoordinator.endTransaction, transaction version 2)
    (None, False, True, E.PRODUCER_FENCED), (None, False, False, "bump"),
    (None, True, True, E.PRODUCER_FENCED), (None, True, False, E.INVALID_TXN_STATE),
    (False, False, True, "retry"), (False, False, False, "bump"),
    (False, True, True, E.INVALID_TXN_STATE), (False, True, False, E.INVALID_TXN_STATE),
    (True, False, True, E.INVALID_TXN_STATE), (True, False, False, "bump"),
    (True, True, True, "retry"), (True, True, False, E.INVALID_TXN_STATE),
])
def test_end_txn_v2_in_a_settled_state_follows_kafkas_table(state_result, committed, retry, expected):
    """state_result None: Empty; False: CompleteAbort; True: CompleteCommit."""
    c = coordinator()
    pid = c.init_producer_id(TID, 60_000, -1, -1, 0).producer_id
    epoch = 0
    if state_result is not None:
        c.add_partitions(TID, pid, 0, [("t", 0)], 0, TV2)
        _, pid, epoch, _ = end(c, pid, 0, state_result)
    asked = epoch - 1 if retry else epoch
    error, got_pid, got_epoch, completion = end(c, pid, asked, committed)
    if expected == "bump":
        assert (error, got_pid, got_epoch) == (E.NONE, pid, epoch + 1) and completion.partitions == ()
        assert c.transactions[TID].state == S.COMPLETE_ABORT
    elif expected == "retry":
        assert (error, got_pid, got_epoch, completion) == (E.NONE, pid, epoch, None)
    else:
        assert (error, got_pid, got_epoch) == (expected, -1, -1)


def test_an_exhausted_epoch_rotates_the_producer_id_and_a_retry_is_recognised():
    c = coordinator()
    pid = c.init_producer_id(TID, 60_000, -1, -1, 0).producer_id
    c.transactions[TID].producer_epoch = EPOCH_EXHAUSTED
    assert c.add_partitions(TID, pid, EPOCH_EXHAUSTED, [("t", 0)], 0, TV2) == E.NONE
    error, new_pid, epoch, completion = end(c, pid, EPOCH_EXHAUSTED)
    assert (error, epoch) == (E.NONE, 0) and new_pid != pid
    assert completion.producer_epoch == 32767 and completion.producer_id == pid  # the markers' pair
    assert c.by_producer_id(pid) is None and c.by_producer_id(new_pid) is c.transactions[TID]
    # the producer missed the answer and asks again with the old pair: the new pair again
    assert end(c, pid, EPOCH_EXHAUSTED)[:3] == (E.NONE, new_pid, 0)
    # seed 003: InitProducerId with the last pair (a retried bump) gets the current pair too
    r = c.init_producer_id(TID, 60_000, pid, EPOCH_EXHAUSTED, 1)
    assert (r.error, r.producer_id, r.producer_epoch) == (E.NONE, new_pid, 0)


def test_a_timed_out_transaction_is_aborted_with_one_bump_at_transaction_version_2():
    c = coordinator()
    pid = c.init_producer_id(TID, 1_000, -1, -1, 0).producer_id
    c.add_partitions(TID, pid, 0, [("t", 0)], 0, TV2)
    [completion] = c.tick(5_000)
    assert completion.producer_epoch == 1 and not completion.committed
    c.complete(completion, 5_000)
    # the late EndTxn of the timed-out producer: a retry of nothing it sent, as Kafka answers
    assert end(c, pid, 0, True)[0] == E.INVALID_TXN_STATE


def test_a_timed_out_transaction_at_transaction_version_1_is_fenced_as_before():
    c = coordinator(server_tv=0)
    pid = c.init_producer_id(TID, 1_000, -1, -1, 0).producer_id
    c.add_partitions(TID, pid, 0, [("t", 0)], 0)
    [completion] = c.tick(5_000)
    c.complete(completion, 5_000)
    assert (c.transactions[TID].last_producer_id, c.end_txn(TID, pid, 0, True, 6_000)[0]) == (-1, E.PRODUCER_FENCED)


# --- whole broker, real frames -------------------------------------------------------------

def _init(b, tid=TID):
    r = b.call(INIT, 5, {"transactional_id": tid, "transaction_timeout_ms": 60_000,
                         "producer_id": -1, "producer_epoch": -1})
    return r.producer_id, r.producer_epoch


def _produce_v12(b, pid, epoch, seq, value=b"v", partition=0, tid=TID):
    data = records.build_batch([(None, value, b.now)], producer_id=pid, producer_epoch=epoch,
                               base_sequence=seq, transactional=True)
    body = {"transactional_id": tid, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": partition, "records": data}]}]}
    return b.call(0, 12, body).responses[0].partition_responses[0]


def _end(b, pid, epoch, committed=True, version=5):
    return b.call(END_TXN, version, {"transactional_id": TID, "producer_id": pid, "producer_epoch": epoch,
                                     "committed": committed})


def _read_committed(b):
    """The values a read_committed consumer gets from t-0: data batches outside the aborted
    transactions the partition indexes."""
    plog = b.state.topics.partition("t", 0)
    aborted = plog.aborted_transactions(0, plog.high_watermark)
    out = []
    for batch in records.decode_all(b"".join(d for _, d in plog.batches())):
        h = batch.header
        if h.is_control or any(a["producer_id"] == h.producer_id and a["first_offset"] <= h.base_offset
                               and _ends_after(plog, a, h.base_offset) for a in aborted):
            continue
        out += [r.value for r in batch.records]
    return out


def _ends_after(plog, aborted, offset):
    marker = next(bt for bt in records.decode_all(b"".join(d for _, d in plog.batches()))
                  if bt.header.is_control and bt.header.producer_id == aborted["producer_id"]
                  and bt.header.base_offset > aborted["first_offset"])
    return marker.header.base_offset > offset


def broker():
    b = InProcessBroker()
    b.state.topics.create("t", 2)
    return b


def test_two_transactions_through_produce_v12_and_end_txn_v5():
    b = broker()
    pid, epoch = _init(b)
    assert _produce_v12(b, pid, epoch, 0, b"one").error_code == 0  # adds t-0 on its own
    r = _end(b, pid, epoch)
    assert (r.error_code, r.producer_id, r.producer_epoch) == (0, pid, epoch + 1)
    assert _produce_v12(b, pid, epoch + 1, 0, b"two").error_code == 0  # the new epoch, sequence 0
    r = _end(b, pid, epoch + 1, committed=False)
    assert (r.error_code, r.producer_epoch) == (0, epoch + 2)
    assert _read_committed(b) == [b"one"]


def test_a_produce_with_the_epoch_before_the_bump_is_refused():
    b = broker()
    pid, epoch = _init(b)
    _produce_v12(b, pid, epoch, 0)
    _end(b, pid, epoch)
    assert _produce_v12(b, pid, epoch, 1).error_code == E.INVALID_PRODUCER_EPOCH


def test_end_txn_v4_keeps_the_classic_protocol_beside_v5():
    b = broker()
    pid, epoch = _init(b)
    assert b.call(ADD_PARTITIONS, 3, {"v3_and_below_transactional_id": TID, "v3_and_below_producer_id": pid,
                                      "v3_and_below_producer_epoch": epoch,
                                      "v3_and_below_topics": [{"name": "t", "partitions": [0]}]}
                  ).results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
    r = _end(b, pid, epoch, version=4)
    assert r.error_code == 0 and b.state.txn.transaction(TID).producer_epoch == epoch  # no bump


def test_txn_offset_commit_v5_adds_the_group_and_v4_still_needs_add_offsets():
    b = broker()
    pid, epoch = _init(b)
    _produce_v12(b, pid, epoch, 0)

    def commit(version):
        return b.call(TXN_OFFSET_COMMIT, version, {
            "transactional_id": TID, "group_id": "g", "producer_id": pid, "producer_epoch": epoch,
            "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 7,
                                                     "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
        ).topics[0].partitions[0].error_code
    assert commit(4) == E.TRANSACTION_ABORTABLE
    assert commit(5) == E.NONE
    assert b.state.txn.transaction(TID).groups == {"g"}
    _end(b, pid, epoch)
    fetched = b.call(9, 7, {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0]}],
                            "require_stable": True})
    assert fetched.topics[0].partitions[0].committed_offset == 7


def test_txn_offset_commit_v6_names_topics_by_id():
    b = broker()
    pid, epoch = _init(b)
    topic_id = b.state.topics.get("t").topic_id
    import uuid
    r = b.call(TXN_OFFSET_COMMIT, 6, {
        "transactional_id": TID, "group_id": "g", "producer_id": pid, "producer_epoch": epoch,
        "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                          "committed_leader_epoch": -1, "committed_metadata": ""}]},
                   {"topic_id": uuid.uuid4(), "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                              "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    assert [(t.topic_id, t.partitions[0].error_code) for t in r.topics][0] == (topic_id, 0)
    assert r.topics[1].partitions[0].error_code == E.UNKNOWN_TOPIC_ID


def test_add_partitions_v4_verifies_and_adds_for_brokers():
    b = broker()
    pid, epoch = _init(b)

    def call(verify_only, partitions=(0,), topic="t"):
        r = b.call(ADD_PARTITIONS, 5, {"transactions": [{
            "transactional_id": TID, "producer_id": pid, "producer_epoch": epoch, "verify_only": verify_only,
            "topics": [{"name": topic, "partitions": list(partitions)}]}]})
        assert r.error_code == 0
        return {(t.name, p.partition_index): p.partition_error_code
                for t in r.results_by_transaction[0].topic_results for p in t.results_by_partition}
    assert call(True) == {("t", 0): E.TRANSACTION_ABORTABLE}
    assert call(False) == {("t", 0): 0}
    assert call(True, (0, 1)) == {("t", 0): 0, ("t", 1): E.TRANSACTION_ABORTABLE}
    assert call(False, (0, 9)) == {("t", 0): E.OPERATION_NOT_ATTEMPTED, ("t", 9): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert b.state.txn.transaction(TID).client_tv == TV2


def test_add_partitions_v4_needs_cluster_action():
    b = InProcessBroker(**{"authorizer.class.name": "standard", "allow.everyone.if.no.acl.found": "false"})
    r = b.call(ADD_PARTITIONS, 4, {"transactions": [{"transactional_id": TID, "producer_id": 1, "producer_epoch": 0,
                                                     "verify_only": True, "topics": []}]})
    assert (r.error_code, r.results_by_transaction) == (E.CLUSTER_AUTHORIZATION_FAILED, [])


def test_an_end_txn_while_the_markers_are_written_is_retried_not_fenced():
    """Kafka 4.x (KAFKA-18575): in PrepareCommit/PrepareAbort (a cluster's coordinator waiting
    for other brokers' markers) an EndTxn v5 of the ended transaction's epoch, or of the bumped
    one that the producer already goes on with, is CONCURRENT_TRANSACTIONS; an older one fenced."""
    c = coordinator()
    init = c.init_producer_id(TID, 60000, -1, -1, 0)
    pid, epoch = init.producer_id, init.producer_epoch
    assert c.add_partitions(TID, pid, epoch, [("t", 0)], 0, TV2) == E.NONE
    result = c.end_txn_v2(TID, pid, epoch, True, 0)  # prepared; its markers not written yet
    assert result.error == E.NONE and c.transactions[TID].state == S.PREPARE_COMMIT
    for request_epoch in (epoch, epoch + 1):
        for committed in (True, False):
            assert c.end_txn_v2(TID, pid, request_epoch, committed, 1).error == E.CONCURRENT_TRANSACTIONS
    c.complete(result.completion, 2)
    assert c.end_txn_v2(TID, pid, epoch + 1, False, 3).error == E.NONE  # then the empty abort goes through


def test_a_leader_maps_the_coordinators_answers_as_kafkas():
    """broker/txn/verification.py: Kafka's AddPartitionsToTxnManager and ReplicaManager (Produce)
    and its group coordinator (TxnOffsetCommit)."""
    from types import SimpleNamespace as NS

    from kipper.broker.txn import verification as v

    op = v.Operation
    assert [v.produce_operation(n) for n in (10, 11, 12)] == [op.DEFAULT_ERROR, op.GENERIC_ERROR_SUPPORTED,
                                                               op.ADD_PARTITION]
    assert [v.txn_offset_commit_operation(n) for n in (3, 4, 5)] == [op.DEFAULT_ERROR, op.GENERIC_ERROR_SUPPORTED,
                                                                      op.ADD_PARTITION]
    assert v.add_request("x", 7, 2, [("a", 0), ("a", 1), ("b", 0)], op.ADD_PARTITION)["transactions"] == [{
        "transactional_id": "x", "producer_id": 7, "producer_epoch": 2, "verify_only": False,
        "topics": [{"name": "a", "partitions": [0, 1]}, {"name": "b", "partitions": [0]}]}]
    tps = [("a", 0), ("a", 1)]

    def answer(*codes, top=0):
        return NS(error_code=top, results_by_transaction=[NS(topic_results=[NS(name="a", results_by_partition=[
            NS(partition_index=i, partition_error_code=int(c)) for i, c in enumerate(codes)])])])
    assert v.answered_errors(answer(E.NONE, E.TRANSACTION_ABORTABLE), tps, op.DEFAULT_ERROR) == {
        ("a", 1): E.INVALID_TXN_STATE}
    assert v.answered_errors(answer(E.PRODUCER_FENCED, E.TRANSACTION_ABORTABLE), tps, op.GENERIC_ERROR_SUPPORTED) == {
        ("a", 0): E.INVALID_PRODUCER_EPOCH, ("a", 1): E.TRANSACTION_ABORTABLE}
    assert v.answered_errors(answer(top=E.CLUSTER_AUTHORIZATION_FAILED), tps, op.ADD_PARTITION) == dict.fromkeys(
        tps, E.INVALID_TXN_STATE)
    assert v.answered_errors(E.NETWORK_EXCEPTION, tps, op.ADD_PARTITION) == dict.fromkeys(tps, E.NETWORK_EXCEPTION)
    assert v.answered_errors(None, tps, op.ADD_PARTITION) == {}  # no v4+ at the coordinator: not verified
    unable = "Unable to verify the partition has been added to the transaction. Underlying error: "
    for code in (E.NETWORK_EXCEPTION, E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR):
        assert v.produce_error(code, op.ADD_PARTITION) == (E.NOT_ENOUGH_REPLICAS, unable + code.name)
    assert v.produce_error(E.CONCURRENT_TRANSACTIONS, op.GENERIC_ERROR_SUPPORTED) == (
        E.NOT_ENOUGH_REPLICAS, unable + "CONCURRENT_TRANSACTIONS")
    assert v.produce_error(E.CONCURRENT_TRANSACTIONS, op.ADD_PARTITION) == (E.CONCURRENT_TRANSACTIONS, None)
    assert v.produce_error(E.INVALID_TXN_STATE, op.DEFAULT_ERROR) == (
        E.INVALID_TXN_STATE, "Partition was not added to the transaction")
    assert v.produce_error(E.INVALID_PRODUCER_EPOCH, op.ADD_PARTITION) == (E.INVALID_PRODUCER_EPOCH, None)
    assert [v.offset_commit_error(c) for c in (E.NETWORK_EXCEPTION, E.NOT_ENOUGH_REPLICAS, E.NOT_LEADER_OR_FOLLOWER,
                                               E.INVALID_PRODUCER_EPOCH)] == [
        E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR, E.INVALID_PRODUCER_EPOCH]


def test_a_verification_counts_a_group_as_its_offsets_partition_and_a_settled_transaction_as_empty():
    """What another broker's group coordinator asks at transaction version 1 (AddPartitionsToTxn v4+,
    verify only): the group added with AddOffsetsToTxn is its `__consumer_offsets` partition, as
    in Kafka; once the transaction ends nothing is in it."""
    from kipper.broker.groups.journal import partition_for

    b = broker()
    pid, epoch = _init(b)
    assert b.call(ADD_OFFSETS, 3, {"transactional_id": TID, "producer_id": pid, "producer_epoch": epoch,
                                   "group_id": "g"}).error_code == 0
    topic = b.state.topics.get("__consumer_offsets")  # (none yet: offsets.topic.num.partitions of them, as Kafka)
    offsets = ("__consumer_offsets", partition_for("g", len(topic.partitions) if topic
                                                   else b.state.config["offsets.topic.num.partitions"]))
    assert b.state.txn.verify_partitions(TID, pid, epoch, [offsets]) == {offsets: E.NONE}
    assert b.call(END_TXN, 3, {"transactional_id": TID, "producer_id": pid, "producer_epoch": epoch,
                               "committed": True}).error_code == 0
    assert b.state.txn.verify_partitions(TID, pid, epoch, [offsets]) == {offsets: E.TRANSACTION_ABORTABLE}


def test_a_produce_v12_adds_its_partition_with_verification_turned_off():
    """transaction.partition.verification.enable=false turns KIP-890 part 1 off, not part 2: a
    transaction-version-2 Produce still adds its partition (Kafka's ReplicaManager), or the
    transaction's markers would never reach it."""
    b = InProcessBroker(**{"transaction.partition.verification.enable": "false"})
    b.state.topics.create("t", 2)
    pid, epoch = _init(b)
    assert _produce_v12(b, pid, epoch, 0).error_code == 0
    assert b.state.txn.transaction(TID).partitions == {("t", 0)}
