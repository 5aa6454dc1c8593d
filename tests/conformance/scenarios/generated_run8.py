"""What the generator's eighth run found (issue 36, docs/FUZZ_FINDINGS.md), each the sequence a
difference shrank to or a few variants of it, replayed as generated.py replays (every one
passes against Kafka 4.4; tests/unit/test_eighth_run_findings.py states each answer)."""

from __future__ import annotations

from tests.conformance.scenarios import register
from tests.conformance.scenarios.generated import T0, replay


def _streams_join(active, standby, warmup) -> dict:
    return {"api": "StreamsGroupHeartbeat", "version": 0, "body": {
        "group_id": "<T>-g0", "member_id": "<T>-m0", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 1000, "topology": {"epoch": 0, "subtopologies": []}, "active_tasks": active,
        "standby_tasks": standby, "warmup_tasks": warmup, "process_id": "x", "user_endpoint": None,
        "client_tags": None, "task_offsets": None, "task_end_offsets": None, "shutdown_application": False}}


def _alter(group: str, topics: list) -> dict:
    return {"api": "AlterShareGroupOffsets", "version": 0, "body": {"group_id": group, "topics": topics}}


def _described(group: str) -> dict:
    return {"api": "ShareGroupDescribe", "version": 1, "body": {"group_ids": [group], "include_authorized_operations": False}}


_AT_0 = [{"partition_index": 0, "start_offset": 0}]
_ZERO_ID, _UNKNOWN_ID = "00000000-0000-0000-0000-000000000000", "6b1ff3f0-0000-4000-8000-0000deadbeef"
_BATCH = {"<batch>": {"n": 1, "start": 0, "pid": -1, "epoch": 0, "seq": 0, "txn": False, "codec": 0,
                      "timestamps": "create", "keys": True, "mutation": None}}
