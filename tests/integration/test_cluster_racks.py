"""KIP-392's preferred read replica in a kipper cluster: brokers in racks (``racks=``, Kafka's
broker.rack) and Kafka's RackAwareReplicaSelector on the leaders point a consumer that names its
rack (client.rack) to an in-sync replica there, and it reads from that replica."""

from __future__ import annotations

import json
import time

from kipper.client import consumer_requests
from kipper.client.producer_requests import produce
from kipper.cluster import EmbeddedCluster
from kipper.testing import unique_name
from tests.integration.test_cluster import QUICK, batch, connect, create

RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def test_a_consumer_reads_from_the_replica_in_its_rack():
    from confluent_kafka import Consumer, TopicPartition

    with EmbeddedCluster(3, {**QUICK, "replica.selector.class": RACK_AWARE}, racks=["a", "b", "c"]) as cluster:
        name = create(cluster, 1, 3, assignments=[[1, 2, 3]])
        with connect(cluster, 1) as conn:
            assert produce(conn, {(name, 0): batch(20)}, acks=-1).responses[0].partition_responses[0].error_code == 0
            brokers = {b.node_id: b.rack for b in conn.request(3, {"topics": None}).brokers}
            assert brokers == {1: "a", 2: "b", 3: "c"}
            elsewhere = consumer_requests.fetch(conn, {(name, 0): 0}, version=11, rack_id="c")
            here = consumer_requests.fetch(conn, {(name, 0): 0}, version=11, rack_id="a")
            nowhere = consumer_requests.fetch(conn, {(name, 0): 0}, version=11, rack_id="d")
        row = elsewhere.responses[0].partitions[0]
        assert (row.error_code, row.preferred_read_replica, bytes(row.records or b"")) == (0, 3, b"")
        for answer in (here, nowhere):  # the leader's own rack, or a rack no replica is in: read here
            row = answer.responses[0].partitions[0]
            assert row.preferred_read_replica == -1 and row.records

        stats = []
        consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": unique_name("rack"),
                             "client.rack": "c", "enable.auto.commit": False, "statistics.interval.ms": 200,
                             "stats_cb": stats.append, "log_level": 0})
        consumer.assign([TopicPartition(name, 0, 0)])
        got, deadline = [], time.monotonic() + 30
        while (len(got) < 20 or not _fetching_from(stats, name)) and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is not None and not m.error():
                got.append(m.offset())
        consumer.close()
        assert got == list(range(20))
        assert _fetching_from(stats, name) == (1, 3), "the leader is 1; the consumer fetches from 3"


def _fetching_from(stats: list[str], topic: str) -> tuple[int, int] | None:
    """(leader, the broker fetched from) of the topic's partition 0 in librdkafka's latest stats."""
    for text in reversed(stats):
        p = json.loads(text).get("topics", {}).get(topic, {}).get("partitions", {}).get("0")
        if p and p.get("broker", -1) >= 0:
            return (p["leader"], p["broker"]) if p["broker"] != p["leader"] else None
    return None
