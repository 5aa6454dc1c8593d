"""What the generator met once its steps could be a user's who is no super user (the "user"
connection: SASL as the sequence's own user <T>-u0, docs/CONFORMANCE.md), replayed against
Kafka 4.4 (tests/unit/test_user_connection_findings.py states each answer)."""

from __future__ import annotations

from tests.conformance.fuzz.side import user_credential
from tests.conformance.scenarios import register
from tests.conformance.scenarios.generated import T0, replay

USER = {"api": "AlterUserScramCredentials", "version": 0, "body": {"deletions": [], "upsertions": [user_credential()]}}


GRANT_TOPICS = {"api": "CreateAcls", "version": 3, "body": {"creations": [{
    "resource_type": 2, "resource_name": "<T>-t", "resource_pattern_type": 4, "principal": "User:<T>-u0", "host": "*",
    "operation": 2, "permission_type": 3}]}}


def _grow(names: list[str], timeout: int) -> dict:
    return {"api": "CreatePartitions", "version": 0, "conn": "user", "body": {
        "topics": [{"name": n, "count": 2, "assignments": None} for n in names], "validate_only": False,
        "timeout_ms": timeout}}


def _create(names: list[str], timeout: int) -> dict:
    return {"api": "CreateTopics", "version": 7, "conn": "user", "body": {"topics": [
        {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []} for n in names],
        "timeout_ms": timeout, "validate_only": False}}


def _delete(names: list[str], timeout: int) -> dict:
    return {"api": "DeleteTopics", "version": 5, "conn": "user", "body": {"topic_names": names, "timeout_ms": timeout}}


def _user(api: str, version: int, body: dict) -> dict:
    return {"api": api, "version": version, "conn": "user", "body": body}


def _produce(topic: str, txn: bool, pid: int = -1) -> dict:
    return {"api": "Produce", "version": 9, "conn": "user", "body": {
        "transactional_id": "<T>-x0", "acks": -1, "timeout_ms": 30000,
        "topic_data": [{"name": topic, "partition_data": [
            {"index": 0, "records": {"<batch>": {"n": 1, "start": 0, "pid": pid, "epoch": 0 if txn else -1,
                                                 "seq": 0 if txn else -1, "txn": txn, "codec": 0,
                                                 "timestamps": "create", "keys": True, "mutation": None}}}]}]}}


def _fetch_by_ids(replica: int) -> dict:
    """Fetch v13 of t0 and of a topic id no topic has, as the user."""
    return {"api": "Fetch", "version": 13, "conn": "user", "body": {
        "replica_id": replica, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1048576, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [], "topics": [
            {"topic_id": tid, "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                              "last_fetched_epoch": -1, "log_start_offset": -1,
                                              "partition_max_bytes": 1024}]}
            for tid in ({"<topic_id>": "<T>-t0"}, "6b1ff3f0-0000-4000-8000-0000deadbeef")]}}


def _markers(*markers: tuple[int, list]) -> dict:
    return {"api": "WriteTxnMarkers", "version": 1, "conn": "user", "body": {"markers": [
        {"producer_id": pid, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
         "topics": [{"name": n, "partition_indexes": ps} for n, ps in topics]} for pid, topics in markers]}}


def _share_coordinators() -> list[dict]:
    """FindCoordinator of share-partition keys (which only brokers look up: CLUSTER_ACTION, asked
    before the key is read), a valid and a malformed one, in v6 and before (no share keys yet)."""
    keys = ["<T>-g2:AAAAAAAAAAAAAAAAAAAAAA:0", "<T>-g0", ""]
    return [*(_user("FindCoordinator", v, {"key_type": 2, "coordinator_keys": keys}) for v in (6, 4)),
            _user("FindCoordinator", 3, {"key_type": 2, "key": keys[0]}),
            {"api": "FindCoordinator", "version": 5, "body": {"key_type": 2, "coordinator_keys": keys}}]


