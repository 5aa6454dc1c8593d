"""The differential suite on clusters (issue 39): the same scenarios against a three-broker
Apache Kafka (scripts/kafka_cluster.py: a controller and three brokers, each a JVM) and a
three-broker kipper (kipper.cluster.EmbeddedCluster), both with node 0 the controller and
nodes 1-3 the brokers and the same timings, compared field by field as the one-broker suite
does (docs/CONFORMANCE.md): a leader moved on request (AlterPartitionReassignments,
ElectLeaders, and the elections that are not needed or cannot be) and the old leader's NOT_LEADER_OR_FOLLOWER naming the new one in KIP-951's
tagged fields; an ISR that shrinks as brokers die (min.insync.replicas refusing acks=all) and
grows back as they return, seen in Metadata and DescribeTopicPartitions."""

from __future__ import annotations

import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from kipper.client.blocking import BlockingConnection
from kipper.protocol.messages import APIS
from tests.conformance.harness import Run
from tests.conformance.scenarios.kit import CREATE_TOPICS, FETCH, LIST_OFFSETS, METADATA, PRODUCE, batch
from tests.conformance.test_conformance import judge
from tests.conformance.compare import load_allowed
from tests.conformance.report import Report
from tests.support.reference import Reference, require_kafka

require_kafka()

# four JVMs beside the rest of the suite starved the Spark suite's jobs on 2 cores (a clean-clone
# run, 2026-12-06): the comparison with a 3-broker Kafka is the cluster's opt-in, as its other
# Kafka-cluster sides are (docs/CLUSTER.md)
pytestmark = pytest.mark.skipif(not os.environ.get("KIPPER_KAFKA_CLUSTER"),
                                reason="the 3-broker Kafka comparison: KIPPER_KAFKA_CLUSTER=1")

ALTER_REASSIGNMENTS, ELECT_LEADERS, OFFSET_FOR_LEADER_EPOCH = APIS[45], APIS[43], APIS[23]
DESCRIBE_TOPIC_PARTITIONS = APIS[75]
SETTINGS = {"group.initial.rebalance.delay.ms": "0", "num.partitions": "1"}


@dataclass
class ClusterReference(Reference):
    """A cluster, as a scenario sees it: its brokers' ports, and broker loss and return."""

    cluster: object = None

    def port(self, node_id: int) -> int:
        nodes = self.cluster.brokers
        return nodes[node_id].port

    def kill(self, node_id: int) -> None:
        self.cluster.kill(node_id)

    def start(self, node_id: int) -> None:
        self.cluster.start_broker(node_id)


@pytest.fixture(scope="module")
def clusters():
    from kipper.cluster import EmbeddedCluster
    from scripts.kafka_cluster import KafkaCluster

    kafka, kipper = KafkaCluster(3, dict(SETTINGS)), EmbeddedCluster(3, dict(SETTINGS))
    with ThreadPoolExecutor(2) as pool:
        started = [pool.submit(kafka.start), pool.submit(kipper.start)]
        for done in started:
            done.result()
    yield (ClusterReference("kafka", kafka.bootstrap, "", kafka.controller.version or "", cluster=kafka),
           ClusterReference("kipper", kipper.bootstrap_servers, "", "", cluster=kipper))
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda c: c.stop(), (kafka, kipper)))


def at(run: Run, node_id: int) -> str:
    """The connection to broker ``node_id`` (opened once)."""
    key = f"b{node_id}"
    if key not in run.conns:
        conn = BlockingConnection("127.0.0.1", run.ref.port(node_id), client_id="conformance", timeout=30)
        conn.negotiate()
        run.conns[key] = conn
    return key


def drop_all(run: Run) -> None:
    for key in [k for k in run.conns if k.startswith("b")]:
        run.drop(key)


