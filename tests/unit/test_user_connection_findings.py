"""What the generator met once its steps could be a user's who is no super user (its "user"
connection, docs/CONFORMANCE.md): each refusal answered as Kafka 4.4 answers it
(tests/conformance/scenarios/user_run.py replays each against Kafka)."""

from __future__ import annotations

import uuid

from kipper.broker.context import Session
from tests.support.inproc import InProcessBroker

WRITE_TXN_MARKERS = 27
CLUSTER_AUTHORIZATION_FAILED = 31
SECURED = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
           "super.users": "User:admin", "allow.everyone.if.no.acl.found": "false"}


def _user(name: str = "u0") -> Session:
    return Session("PLAINTEXT", "127.0.0.1:6000", principal=f"User:{name}")


def _marker(pid: int, *topics: tuple[str, list[int]]) -> dict:
    return {"producer_id": pid, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
            "topics": [{"name": n, "partition_indexes": ps} for n, ps in topics]}


def _secured_with_topic_t() -> tuple[InProcessBroker, uuid.UUID]:
    """A broker with an authorizer and a topic t (made by the super user admin), and t's id."""
    broker = InProcessBroker(**SECURED)
    broker.call(19, 7, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                                    "configs": []}], "timeout_ms": 1000, "validate_only": False}, _user("admin"))
    known = broker.call(3, 12, {"topics": [{"name": "t", "topic_id": None}], "allow_auto_topic_creation": False,
                                "include_topic_authorized_operations": False}, _user("admin"))["topics"][0]["topic_id"]
    return broker, known


def test_write_txn_markers_refused_whole_names_every_markers_producer_as_kafkas_error_response_does():
    broker = InProcessBroker(**SECURED)
    refused = lambda *markers: broker.call(WRITE_TXN_MARKERS, 1, {"markers": list(markers)}, _user())["markers"]  # noqa: E731
    assert refused(_marker(1)) == [{"producer_id": 1, "topics": []}]  # (answered: a marker of no partition)
    failed = {"name": "t", "partitions": [{"partition_index": 1, "error_code": CLUSTER_AUTHORIZATION_FAILED},
                                          {"partition_index": 0, "error_code": CLUSTER_AUTHORIZATION_FAILED}]}
    assert refused(_marker(5), _marker(5, ("t", [0, 1]))) == [{"producer_id": 5, "topics": [failed]}]
    # a later marker of the same producer replaces the earlier one whole
    assert refused(_marker(5, ("t", [0, 1])), _marker(5)) == [{"producer_id": 5, "topics": []}]
    # a HashMap sized to the markers (two producers: a table of 4, where 4 comes before 1 and 5
    # after it; in a table of 16 they come as the numbers do)
    assert [m["producer_id"] for m in refused(_marker(1), _marker(4))] == [4, 1]
    assert [m["producer_id"] for m in refused(_marker(5), _marker(1), _marker(1))] == [5, 1]
    # a super user's request writes: a marker of no partition has no answer
    assert broker.call(WRITE_TXN_MARKERS, 1, {"markers": [_marker(1)]}, _user("admin"))["markers"] == []


def test_fetch_of_an_unknown_topic_id_is_unknown_topic_id_before_any_authorization():
    """Kafka's handleFetchRequest resolves the ids first: an id no topic has is UNKNOWN_TOPIC_ID
    whoever asks; a topic the user may not read is TOPIC_AUTHORIZATION_FAILED."""
    broker, known = _secured_with_topic_t()
    unknown = uuid.UUID("6b1ff3f0-0000-4000-8000-0000deadbeef")
    answer = broker.call(1, 13, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                 "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
                                 "forgotten_topics_data": [], "topics": [
                                     {"topic_id": tid, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                                       "fetch_offset": 0, "last_fetched_epoch": -1,
                                                                       "log_start_offset": -1,
                                                                       "partition_max_bytes": 1024}]}
                                     for tid in (known, unknown)]}, _user())
    codes = {str(r["topic_id"]): r["partitions"][0]["error_code"] for r in answer["responses"]}
    assert codes == {str(known): 29, str(unknown): 100}  # TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_ID