_END_OF_T0 = {"api": "ListOffsets", "version": 7, "body": {"replica_id": -1, "isolation_level": 0, "topics": [
    {"name": "<T>-t0", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}}

def _consumer_heartbeat(member: str, epoch, regex: str | None, names=None) -> dict:
    return {"api": "ConsumerGroupHeartbeat", "version": 1, "body": {
        "group_id": "<T>-g0", "member_id": member, "member_epoch": epoch, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 1000, "subscribed_topic_names": names, "subscribed_topic_regex": regex,
        "server_assignor": None, "topic_partitions": [] if epoch == 0 else None}}


def _scram(name: str, iterations: int, hex_bytes: str = "00") -> dict:
    return {"name": name, "mechanism": 1, "iterations": iterations, "salt": {"<hex>": hex_bytes},
            "salted_password": {"<hex>": hex_bytes}}


def _marker(producer_id: int, coordinator_epoch: int) -> dict:
    return {"producer_id": producer_id, "producer_epoch": 0, "transaction_result": False,
            "topics": [{"name": "<T>-t0", "partition_indexes": [0]}], "coordinator_epoch": coordinator_epoch}


def _join_group(group: str, member: str, protocol_type: str) -> dict:
    return {"api": "JoinGroup", "version": 1, "body": {
        "group_id": group, "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "protocol_type": protocol_type,
        "member_id": member, "protocols": [{"name": "range", "metadata": {"<hex>": "00"}}]}}


RUN_8: dict[str, list[dict]] = {
    # a streams member joining must send its three task lists empty: null is not empty (seed 9002)
    "generated/streams-join-with-null-task-lists": [
        T0,
        _streams_join(None, None, None),
        _streams_join([], None, None),
        _streams_join([], [], None),
        _streams_join(None, [], []),
    ],
    # a partition whose records are null: Kafka cannot read the request and closes the connection,
    # appending none of it (kipper appended the partitions before it, then failed) (seed 9101)
    "generated/produce-null-records-closes-and-appends-nothing": [
        {**T0, "body": {**T0["body"], "topics": [dict(T0["body"]["topics"][0], num_partitions=2)]}},
        {"api": "Produce", "version": 9, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
                                                  "topic_data": [{"name": "<T>-t0", "partition_data": [
                                                      {"index": 0, "records": _BATCH}, {"index": 1, "records": None}]}]}},
        _END_OF_T0,
    ],
    # a transactional batch whose producer is not in the transaction: Kafka's coordinator says
    # so before its LogValidator reads the batch (a control batch, a bad CRC, a wrong count),
    # and null records of a topic it does not have are that topic's refusal (seed 9101)
    "generated/produce-verified-before-the-batch-is-validated": [
        T0,
        *[{"api": "Produce", "version": 12, "body": {
            "transactional_id": "<T>-x1", "acks": -1, "timeout_ms": 30000, "topic_data": [
                {"name": "<T>-t1", "partition_data": [{"index": 0, "records": None}]},
                {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {
                    **_BATCH["<batch>"], "n": 2, "pid": 999999999999, "txn": True, "mutation": mutation}}}]}]}}
          for mutation in ("control", "crc", "count", None)],
        _END_OF_T0,
    ],
    # Kafka looks at a new regex once it has found the group and the member: a join with an
    # invalid one makes no group, an unknown member is unknown first, a leave ignores it (seed 503)
    "generated/consumer-heartbeat-regex-after-the-member": [
        T0,
        _consumer_heartbeat("<T>-m0", 0, "["),
        {"api": "ConsumerGroupDescribe", "version": 0, "body": {"group_ids": ["<T>-g0"],
                                                                "include_authorized_operations": False}},
        _consumer_heartbeat("<T>-m0", 0, None, ["<T>-t0"]),
        _consumer_heartbeat("<T>-m1", 3, "["),
        _consumer_heartbeat("<T>-m0", {"<member_epoch>": 0}, "("),
        _consumer_heartbeat("<T>-m0", -1, "["),
    ],
    # a transactional batch of no records still makes the request transactional (seed 2502)
    "generated/produce-a-transactional-batch-of-no-records-without-a-transactional-id": [
        T0,
        {"api": "Produce", "version": 5, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
                                                  "topic_data": [{"name": "<T>-t0", "partition_data": [
                                                      {"index": 0, "records": {"<batch>": {
                                                          **_BATCH["<batch>"], "pid": 999999999999, "txn": True,
                                                          "mutation": "no_records"}}}]}]}},
    ],
    # an upsertion's iterations are looked at with its mechanism, change by change, before a
    # user named again is refused: the first change's error stands (seed 9201)
    "generated/scram-credentials-iterations-before-a-user-twice": [
        {"api": "AlterUserScramCredentials", "version": 0, "body": {
            "deletions": [{"name": "<T>-u0", "mechanism": 1}],
            "upsertions": [_scram("<T>-u9", 16385, ""), _scram("<T>-u9", 4096, "")]}},
        {"api": "AlterUserScramCredentials", "version": 0, "body": {"deletions": [], "upsertions": [
            _scram("<T>-u1", 1), _scram("<T>-u1", 4096), _scram("<T>-u2", 4096), _scram("<T>-u2", 16385),
            _scram("<T>-u3", 16385)]}},
    ],
    # a group added with AddOffsetsToTxn is its __consumer_offsets partition in DescribeTransactions,
    # the topic made yet or not (seed 11201)
    "generated/describe-transactions-lists-a-groups-offsets-partition": [
        T0,
        {"api": "InitProducerId", "version": 1, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000}},
        {"api": "AddOffsetsToTxn", "version": 2, "body": {"transactional_id": "<T>-x0", "producer_id": {"<pid>": "<T>-x0"},
                                                          "producer_epoch": {"<epoch>": 0}, "group_id": ""}},
        {"api": "AddOffsetsToTxn", "version": 2, "body": {"transactional_id": "<T>-x0", "producer_id": {"<pid>": "<T>-x0"},
                                                          "producer_epoch": {"<epoch>": 0}, "group_id": "<T>-g0"}},
        {"api": "DescribeTransactions", "version": 0, "body": {"transactional_ids": ["<T>-x0"]}},
    ],
    # ShareFetch and ShareAcknowledge refuse a member id of more than 36 characters (a UUID's
    # text) as ShareGroupHeartbeat does, before the session (seed 10202)
    "generated/share-fetch-and-acknowledge-member-id-lengths": [
        *[{"api": "ShareAcknowledge", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "x" * n,
                                                          "share_session_epoch": e, "topics": []}}
          for n, e in ((36, 0), (37, 0), (37, 1))],
        *[{"api": "ShareFetch", "version": 1, "body": {
            "group_id": "<T>-g0", "member_id": "x" * n, "share_session_epoch": e, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 100, "max_records": 10, "batch_size": 10, "topics": [], "forgotten_topics_data": []}}
          for n, e in ((37, 0), (38, 1))],
    ],
    # a marker of a coordinator epoch older than the producer's last marker's is fenced
    # (TRANSACTION_COORDINATOR_FENCED), in one request or the next (seed 9203)
    "generated/write-txn-markers-an-older-coordinator-epoch": [
        T0,
        {"api": "WriteTxnMarkers", "version": 1, "body": {"markers": [_marker(777001, 5), _marker(777001, 0)]}},
        {"api": "WriteTxnMarkers", "version": 1, "body": {"markers": [_marker(777002, 5)]}},
        {"api": "WriteTxnMarkers", "version": 1, "body": {"markers": [_marker(777002, 0)]}},
        {"api": "WriteTxnMarkers", "version": 1, "body": {"markers": [_marker(777003, 0), _marker(777003, 5)]}},
    ],
    # a JoinGroup for an id a share group or a consumer group holds: INCONSISTENT_GROUP_PROTOCOL,
    # thrown on Kafka, so no member id is echoed (seed 11203)
    "generated/join-group-of-another-kind-of-group-echoes-no-member-id": [
        T0,
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "<T>-m0", "member_epoch": 0,
                                                             "rack_id": None, "subscribed_topic_names": ["<T>-t0"]}},
        _join_group("<T>-g0", "<T>-m0", "consumer"),
        _join_group("<T>-g0", "", "consumer"),
        {**_consumer_heartbeat("<T>-m1", 0, None, ["<T>-t0"]),
         "body": {**_consumer_heartbeat("<T>-m1", 0, None, ["<T>-t0"])["body"], "group_id": "<T>-g1"}},
        _join_group("<T>-g1", "<T>-zz", "consumer"),
        _join_group("<T>-g1", "<T>-zz", "other"),
    ],
    # before acks are looked at, Kafka reads the records as validateRecords does: zstd before v7
    # is refused, a batch of no records is not (seeds 10208, 11208)
    "generated/produce-invalid-acks-after-the-records-are-read": [
        T0,
        {"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": 2, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {**_BATCH["<batch>"], "codec": 4}}}]}]}},
        {"api": "Produce", "version": 6, "body": {"transactional_id": None, "acks": -2, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {
                **_BATCH["<batch>"], "mutation": "no_records"}}}]}]}},
        {"api": "Produce", "version": 6, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {
                **_BATCH["<batch>"], "mutation": "no_records"}}}]}]}},
    ],
    # a JoinGroup's session timeout is looked at before the kind of group that holds the id
    # (a share group, a consumer group with members) (seeds 11215, 10216)
    "generated/join-group-session-timeout-before-the-kind-of-group": [
        T0,
        _alter("<T>-g2", [{"topic_name": "<T>-t0", "partitions": _AT_0}]),
        {**_join_group("<T>-g2", "", "consumer"), "body": {**_join_group("<T>-g2", "", "consumer")["body"],
                                                            "session_timeout_ms": 1800001}},
        {**_consumer_heartbeat("<T>-m1", 0, None, ["<T>-t0"]),
         "body": {**_consumer_heartbeat("<T>-m1", 0, None, ["<T>-t0"])["body"], "group_id": "<T>-g1"}},
        {**_join_group("<T>-g1", "", "consumer"), "body": {**_join_group("<T>-g1", "", "consumer")["body"],
                                                            "session_timeout_ms": 1800001}},
    ],
    # DeleteTopics of timeout 0 with something to look up: Kafka's controller times out and the
    # whole request is its error response, every entry as given; with nothing to look up the
    # refusals stand (seed 11219)
    "generated/delete-topics-timeout-0-answers-the-whole-request": [
        T0,
        {"api": "DeleteTopics", "version": 6, "body": {"timeout_ms": 0, "topics": [
            {"name": "<T>-t0", "topic_id": {"<topic_id>": "<T>-t0"}}, {"name": "<T>-t9", "topic_id": _ZERO_ID},
            {"name": None, "topic_id": _UNKNOWN_ID}]}},
        {"api": "DeleteTopics", "version": 6, "body": {"timeout_ms": 0, "topics": [
            {"name": "<T>-t0", "topic_id": {"<topic_id>": "<T>-t0"}}, {"name": None, "topic_id": _UNKNOWN_ID},
            {"name": None, "topic_id": _UNKNOWN_ID}, {"name": None, "topic_id": _ZERO_ID}]}},
        {"api": "DeleteTopics", "version": 5, "body": {"timeout_ms": 0, "topic_names": ["<T>-t9", "<T>-t9"]}},
        {"api": "DeleteTopics", "version": 5, "body": {"timeout_ms": -1, "topic_names": ["<T>-t0", "<T>-t9"]}},
    ],
    # IncrementalAlterConfigs applies the ops before it looks at the resource: an APPEND or
    # SUBTRACT of a key that is no list is refused for the default topic too (seed 9224)
    "generated/incremental-alter-configs-ops-before-the-resource": [
        *[{"api": "IncrementalAlterConfigs", "version": 0, "body": {"validate_only": True, "resources": [
            {"resource_type": 2, "resource_name": name, "configs": [{"name": key, "config_operation": op, "value": value}]}]}}
          for name, key, op, value in (("", "retention.ms", 3, "1"), ("", "retention.ms", 0, "1"), ("<T>-t9", "retention.ms", 3, "1"),
                                       ("", "cleanup.policy", 3, "compact"), ("", "retention.ms", 2, "1"), ("", "retention.ms", 0, "x"))],
    ],
    # a replica's Fetch on one node (no follower of the partition): NOT_LEADER_OR_FOLLOWER with
    # KIP-951's current leader, this broker at the partition's epoch (seed 10233)
    "generated/fetch-from-a-replica-on-one-node-names-the-leader": [
        T0,
        *[{"api": "Fetch", "version": 17, "body": {
            "max_bytes": 1048576, "isolation_level": 0, "max_wait_ms": 0, "min_bytes": 1,
            "replica_state": {"replica_id": replica, "replica_epoch": 0}, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [{
                "partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                "log_start_offset": -1, "partition_max_bytes": 1048576}]}],
            "forgotten_topics_data": [], "rack_id": "r1"}} for replica in (1, 5)],
    ],
    # AlterShareGroupOffsets makes a share group only for a topic it has: naming none, or only
    # unknown topics, leaves the id free, and a commit to it is answered as for no group (seed 77)
    "generated/alter-share-group-offsets-makes-no-group-without-a-topic": [
        T0,
        _alter("<T>-g0", []),
        _described("<T>-g0"),
        _alter("<T>-g1", [{"topic_name": "<T>-t9", "partitions": _AT_0}]),
        _described("<T>-g1"),
        {"api": "OffsetCommit", "version": 2, "body": {
            "group_id": "<T>-g0", "generation_id_or_member_epoch": 0, "member_id": "", "retention_time_ms": -1,
            "topics": [{"name": "<T>-t0", "partitions": [
                {"partition_index": 0, "committed_offset": 0, "committed_metadata": ""}]}]}},
        _alter("<T>-g2", [{"topic_name": "<T>-t0", "partitions": []}]),
        _described("<T>-g2"),
        _alter("<T>-g2", [{"topic_name": "<T>-t0", "partitions": _AT_0}]),
        _described("<T>-g2"),
    ],
}

for _name, _steps in RUN_8.items():
    register(_name, replay(_steps))
