"""Idempotent producers at acks=all into topics of three replicas (min.insync.replicas=2) while
a broker is SIGKILLed and started again every few seconds (issue 39): Kafka's Java
KafkaProducer (tests/java/kipper/cluster/AckedProducer.java) and confluent-kafka, at once,
against a 3-broker kipper and a 3-broker Apache Kafka (scripts/kafka_cluster.py). On both,
every acknowledged record is read back exactly once, at the offset it was acknowledged at,
in order per partition, and every record sent is acknowledged. Bounded: a few thousand records
per producer over half a minute. The Kafka run (four JVMs restarted one after another: about
five minutes on a busy 2-core machine) is the comparison, run with KIPPER_KAFKA_CLUSTER=1.
And a transactional KafkaProducer (tests/java/kipper/ecosystem/TxnLoad.java) on a kipper
cluster at transaction version 2 (docs/CLUSTER.md)."""

from __future__ import annotations

import collections
import multiprocessing as mp
import os
import random
import subprocess
import threading
import time

import pytest

from kipper.testing import unique_name
from tests.support.java_programs import java_command

RECORDS, PAUSE_US = 3000, 8000  # about 25 s of records, in bursts of 50
SETTINGS = {"num.partitions": "3", "group.initial.rebalance.delay.ms": "0"}


def _confluent_producer(bootstrap: str, topic: str, n: int, pause_us: int, out) -> None:
    from confluent_kafka import Producer

    acked, failed = [], []

    def delivered(err, msg):
        (failed if err is not None else acked).append((msg.partition(), msg.offset(), msg.value().decode()))

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                  "message.timeout.ms": 300000, "topic.metadata.refresh.interval.ms": 1000, "log_level": 0})
    for i in range(n):
        p.produce(topic, key=str(i % 7), value=str(i), on_delivery=delivered)
        p.poll(0)
        if i % 50 == 49:
            time.sleep(pause_us * 50 / 1e6)
    p.flush(300)
    out.put((acked, len(failed)))


def _create(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 3, config={"min.insync.replicas": "2"})])[topic].result(120)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None and len(meta.partitions) == 3 and all(
                len(p.isrs) == 3 for p in meta.partitions.values()):
            return
        time.sleep(0.2)


def _read(bootstrap: str, topic: str, expected: int, committed: bool = False) -> dict[int, list]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique_name("read"), "enable.auto.commit": False,
                  "log_level": 0, "isolation.level": "read_committed" if committed else "read_uncommitted"})
    c.assign([TopicPartition(topic, p, 0) for p in range(3)])
    read: dict[int, list] = collections.defaultdict(list)
    deadline, quiet = time.monotonic() + 120, None
    while time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            read[m.partition()].append((m.offset(), m.value().decode()))
            quiet = None
        elif sum(map(len, read.values())) >= expected:
            quiet = quiet or time.monotonic()
            if time.monotonic() - quiet > 2:
                break
    c.close()
    return read


def _chaos(cluster, stop: threading.Event, kills: list) -> None:
    """SIGKILL a broker, start it again, a few seconds apart, until told to stop."""
    rng = random.Random(39)
    while not stop.wait(3.0):
        victim = rng.choice(sorted(cluster.brokers))
        cluster.kill(victim)
        kills.append(victim)
        time.sleep(1.0)
        cluster.start_broker(victim)