def until(run: Run, check, what: str, node_id: int = 1, attempts: int = 600) -> dict:
    """Metadata (unrecorded) until ``check(partition)`` holds for partition 0."""
    import time

    for _ in range(attempts):
        try:
            answer = run.call(METADATA, 12, {"topics": [{"name": run.state["topic"], "topic_id": None}],
                                             "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False},
                              conn=at(run, node_id), record=False)
            parts = answer["topics"][0]["partitions"] if isinstance(answer, dict) and answer.get("topics") else []
            if parts and check(parts[0]):
                return parts[0]
        except (OSError, ConnectionError):
            run.drop(f"b{node_id}")
        time.sleep(0.2)
    raise AssertionError(f"{run.broker}: waited for {what}")


def create(run: Run, assignment: list[int], configs: dict | None = None) -> str:
    name = run.name("t")
    run.call(CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": -1, "replication_factor": -1,
                                            "assignments": [{"partition_index": 0, "broker_ids": assignment}],
                                            "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
                                "timeout_ms": 30000, "validate_only": False}, conn=at(run, 1), record=False)
    run.state["topic"] = name
    for node in (1, 2, 3):  # every broker knows it, and the whole ISR is there
        until(run, lambda p: sorted(p["isr_nodes"]) == sorted(assignment), "the topic", node)
    run.state["topic_id"] = run.call(METADATA, 12, {"topics": [{"name": name, "topic_id": None}],
                                                    "allow_auto_topic_creation": False,
                                                    "include_topic_authorized_operations": False},
                                     conn=at(run, 1), record=False)["topics"][0]["topic_id"]
    return name


def in_sync(run: Run, node_id: int) -> None:
    """Every replica in the ISR again, as broker ``node_id`` sees it: on a loaded machine a
    Kafka follower can lag past replica.lag.time.max.ms for a moment, and the scenario
    compares the steady state, not that race."""
    until(run, lambda p: sorted(p["isr_nodes"]) == [1, 2, 3], "the whole ISR", node_id)


def metadata(run: Run, node_id: int, label: str) -> None:
    run.call(METADATA, 12, {"topics": [{"name": run.state["topic"], "topic_id": None}],
                            "allow_auto_topic_creation": False, "include_topic_authorized_operations": False},
             conn=at(run, node_id), label=label)


def describe(run: Run, node_id: int, label: str) -> None:
    run.call(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": run.state["topic"]}],
                                            "response_partition_limit": 100, "cursor": None},
             conn=at(run, node_id), label=label)


def produce(run: Run, node_id: int, label: str, *, acks: int = -1, start: int = 0) -> dict:
    return run.call(PRODUCE, 12, {"transactional_id": None, "acks": acks, "timeout_ms": 30000, "topic_data": [
        {"name": run.state["topic"], "partition_data": [{"index": 0, "records": batch(2, start=start)}]}]},
        conn=at(run, node_id), label=label)