USER_RUN: dict[str, list[dict]] = {
    # refused whole (CLUSTER_ACTION): every marker's producer id, one of no partition too, the
    # later marker of a producer replacing the earlier, in a HashMap sized to the markers
    "generated/write-txn-markers-refused-names-every-producer": [
        USER,
        _markers((1, [])),
        _markers((5, []), (5, [("<T>-t0", [0, 1])])),
        _markers((5, [("<T>-t0", [0, 1])]), (5, [])),
        _markers((1, []), (4, [])),
        _markers((5, []), (1, []), (1, [])),
    ],
    # an id no topic has is UNKNOWN_TOPIC_ID before any authorization; a topic the user may not
    # read is TOPIC_AUTHORIZATION_FAILED
    "generated/fetch-unknown-topic-id-before-authorization": [
        T0, USER,
        _fetch_by_ids(replica=-1),
        # Metadata by ids: a topic id is no secret to Kafka, a topic the user may not describe is
        # refused as such (not UNKNOWN_TOPIC_ID as for an id no topic has)
        _user("Metadata", 12, {"topics": [{"topic_id": tid, "name": None} for tid in (
            {"<topic_id>": "<T>-t0"}, "6b1ff3f0-0000-4000-8000-0000deadbeef")],
            "allow_auto_topic_creation": False, "include_topic_authorized_operations": True}),
        # a replica's fetch without CLUSTER_ACTION: every partition refused, whatever it names
        _fetch_by_ids(replica=0),
        {"api": "Fetch", "version": 11, "conn": "user", "body": {
            "replica_id": 0, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1048576, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [], "topics": [
                {"topic": "<T>-t0", "partitions": [{"partition": p, "current_leader_epoch": -1, "fetch_offset": 0,
                                                    "log_start_offset": -1, "partition_max_bytes": 100}
                                                   for p in (0, 0, 7)]}]}},
    ],
    # a timeout of 0 or less beside a topic the user may not touch: when another passed the
    # broker's checks, Kafka's controller fails the whole request, every topic REQUEST_TIMED_OUT;
    # when none did, the refusals are the answer (DeleteTopics: timed out whatever)
    "generated/topic-requests-timed-out-whole-beside-refusals": [
        T0, USER, GRANT_TOPICS,
        _grow(["zz-a", "<T>-t0"], -1), _grow(["zz-a"], -1), _grow(["zz-a", "<T>-t0", "<T>-t0"], 0),
        _grow(["zz-a", "zz-a"], -1), _grow(["zz-a", "<T>-t0", "<T>-t1", "<T>-t1"], 0),
        _create(["zz-b", "<T>-t7"], -1), _create(["zz-b"], -1), _create(["zz-b", "<T>-t7", "<T>-t7"], 0),
        _create(["zz-b", "<T>-t8", "<T>-t7", "<T>-t7"], 0),
        _delete(["zz-c", "<T>-t0"], -1), _delete(["zz-c"], -1), _delete(["zz-c", "<T>-t0", "<T>-t0"], 0),
    ],
    # a null group is INVALID_REQUEST before any authorization ("" is a name, refused the user)
    "generated/share-fetch-null-group-before-authorization": [
        USER,
        *({"api": api, "version": 1, "conn": "user", "body": {
            "group_id": group, "member_id": "AAAAAAAAAAAAAAAAAAAAAA", "share_session_epoch": 0, "topics": [], **extra}}
          for group in (None, "") for api, extra in (
              ("ShareFetch", {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1000, "max_records": 10,
                              "batch_size": 10, "forgotten_topics_data": []}), ("ShareAcknowledge", {}))),
    ],
    # a transactional id is authorized only beside transactional batches (then the whole request
    # is refused); beside others it is not looked at, and the topic decides
    "generated/produce-transactional-id-authorized-only-for-transactional-batches": [
        T0, USER,
        _produce("<T>-t0", txn=False),
        GRANT_TOPICS,
        _produce("<T>-t0", txn=False),
        _produce("zz-t0", txn=False),
        _produce("<T>-t0", txn=True, pid=999999),
    ],
    # a request refused before its group or topics: Kafka's error response of each API (a
    # JoinGroup names no member and, from v7, no protocol; a TxnOffsetCommit lists its topics as
    # asked); ListOffsets reads an isolation level it does not know only for a topic the user
    # may describe; DescribeProducers looks at the topic's name before authorization
    "generated/group-requests-refused-as-kafkas-error-responses": [
        T0, USER,
        _user("JoinGroup", 7, {"group_id": "<T>-g0", "session_timeout_ms": 6000, "rebalance_timeout_ms": 0,
                               "member_id": "<T>-m1", "group_instance_id": None, "protocol_type": "consumer",
                               "protocols": [{"name": "", "metadata": {"<subscription>": []}}]}),
        _user("JoinGroup", 5, {"group_id": "<T>-g0", "session_timeout_ms": 6000, "rebalance_timeout_ms": 0,
                               "member_id": "<T>-m1", "group_instance_id": None, "protocol_type": "consumer",
                               "protocols": [{"name": "range", "metadata": {"<subscription>": []}}]}),
        _user("SyncGroup", 5, {"group_id": "<T>-g0", "generation_id": 1, "member_id": "<T>-m1",
                               "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
                               "assignments": []}),
        _user("Heartbeat", 4, {"group_id": "<T>-g0", "generation_id": 1, "member_id": "<T>-m1",
                               "group_instance_id": None}),
        _user("LeaveGroup", 5, {"group_id": "<T>-g0", "members": [{"member_id": "<T>-m1", "group_instance_id": None,
                                                                    "reason": None}]}),
        _user("LeaveGroup", 2, {"group_id": "<T>-g0", "member_id": "<T>-m1"}),
        _user("OffsetCommit", 8, {"group_id": "<T>-g0", "generation_id_or_member_epoch": -1, "member_id": "",
                                  "group_instance_id": None, "topics": [
                                      {"name": "<T>-t0", "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                                         "committed_leader_epoch": -1,
                                                                         "committed_metadata": ""}]},
                                      {"name": "<T>-t0", "partitions": []}]}),
        _user("TxnOffsetCommit", 2, {"transactional_id": "<T>-x0", "group_id": "<T>-g0", "producer_id": 5,
                                     "producer_epoch": 0, "topics": [
                                         {"name": "<T>-t0", "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                                            "committed_leader_epoch": -1,
                                                                            "committed_metadata": ""}]},
                                         {"name": "<T>-t0", "partitions": []}]}),
        *(_user("OffsetFetch", v, {"group_id": "<T>-g0", "topics": [
            {"name": "<T>-t0", "partition_indexes": [0, 1, 0]}, {"name": "<T>-t1", "partition_indexes": []},
            {"name": "<T>-t0", "partition_indexes": [0]}]})
          for v in (0, 1, 2, 7)),
        _user("ShareGroupDescribe", 1, {"group_ids": ["<T>-g0"], "include_authorized_operations": True}),
        _user("ConsumerGroupDescribe", 1, {"group_ids": ["<T>-g0"], "include_authorized_operations": True}),
        _user("FindCoordinator", 2, {"key_type": 1, "key": "<T>-x0"}),
        _user("FindCoordinator", 2, {"key_type": 0, "key": "<T>-g0"}),
        *_share_coordinators(),
        _user("OffsetForLeaderEpoch", 4, {"replica_id": 0, "topics": [{"topic": "<T>-t0", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}),
        _user("OffsetForLeaderEpoch", 4, {"replica_id": -1, "topics": [{"topic": "<T>-t0", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}),
        _user("OffsetDelete", 0, {"group_id": "<T>-g0", "topics": [{"name": "<T>-t0", "partitions": [
            {"partition_index": 0}]}]}),
        {"api": "ListOffsets", "version": 8, "body": {"replica_id": -1, "isolation_level": 3, "topics": [
            {"name": "<T>-t0", "partitions": []}]}},
        _user("ListOffsets", 6, {"replica_id": -1, "isolation_level": 3, "topics": [
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}),
        _user("DescribeProducers", 0, {"topics": [{"name": "<T>-t0", "partition_indexes": [0]},
                                                  {"name": "bad name!", "partition_indexes": [0, 0]}]}),
    ],
    # (not a user's) Metadata v0-v3 auto-create whatever they name; Kafka 4.4 answers the topic it
    # is making UNKNOWN_TOPIC_OR_PARTITION and makes it a moment later: the generator waits for it
    # (it waited only for LEADER_NOT_AVAILABLE, and only when allow_auto_topic_creation said so)
    "generated/metadata-v0-auto-creates-a-moment-later": [
        {"api": "Metadata", "version": 0, "body": {"topics": [{"name": "<T>-t5"}]}},
        {"api": "Metadata", "version": 0, "body": {"topics": [{"name": "<T>-t5"}]}},
    ],
}



_ACL = {"resource_type": 2, "resource_name": "<T>-t0", "resource_pattern_type": 3, "principal": "User:<T>-u0",
        "host": "*", "operation": 2, "permission_type": 3}
_ACLS = {"resource_type_filter": 2, "resource_name_filter": "<T>-t0", "pattern_type_filter": 3,
         "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}
_CONFIGS = [{"resource_type": 2, "resource_name": "<T>-t0", "configs": [{"name": "retention.ms", "value": "1000"}]},
            {"resource_type": 4, "resource_name": "", "configs": []},
            {"resource_type": 32, "resource_name": "<T>-g0", "configs": [{"name": "consumer.session.timeout.ms",
                                                                          "value": "45000"}]},
            {"resource_type": 8, "resource_name": "m", "configs": []}]

# the same refusals with their texts compared word for word: Kafka's "Request <the request> needs
# ALTER permission." (its Request object masked), the default texts of the controller's
# refusals, none where Kafka's broker refuses
def _consumer_heartbeat(epoch: int) -> dict:
    return {"api": "ConsumerGroupHeartbeat", "version": 0, "body": {
        "group_id": "<T>-g2", "member_id": "AAAAAAAAAAAAAAAAAAAAAA", "member_epoch": epoch, "instance_id": None,
        "rack_id": None, "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["<T>-t0"], "server_assignor": None,
        "topic_partitions": []}}


MESSAGES_RUN: dict[str, list[dict]] = {
    # share.auto.offset.reset=by_duration:<ISO-8601 duration> (Kafka 4.4), negative or malformed
    # ones refused with ShareGroupAutoOffsetResetStrategy's words (tool generator, run 4)
    "generated/share-auto-offset-reset-by-duration": [
        *({"api": "IncrementalAlterConfigs", "version": 1, "body": {"resources": [{
            "resource_type": 32, "resource_name": "<T>-g2", "configs": [
                {"name": "share.auto.offset.reset", "config_operation": 0, "value": value}]}],
            "validate_only": False}}
          for value in ("by_duration:PT1H", "sometime", "by_duration:-PT1H", "BY_DURATION:PT1H", "by_duration:",
                        "by_duration:1h", "by_duration:P1D ", "by_duration:pt0s")),
        {"api": "DescribeConfigs", "version": 4, "body": {"resources": [{
            "resource_type": 32, "resource_name": "<T>-g2", "configuration_keys": ["share.auto.offset.reset"]}],
            "include_synonyms": False, "include_documentation": False}},
    ],
    # (not a user's) past a join, a classic group holds its id, an empty one (of offsets) too:
    # "Group <id> is not a consumer group." (run 32)
    # (not a user's) a quota entity's values are checked in the order of Kafka's HashMap of its
    # keys: "connection_creation_rate" (no user's key) before "producer_byte_rate" (run 32)
    "generated/client-quota-values-checked-in-hash-order": [
        {"api": "AlterClientQuotas", "version": 1, "body": {"validate_only": True, "entries": [
            {"entity": [{"entity_type": "user", "entity_name": f"<T>-q{i}"}], "ops": [
                {"key": k, "value": 0.0, "remove": False} for k in keys]}
            for i, keys in enumerate((("producer_byte_rate", "connection_creation_rate"),
                                      ("request_percentage", "consumer_byte_rate"),
                                      ("consumer_byte_rate", "producer_byte_rate", "request_percentage")))]}},
    ],
    "generated/consumer-heartbeat-past-a-join-to-an-empty-classic-group": [
        T0,
        {"api": "OffsetCommit", "version": 2, "body": {
            "group_id": "<T>-g2", "generation_id_or_member_epoch": -1, "member_id": "", "retention_time_ms": -1,
            "topics": [{"name": "<T>-t0", "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                          "committed_metadata": ""}]}]}},
        _consumer_heartbeat(-1), _consumer_heartbeat(5),
    ],
    # (not a user's) seed 004's share.auto.offset.reset topic config refuses a value of its own:
    # Kafka knows no such topic config (share-auto-offset-reset-topic-config-texts)
    "generated/share-auto-offset-reset-refused-as-a-topic-config": [
        T0, {"api": "AlterConfigs", "version": 0, "body": {"validate_only": False, "resources": [
            {"resource_type": 2, "resource_name": "<T>-t0", "configs": [{"name": "share.auto.offset.reset",
                                                                          "value": "1"}]}]}},
    ],
    "generated/refusals-of-a-user-who-is-no-super-user-texts": [
        T0, USER,
        _user("DescribeAcls", 3, _ACLS),
        _user("CreateAcls", 3, {"creations": [_ACL, _ACL]}),
        _user("DeleteAcls", 3, {"filters": [_ACLS, _ACLS]}),
        _user("DescribeClientQuotas", 1, {"components": [{"entity_type": "user", "match_type": 0, "match": "x"}],
                                          "strict": False}),
        _user("AlterClientQuotas", 1, {"validate_only": True, "entries": [
            {"entity": [{"entity_type": "user", "entity_name": "x"}],
             "ops": [{"key": "producer_byte_rate", "value": 1.0, "remove": False}]},
            {"entity": [{"entity_type": "client-id", "entity_name": "y"}], "ops": []},
            {"entity": [{"entity_type": "user", "entity_name": "q"}, {"entity_type": "user", "entity_name": None},
                        {"entity_type": "ip", "entity_name": ""}], "ops": []}]}),
        _user("DescribeUserScramCredentials", 0, {"users": [{"name": "<T>-u0"}, {"name": ""}, {"name": "<T>-u0"}]}),
        _user("DescribeUserScramCredentials", 0, {"users": []}),
        _user("AddPartitionsToTxn", 0, {"v3_and_below_transactional_id": "<T>-x0", "v3_and_below_producer_id": 5,
                                        "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [
                                            {"name": "<T>-t0", "partitions": []}, {"name": "<T>-t1", "partitions": [0]}]}),
        _user("AlterUserScramCredentials", 0, {"upsertions": [user_credential()], "deletions": [
            {"name": "zz", "mechanism": 1}, {"name": "aa", "mechanism": 2}]}),
        _user("IncrementalAlterConfigs", 1, {"validate_only": True, "resources": [
            {**r, "configs": [{**c, "config_operation": 0} for c in r["configs"]]} for r in _CONFIGS]}),
        _user("AlterConfigs", 2, {"validate_only": True, "resources": _CONFIGS}),
        _user("DescribeConfigs", 4, {"resources": [
            {"resource_type": r["resource_type"], "resource_name": r["resource_name"] or "1", "configuration_keys": None}
            for r in _CONFIGS[:3]],
                                     "include_synonyms": False, "include_documentation": False}),
        _user("DescribeProducers", 0, {"topics": [{"name": "<T>-t0", "partition_indexes": [0]}]}),
        _user("UpdateFeatures", 1, {"timeout_ms": 1000, "validate_only": True, "feature_updates": [
            {"feature": "share.version", "max_version_level": 1, "upgrade_type": 1}]}),
        _user("UpdateFeatures", 0, {"timeout_ms": 1000, "feature_updates": [
            {"feature": "share.version", "max_version_level": 1, "allow_downgrade": False}]}),
        _user("DescribeLogDirs", 4, {"topics": None}),
        _user("ElectLeaders", 2, {"election_type": 0, "topic_partitions": None, "timeout_ms": 1000}),
        _user("ElectLeaders", 2, {"election_type": 0, "timeout_ms": 30000, "topic_partitions": [
            {"topic": "<T>-t0", "partitions": [0, 0, 1]}, {"topic": "zz", "partitions": [3]}]}),
        _user("ElectLeaders", 0, {"topic_partitions": [{"topic": "<T>-t0", "partitions": [0]}], "timeout_ms": 30000}),
        _user("ShareGroupHeartbeat", 1, {"group_id": "<T>-g0", "member_id": "AAAAAAAAAAAAAAAAAAAAAA", "member_epoch": 0,
                                         "rack_id": None, "subscribed_topic_names": ["<T>-t0"]}),
        _user("ConsumerGroupHeartbeat", 1, {
            "group_id": "<T>-g0", "member_id": "AAAAAAAAAAAAAAAAAAAAAA", "member_epoch": 0, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["<T>-t0"],
            "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []}),
        _user("DescribeTransactions", 0, {"transactional_ids": ["<T>-x0"]}),
        _user("FindCoordinator", 2, {"key_type": 1, "key": "<T>-x0"}),
        _user("FindCoordinator", 2, {"key_type": 0, "key": "<T>-g0"}),
        *_share_coordinators(),
        _user("DescribeQuorum", 2, {"topics": [
            {"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]}),
    ],
}

for _name, _steps in USER_RUN.items():
    register(_name, replay(_steps))
for _name, _steps in MESSAGES_RUN.items():
    register(_name, replay(_steps, messages=True))