def _topics(broker, api: int, version: int, body: dict, key: str) -> list[tuple[str, int]]:
    return [(r["name"], r["error_code"]) for r in broker.call(api, version, body, _user())[key]]


def test_a_timeout_of_zero_beside_a_refused_topic_fails_the_whole_request_when_another_passed():
    """Kafka's controller fails the request whole (getErrorResponse: every topic named, in the
    request's order, REQUEST_TIMED_OUT) once one topic got past the broker's own checks."""
    broker = InProcessBroker(**SECURED)
    broker.call(30, 3, {"creations": [{"resource_type": 2, "resource_name": "mine", "resource_pattern_type": 4,
                                        "principal": "User:u0", "host": "*", "operation": 2, "permission_type": 3}]},
                _user("admin"))
    grow = lambda *names: _topics(broker, 37, 0, {"topics": [  # noqa: E731
        {"name": n, "count": 2, "assignments": None} for n in names], "validate_only": False, "timeout_ms": -1}, "results")
    assert grow("other", "mine-t") == [("other", 7), ("mine-t", 7)]
    assert grow("other") == [("other", 29)]
    assert sorted(grow("other", "mine-t", "mine-t")) == [("mine-t", 42), ("other", 29)]
    create = lambda *names: _topics(broker, 19, 7, {"topics": [  # noqa: E731
        {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []} for n in names],
        "timeout_ms": 0, "validate_only": False}, "topics")
    assert create("other", "mine-a", "mine-b", "mine-b") == [("other", 7), ("mine-a", 7), ("mine-b", 7), ("mine-b", 7)]
    assert sorted(create("other", "mine-b", "mine-b")) == [("mine-b", 42), ("other", 29)]


def test_a_share_fetch_or_acknowledge_of_a_null_group_is_invalid_request_before_authorization():
    broker = InProcessBroker(**SECURED, **{"group.share.enable": "true"})
    member = "AAAAAAAAAAAAAAAAAAAAAA"
    fetch = lambda group: broker.call(78, 1, {  # noqa: E731
        "group_id": group, "member_id": member, "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
        "max_bytes": 1000, "max_records": 10, "batch_size": 10, "topics": [], "forgotten_topics_data": []},
        _user())["error_code"]
    acknowledge = lambda group: broker.call(79, 1, {  # noqa: E731
        "group_id": group, "member_id": member, "share_session_epoch": 0, "topics": []}, _user())["error_code"]
    assert (fetch(None), acknowledge(None)) == (42, 42)  # INVALID_REQUEST
    assert (fetch(""), acknowledge("")) == (30, 30)  # GROUP_AUTHORIZATION_FAILED: "" is a name


