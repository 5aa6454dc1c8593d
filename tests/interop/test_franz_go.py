"""franz-go (a Go client) with transaction version 2 against kipper (issue 38): its own
transactional ETL test (TestTxnEtl: a transactional producer, then consume-transform-produce
through GroupTransactSession, exactly once checked by its consumers) passes against kipper
as against Kafka 4.4, ending every transaction with EndTxn v5 and never sending
AddOffsetsToTxn or AddPartitionsToTxn (kipper's request metrics, per version); and our
tests/go/txnload commits transaction after transaction through a SIGKILL of a durable
kipper, every record of every transaction read back once (read_committed). (When the broker
dies under an EndTxn franz-go reports the commit as unconfirmed and aborts, as it documents;
txnload then reads back whether it had committed before sending it again.)"""

from __future__ import annotations

import subprocess
import time
from collections import Counter

import pytest

from kipper.client import admin
from kipper.client.blocking import connect_any
from tests.support import franz_go
from tests.support.broker import BrokerProcess, free_port
from tests.support.readback import read_committed
from tests.support.reference import Reference, metrics_url_of

pytestmark = pytest.mark.interop

franz_go.go_binary()


def _broker(tmp_path, **overrides) -> BrokerProcess:
    proc = BrokerProcess({"num.partitions": "3", "metrics.http.listener": "http://127.0.0.1:0",
                          **overrides}, port=free_port()).start()
    proc.reference = Reference("kipper", proc.bootstrap, "", "", metrics_url_of(proc))
    return proc


def _versions(requests: dict, api: str) -> set[int]:
    return {v for (name, v), n in requests.items() if name == api and n}


def test_franz_gos_transactional_etl_runs_transaction_version_2_against_kipper(tmp_path):
    broker = _broker(tmp_path)
    try:
        done = franz_go.run_test(broker.bootstrap, "^TestTxnEtl$")
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        requests = broker.reference.request_counts()
    finally:
        broker.stop()
    assert _versions(requests, "EndTxn") == {5}, requests
    assert not _versions(requests, "AddOffsetsToTxn") and not _versions(requests, "AddPartitionsToTxn"), requests
    assert min(_versions(requests, "TxnOffsetCommit")) >= 5 and min(_versions(requests, "Produce")) >= 12


def test_franz_gos_transactional_etl_against_kafka(kafka_reference):
    done = franz_go.run_test(kafka_reference.bootstrap, "^TestTxnEtl$")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


TRANSACTIONS, PER_TXN, KILL_AT = 1500, 10, 150


def test_franz_go_transactions_are_exactly_once_through_a_sigkill(tmp_path):
    program = franz_go.built_program("txnload")
    data = tmp_path / "data"
    broker = _broker(tmp_path, **{"log.dirs": str(data), "transaction.state.log.num.partitions": "1"})
    progress = tmp_path / "progress"
    try:
        with connect_any(broker.bootstrap) as conn:
            admin.create_topics(conn, [admin.NewTopic("franz-txn", 3, 1)])
        load = subprocess.Popen([str(program), broker.bootstrap, "franz-txn-id", "franz-txn", str(TRANSACTIONS),
                                 str(PER_TXN), str(progress)], stdout=subprocess.PIPE,
                                stderr=open(tmp_path / "txnload.err", "w"), text=True)

        def committed() -> int:
            try:
                return int(progress.read_text() or 0)
            except (OSError, ValueError):
                return 0
        deadline = time.monotonic() + 120
        while committed() < KILL_AT:
            assert load.poll() is None and time.monotonic() < deadline, (tmp_path / "txnload.err").read_text()[-3000:]
            time.sleep(0.01)
        broker.kill()
        killed_at = committed()
        time.sleep(1.0)
        broker.start(timeout=60)
        broker.reference.metrics_url = metrics_url_of(broker)
        out, _ = load.communicate(timeout=300)
        log = (tmp_path / "txnload.err").read_text()
        assert load.returncode == 0, log[-3000:]
        assert killed_at < TRANSACTIONS and out.startswith(f"committed {TRANSACTIONS} transactions"), (killed_at, out)
        got = Counter(r.value.decode() for rows in read_committed(broker.bootstrap, "franz-txn").values() for r in rows)
        assert len(got) == TRANSACTIONS * PER_TXN and set(got.values()) == {1}, log[-3000:]
        assert _versions(broker.reference.request_counts(), "EndTxn") == {5}  # since the restart
    finally:
        broker.stop()
