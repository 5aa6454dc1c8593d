"""Kafka 4.4's transactional producer with transaction version 2 (EndTxn v5, an epoch bump per
transaction, partitions added by Produce v12, the group by TxnOffsetCommit v5) through a
SIGKILL of a durable kipper (issue 38): tests/java/kipper/ecosystem/TxnLoad.java commits
transaction after transaction while the broker is killed and started again on its log.dirs;
read_committed then holds every record of every committed transaction once, and the group's
offset is the number of transactions. The same program against Kafka (not killed) gives the
same outcome; kipper's request metrics show the producer used transaction version 2 only."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import offset_fetch
from tests.support.broker import BrokerProcess, free_port
from tests.support.java_programs import java_command
from tests.support.readback import read_committed
from tests.support.reference import Reference, metrics_url_of

TRANSACTIONS, PER_TXN, KILL_AT = 120, 20, 25


def _topic(bootstrap: str, name: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, 3, 1)]).values():
        future.result(30)


class Run:
    """TxnLoad against one broker."""

    def __init__(self, bootstrap: str, topic: str, workdir: Path, transactions: int):
        workdir.mkdir(parents=True, exist_ok=True)
        self.progress = workdir / "progress"
        self.log = workdir / "txnload.log"
        self.topic, self.group = topic, topic + "-group"
        self.proc = subprocess.Popen(
            java_command("kipper.ecosystem.TxnLoad", "clients") + [
                bootstrap, topic + "-txn", topic, self.group, str(transactions), str(PER_TXN), str(self.progress)],
            stdout=subprocess.PIPE, stderr=open(self.log, "w"), text=True)

    def committed(self) -> int:
        try:
            return int(self.progress.read_text() or 0)
        except (OSError, ValueError):
            return 0

    def finish(self, timeout: float) -> str:
        out, _ = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, f"TxnLoad ended with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}"
        return out.strip()


def _outcome(bootstrap: str, run: Run) -> str:
    got = Counter(r.value.decode() for rows in read_committed(bootstrap, run.topic).values() for r in rows)
    with connect_any(bootstrap) as conn:
        offsets = offset_fetch(conn, run.group, {run.topic: [0]}, require_stable=True)
    committed = offsets.groups[0].topics[0].partitions[0].committed_offset  # (v8+: per group)
    twice = sum(1 for n in got.values() if n > 1)
    return f"{len(got)} records, {sum(got.values()) - len(got)} duplicated ({twice} values); group offset {committed}"


@pytest.fixture(scope="module")
def durable_kipper(tmp_path_factory):
    data = tmp_path_factory.mktemp("txn-sigkill-kipper")
    proc = BrokerProcess({"log.dirs": str(data), "offsets.topic.num.partitions": "1",
                          "transaction.state.log.num.partitions": "1", "log.segment.bytes": "262144",
                          "metrics.http.listener": "http://127.0.0.1:0"}, port=free_port())
    proc.start()
    proc.reference = Reference("kipper", proc.bootstrap, "", "", metrics_url_of(proc))
    yield proc
    proc.stop()


def test_transactions_v2_are_exactly_once_through_a_sigkill_as_against_kafka(kafka_reference, durable_kipper,
                                                                             java_classes, tmp_path):
    topic = f"txn-v2-sigkill-{int(time.time())}"
    _topic(kafka_reference.bootstrap, topic)
    _topic(durable_kipper.bootstrap, topic)
    on_kafka = Run(kafka_reference.bootstrap, topic, tmp_path / "kafka", TRANSACTIONS)
    on_kipper = Run(durable_kipper.bootstrap, topic, tmp_path / "kipper", TRANSACTIONS)
    deadline = time.monotonic() + 120
    while on_kipper.committed() < KILL_AT:
        assert on_kipper.proc.poll() is None, on_kipper.log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"no progress:\n{on_kipper.log.read_text()[-3000:]}"
        time.sleep(0.05)
    durable_kipper.kill()
    killed_at = on_kipper.committed()
    time.sleep(1.0)
    durable_kipper.start(timeout=60)
    durable_kipper.reference.metrics_url = metrics_url_of(durable_kipper)
    summary = {"kafka": on_kafka.finish(300), "kipper": on_kipper.finish(300)}
    assert killed_at < TRANSACTIONS, "every transaction committed before the kill"
    for name, text in summary.items():
        assert text.startswith(f"committed {TRANSACTIONS} transactions"), (name, text)
    expected = f"{TRANSACTIONS * PER_TXN} records, 0 duplicated (0 values); group offset {TRANSACTIONS}"
    assert _outcome(kafka_reference.bootstrap, on_kafka) == expected
    assert _outcome(durable_kipper.bootstrap, on_kipper) == expected, on_kipper.log.read_text()[-3000:]
    # since the restart: the producer ended its transactions with EndTxn v5 only
    requests = durable_kipper.reference.request_counts()
    versions = {v for (api, v), n in requests.items() if api == "EndTxn" and n}
    assert versions == {5}, requests
    assert not any(api in ("AddPartitionsToTxn", "AddOffsetsToTxn") for api, _ in requests), requests