def test_a_transactional_id_is_authorized_only_beside_transactional_batches():
    """Kafka looks at WRITE on the transactional id only when a partition's first batch is
    transactional (then every partition is refused 53); otherwise the topic decides."""
    broker = InProcessBroker(**SECURED)
    admin = _user("admin")
    broker.call(19, 7, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                                    "configs": []}], "timeout_ms": 1000, "validate_only": False}, admin)
    from kipper.protocol import records

    def produce(txn: bool) -> int:
        batch = records.build_batch([(b"k", b"v")], producer_id=7 if txn else -1, producer_epoch=0 if txn else -1,
                                    base_sequence=0 if txn else -1, transactional=txn)
        answer = broker.call(0, 9, {"transactional_id": "x", "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}, _user())
        return answer["responses"][0]["partition_responses"][0]["error_code"]
    assert produce(txn=False) == 29  # TOPIC_AUTHORIZATION_FAILED: the id is not looked at
    assert produce(txn=True) == 53  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_refusals_of_a_user_who_is_no_super_user_have_kafkas_words():
    """A cluster operation refused is "Request <the request> needs OP permission." (Kafka's
    AuthHelper prints its Request object there; kipper describes its own connection); the
    controller's refusals of a topic or group carry their default texts, the broker's none."""
    broker = InProcessBroker(**SECURED)
    user = _user()
    call = lambda api, v, body: broker.call(api, v, body, user)  # noqa: E731
    needs = "Request Request(processor=0, connectionId=127.0.0.1:6000, session=Session(User:u0), " \
            "listenerName=ListenerName(PLAINTEXT), securityProtocol=PLAINTEXT, buffer=null, envelope=Optional.empty) " \
            "needs {} permission."
    acls = {"resource_type_filter": 2, "resource_name_filter": "t", "pattern_type_filter": 3, "principal_filter": None,
            "host_filter": None, "operation": 1, "permission_type": 1}
    assert call(29, 3, acls)["error_message"] == needs.format("DESCRIBE")
    acl = {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3, "principal": "User:u0", "host": "*",
           "operation": 2, "permission_type": 3}
    assert [r["error_message"] for r in call(30, 3, {"creations": [acl]})["results"]] == [needs.format("ALTER")]
    assert [r["error_message"] for r in call(31, 3, {"filters": [acls]})["filter_results"]] == [needs.format("ALTER")]
    altered = call(51, 0, {"deletions": [{"name": "zz", "mechanism": 1}, {"name": "aa", "mechanism": 2}],
                           "upsertions": []})["results"]
    assert [(r["user"], r["error_message"]) for r in altered] == [("aa", needs.format("ALTER")),
                                                                  ("zz", needs.format("ALTER"))]  # sorted
    described = call(50, 0, {"users": [{"name": "a"}, {"name": "b"}]})
    assert (described["error_message"], [(r["user"], r["error_code"]) for r in described["results"]]) == (
        None, [("", 31), ("", 31)])  # one result per user asked, each named ""
    assert call(48, 1, {"components": [], "strict": False})["error_message"] is None
    quota = {"entity": [{"entity_type": "user", "entity_name": "x"}], "ops": []}
    assert call(49, 1, {"validate_only": True, "entries": [quota]})["entries"][0]["error_message"] == \
        "Cluster authorization failed."
    configs = call(44, 1, {"validate_only": True, "resources": [
        {"resource_type": t, "resource_name": n, "configs": []} for t, n in ((2, "t"), (32, "g"), (4, ""), (8, "m"))]})
    assert [(r["error_code"], r["error_message"]) for r in configs["responses"]] == [
        (29, "Topic authorization failed."), (30, "Group authorization failed."), (31, None), (31, None)]
    legacy = call(33, 2, {"validate_only": True, "resources": [{"resource_type": 8, "resource_name": "m", "configs": []}]})
    assert legacy["responses"][0]["error_code"] == 42  # (no broker logger there, before any authorization)
    producers = call(61, 0, {"topics": [{"name": "t", "partition_indexes": [0]}]})
    assert producers["topics"][0]["partitions"][0]["error_message"] == "Topic authorization failed."


def test_a_heartbeat_refused_names_no_member_and_epoch_zero_as_kafkas_error_response():
    broker = InProcessBroker(**SECURED, **{"group.share.enable": "true"})
    member = "AAAAAAAAAAAAAAAAAAAAAA"
    share = broker.call(76, 1, {"group_id": "g", "member_id": member, "member_epoch": 0, "rack_id": None,
                                "subscribed_topic_names": ["t"]}, _user())
    consumer = broker.call(68, 1, {"group_id": "g", "member_id": member, "member_epoch": 0, "instance_id": None,
                                   "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"],
                                   "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []},
                           _user())
    for answer in (share, consumer):
        assert (answer["error_code"], answer["member_id"], answer["member_epoch"]) == (30, None, 0)


def test_requests_refused_before_their_group_answer_as_kafkas_error_responses():
    broker = InProcessBroker(**SECURED)
    call = lambda api, v, body: broker.call(api, v, body, _user())  # noqa: E731
    join = {"group_id": "g", "session_timeout_ms": 6000, "rebalance_timeout_ms": 6000, "member_id": "m",
            "group_instance_id": None, "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}
    refused = call(11, 7, join)
    assert (refused["error_code"], refused["member_id"], refused["protocol_name"]) == (30, "", None)
    assert call(11, 6, join)["protocol_name"] == ""
    offset = {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1, "committed_metadata": ""}
    topics = [{"name": "t", "partitions": [offset]}, {"name": "t", "partitions": []}]
    committed = call(8, 8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                            "group_instance_id": None, "topics": topics})["topics"]
    assert [(t["name"], len(t["partitions"])) for t in committed] == [("t", 1), ("t", 0)]  # as asked
    staged = call(28, 2, {"transactional_id": "x", "group_id": "g", "producer_id": 5, "producer_epoch": 0,
                          "topics": topics})["topics"]
    assert [(t["name"], len(t["partitions"])) for t in staged] == [("t", 1), ("t", 0)]


def test_list_offsets_reads_an_unknown_isolation_level_only_for_a_topic_the_user_may_describe():
    broker = InProcessBroker(**SECURED)
    body = {"replica_id": -1, "isolation_level": 3, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}
    assert broker.call(2, 6, body, _user())["topics"][0]["partitions"][0]["error_code"] == 29
    assert broker.call(2, 6, body, _user("admin"))["topics"][0]["partitions"][0]["error_code"] == 42


def test_describe_producers_looks_at_the_topics_name_before_authorization():
    broker = InProcessBroker(**SECURED)
    answer = broker.call(61, 0, {"topics": [{"name": "bad name!", "partition_indexes": [0]}]}, _user())
    assert answer["topics"][0]["partitions"][0]["error_code"] == 17  # INVALID_TOPIC_EXCEPTION


def test_describe_scram_credentials_of_every_user_refused_is_answered_with_the_refusal():
    """Kafka fails inside on the null list and never answers (run 31; listed,
    kafka-closes-the-connection); kipper answers the clear refusal, with no result."""
    broker = InProcessBroker(**SECURED)
    answer = broker.call(50, 0, {"users": None}, _user())
    assert (answer["error_code"], answer["results"]) == (31, [])


def test_add_partitions_to_txn_refused_lists_every_topic_as_asked():
    broker = InProcessBroker(**SECURED)
    answer = broker.call(24, 0, {"v3_and_below_transactional_id": "x", "v3_and_below_producer_id": 5,
                                 "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [
                                     {"name": "a", "partitions": []}, {"name": "b", "partitions": [0]}]}, _user())
    assert [(t["name"], len(t["results_by_partition"])) for t in answer["results_by_topic_v3_and_below"]] == [
        ("a", 0), ("b", 1)]


def test_offset_fetch_v0_v1_refused_carries_the_error_on_each_partition_asked():
    broker = InProcessBroker(**SECURED)
    body = {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 1]}]}
    old = broker.call(9, 1, body, _user())["topics"]
    assert [(p["partition_index"], p["committed_offset"], p["error_code"]) for p in old[0]["partitions"]] == [
        (0, -1, 30), (1, -1, 30)]
    newer = broker.call(9, 2, body, _user())
    assert (newer["error_code"], newer["topics"]) == (30, [])


