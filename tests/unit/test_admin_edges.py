"""Admin answers an independent comparison with Kafka 4.4 found to differ (issue 36): each
test states what Kafka answers; tests/conformance/scenarios/admin_edges.py compares them with
Kafka itself."""

from __future__ import annotations

import uuid

import pytest

from kipper.broker.handlers.find_coordinator import share_key_valid
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

ZERO = uuid.UUID(int=0)


def create(b, *topics, validate=False):
    return b.call(19, 7, {"topics": [{"name": n, "num_partitions": p, "replication_factor": rf, "assignments": [],
                                      "configs": []} for n, p, rf in topics],
                          "timeout_ms": 1000, "validate_only": validate}).topics


@pytest.mark.parametrize("name,message", [
    ("", "Topic name is invalid: the empty string is not allowed"),
    ("..", "Topic name is invalid: '..' is not allowed"),
    ("bad name!", "Topic name is invalid: 'bad name!' contains one or more characters other than ASCII "
                  "alphanumerics, '.', '_' and '-'"),
    ("__cluster_metadata", "Creation of internal topic __cluster_metadata is prohibited."),
])
def test_create_topics_refuses_names_in_kafkas_words(name, message):
    row = create(InProcessBroker(), (name, 1, 1))[0]
    assert row.error_message == message and row.error_code in (E.INVALID_TOPIC_EXCEPTION, E.INVALID_REQUEST)


