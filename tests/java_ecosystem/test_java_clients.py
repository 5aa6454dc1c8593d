"""Kafka's Java clients against Kafka and kipper (issue 30): tests/java/kipper/ecosystem/
ClientsCheck.java runs the idempotent and the transactional KafkaProducer (a transaction
retried after a fencing epoch bump, seed 003), KafkaConsumer in classic and consumer-protocol
groups through a rebalance, read_committed, KafkaShareConsumer with ACCEPT/RELEASE/REJECT and
the Admin client, counting every record. It runs in each broker's tool JVM; both must print
the same lines, but for the differences KAFKA_DIFFERENCES.md lists."""

from __future__ import annotations


import pytest

from tests.java_ecosystem.tool_pair import listed_difference


def _lines(text: str) -> dict[str, str]:
    """Each line keyed by its label (what comes before the first ': ')."""
    out: dict[str, str] = {}
    counts: dict[str, int] = {}
    for line in text.splitlines():
        label, _, rest = line.partition(": ")
        n = counts[label] = counts.get(label, 0) + 1
        out[label if n == 1 else f"{label} #{n - 1}"] = rest
    return out


@pytest.fixture(scope="module")
def clients(tools, kipper_reference):
    before = kipper_reference.request_counts()
    results = tools.run("kipper.ecosystem.ClientsCheck", "{bootstrap}", tools.run_id, timeout=600)
    after = kipper_reference.request_counts()
    results["kipper requests"] = {key: n - before.get(key, 0) for key, n in after.items() if n > before.get(key, 0)}
    for name, result in results.items():
        if name == "kipper requests":
            continue
        (tools.log_dir / f"clients-check-{name}.out").write_text(result.stdout + "\n--- stderr\n" + result.stderr)
        assert result.exit == 0, f"ClientsCheck against {name} ended with {result.exit}:\n{result.stderr[-3000:]}"
    requests = results.pop("kipper requests")
    return {name: _lines(result.stdout) for name, result in results.items()}, results, requests


def test_every_check_ran_on_both_and_none_failed(clients):
    lines, results, _ = clients
    for name, got in lines.items():
        failed = [f"{k}: {v}" for k, v in got.items() if v.startswith("FAILED")]
        assert not failed, f"{name}: {failed}\n{results[name].stderr[-3000:]}"
    assert lines["kafka"].keys() == lines["kipper"].keys()


def _trace(results, label: str) -> str:
    """What a check traced on stderr about ``label`` (the group checks: "[classic group +ms, n read] ...")."""
    return "".join(f"\n{name} traced:\n" + "\n".join(line for line in result.stderr.splitlines()
                                                      if line.startswith(f"[{label} "))
                   for name, result in results.items())


def _same(clients, *labels):
    lines, results, _ = clients
    for label in labels:
        assert lines["kipper"][label] == lines["kafka"][label], \
            f"{label}\nKafka:  {lines['kafka'][label]}\nkipper: {lines['kipper'][label]}{_trace(results, label)}"
    return lines["kipper"]


def test_the_idempotent_producer_writes_each_record_once_in_order(clients):
    got = _same(clients, "idempotent")
    assert got["idempotent"] == "3000 acknowledged; read back: 3000 records, 3000 distinct, 0 duplicated, 0 out of order"


def test_the_transactional_producer_takes_transaction_version_2_as_against_kafka(clients):
    """Kafka 4.4's producer reads transaction.version=2 from ApiVersions: every transaction
    ends with EndTxn v5, partitions are added by Produce v12 and groups by TxnOffsetCommit v5
    (kipper's request metrics, per version, over the run of ClientsCheck)."""
    requests = clients[2]
    versions = lambda api: {v: n for (name, v), n in requests.items() if name == api}  # noqa: E731
    assert versions("EndTxn") and set(versions("EndTxn")) == {5}, requests
    assert not versions("AddPartitionsToTxn") and not versions("AddOffsetsToTxn"), requests
    assert min(versions("Produce")) >= 12 and set(versions("TxnOffsetCommit")) <= {5, 6}, requests


def test_transactions_and_read_committed(clients):
    got = _same(clients, "transactions", "transactions #1", "transactions #2")
    assert got["transactions"] == ("read_committed 400 records, 400 distinct, 0 duplicated, 0 out of order, "
                                   "of the aborted one 0")
    assert got["transactions #2"] == "the group's committed offset 500"


def test_a_transaction_retried_after_a_fencing_epoch_bump_commits_once(clients):
    got = _same(clients, "fenced")
    assert got["fenced"] == ("the first producer's commit fenced (ProducerFencedException); "
                             "read_committed 50 records, 50 distinct, 0 duplicated, 0 out of order")


def test_a_timed_out_transaction_fences_its_producer_and_a_new_one_retries_it(clients):
    # transaction version 2 on both: the coordinator's abort bumped the epoch, so the old
    # producer's EndTxn v5 reads as a retry of an abort and its commit is INVALID_TXN_STATE
    got = _same(clients, "timed out")
    assert got["timed out"] == ("commit InvalidTxnStateException, abort InvalidTxnStateException, a new producer "
                                "retries ok; read_committed 30 records, 30 distinct, 0 duplicated, 0 out of order")


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_group_rebalances_and_reads_every_record_once(clients, protocol):
    got = _same(clients, f"{protocol} group")
    assert got[f"{protocol} group"] == ("2000 records, 2000 distinct, 0 duplicated, 0 out of order; "
                                        "the first member gave up partitions: true, the second got some: true")


def test_share_consumer_accept_release_reject(clients):
    got = _same(clients, "share")
    assert got["share"] == ("30 records delivered; acknowledgements {ACCEPT=20, REJECT=10, RELEASE=10}; released and "
                            "delivered again with delivery count 2: 10; delivered other than once: 0; a later member gets 0")


# Admin results that differ, each by an entry of KAFKA_DIFFERENCES.md: label -> (entry, check)
ADMIN_DIFFERENCES = {
    "admin alterClientQuotas producer_ids_rate": (
        "producer-ids-rate-quota", lambda kafka, kipper: (kafka, kipper) == ("InvalidRequestException", "ok")),
}
# open elsewhere: while listed, these may differ
ADMIN_OPEN: dict[str, str] = {}


def test_admin_calls_answer_alike(clients):
    lines, _, _ = clients
    kafka, kipper = lines["kafka"], lines["kipper"]
    labels = [label for label in kafka if label.startswith("admin ")]
    assert len(labels) >= 45
    for label in labels:
        if label in ADMIN_DIFFERENCES:
            entry, check = ADMIN_DIFFERENCES[label]
            assert listed_difference(entry) is not None, entry
            assert check(kafka[label], kipper[label]), f"{label}\nKafka:  {kafka[label]}\nkipper: {kipper[label]}"
        elif label in ADMIN_OPEN and kafka[label] != kipper[label]:
            entry = listed_difference(ADMIN_OPEN[label])
            assert entry is not None and entry.kind == "open", f"{label}: {kafka[label]} / {kipper[label]}"
        elif label == "admin describeClientQuotas":  # once byte rates are stored: kipper adds seed 002's quota
            assert kipper[label] == kafka[label].replace("}]", ", producer_ids_rate=10.0}]").replace("{, ", "{")
        else:
            assert kipper[label] == kafka[label], f"{label}\nKafka:  {kafka[label]}\nkipper: {kipper[label]}"