def leader_moves(run: Run) -> None:
    topic = create(run, [1, 2, 3])
    produce(run, 1, "produce to the leader")
    in_sync(run, 2)
    metadata(run, 2, "metadata: leader 1")
    run.call(APIS[60], 1, {"include_cluster_authorized_operations": False, "endpoint_type": 1},
             conn=at(run, 3), label="describe cluster")
    run.call(ALTER_REASSIGNMENTS, 0, {"timeout_ms": 30000, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "replicas": [3, 1, 2]}]}]},
        conn=at(run, 1), label="reassign: 3 first")
    until(run, lambda p: p["replica_nodes"] == [3, 1, 2], "the reassignment")
    run.call(ELECT_LEADERS, 2, {"election_type": 0, "timeout_ms": 30000,
                                         "topic_partitions": [{"topic": topic, "partitions": [0]}]},
             conn=at(run, 1), label="preferred election")
    for node in (1, 2, 3):
        until(run, lambda p: p["leader_id"] == 3, "leader 3", node)
    in_sync(run, 1)
    metadata(run, 1, "metadata: leader 3")
    run.call(ELECT_LEADERS, 2, {"election_type": 0, "timeout_ms": 30000, "topic_partitions": [
        {"topic": topic, "partitions": [0, 5]}, {"topic": run.name("missing"), "partitions": [0]}]},
        conn=at(run, 2), label="elections not needed, unknown partitions")
    for election_type, label in ((1, "unclean with a leader"), (2, "an unknown election type")):
        run.call(ELECT_LEADERS, 2, {"election_type": election_type, "timeout_ms": 30000,
                                    "topic_partitions": [{"topic": topic, "partitions": [0]}]},
                 conn=at(run, 2), label=label)
    produce(run, 1, "produce to the old leader", start=2)
    run.call(FETCH, 17, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                         "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                         "topics": [{"topic_id": uuid.UUID(run.state["topic_id"]), "partitions": [
                             {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                              "last_fetched_epoch": -1, "log_start_offset": -1,
                              "partition_max_bytes": 1 << 20}]}],
                         "forgotten_topics_data": [], "rack_id": ""},
             conn=at(run, 1), label="fetch from the old leader")
    produce(run, 3, "produce to the new leader", start=2)
    run.call(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
        {"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]},
        conn=at(run, 3), label="end of epoch 0")
    run.call(LIST_OFFSETS, 9, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]},
        conn=at(run, 3), label="latest offset")
    in_sync(run, 2)
    describe(run, 2, "describe: leader 3")


def isr_shrinks_and_grows(run: Run) -> None:
    create(run, [1, 2, 3], {"min.insync.replicas": "2"})
    run.ref.kill(3)
    until(run, lambda p: p["isr_nodes"] == [1, 2], "broker 3 out of the ISR")
    metadata(run, 1, "metadata: broker 3 gone")
    describe(run, 1, "describe: broker 3 gone")
    produce(run, 1, "acks=all with two in sync")
    run.ref.kill(2)
    until(run, lambda p: p["isr_nodes"] == [1], "broker 2 out of the ISR")
    produce(run, 1, "acks=all with one in sync", start=2)
    produce(run, 1, "acks=1 with one in sync", acks=1, start=4)
    run.ref.start(2)
    until(run, lambda p: p["isr_nodes"] == [1, 2], "broker 2 back in the ISR")
    run.ref.start(3)
    until(run, lambda p: p["isr_nodes"] == [1, 2, 3], "broker 3 back in the ISR")
    drop_all(run)
    metadata(run, 2, "metadata: all back")
    describe(run, 3, "describe: all back")


@dataclass
class Scenario:
    name: str
    fn: object
    timed: bool = False


SCENARIOS = [Scenario("cluster/leader-moves", leader_moves), Scenario("cluster/isr-shrinks-and-grows",
                                                                    isr_shrinks_and_grows)]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_a_kipper_cluster_answers_as_a_kafka_cluster(scenario, clusters):
    kafka, kipper = clusters
    token = f"c{uuid.uuid4().hex[:6]}"
    runs = []
    with ThreadPoolExecutor(2) as pool:
        for done in [pool.submit(_run, scenario, ref, token) for ref in (kafka, kipper)]:
            runs.append(done.result())
    report = Report(load_allowed())
    _, unlisted = judge(scenario, runs[0], runs[1], report)
    assert not unlisted, "differences from Kafka that allowed_differences.toml does not list:\n" + "\n".join(
        f"  [{d.label}] {d.api} v{d.version} {d.path}: kafka={d.kafka!r} kipper={d.kipper!r}" for d in unlisted[:40])


def _run(scenario, ref, token) -> Run:
    run = Run(ref, token)
    try:
        scenario.fn(run)
    finally:
        run.close()
    for x in run.transcript:  # a KRaft broker names a random live broker as the controller
        if x.api in ("Metadata", "DescribeCluster") and isinstance(x.response, dict) and "controller_id" in x.response:
            live = {b.get("node_id", b.get("broker_id")) for b in x.response.get("brokers", [])}
            if x.response["controller_id"] in live:
                x.response["controller_id"] = "<a live broker>"
    return run