def test_create_topics_checks_counts_and_collisions_in_kafkas_order():
    b = InProcessBroker()
    assert create(b, ("a.b", 1, 1))[0].error_code == 0
    row = create(b, ("a_b", 0, 0))[0]
    assert (row.error_code, row.error_message) == (E.INVALID_TOPIC_EXCEPTION, "Topic 'a_b' collides with existing topic: a.b")
    row = create(b, ("c", 0, 0), validate=True)[0]
    assert (row.error_code, row.error_message) == (
        E.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value.")
    row = create(b, ("c", 0, 3), validate=True)[0]
    assert (row.error_code, row.error_message) == (
        E.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
    row = create(b, ("c", 1, 2), validate=True)[0]
    assert row.error_code == E.INVALID_REPLICATION_FACTOR and row.error_message.startswith(
        "Unable to replicate the partition 2 time(s): The target replication factor of 2 cannot be reached")
    assert create(b, ("c", 10001, 1), validate=True)[0].error_message == \
        "Excessively large number of partitions per request."
    # Kafka's controller writes a request's topics as one batch of at most 10000 records
    rows = create(b, ("c", 5000, 1), ("d", 5000, 1), validate=True)
    assert {(r.error_code, r.error_message) for r in rows} == {
        (E.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")}
    assert [r.error_code for r in create(b, ("c", 5000, 1), ("d", 4998, 1), validate=True)] == [0, 0]


def delete(b, *states, version=6):
    body = {"topics": [{"name": n, "topic_id": i} for n, i in states], "topic_names": [n for n, _ in states],
            "timeout_ms": 1000}
    return sorted(((r.name, r.error_code, r.error_message) for r in b.call(20, version, body).responses),
                  key=repr)


def test_delete_topics_reads_names_and_ids_as_kafka_does():
    b = InProcessBroker()
    create(b, ("t", 1, 1))
    tid = b.state.topics.get("t").topic_id
    assert delete(b, ("t", tid)) == [("t", E.INVALID_REQUEST, "You may not specify both topic name and topic id.")]
    assert delete(b, (None, ZERO)) == [(None, E.INVALID_REQUEST, "Neither topic name nor id were specified.")]
    assert delete(b, ("t", ZERO), ("t", ZERO)) == [("t", E.INVALID_REQUEST, "Duplicate topic name.")]
    assert delete(b, (None, tid), (None, tid)) == [(None, E.INVALID_REQUEST, "Duplicate topic id.")]
    assert delete(b, (None, tid), ("t", ZERO)) == [
        ("t", E.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied.")]
    assert delete(b, (None, uuid.uuid4())) == [(None, E.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.")]
    assert b.state.topics.get("t") is not None  # none of these deleted it
    assert delete(b, ("t", ZERO), ("t", ZERO), version=5) == [("t", E.INVALID_REQUEST, "Duplicate topic name.")]
    assert delete(b, (None, tid)) == [("t", 0, None)] and b.state.topics.get("t") is None


def test_list_offsets_refuses_a_partition_named_twice_and_answers_a_topic_once():
    b = InProcessBroker()
    create(b, ("t", 2, 1))
    topics = b.call(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1},
                                     {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}]},
        {"name": "t", "partitions": [{"partition_index": 1, "current_leader_epoch": -1, "timestamp": -1}]}]}).topics
    assert [(t.name, [(p.partition_index, p.error_code, p.offset) for p in t.partitions]) for t in topics] == [
        ("t", [(0, E.INVALID_REQUEST, -1), (1, 0, 0)])]


def test_an_empty_transactional_id_is_refused():
    r = InProcessBroker().call(22, 4, {"transactional_id": "", "transaction_timeout_ms": 60000,
                                       "producer_id": -1, "producer_epoch": -1})
    assert (r.error_code, r.producer_id, r.producer_epoch) == (E.INVALID_REQUEST, -1, -1)


def test_find_coordinator_takes_empty_ids_and_checks_share_partition_keys():
    b = InProcessBroker()
    rows = b.call(10, 6, {"key_type": 0, "coordinator_keys": ["", "g"]}).coordinators
    assert [(r.error_code, r.node_id, r.error_message) for r in rows] == [(0, 1, ""), (0, 1, "")]
    assert b.call(10, 3, {"key": "", "key_type": 1}).error_message == "NONE"
    keys = ["", "g", "g:t", "g:t:", "g:abc:0", ":AAAAAAAAAAAAAAAAAAAAAA:0", " :AAAAAAAAAAAAAAAAAAAAAA:0",
            "g:AAAAAAAAAAAAAAAAAAAAAA:x", "a:b:c:d", "g:AAAAAAAAAAAAAAAAAAAAAA:0", "g:AAAAAAAAAAAAAAAAAAAAAA==:-1"]
    rows = b.call(10, 6, {"key_type": 2, "coordinator_keys": keys}).coordinators
    assert [r.error_code for r in rows] == [E.INVALID_REQUEST] * 9 + [0, 0]
    assert not share_key_valid("g:AAAAAAAAAAAAAAAAAAAAAA:99999999999")  # not a Java int


def test_the_coordinators_topics_are_made_by_their_first_find_coordinator():
    # as Kafka makes them: Metadata lists them from then on, with Kafka's configs
    b = InProcessBroker(**{"offsets.topic.num.partitions": "1"})
    assert b.state.topics.get("__consumer_offsets") is None
    b.call(10, 6, {"key_type": 0, "coordinator_keys": ["g"]})
    offsets = b.state.topics.get("__consumer_offsets")
    assert offsets.internal and offsets.configs["compression.type"] == "producer"
    b.call(10, 6, {"key_type": 1, "coordinator_keys": ["tx"]})
    assert b.state.topics.get("__transaction_state").configs["compression.type"] == "uncompressed"


def test_describe_quorum_answers_a_quorum_of_this_one_node():
    b = InProcessBroker()
    b.state.advertised["PLAINTEXT"] = ("127.0.0.1", 9092)
    r = b.call(55, 2, {"topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]},
                                  {"topic_name": "other", "partitions": [{"partition_index": 0}]}]})
    meta, other = r.topics[0].partitions[0], r.topics[1].partitions[0]
    assert (meta.error_code, meta.leader_id, meta.leader_epoch) == (0, 1, 1)
    assert [v.replica_id for v in meta.current_voters] == [1] and list(meta.observers) == []
    assert (other.error_code, other.error_message) == (E.UNKNOWN_TOPIC_OR_PARTITION,
                                                       "This server does not host this topic-partition.")
    assert [(n.node_id, [(x.name, x.port) for x in n.listeners]) for n in r.nodes] == [(1, [("PLAINTEXT", 9092)])]


def test_elect_leaders_needs_no_election_on_one_node():
    b = InProcessBroker()
    create(b, ("t", 2, 1))

    def elect(election_type, topics):
        r = b.call(43, 2, {"election_type": election_type, "topic_partitions": topics, "timeout_ms": 1000})
        return r.error_code, [(x.topic, [(p.partition_id, p.error_code, p.error_message) for p in x.partition_result])
                              for x in r.replica_election_results]
    assert elect(0, [{"topic": "t", "partitions": [1, 5]}, {"topic": "u", "partitions": [0]}]) == (0, [
        ("t", [(1, E.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
               (5, E.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-5")]),
        ("u", [(0, E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as u")])])
    assert elect(1, None) == (0, [("t", [])])  # every partition: none needed an election
    assert elect(2, [{"topic": "t", "partitions": [0]}]) == (
        E.INVALID_REQUEST, [("t", [(0, E.INVALID_REQUEST, "Unknown election type 2")])])
    assert elect(5, None) == (E.INVALID_REQUEST, [])