def test_a_replicas_fetch_without_cluster_action_is_refused_on_every_partition():
    broker = InProcessBroker(**SECURED)
    answer = broker.call(1, 11, {"replica_id": 0, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                 "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
                                 "forgotten_topics_data": [], "topics": [{"topic": "nowhere", "partitions": [
                                     {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                      "log_start_offset": -1, "partition_max_bytes": 100}]}]}, _user())
    [row] = answer["responses"][0]["partitions"]
    assert (row["error_code"], list(row["aborted_transactions"])) == (29, [])


def test_find_coordinator_v0_v3_refused_carries_kafkas_text_and_share_describe_epochs_zero():
    broker = InProcessBroker(**SECURED, **{"group.share.enable": "true"})
    found = broker.call(10, 2, {"key_type": 1, "key": "x"}, _user())
    assert (found["error_code"], found["error_message"]) == (53, "Transactional Id authorization failed.")
    [group] = broker.call(77, 1, {"group_ids": ["g"], "include_authorized_operations": False}, _user())["groups"]
    assert (group["error_code"], group["group_epoch"], group["assignment_epoch"]) == (30, 0, 0)


def test_offset_for_leader_epoch_refused_is_topic_authorization_failed_whatever_the_replica_id():
    broker = InProcessBroker(**SECURED)
    for replica in (0, -1):
        answer = broker.call(23, 4, {"replica_id": replica, "topics": [{"topic": "t", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}, _user())
        assert answer["topics"][0]["partitions"][0]["error_code"] == 29


def test_past_a_join_an_empty_classic_group_holds_its_id_against_a_consumer_heartbeat():
    """(Not a user's; run 32.) Kafka converts a classic group only for a join; a leave or a
    heartbeat of a later epoch finds a group that is not a consumer group."""
    broker = InProcessBroker()
    broker.call(19, 7, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                                    "configs": []}], "timeout_ms": 1000, "validate_only": False})
    broker.call(8, 2, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "retention_time_ms": -1,
                       "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                                "committed_metadata": ""}]}]})
    for epoch in (-1, 5):
        answer = broker.call(68, 0, {"group_id": "g", "member_id": "m", "member_epoch": epoch, "instance_id": None,
                                     "rack_id": None, "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["t"],
                                     "server_assignor": None, "topic_partitions": []})
        assert (answer["error_code"], answer["error_message"]) == (69, "Group g is not a consumer group.")


def test_a_quota_entitys_values_are_checked_in_the_order_of_kafkas_map_of_its_keys():
    """(Not a user's; run 32.) A HashMap sized to the ops: connection_creation_rate (no user's
    key) before producer_byte_rate, consumer_byte_rate before request_percentage."""
    broker = InProcessBroker()
    entry = lambda i, *keys: {"entity": [{"entity_type": "user", "entity_name": f"u{i}"}],  # noqa: E731
                              "ops": [{"key": k, "value": 0.0, "remove": False} for k in keys]}
    answer = broker.call(49, 1, {"validate_only": True, "entries": [
        entry(0, "producer_byte_rate", "connection_creation_rate"), entry(1, "request_percentage", "consumer_byte_rate")]})
    assert [e["error_message"] for e in answer["entries"]] == [
        "Invalid configuration key connection_creation_rate", "Quota consumer_byte_rate must be greater than 0"]


def test_a_share_key_asks_cluster_action_before_it_is_read_and_only_from_v6():
    """Kafka's getCoordinator: a share-partition key is a broker's question (CLUSTER_ACTION on the
    cluster, refused with its text), looked at only after that; before v6 it is INVALID_REQUEST."""
    broker = InProcessBroker(**SECURED, **{"group.share.enable": "true"})
    keys = ["g:AAAAAAAAAAAAAAAAAAAAAA:0", "g", ""]
    refused = broker.call(10, 6, {"key_type": 2, "coordinator_keys": keys}, _user())["coordinators"]
    assert [(c["error_code"], c["error_message"]) for c in refused] == [(31, "Cluster authorization failed.")] * 3
    admin = broker.call(10, 6, {"key_type": 2, "coordinator_keys": keys}, _user("admin"))["coordinators"]
    assert [c["error_code"] for c in admin] == [0, 42, 42]
    for who in (_user(), _user("admin")):
        early = broker.call(10, 5, {"key_type": 2, "coordinator_keys": keys}, who)["coordinators"]
        assert [(c["error_code"], c["error_message"]) for c in early] == [(42, "")] * 3


def test_metadata_by_topic_id_refuses_a_topic_the_user_may_not_describe_without_its_name():
    broker, known = _secured_with_topic_t()
    unknown = uuid.UUID("6b1ff3f0-0000-4000-8000-0000deadbeef")
    answer = broker.call(3, 12, {"topics": [{"name": None, "topic_id": tid} for tid in (known, unknown)],
                                 "allow_auto_topic_creation": False, "include_topic_authorized_operations": False},
                         _user())
    assert [(t["topic_id"], t["name"], t["error_code"]) for t in answer["topics"]] == [(known, None, 29),
                                                                                      (unknown, None, 100)]
