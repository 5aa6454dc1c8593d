"""The record-lock cap (share.partition.max.record.locks) with real share consumers, set as a
group config through confluent-kafka's AdminClient, with MaxRecords (max.poll.records) above it.

The bounds are Kafka 4.4's, measured on a Kafka broker with the same records: the window grows
by at most (cap - records in it), to the end of the batch that crosses it in batch_optimized
mode (librdkafka's only mode); record_limit (kipper's ShareConsumer) cuts at the record and the
rest of that batch waits in the window. Every record is delivered and accepted exactly once.
"""

from __future__ import annotations

import time
import urllib.request
import uuid

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kipper.client.admin import describe_share_group_offsets
from kipper.client.blocking import connect_any
from kipper.client.producer_requests import produce
from kipper.client.share_consumer import ShareConsumer
from kipper.protocol import records
from tests.support import requires
from tests.support.broker import make_broker
from tests.support.topics import create_topics

ck = requires.module("confluent_kafka", "interop")

pytestmark = pytest.mark.interop
CAP = 100
TOTAL = 1000


@pytest.fixture(scope="module")
def broker():
    proc = make_broker({"metrics.http.listener": "http://127.0.0.1:0"}).start()
    yield proc
    proc.stop()


def _setup(bootstrap: str, batch: int) -> tuple[str, str]:
    """A topic of TOTAL records in batches of ``batch``, and a group capped at CAP."""
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                       ResourceType)
    topic = group = f"locks-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, topic, partitions=1)
    with connect_any(bootstrap) as conn:
        for first in range(0, TOTAL, batch):
            data = records.build_batch([(None, b"v%d" % i) for i in range(first, min(first + batch, TOTAL))])
            resp = produce(conn, {(topic, 0): data}, acks=1, timeout_ms=10000)
            assert resp.responses[0].partition_responses[0].error_code == 0
    admin = AdminClient({"bootstrap.servers": bootstrap})
    res = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.partition.max.record.locks", str(CAP),
                    incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    for f in admin.incremental_alter_configs([res]).values():
        f.result(10)
    described = admin.describe_configs([ConfigResource(ResourceType.GROUP, group)])
    entries = list(described.values())[0].result(10)
    assert entries["share.partition.max.record.locks"].value == str(CAP)
    return topic, group


class Confluent:
    def __init__(self, bootstrap, group, topic):
        self.c = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                                   "share.acknowledgement.mode": "explicit", "max.poll.records": 200})
        self.c.subscribe([topic])

    def poll(self, timeout):
        got = [m for m in self.c.poll(timeout) if m.error() is None]
        return got, [m.offset() for m in got]

    def accept(self, got):
        for m in got:
            self.c.acknowledge(m)
        return all(e is None for e in self.c.commit_sync().values())

    def close(self):
        self.c.close()


class Ours:
    def __init__(self, bootstrap, group, topic):
        self.c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                                "share.acknowledgement.mode": "explicit", "max.poll.records": 200,
                                "share.acquire.mode": "record_limit"})
        self.c.subscribe([topic])

    def poll(self, timeout):
        got = self.c.poll(timeout)
        return got, [r.offset for r in got]

    def accept(self, got):
        for r in got:
            self.c.acknowledge(r)
        return all(e is None for e in self.c.commit_sync().values())

    def close(self):
        self.c.close()


def _first_poll(consumer, timeout=15.0) -> tuple[list, list[int]]:
    deadline = time.time() + timeout
    while time.time() < deadline:
        got, offsets = consumer.poll(0.5)
        if got:
            return got, offsets
    return [], []


def _in_flight(broker, group) -> tuple[float, float]:
    """(records in the window, cap) of the group's share-partition from /metrics."""
    with urllib.request.urlopen(broker.metrics_url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.labels.get("group") == group:
                found[s.name] = s.value
    return (found["kafka_server_sharepartitionmetrics_inflightrecords"],
            found["kafka_server_sharepartitionmetrics_maxrecordlocks"])


def _drain(consumers, seen: dict, timeout=40.0) -> None:
    """Poll every consumer in turn, accepting what it gets, until every record is accepted."""
    deadline = time.time() + timeout
    while sum(len(v) for v in seen.values()) < TOTAL and time.time() < deadline:
        for name, c in consumers.items():
            got, offsets = c.poll(0.2)
            if got:
                assert c.accept(got)
                seen[name] += offsets


def _delivered_once(seen: dict) -> None:
    accepted = [o for offsets in seen.values() for o in offsets]
    assert len(accepted) == len(set(accepted)) == TOTAL, "each record accepted exactly once"
    assert set(accepted) == set(range(TOTAL))


def test_batch_optimized_confluent_share_consumers_stop_at_the_batch_that_crosses_the_cap(broker):
    topic, group = _setup(broker.bootstrap, batch=30)
    a, b = Confluent(broker.bootstrap, group, topic), Confluent(broker.bootstrap, group, topic)
    try:
        got, offsets = _first_poll(a)
        assert offsets == list(range(120))  # 100 rounded up to the end of the batch 90-119
        assert _in_flight(broker, group) == (120, CAP)
        assert b.poll(3.0)[0] == []  # at the cap while a holds them
        assert a.accept(got)
        seen = {"a": offsets, "b": []}
        _drain({"a": a, "b": b}, seen)
        _delivered_once(seen)
        assert seen["b"], "both consumers should get records once room comes back"
    finally:
        a.close()
        b.close()
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.delete_consumer_groups([group])[group].result(10)  # a share group, through DeleteGroups
    with connect_any(broker.bootstrap) as conn:
        body = describe_share_group_offsets(conn, {group: None})
    assert body.groups[0].topics == []


def test_record_limit_cuts_at_the_cap_and_the_rest_of_the_batch_waits_in_the_window(broker):
    topic, group = _setup(broker.bootstrap, batch=300)
    a, b = Ours(broker.bootstrap, group, topic), Ours(broker.bootstrap, group, topic)
    try:
        got, offsets = _first_poll(a)
        assert offsets == list(range(CAP))
        held_b, offsets_b = _first_poll(b, timeout=5.0)
        assert offsets_b == list(range(100, 300))  # Kafka 4.4: the rest of the batch 0-299
        assert _in_flight(broker, group) == (300, CAP)
        assert a.accept(got) and b.accept(held_b)
        seen = {"a": offsets, "b": offsets_b}
        _drain({"a": a, "b": b}, seen)
        _delivered_once(seen)
    finally:
        a.close()
        b.close()
