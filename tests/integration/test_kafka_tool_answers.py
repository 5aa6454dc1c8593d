"""Answers that Kafka's own tools and Java clients, run against kipper and Kafka side by side
(tests/java_ecosystem, issue 30), found to differ, fixed in kipper; these hold without Java.
Each says which tool showed it and what Kafka 4.4 answers."""

from __future__ import annotations


from kipper.client.admin import NewTopic, create_topics
from kipper.protocol import records
from kipper.protocol.messages import APIS


def _topic_with_records(conn, name, n_records=3):
    assert create_topics(conn, [NewTopic(name, 1, 1)], timeout_ms=5000).topics[0].error_code == 0
    batch = records.build_batch([(b"k", b"v", 1_700_000_000_000 + i) for i in range(n_records)])
    conn.request(0, {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": name, "partition_data": [{"index": 0, "records": batch}]}]}, version=9)


def _list_offsets(conn, topic, timestamp, version=9):
    return conn.send_raw(APIS[2], version, {"replica_id": -1, "isolation_level": 0, "timeout_ms": 5000, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                        "timestamp": timestamp}]}]}).topics[0].partitions[0]


def test_latest_tiered_offset_is_unknown_without_tiered_storage(conn, unique):
    # kafka-get-offsets --time -5 (latest-tiered): Kafka prints nothing, as its UnifiedLog answers
    # offset -1 when remote storage is off; kipper used to answer the log end offset
    _topic_with_records(conn, f"tiered-{unique}")
    p = _list_offsets(conn, f"tiered-{unique}", -5)
    assert (p.error_code, p.offset, p.timestamp, p.leader_epoch) == (0, -1, -1, -1)
    assert _list_offsets(conn, f"tiered-{unique}", -4).offset == 0  # earliest-local: the log start
    assert _list_offsets(conn, f"tiered-{unique}", -1).offset == 3
