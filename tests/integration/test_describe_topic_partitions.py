"""DescribeTopicPartitions (KIP-966), which Kafka's Admin describeTopics and kafka-topics
--describe ask first: found missing by Kafka's own tools against kipper (issue 30). Each
test states what Kafka 4.4's DescribeTopicPartitionsRequestHandler answers."""

from __future__ import annotations


from kipper.client.admin import NewTopic, create_topics
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages import APIS
from kipper.protocol.primitives import ZERO_UUID

DESCRIBE_TOPIC_PARTITIONS = APIS[75]


def _describe(conn, names, limit=2000, cursor=None):
    return conn.send_raw(DESCRIBE_TOPIC_PARTITIONS, 0, {
        "topics": [{"name": n} for n in names], "response_partition_limit": limit, "cursor": cursor})


def _create(conn, *topics):
    answer = create_topics(conn, [NewTopic(name, n, 1) for name, n in topics], timeout_ms=5000)
    assert [t.error_code for t in answer.topics] == [0] * len(topics)


def test_the_api_is_advertised(conn):
    assert 75 in conn.versions


def test_named_topics_come_sorted_with_every_partition_and_empty_elr_lists(conn, unique):
    _create(conn, (f"b-{unique}", 2), (f"a-{unique}", 1))
    answer = _describe(conn, [f"b-{unique}", f"a-{unique}"])
    assert [t.name for t in answer.topics] == [f"a-{unique}", f"b-{unique}"]
    b = answer.topics[1]
    assert b.error_code == 0 and b.topic_id != ZERO_UUID and not b.is_internal
    assert [p.partition_index for p in b.partitions] == [0, 1]
    p = b.partitions[0]
    assert (p.leader_id, p.leader_epoch, list(p.replica_nodes), list(p.isr_nodes)) == (1, 0, [1], [1])
    assert list(p.eligible_leader_replicas) == [] and list(p.last_known_elr) == []
    assert b.topic_authorized_operations != -2147483648  # always filled in, as Kafka does
    assert answer.next_cursor is None


def test_a_page_ends_with_a_cursor_and_the_next_page_starts_there(conn, unique):
    _create(conn, (f"a-{unique}", 3), (f"b-{unique}", 2))
    names = [f"a-{unique}", f"b-{unique}"]
    first = _describe(conn, names, limit=2)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in first.topics] == [(names[0], [0, 1])]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == (names[0], 2)
    second = _describe(conn, names, limit=1, cursor={"topic_name": names[0], "partition_index": 2})
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in second.topics] == [(names[0], [2])]
    # the limit is used up exactly at a topic's end: the cursor points at the next topic's start
    assert (second.next_cursor.topic_name, second.next_cursor.partition_index) == (names[1], 0)
    third = _describe(conn, names, cursor={"topic_name": names[1], "partition_index": 0})
    assert [t.name for t in third.topics] == [names[1]] and third.next_cursor is None


def test_unknown_and_illegal_names_get_their_errors(conn, unique):
    answer = _describe(conn, [f"nope-{unique}", "bad name!"])
    codes = {t.name: (t.error_code, t.topic_id, list(t.partitions)) for t in answer.topics}
    assert codes == {f"nope-{unique}": (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ZERO_UUID, []),
                     "bad name!": (ErrorCode.INVALID_TOPIC_EXCEPTION, ZERO_UUID, [])}


def test_a_cursor_outside_the_named_topics_is_an_invalid_request(conn, unique):
    _create(conn, (f"a-{unique}", 1))
    answer = _describe(conn, [f"a-{unique}"], cursor={"topic_name": f"z-{unique}", "partition_index": 0})
    assert [(t.name, t.error_code) for t in answer.topics] == [(f"a-{unique}", ErrorCode.INVALID_REQUEST)]


def test_an_empty_list_describes_every_topic(conn, unique):
    _create(conn, (f"all-{unique}", 1))
    names = [t.name for t in _describe(conn, []).topics]
    assert f"all-{unique}" in names and names == sorted(names)
