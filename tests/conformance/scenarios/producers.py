"""Idempotent sequences and transactions: duplicates, gaps, fenced epochs, unknown producers,
KIP-360 epoch bumps, and the transaction coordinator's transitions, allowed and refused."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import scenario


def _idempotent(run):
    t = k.create_topic(run)
    resp = k.init_producer_id(run, None)
    return t, resp.get("producer_id", -1), resp.get("producer_epoch", -1)


def _send(run, t, pid, epoch, seq, n=1, start=0, label="produce", txn=None):
    return k.produce(run, t, k.batch(n, start=start, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                                     transactional=txn is not None), transactional_id=txn, label=label)


@scenario("idempotence/in-order-and-exact-retry")
def _(run):
    t, pid, epoch = _idempotent(run)
    _send(run, t, pid, epoch, 0, 2)
    _send(run, t, pid, epoch, 2, 2, start=2)
    _send(run, t, pid, epoch, 2, 2, start=2, label="retry of the latest batch")
    k.list_offsets(run, t, -1)


@scenario("idempotence/retry-of-an-older-batch")
def _(run):  # seed 000: kipper answers DUPLICATE_SEQUENCE_NUMBER where Kafka finds the offsets
    t, pid, epoch = _idempotent(run)
    for i in range(3):
        _send(run, t, pid, epoch, 2 * i, 2, start=2 * i)
    _send(run, t, pid, epoch, 0, 2, label="retry of the first batch")
    k.list_offsets(run, t, -1)


@scenario("idempotence/sequence-gap")
def _(run):
    t, pid, epoch = _idempotent(run)
    _send(run, t, pid, epoch, 0, 2)
    _send(run, t, pid, epoch, 5, 1, label="gap")
    _send(run, t, pid, epoch, 2, 1, label="the right one after the gap")


@scenario("idempotence/first-batch-not-at-zero")
def _(run):
    t, pid, epoch = _idempotent(run)
    _send(run, t, pid, epoch, 7, 1, label="first sequence 7")


@scenario("idempotence/unknown-producer-id")
def _(run):
    t = k.create_topic(run)
    _send(run, t, 987654321, 0, 0, 1, label="never issued id, sequence 0")
    _send(run, t, 987654322, 0, 5, 1, label="never issued id, sequence 5")


@scenario("idempotence/fenced-epoch")
def _(run):
    t, pid, epoch = _idempotent(run)
    _send(run, t, pid, epoch, 0, 1)
    bumped = k.init_producer_id(run, None, producer_id=pid, epoch=epoch, label="KIP-360 bump")
    new_epoch = bumped.get("producer_epoch", -1)
    _send(run, t, pid, epoch, 1, 1, label="old epoch")
    _send(run, t, pid, new_epoch, 3, 1, label="new epoch, sequence not 0")
    _send(run, t, pid, new_epoch, 0, 1, label="new epoch at 0")


@scenario("idempotence/kip360-bump-errors")
def _(run):
    resp = k.init_producer_id(run, None)
    pid, epoch = resp.get("producer_id", -1), resp.get("producer_epoch", -1)
    k.init_producer_id(run, None, producer_id=pid, epoch=-1, label="id without epoch")
    k.init_producer_id(run, None, producer_id=-1, epoch=3, label="epoch without id")
    k.init_producer_id(run, None, producer_id=pid, epoch=epoch + 5, label="epoch from the future")
    k.init_producer_id(run, None, producer_id=pid, epoch=epoch, label="the current pair")
    k.init_producer_id(run, None, producer_id=pid, epoch=epoch, label="the same pair again (a retried bump)")


@scenario("idempotence/describe-producers")
def _(run):
    t, pid, epoch = _idempotent(run)
    _send(run, t, pid, epoch, 0, 3)
    _send(run, t, pid, epoch, 3, 2, start=3)
    run.call(k.DESCRIBE_PRODUCERS, k.top(k.DESCRIBE_PRODUCERS), {"topics": [
        {"name": t, "partition_indexes": [0]}, {"name": run.name("missing"), "partition_indexes": [0]}]})


CLASSIC_TXN_OFFSET_COMMIT = 4  # v5+ adds the group itself (transaction version 2: scenarios/features.py)


def _txn(run, suffix="txn", timeout_ms=60000):
    t = k.create_topic(run)
    txn = run.name(suffix)
    resp = k.init_producer_id(run, txn, timeout_ms=timeout_ms)
    return t, txn, resp.get("producer_id", -1), resp.get("producer_epoch", -1)


def _wait_state(run, txn, state):
    run.poll(lambda: run.call(k.DESCRIBE_TRANSACTIONS, k.top(k.DESCRIBE_TRANSACTIONS), {"transactional_ids": [txn]},
                              record=False),
             lambda r: r.get("transaction_states", [{}])[0].get("transaction_state") == state)


def _describe(run, txn, label="describe transaction"):
    return run.call(k.DESCRIBE_TRANSACTIONS, k.top(k.DESCRIBE_TRANSACTIONS), {"transactional_ids": [txn]}, label=label)


@scenario("txn/commit")
def _(run):
    t, txn, pid, epoch = _txn(run)
    _describe(run, txn, "empty")
    k.add_partitions(run, txn, pid, epoch, t)
    _describe(run, txn, "ongoing")
    _send(run, t, pid, epoch, 0, 3, txn=txn)
    k.list_offsets(run, t, -1, isolation=1, label="LSO while open")
    k.fetch(run, t, 0, isolation=1, label="read_committed while open")
    k.end_txn(run, txn, pid, epoch, True)
    run.poll(lambda: run.call(
        k.DESCRIBE_TRANSACTIONS, k.top(k.DESCRIBE_TRANSACTIONS), {"transactional_ids": [txn]}, record=False),
        lambda r: r.get("transaction_states", [{}])[0].get("transaction_state") == "CompleteCommit")
    _describe(run, txn, "complete")
    k.fetch(run, t, 0, isolation=1, label="read_committed after commit")
    k.list_offsets(run, t, -1, isolation=1, label="LSO after commit")


@scenario("txn/abort")
def _(run):
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    _send(run, t, pid, epoch, 0, 2, txn=txn)
    k.end_txn(run, txn, pid, epoch, False)
    run.poll(lambda: run.call(k.DESCRIBE_TRANSACTIONS, k.top(k.DESCRIBE_TRANSACTIONS), {"transactional_ids": [txn]},
                              record=False),
             lambda r: r.get("transaction_states", [{}])[0].get("transaction_state") == "CompleteAbort")
    _describe(run, txn, "complete abort")
    k.fetch(run, t, 0, isolation=1, label="read_committed after abort")
    k.fetch(run, t, 0, isolation=0, label="read_uncommitted after abort")


@scenario("txn/empty-commit")
def _(run):
    t, txn, pid, epoch = _txn(run)
    k.end_txn(run, txn, pid, epoch, True, label="commit with no partitions")
    k.end_txn(run, txn, pid, epoch, False, label="abort with no partitions")


@scenario("txn/commit-twice-then-abort")
def _(run):
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    _send(run, t, pid, epoch, 0, 1, txn=txn)
    k.end_txn(run, txn, pid, epoch, True)
    _wait_state(run, txn, "CompleteCommit")  # Kafka answers CONCURRENT_TRANSACTIONS until then
    k.end_txn(run, txn, pid, epoch, True, label="commit again (a retry)")
    k.end_txn(run, txn, pid, epoch, False, label="abort after commit")


@scenario("txn/wrong-epoch-and-id")
def _(run):
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch + 1, t, label="add partitions, epoch ahead")
    k.add_partitions(run, txn, pid + 1000, epoch, t, label="add partitions, wrong producer id")
    k.end_txn(run, txn, pid, epoch + 3, True, label="end, epoch ahead")
    k.end_txn(run, run.name("unknown"), pid, epoch, True, label="end, unknown transactional id")
    k.add_partitions(run, txn, pid, epoch, run.name("missing"), label="add an unknown topic")


@scenario("txn/fenced-by-a-new-producer")
def _(run):
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    _send(run, t, pid, epoch, 0, 1, txn=txn)
    again = k.init_producer_id(run, txn, label="a second producer with the same id")
    _send(run, t, pid, epoch, 1, 1, txn=txn, label="the fenced producer writes")
    k.end_txn(run, txn, pid, epoch, True, label="the fenced producer commits")
    new_epoch = again.get("producer_epoch", -1)
    k.fetch(run, t, 0, isolation=1, label="read_committed: the open transaction was aborted")
    k.end_txn(run, txn, again.get("producer_id", -1), new_epoch, True, label="the new producer commits nothing")



@scenario("txn/fenced-producer-writes-after-the-markers")
def _(run):  # txn/fenced-by-a-new-producer without the race: Kafka's abort markers are written first
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    _send(run, t, pid, epoch, 0, 1, txn=txn)
    k.init_producer_id(run, txn, label="a second producer with the same id")
    _wait_state(run, txn, "CompleteAbort")
    _send(run, t, pid, epoch, 1, 1, txn=txn, label="the fenced producer writes")
    k.end_txn(run, txn, pid, epoch, True, label="the fenced producer commits")
    k.fetch(run, t, 0, isolation=1, label="read_committed: the open transaction was aborted")

@scenario("txn/produce-without-add-partitions")
def _(run):
    t, txn, pid, epoch = _txn(run)
    _send(run, t, pid, epoch, 0, 1, txn=txn, label="transactional batch, partition not added")


@scenario("txn/timeout-too-large")
def _(run):
    k.init_producer_id(run, run.name("txn"), timeout_ms=3_600_000)
    k.init_producer_id(run, run.name("txn2"), timeout_ms=0, label="zero timeout")


@scenario("txn/offsets")
def _(run):
    t, txn, pid, epoch = _txn(run)
    run.call(k.TXN_OFFSET_COMMIT, CLASSIC_TXN_OFFSET_COMMIT, {
        "transactional_id": txn, "group_id": run.name("g"), "producer_id": pid, "producer_epoch": epoch,
        "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": t, "topic_id": k.NO_TOPIC_ID, "partitions": [
            {"partition_index": 0, "committed_offset": 3, "committed_leader_epoch": -1, "committed_metadata": ""}]}]},
        label="txn offset commit without AddOffsetsToTxn")
    run.call(k.ADD_OFFSETS_TO_TXN, k.top(k.ADD_OFFSETS_TO_TXN), {
        "transactional_id": txn, "producer_id": pid, "producer_epoch": epoch, "group_id": run.name("g")})
    run.call(k.TXN_OFFSET_COMMIT, CLASSIC_TXN_OFFSET_COMMIT, {
        "transactional_id": txn, "group_id": run.name("g"), "producer_id": pid, "producer_epoch": epoch,
        "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": t, "topic_id": k.NO_TOPIC_ID, "partitions": [
            {"partition_index": 0, "committed_offset": 3, "committed_leader_epoch": -1, "committed_metadata": ""}]}]},
        label="txn offset commit")
    k.offset_fetch(run, run.name("g"), t, require_stable=True, label="require_stable while pending")
    k.end_txn(run, txn, pid, epoch, False)
    k.offset_fetch(run, run.name("g"), t, label="after abort")


@scenario("txn/list-with-filters")
def _(run):
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    for label, body in (("state Ongoing", {"state_filters": ["Ongoing"], "producer_id_filters": []}),
                        ("unknown state", {"state_filters": ["Sleeping"], "producer_id_filters": []}),
                        ("by producer id", {"state_filters": [], "producer_id_filters": [pid]}),
                        ("by pattern", {"state_filters": [], "producer_id_filters": [],
                                        "transactional_id_pattern": run.name("t.*")})):
        run.call(k.LIST_TRANSACTIONS, k.top(k.LIST_TRANSACTIONS), {"duration_filter": -1,
                                                                   "transactional_id_pattern": None, **body},
                 label=label)
    k.end_txn(run, txn, pid, epoch, False)


@scenario("txn/describe-producers-open")
def _(run):
    t, txn, pid, epoch = _txn(run)
    k.produce(run, t, k.batch(2))
    k.add_partitions(run, txn, pid, epoch, t)
    _send(run, t, pid, epoch, 0, 2, txn=txn)
    run.call(k.DESCRIBE_PRODUCERS, k.top(k.DESCRIBE_PRODUCERS), {"topics": [{"name": t, "partition_indexes": [0]}]})
    k.end_txn(run, txn, pid, epoch, True)


@scenario("txn/aborted-transactions-in-fetch")
def _(run):
    t, txn, pid, epoch = _txn(run)
    k.produce(run, t, k.batch(1))
    k.add_partitions(run, txn, pid, epoch, t)
    _send(run, t, pid, epoch, 0, 2, start=1, txn=txn)
    k.end_txn(run, txn, pid, epoch, False)
    run.poll(lambda: run.call(
        k.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 1, "topics": [
            {"name": t, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]},
        record=False), lambda r: r["topics"][0]["partitions"][0].get("offset") == 4)
    k.produce(run, t, k.batch(1, start=3))
    k.fetch(run, t, 0, isolation=1, label="read_committed over an aborted transaction")
    k.fetch(run, t, 0, isolation=1, version=4, label="read_committed at v4")



@scenario("txn/produce-adds-partition-from-v12")
def _(run):  # (v10 and older get INVALID_TXN_STATE, but not reliably from Kafka: it batches the
    # verifications of concurrent producers and maps the batch's errors for its first request's
    # version; tests/integration/test_kafka_answers_txn.py holds kipper to them)
    t, txn, pid, epoch = _txn(run)
    k.produce(run, t, k.batch(1, producer_id=pid, producer_epoch=epoch, base_sequence=0, transactional=True),
              transactional_id=txn, version=11, label="partition not added, Produce v11")
    _describe(run, txn, "nothing added")
    k.produce(run, t, k.batch(1, producer_id=pid, producer_epoch=epoch + 1, base_sequence=0, transactional=True),
              transactional_id=txn, version=12, label="Produce v12, epoch ahead")
    k.produce(run, t, k.batch(1, producer_id=pid, producer_epoch=epoch, base_sequence=0, transactional=True),
              transactional_id=None, version=12, label="Produce v12, no transactional id")
    k.produce(run, t, k.batch(1, producer_id=pid, producer_epoch=epoch, base_sequence=0, transactional=True),
              transactional_id=txn, version=12, label="Produce v12 adds the partition")
    _describe(run, txn, "after the implicit add")
    k.end_txn(run, txn, pid, epoch, True)
    _wait_state(run, txn, "CompleteCommit")
    k.fetch(run, t, 0, isolation=1, label="read_committed after commit")


@scenario("txn/init-again-after-a-commit-has-no-start-time")
def _(run):  # (found by kafka-dump-log's --transaction-log-decoder: kipper's Empty kept the
    # last transaction's start; tests/java_ecosystem/test_tools_dump_log.py)
    t, txn, pid, epoch = _txn(run)
    k.add_partitions(run, txn, pid, epoch, t)
    k.produce(run, t, k.batch(1, producer_id=pid, producer_epoch=epoch, base_sequence=0, transactional=True),
              transactional_id=txn)
    k.end_txn(run, txn, pid, epoch, True)
    _wait_state(run, txn, "CompleteCommit")
    k.init_producer_id(run, txn, label="the producer starts again: its epoch bumped, Empty")
    _describe(run, txn, "Empty again")