def _run(cluster, bootstrap: str, tmp_path) -> dict:
    java_topic, confluent_topic = unique_name("java"), unique_name("confluent")
    for topic in (java_topic, confluent_topic):
        _create(bootstrap, topic)
    acked_file = tmp_path / f"java-acked-{java_topic}"
    java = subprocess.Popen(java_command("kipper.cluster.AckedProducer", "clients") + [
        bootstrap, java_topic, str(RECORDS), str(acked_file), str(PAUSE_US)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    confluent = ctx.Process(target=_confluent_producer, args=(bootstrap, confluent_topic, RECORDS, PAUSE_US, out))
    confluent.start()
    stop, kills = threading.Event(), []
    chaos = threading.Thread(target=_chaos, args=(cluster, stop, kills))
    chaos.start()
    try:
        java_output = java.communicate(timeout=600)[0]
        confluent_acked, confluent_failed = out.get(timeout=600)
        confluent.join(30)
    finally:
        stop.set()
        chaos.join()
    lines = acked_file.read_text().splitlines()
    assert lines and lines[-1].startswith("done"), java_output[-3000:]
    java_acked = [(int(p), int(o), v) for p, o, v in (line.split() for line in lines[:-1])]
    return {"kills": kills, "java": (java_topic, java_acked, int(lines[-1].split()[2])),
            "confluent": (confluent_topic, confluent_acked, confluent_failed)}


def _check(bootstrap: str, results: dict) -> dict[str, int]:
    counts = {}
    for client in ("java", "confluent"):
        topic, acked, failed = results[client]
        assert failed == 0 and len(acked) == RECORDS, f"{client}: {len(acked)} acknowledged, {failed} failed"
        read = _read(bootstrap, topic, RECORDS)
        values = [v for rows in read.values() for _, v in rows]
        assert len(values) == len(set(values)) == RECORDS, f"{client}: {len(values)} read, {len(set(values))} distinct"
        for p in range(3):
            mine = sorted((o, v) for q, o, v in acked if q == p)
            assert read[p] == mine, f"{client} partition {p}: the acknowledged records, at their offsets, in order"
        counts[client] = len(values)
    return counts


def test_acknowledged_records_survive_killed_kipper_brokers(kafka_cluster, tmp_path, java_classes):
    cluster = kafka_cluster(brokers=3, overrides=SETTINGS)
    results = _run(cluster, cluster.bootstrap_servers, tmp_path)
    assert len(results["kills"]) >= 3
    assert _check(cluster.bootstrap_servers, results) == {"java": RECORDS, "confluent": RECORDS}


def test_a_java_transactional_producer_at_transaction_version_2_on_a_kipper_cluster(kafka_cluster, tmp_path,
                                                                                   java_classes):
    """The cluster finalizes transaction.version 2, as Kafka 4.4: Kafka's KafkaProducer sends no
    AddPartitionsToTxn nor AddOffsetsToTxn, each Produce (v12+) adds its partition and the
    TxnOffsetCommit (v5+) its group. The partitions led by the other brokers, and the group,
    whose coordinator is another broker than the transaction's, are added by their leader
    asking the transaction's coordinator (AddPartitionsToTxn v5): without that, their markers
    would never be written and read_committed would read none of their records. Every third
    transaction is first sent and aborted on purpose: its records are written (read_uncommitted
    reads them) and read_committed never reads them; each committed record is read once, and
    the group's committed offset is the last transaction's."""
    from confluent_kafka import Consumer, TopicPartition

    cluster = kafka_cluster(brokers=3, overrides=SETTINGS)
    bootstrap, topic = cluster.bootstrap_servers, unique_name("txn")
    _create(bootstrap, topic)
    for host_port in bootstrap.split(","):
        answer = _ask(host_port, 18, 4, {"client_software_name": "t", "client_software_version": "1"})
        assert {f.name: f.max_version_level for f in answer.finalized_features}["transaction.version"] == 2
        assert {f.name: f.max_version for f in answer.supported_features}["transaction.version"] == 2
    transactional_id, group = _coordinated_apart(bootstrap, topic)
    transactions, per_txn, abort_every = 12, 5, 3
    done = subprocess.run(java_command("kipper.ecosystem.TxnLoad", "clients") + [
        bootstrap, transactional_id, topic, group, str(transactions), str(per_txn),
        str(tmp_path / "progress"), str(abort_every)], capture_output=True, text=True, timeout=200)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"committed {transactions} transactions" in done.stdout, done.stdout + done.stderr[-3000:]
    committed = [f"{i}-{j}" for i in range(transactions) for j in range(per_txn)]
    aborted = [f"aborted-{i}-{j}" for i in range(0, transactions, abort_every) for j in range(per_txn)]
    read = _read(bootstrap, topic, len(committed), committed=True)
    assert len(read) == 3  # every partition, so every broker led some of the transactions
    values = collections.Counter(v for rows in read.values() for _, v in rows)
    assert sorted(values) == sorted(committed)  # none of the aborted ones
    assert set(values.values()) == {1}
    everything = collections.Counter(v for rows in _read(bootstrap, topic, len(committed) + len(aborted)).values()
                                     for _, v in rows)
    assert sorted(v for v in everything if v.startswith("aborted-")) == sorted(aborted)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 0})
    try:
        [offset] = c.committed([TopicPartition(topic, 0)], timeout=60)
    finally:
        c.close()
    assert offset.offset == transactions


def _ask(host_port: str, api_key: int, version: int, body: dict):
    from kipper.client.blocking import BlockingConnection
    from kipper.protocol.messages import APIS

    host, port = host_port.rsplit(":", 1)
    with BlockingConnection(host, int(port)) as conn:
        return conn.send_raw(APIS[api_key], version, body)


def _coordinated_apart(bootstrap: str, topic: str) -> tuple[str, str]:
    """A transactional id and a group id whose coordinators are two different brokers (FindCoordinator)."""
    first = bootstrap.split(",")[0]

    def coordinator(key: str, key_type: int) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            [c] = _ask(first, 10, 4, {"key_type": key_type, "coordinator_keys": [key]}).coordinators
            if c.error_code == 0:
                return c.node_id
            time.sleep(0.2)
        raise AssertionError(f"no coordinator for {key}")

    transactional_id = topic + "-txn"
    mine = coordinator(transactional_id, 1)
    for n in range(100):
        group = f"{topic}-group-{n}"
        if coordinator(group, 0) != mine:
            return transactional_id, group
    raise AssertionError("every group is coordinated by the transaction's coordinator")


@pytest.mark.timeout(1800)
@pytest.mark.skipif(not os.environ.get("KIPPER_KAFKA_CLUSTER"), reason="the comparison run: KIPPER_KAFKA_CLUSTER=1")
def test_the_same_run_against_a_kafka_cluster_gives_the_same_counts(tmp_path, java_classes):
    from scripts.kafka_cluster import KafkaCluster

    with KafkaCluster(3, dict(SETTINGS)) as cluster:
        results = _run(cluster, cluster.bootstrap, tmp_path)
        assert results["kills"]
        assert _check(cluster.bootstrap, results) == {"java": RECORDS, "confluent": RECORDS}
