"""Broker API behaviour not covered by the client round trips: acks=0, Fetch
size limits (KIP-74), ListOffsets by time, DescribeConfigs from an admin client."""

from __future__ import annotations

import time


from kipper.client import consumer_requests as cr
from kipper.client import producer_requests as pr
from kipper.client.admin import NewTopic, create_topics
from kipper.client.blocking import BlockingConnection
from kipper.protocol import records


def create(conn, topic: str, partitions: int = 1) -> None:
    assert create_topics(conn, [NewTopic(topic, partitions, 1)], timeout_ms=5000).topics[0].error_code == 0


def produce(conn, topic, batch, acks=-1, partition=0):
    resp = pr.produce(conn, {(topic, partition): batch}, acks=acks, timeout_ms=5000)
    return None if resp is None else resp.responses[0].partition_responses[0]


def fetch(conn, topic, offset, max_bytes=1 << 20, partition_max=1 << 20, max_wait=0, min_bytes=0, version=12):
    return cr.fetch(conn, {(topic, 0): offset}, max_wait_ms=max_wait, min_bytes=min_bytes, max_bytes=max_bytes,
                    partition_max_bytes=partition_max, version=version).responses[0].partitions[0]


def list_offset(conn, topic, ts):
    p = cr.list_offsets(conn, {(topic, 0): ts}).topics[0].partitions[0]
    return p.offset, p.timestamp


def test_acks_zero_gets_no_response_but_is_stored(conn, unique):
    topic = f"acks0-{unique}"
    create(conn, topic)
    for i in range(3):
        produce(conn, topic, records.build_batch([(None, f"v{i}".encode())]), acks=0)
    # the next answered request proves the connection stayed in sync
    assert list_offset(conn, topic, -1)[0] == 3


def test_fetch_returns_the_first_batch_even_when_larger_than_max_bytes(conn, unique):
    topic = f"kip74-{unique}"
    create(conn, topic)
    big = records.build_batch([(None, b"x" * 5000)])
    produce(conn, topic, big)
    produce(conn, topic, records.build_batch([(None, b"y")]))
    p = fetch(conn, topic, 0, max_bytes=100, partition_max=100)
    batches = records.decode_all(p.records)
    assert len(batches) == 1 and batches[0].records[0].value == b"x" * 5000


def test_fetch_stops_at_partition_max_bytes(conn, unique):
    topic = f"pmax-{unique}"
    create(conn, topic)
    for i in range(10):
        produce(conn, topic, records.build_batch([(None, b"z" * 200)]))
    p = fetch(conn, topic, 0, partition_max=700)
    assert 1 <= len(records.decode_all(p.records)) <= 3 and len(p.records) <= 700


def test_fetch_long_poll_returns_when_a_record_arrives(broker, conn, unique):
    topic = f"poll-{unique}"
    create(conn, topic)
    other = BlockingConnection("127.0.0.1", broker.port)
    other.negotiate()
    start = time.time()
    import threading
    t = threading.Timer(0.5, lambda: produce(other, topic, records.build_batch([(None, b"late")])))
    t.start()
    p = fetch(conn, topic, 0, max_wait=10_000, min_bytes=1)
    elapsed = time.time() - start
    t.join()
    other.close()
    assert records.decode_all(p.records)[0].records[0].value == b"late"
    assert elapsed < 5, "woken by the append, not by the 10 s max wait"


def test_fetch_beyond_the_log_end_is_offset_out_of_range(conn, unique):
    topic = f"oor-{unique}"
    create(conn, topic)
    assert fetch(conn, topic, 5).error_code == 1


def test_list_offsets_by_timestamp_finds_the_first_record_at_or_after_it(conn, unique):
    topic = f"bytime-{unique}"
    create(conn, topic)
    produce(conn, topic, records.build_batch([(None, b"a", 1000), (None, b"b", 2000)]))
    produce(conn, topic, records.build_batch([(None, b"c", 3000)]))
    assert list_offset(conn, topic, 1500) == (1, 2000)
    assert list_offset(conn, topic, 2500) == (2, 3000)
    assert list_offset(conn, topic, 9999)[0] == -1
    assert list_offset(conn, topic, -2)[0] == 0 and list_offset(conn, topic, -1)[0] == 3
    assert list_offset(conn, topic, -3) == (2, 3000)


def test_admin_clients_describe_a_topics_configs(broker, unique):
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    topic = f"cfg-{unique}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1, config={"retention.ms": "12345"})])[topic].result(15)
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = admin.describe_configs([res])[res].result(15)
    assert configs["retention.ms"].value == "12345"
    assert configs["cleanup.policy"].value == "delete"
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource as KConfigResource, ConfigResourceType
    kadmin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    described = kadmin.describe_configs([KConfigResource(ConfigResourceType.TOPIC, topic)])
    kadmin.close()
    assert described
