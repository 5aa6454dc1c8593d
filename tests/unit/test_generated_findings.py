"""What the conformance generator (tests/conformance/fuzz, issue 36) found kipper answering
otherwise than Kafka 4.4, each test stating Kafka's answer; the sequence that showed each is a
named scenario in tests/conformance/scenarios/generated.py."""

from __future__ import annotations

import uuid

from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, METADATA = 19, 20, 37, 3
DESCRIBE_TOPIC_PARTITIONS = 75
ZERO = uuid.UUID(int=0)


def create(b, name, partitions=1, timeout_ms=30000, validate_only=False):
    return b.call(CREATE_TOPICS, 7, {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                                                 "assignments": [], "configs": []}],
                                     "timeout_ms": timeout_ms, "validate_only": validate_only}).topics[0]


def known(b, name) -> bool:
    return b.call(METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False}).topics[0].error_code == 0


def test_a_deadline_already_passed_times_out_create_topics_and_creates_nothing():
    b = InProcessBroker()
    for timeout, validate_only in ((0, False), (-1, False), (0, True)):
        topic = create(b, f"t{timeout}{validate_only}", timeout_ms=timeout, validate_only=validate_only)
        assert (topic.error_code, topic.error_message, topic.num_partitions) == (E.REQUEST_TIMED_OUT, None, -1)
        assert not known(b, f"t{timeout}{validate_only}")


def test_a_deadline_already_passed_times_out_create_partitions_and_delete_topics():
    b = InProcessBroker()
    create(b, "t")
    grown = b.call(CREATE_PARTITIONS, 3, {"topics": [{"name": "t", "count": 3, "assignments": None}], "timeout_ms": 0,
                                          "validate_only": False}).results[0]
    assert (grown.error_code, grown.error_message) == (E.REQUEST_TIMED_OUT, None)
    for name in ("t", "never-made"):
        gone = b.call(DELETE_TOPICS, 6, {"topics": [{"name": name, "topic_id": ZERO}], "timeout_ms": 0}).responses[0]
        assert (gone.error_code, gone.error_message) == (E.REQUEST_TIMED_OUT, None)
    assert known(b, "t")
    partitions = b.call(METADATA, 12, {"topics": [{"name": "t"}], "allow_auto_topic_creation": False}).topics[0].partitions
    assert len(partitions) == 1


def test_describe_topic_partitions_with_a_limit_of_zero_or_less_pages_one_partition():
    b = InProcessBroker()
    create(b, "t", partitions=2)
    for limit in (0, -1):
        answer = b.call(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": "t"}], "response_partition_limit": limit,
                                                       "cursor": None})
        assert [p.partition_index for p in answer.topics[0].partitions] == [0]
        assert (answer.next_cursor.topic_name, answer.next_cursor.partition_index) == ("t", 1)


def test_a_topic_that_names_no_partition_has_no_answer():
    b = InProcessBroker()
    create(b, "t")
    pid = b.call(22, 4, {"transactional_id": "x", "transaction_timeout_ms": 60000, "producer_id": -1,
                         "producer_epoch": -1}).producer_id
    empty = {
        0: (9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000,
                "topic_data": [{"name": "t", "partition_data": []}]}, "responses"),
        1: (12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                 "session_id": 0, "session_epoch": -1, "topics": [{"topic": "t", "partitions": []}],
                 "forgotten_topics_data": [], "rack_id": ""}, "responses"),
        2: (7, {"replica_id": -1, "isolation_level": 0, "topics": [{"name": "t", "partitions": []}]}, "topics"),
        21: (2, {"topics": [{"name": "t", "partitions": []}], "timeout_ms": 1000}, "topics"),
        8: (8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": "t", "partitions": []}]}, "topics"),
        28: (3, {"transactional_id": "x", "group_id": "g", "producer_id": pid, "producer_epoch": 0,
                 "generation_id": -1, "member_id": "", "group_instance_id": None,
                 "topics": [{"name": "t", "partitions": []}]}, "topics"),
        27: (1, {"markers": [{"producer_id": pid, "producer_epoch": 0, "transaction_result": False,
                              "topics": [{"name": "t", "partition_indexes": []}], "coordinator_epoch": 0}]}, "markers"),
    }
    for key, (version, body, listing) in empty.items():
        assert list(b.call(key, version, body)[listing]) == [], key
