"""What the generator's fourth long run found (issue 36, docs/FUZZ_FINDINGS.md), each the
sequence a difference shrank to or a few variants of it, replayed as generated.py replays
(every one passes against Kafka 4.4; tests/unit/test_fourth_run_findings.py states each
answer)."""

from __future__ import annotations

from tests.conformance.scenarios import register
from tests.conformance.scenarios.generated import T0, replay
from tests.conformance.scenarios.generated_found import share_fetch

RUN_4: dict[str, list[dict]] = {
    # a ShareFetch that names no partition to fetch (group "" has no members: a missing
    # member's fetch, share-fetch-by-a-missing-member), and one without a member id
    "generated/share-fetch-with-nothing-to-fetch": [
        T0,
        share_fetch(group_id="", topics=[], forgotten_topics_data=[{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [0]}]),
        share_fetch(topics=[]),
        share_fetch(group_id=""),
        share_fetch(topics=[], forgotten_topics_data=[{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [0]}]),
        share_fetch(group_id="", topics=[], member_id=""),
    ],
    # Metadata's operations of a topic it does not have, of a name no topic can have, and of
    # an id it does not know (Kafka answers the asker's operations on the first two)
    "generated/metadata-operations-of-unknown-topics": [
        T0,
        {"api": "Metadata", "version": 9, "body": {"topics": [{"name": "<T>-t0"}, {"name": "<T>-t1"}, {"name": "bad name!"}],
                                                   "include_topic_authorized_operations": True,
                                                   "allow_auto_topic_creation": False,
                                                   "include_cluster_authorized_operations": False}},
        {"api": "Metadata", "version": 12, "body": {"topics": [{"name": "<T>-t1", "topic_id": None}, {"name": "__consumer_offsets", "topic_id": None}],
                                                    "include_topic_authorized_operations": True,
                                                    "allow_auto_topic_creation": False}},
        {"api": "Metadata", "version": 12, "body": {"topics": [{"name": None, "topic_id": "00000000-0000-0000-0000-000000000001"}],
                                                    "include_topic_authorized_operations": True,
                                                    "allow_auto_topic_creation": False}},
    ],
    # the same at v5: a new member is handed its id first; rejoining with it, Kafka closes
    "generated/join-group-v5-naming-a-protocol-twice": [
        T0,
        *({"api": "JoinGroup", "version": 5, "body": {
            "group_id": "<T>-g0", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": member,
            "group_instance_id": None, "protocol_type": "consumer", "protocols": [
                {"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}},
                {"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}]}}
          for member in ("", {"<member>": 0})),
    ],
    # the same without a protocol type (v0): INCONSISTENT_GROUP_PROTOCOL comes first; and by a
    # member id the group does not have: UNKNOWN_MEMBER_ID
    "generated/join-group-v0-no-protocol-type-naming-a-protocol-twice": [
        T0,
        *({"api": "JoinGroup", "version": 0, "body": {
            "group_id": "<T>-g0", "session_timeout_ms": 45000, "member_id": member, "protocol_type": kind, "protocols": [
                {"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}},
                {"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}]}}
          for member, kind in (("", ""), ("<T>-m1", "consumer"))),
    ],
    # ListTransactions with a pattern that is no regular expression beside an unknown state
    "generated/list-transactions-bad-pattern-and-unknown-state": [
        {"api": "ListTransactions", "version": 2, "body": {"state_filters": ["bogus"], "producer_id_filters": [],
                                                           "duration_filter": -1, "transactional_id_pattern": "["}},
        {"api": "ListTransactions", "version": 2, "body": {"state_filters": ["bogus", "Ongoing"], "producer_id_filters": [],
                                                           "duration_filter": -1, "transactional_id_pattern": "(x"}},
        {"api": "ListTransactions", "version": 2, "body": {"state_filters": ["bogus"], "producer_id_filters": [],
                                                           "duration_filter": -1, "transactional_id_pattern": ".*"}},
    ],
    # DescribeTopicPartitions with a cursor near the int limit: Kafka's page end wraps negative
    "generated/describe-topic-partitions-cursor-at-the-int-limit": [
        T0,
        *({"api": "DescribeTopicPartitions", "version": 0, "body": {
            "topics": [{"name": "<T>-t0"}], "response_partition_limit": limit,
            "cursor": {"topic_name": "<T>-t0", "partition_index": index}}}
          for index, limit in ((2147483647, 2000), (2147483000, 2000), (2147483647, 1), (5, 1))),
    ],
    # AlterUserScramCredentials naming a user twice whose first change is unacceptable: every
    # repeated user is found before any change is checked
    "generated/scram-credentials-user-twice-first-unacceptable": [
        {"api": "AlterUserScramCredentials", "version": 0, "body": {"deletions": [], "upsertions": [
            {"name": "<T>-u0", "mechanism": 1, "iterations": 4096, "salt": {"<hex>": ""}, "salted_password": {"<hex>": ""}},
            {"name": "<T>-u0", "mechanism": 1, "iterations": 4096, "salt": {"<hex>": "00"}, "salted_password": {"<hex>": "00"}},
            {"name": "<T>-u1", "mechanism": 1, "iterations": 1, "salt": {"<hex>": "00"}, "salted_password": {"<hex>": "00"}}]}},
        {"api": "AlterUserScramCredentials", "version": 0, "body": {
            "deletions": [{"name": "<T>-u3", "mechanism": 1}],
            "upsertions": [{"name": "<T>-u3", "mechanism": 1, "iterations": 4096, "salt": {"<hex>": ""},
                            "salted_password": {"<hex>": ""}}]}},
        {"api": "AlterUserScramCredentials", "version": 0, "body": {
            "deletions": [{"name": "<T>-u2", "mechanism": 9}],
            "upsertions": [{"name": "<T>-u2", "mechanism": 2, "iterations": 1, "salt": {"<hex>": "00"},
                            "salted_password": {"<hex>": "00"}}]}},
    ],
    # Produce with invalid acks: records of no bytes are read first (INVALID_RECORD); a
    # partition named twice whose first records do not read as a batch
    "generated/produce-records-of-no-bytes-and-a-partition-twice": [
        T0,
        {"api": "Produce", "version": 7, "body": {"transactional_id": None, "acks": -2, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<hex>": ""}}]}]}},
        *({"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": acks, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [
                {"index": 0, "records": {"<hex>": ""}},
                {"index": 0, "records": {"<batch>": {"epoch": -1, "pid": -1, "start": 0, "n": 1, "seq": -1, "txn": False,
                                                    "codec": 0, "timestamps": "create", "keys": True, "mutation": None}}}]}]}}
          for acks in (-1, 1, 5)),
        {"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [
                {"index": 0, "records": {"<batch>": {"epoch": -1, "pid": -1, "start": 0, "n": 1, "seq": -1, "txn": False,
                                                    "codec": 0, "timestamps": "create", "keys": True, "mutation": None}}},
                {"index": 0, "records": {"<hex>": "00"}}]}]}},
        {"api": "ListOffsets", "version": 1, "body": {"replica_id": -1, "topics": [
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "timestamp": -1}]}]}},
    ],
    # ListOffsets with an isolation level Kafka cannot read: its error answer, every topic as asked
    "generated/list-offsets-unknown-isolation-level": [
        T0,
        {"api": "ListOffsets", "version": 2, "body": {"replica_id": -1, "isolation_level": 3, "topics": [
            {"name": "<T>-t0", "partitions": []}, {"name": "<T>-t9", "partitions": [{"partition_index": 0, "timestamp": -1}]},
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "timestamp": -1}]}]}},
    ],
    # FindCoordinator of a key type Kafka does not know, batched (v4) and alone (v3)
    "generated/find-coordinator-unknown-key-type": [
        {"api": "FindCoordinator", "version": 4, "body": {"key_type": 5, "coordinator_keys": ["<T>-g0", "<T>-g1"]}},
        {"api": "FindCoordinator", "version": 3, "body": {"key_type": 5, "key": "<T>-g0"}},
    ],
    # a share renewal in a session that does not exist, acknowledging as ACCEPT
    "generated/share-renewal-without-a-session": [
        T0,
        share_fetch(share_session_epoch=1, is_renew_ack=True, topics=[{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [
            {"partition_index": 0, "acknowledgement_batches": [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]),
        share_fetch(share_session_epoch=1, is_renew_ack=True, topics=[{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [
            {"partition_index": 0, "acknowledgement_batches": [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [4]}]}]}]),
        share_fetch(share_session_epoch=1, is_renew_ack=True, topics=[]),
        share_fetch(share_session_epoch=1, is_renew_ack=False, topics=[{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [
            {"partition_index": 0, "acknowledgement_batches": [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [4]}]}]}]),
    ],
    # DeleteTopics past its deadline (timeout -1): by id the name is not looked up; by name as asked
    "generated/delete-topics-by-id-past-the-deadline": [
        T0,
        {"api": "DeleteTopics", "version": 6, "body": {"topics": [
            {"name": None, "topic_id": {"<topic_id>": "<T>-t0"}}, {"name": "<T>-t0", "topic_id": None},
            {"name": None, "topic_id": "00000000-0000-0000-0000-000000000007"}], "timeout_ms": -1}},
        {"api": "DeleteTopics", "version": 6, "body": {"topics": [
            {"name": None, "topic_id": {"<topic_id>": "<T>-t0"}}], "timeout_ms": 0}},
    ],    # a static member's leave (epoch -2) of a group that does not exist: the group is looked up first
    "generated/consumer-heartbeat-static-leave-of-no-group": [
        T0,
        *({"api": "ConsumerGroupHeartbeat", "version": 0, "body": {
            "group_id": "<T>-g0", "member_id": member, "member_epoch": -2, "instance_id": "<T>-i0", "rack_id": None,
            "rebalance_timeout_ms": rebalance, "subscribed_topic_names": None, "server_assignor": None,
            "topic_partitions": owned}} for member, rebalance, owned in (
                ("<T>-m0", 1000, []), ("<T>-m0", -1, None), ("", -1, None), ("<T>-m0", 1000, None))),
    ],
    # OffsetForLeaderEpoch of an epoch below every epoch the log has (but -1): that epoch and
    # where the first began, before and after the log start moves
    "generated/offset-for-leader-epoch-below-every-epoch": [
        T0,
        *({"api": "OffsetForLeaderEpoch", "version": 3, "body": {"replica_id": -2, "topics": [{"topic": "<T>-t0", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": e} for e in (-2147483648, -5, -1, 0, 1)]}]}}
          for _ in range(1)),
        {"api": "Produce", "version": 9, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {
                "epoch": -1, "pid": -1, "start": 0, "n": 3, "seq": -1, "txn": False, "codec": 0, "timestamps": "create",
                "keys": True, "mutation": None}}}]}]}},
        {"api": "DeleteRecords", "version": 2, "body": {"timeout_ms": 30000, "topics": [
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "offset": 2}]}]}},
        {"api": "OffsetForLeaderEpoch", "version": 3, "body": {"replica_id": -2, "topics": [{"topic": "<T>-t0", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "leader_epoch": e} for e in (-7, -1, 0)]}]}},
    ],
    # a broker's dynamic config of a name only topics have, or none has, for every broker ("")
    # and for this one, validated only (an alter would stay on the brokers the other suites share)
    "generated/broker-config-of-a-topic-configs-name": [
        {"api": "IncrementalAlterConfigs", "version": 0, "body": {"validate_only": True, "resources": [
            {"resource_type": 4, "resource_name": broker, "configs": [{"config_operation": 0, "name": name, "value": "1"}]}]}}
        for broker in ("", "1") for name in ("retention.ms", "no.such.config")
    ],
    # a join with group_instance_id "": a static member's (a fifth run's finding, seed 6007)
    "generated/join-group-instance-id-empty": [
        T0,
        {"api": "JoinGroup", "version": 8, "body": {
            "group_id": "<T>-g0", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
            "group_instance_id": "", "protocol_type": "consumer", "reason": None,
            "protocols": [{"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}]}},
    ],
}

for _name, _steps in RUN_4.items():
    register(_name, replay(_steps))
