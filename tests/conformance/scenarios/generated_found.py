"""More of what the generator found (issue 36), written as scenarios.py's ``GENERATED``
(generated.py): each the smallest sequence that shows one answer kipper gave otherwise
than Kafka 4.4, with its regression test in tests/unit/test_generated_findings_more.py."""

from __future__ import annotations

import time

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import register, scenario
from tests.conformance.scenarios.generated import T0, replay

BATCH = {"n": 1, "start": 0, "pid": -1, "epoch": -1, "seq": -1, "txn": False, "codec": 0, "timestamps": "create",
         "keys": True, "mutation": None}


def share_fetch(**fields) -> dict:
    """A ShareFetch v2 by a member the group does not have, with ``fields`` changed."""
    body = {"group_id": "<T>-g0", "member_id": "<T>-m0", "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 1048576, "max_records": 10, "batch_size": 10, "share_acquire_mode": 0, "is_renew_ack": False,
            "topics": [{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [
                {"partition_index": 0, "acknowledgement_batches": []}]}], "forgotten_topics_data": []}
    return {"api": "ShareFetch", "version": 2, "body": {**body, **fields}}


FETCH_AT_0 = {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
              "log_start_offset": -1, "partition_max_bytes": 1048576}

FOUND: dict[str, list[dict]] = {
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
    # a renewal without a session is refused before anything else; max_records 0 or less is not
    # (by a member the group does not have: share-fetch-by-a-missing-member)
    "generated/share-fetch-field-checks": [
        T0,
        share_fetch(max_records=0),
        share_fetch(max_records=-1),
        share_fetch(share_session_epoch=-1, is_renew_ack=True),
        share_fetch(is_renew_ack=True),
    ],
    # a DeleteAcls filter of a pattern type or resource type Kafka does not know
    "generated/delete-acls-unknown-filter-types": [
        {"api": "DeleteAcls", "version": 3, "body": {"filters": [
            {"resource_type_filter": 2, "resource_name_filter": "<T>-t0", "pattern_type_filter": 9,
             "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}]}},
        {"api": "DeleteAcls", "version": 3, "body": {"filters": [
            {"resource_type_filter": 99, "resource_name_filter": "<T>-t0", "pattern_type_filter": 3,
             "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}]}},
    ],
    # DescribeLogDirs naming a topic twice
    "generated/describe-log-dirs-naming-a-topic-twice": [
        T0,
        {"api": "DescribeLogDirs", "version": 4, "body": {"topics": [
            {"topic": "<T>-t0", "partitions": [0]}, {"topic": "<T>-t0", "partitions": [0, 1]}]}},
    ],
    # the share-group offset APIs naming a partition or a topic twice, and topic "" (after T0
    # and the wait below)
    "generated/share-group-offsets-named-twice": [
        {"api": "DescribeShareGroupOffsets", "version": 1, "body": {"groups": [
            {"group_id": "<T>-g0", "topics": [{"topic_name": "<T>-t0", "partitions": [0, 0]}]}]}},
        {"api": "AlterShareGroupOffsets", "version": 0, "body": {"group_id": "<T>-g0", "topics": [
            {"topic_name": "<T>-t0", "partitions": [{"partition_index": 0, "start_offset": 0}]},
            {"topic_name": "<T>-t0", "partitions": [{"partition_index": 0, "start_offset": 0}]}]}},
        {"api": "AlterShareGroupOffsets", "version": 0, "body": {"group_id": "<T>-g1", "topics": [
            {"topic_name": "", "partitions": [{"partition_index": 0, "start_offset": 0}]}]}},
    ],
    # a static member joining with an empty protocol type
    "generated/join-group-static-member-empty-protocol-type": [
        T0,
        {"api": "JoinGroup", "version": 8, "body": {
            "group_id": "<T>-g0", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
            "group_instance_id": "<T>-i0", "protocol_type": "", "reason": None,
            "protocols": [{"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}]}},
    ],
    # OffsetCommit to a group id that AlterShareGroupOffsets made a share group
    "generated/offset-commit-to-a-share-group": [
        T0,
        {"api": "AlterShareGroupOffsets", "version": 0, "body": {"group_id": "<T>-g0", "topics": [
            {"topic_name": "<T>-t0", "partitions": [{"partition_index": 0, "start_offset": 0}]}]}},
        {"api": "OffsetCommit", "version": 8, "body": {
            "group_id": "<T>-g0", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "<T>-t0", "partitions": [{"partition_index": 0, "committed_offset": 1}]}]}},
    ],
    # Fetch as replica 1 (this broker, as a follower of itself)
    "generated/fetch-as-a-follower": [
        T0,
        {"api": "Fetch", "version": 4, "body": {"replica_id": 1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1048576,
                                                "isolation_level": 0, "topics": [{"topic": "<T>-t0", "partitions": [
                                                    {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1048576}]}]}},
    ],
    # DescribeConfigs of a resource of an unknown type beside a topic
    "generated/describe-configs-unknown-resource-type": [
        T0,
        {"api": "DescribeConfigs", "version": 1, "body": {"resources": [
            {"resource_type": 99, "resource_name": "<T>-t0", "configuration_keys": None},
            {"resource_type": 2, "resource_name": "<T>-t0", "configuration_keys": ["retention.ms"]}],
            "include_synonyms": False}},
        {"api": "DescribeConfigs", "version": 1, "body": {"resources": [
            {"resource_type": 2, "resource_name": "<T>-t0", "configuration_keys": ["retention.ms"]},
            {"resource_type": 0, "resource_name": "1", "configuration_keys": None}],
            "include_synonyms": False}},
    ],
    # AlterConfigs of a topic that does not exist with a value the config cannot take
    "generated/alter-configs-invalid-value-of-an-unknown-topic": [
        {"api": "AlterConfigs", "version": 2, "body": {"resources": [
            {"resource_type": 2, "resource_name": "<T>-t9", "configs": [{"name": "retention.ms", "value": "bogus"}]}],
            "validate_only": True}},
        {"api": "IncrementalAlterConfigs", "version": 1, "body": {"resources": [
            {"resource_type": 2, "resource_name": "<T>-t9", "configs": [
                {"name": "retention.ms", "config_operation": 0, "value": "bogus"}]}], "validate_only": True}},
    ],
    # a transactional batch in a Produce whose transactional id is "", and with invalid acks
    "generated/produce-transactional-checks-first": [
        T0,
        {"api": "InitProducerId", "version": 4, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1}},
        {"api": "Produce", "version": 9, "body": {"transactional_id": "", "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": dict(
                BATCH, pid={"<pid>": "<T>-x0"}, epoch=0, seq=0, txn=True)}}]}]}},
        {"api": "Produce", "version": 9, "body": {"transactional_id": "<T>-x0", "acks": 2, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": dict(
                BATCH, pid={"<pid>": "<T>-x0"}, epoch=0, seq=0, txn=True)}}]}]}},
        {"api": "Produce", "version": 9, "body": {"transactional_id": None, "acks": 2, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": dict(BATCH, mutation="magic1")}}]}]}},
    ],
    # DescribeProducers of a name no topic could have: INVALID_TOPIC_EXCEPTION, with a message
    "generated/describe-producers-of-a-name-no-topic-could-have": [
        {"api": "DescribeProducers", "version": 0, "body": {"topics": [{"name": "", "partition_indexes": [0]}]}},
    ],
    # ElectLeaders with a timeout of 0 or less: the controller's deadline has passed (found by the long run)
    "generated/elect-leaders-deadline-already-passed": [
        T0,
        {"api": "ElectLeaders", "version": 0, "body": {"topic_partitions": [{"topic": "<T>-t0", "partitions": [0]}],
                                                       "timeout_ms": -1}},
        {"api": "ElectLeaders", "version": 2, "body": {"election_type": 0, "topic_partitions": [
            {"topic": "<T>-t0", "partitions": [0]}, {"topic": "<T>-t9", "partitions": [0]}], "timeout_ms": 0}},
    ],
    # AlterConfigs naming a resource twice (found by the long run: Kafka closed the connection)
    "generated/alter-configs-naming-a-resource-twice": [
        T0,
        *({"api": "AlterConfigs", "version": version, "body": {"resources": [
            {"resource_type": 2, "resource_name": "<T>-t0", "configs": [{"name": "retention.ms", "value": "100000"}]},
            {"resource_type": 2, "resource_name": "<T>-t0", "configs": [{"name": "retention.ms", "value": "100000"}]}],
            "validate_only": validate_only}} for version in (2, 0) for validate_only in (True, False)),
    ],
    # a topic that names no partition: answered (empty) when the broker answers the topic itself
    # (unknown), not when the coordinator does (found by the long run)
    "generated/offset-commits-of-a-topic-that-names-no-partition": [
        T0,
        {"api": "OffsetCommit", "version": 2, "body": {"group_id": "<T>-g0", "generation_id_or_member_epoch": -1,
                                                       "member_id": "", "retention_time_ms": -1, "topics": [
            {"name": "<T>-t1", "partitions": []}, {"name": "<T>-t0", "partitions": []}]}},
        {"api": "InitProducerId", "version": 4, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1}},
        {"api": "TxnOffsetCommit", "version": 3, "body": {
            "transactional_id": "<T>-x0", "group_id": "<T>-g0", "producer_id": {"<pid>": "<T>-x0"},
            "producer_epoch": {"<epoch>": 0}, "generation_id": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "<T>-t1", "partitions": []}, {"name": "<T>-t0", "partitions": []}]}},
        {"api": "TxnOffsetCommit", "version": 6, "body": {   # an unknown topic id twice: one answer (bounded run)
            "transactional_id": "<T>-x0", "group_id": "<T>-g0", "producer_id": {"<pid>": "<T>-x0"},
            "producer_epoch": {"<epoch>": 0}, "generation_id_or_member_epoch": -1, "member_id": "",
            "group_instance_id": None, "topics": [{"topic_id": "6b1ff3f0-0000-4000-8000-0000deadbeef", "partitions": []},
                                                  {"topic_id": "6b1ff3f0-0000-4000-8000-0000deadbeef", "partitions": []}]}},
    ],
    # ShareAcknowledge and ShareFetch with no member id: INVALID_REQUEST, no text (found by the long run)
    "generated/share-requests-without-a-member-id": [
        T0,
        {"api": "ShareAcknowledge", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "",
                                                           "share_session_epoch": 0, "topics": []}},
        share_fetch(member_id=""),
        share_fetch(group_id=None, member_id=None),
        share_fetch(topics=[{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [
            {"partition_index": 0, "acknowledgement_batches": [
                {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]),
    ],
    # AddPartitionsToTxn v4+ (the brokers' batch form) naming no transaction: Kafka closes the
    # connection (kafka-closes-the-connection; found by the long run)
    "generated/add-partitions-to-txn-naming-no-transaction": [
        {"api": "AddPartitionsToTxn", "version": 4, "body": {"transactions": []}},
    ],
    # AddPartitionsToTxn v4: the coordinator's answer lists a topic named twice twice; a transaction
    # refused at once (an unknown topic) is answered before those the coordinator answers (long run)
    "generated/add-partitions-to-txn-v4-as-kafka-answers": [
        T0,
        {"api": "InitProducerId", "version": 4, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1}},
        {"api": "AddPartitionsToTxn", "version": 4, "body": {"transactions": [
            {"transactional_id": "<T>-x0", "producer_id": 999999999999, "producer_epoch": 0, "verify_only": False,
             "topics": [{"name": "<T>-t0", "partitions": [0]}, {"name": "<T>-t0", "partitions": [0]}]}]}},
        {"api": "AddPartitionsToTxn", "version": 4, "body": {"transactions": [
            {"transactional_id": "<T>-x0", "producer_id": 999999999999, "producer_epoch": 0, "verify_only": True,
             "topics": [{"name": "<T>-t0", "partitions": [0]}]},
            {"transactional_id": "<T>-x1", "producer_id": 999999999999, "producer_epoch": 0, "verify_only": False,
             "topics": [{"name": "<T>-t9", "partitions": [0]}]}]}},
    ],
    # ListOffsets of a timestamp spec the version lacks (-4 before v8): UNSUPPORTED_VERSION before the
    # topic is looked for (long run)
    "generated/list-offsets-version-before-the-topic": [
        T0,
        {"api": "ListOffsets", "version": 7, "body": {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "<T>-t9", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -4}]},
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "current_leader_epoch": 1, "timestamp": -4}]}]}},
    ],
    # a share heartbeat without a member id, leaving or at another epoch (long run, seed 3615)
    "generated/share-heartbeat-without-a-member-id": [
        T0,
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "", "member_epoch": -1,
                                                              "rack_id": None, "subscribed_topic_names": None}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "", "member_epoch": 3,
                                                              "rack_id": None, "subscribed_topic_names": None}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "", "member_epoch": -2,
                                                              "rack_id": None, "subscribed_topic_names": None}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "", "member_id": "", "member_epoch": 0,
                                                              "rack_id": None, "subscribed_topic_names": None}},
    ],
    # DeleteGroups naming a group twice: one answer (long run, seed 3621)
    "generated/delete-groups-naming-a-group-twice": [
        {"api": "DeleteGroups", "version": 0, "body": {"groups_names": ["<T>-g0", "<T>-g0"]}},
    ],
    # a Produce Kafka closed the connection on (long run, seed 3617), and its parts alone
    "generated/produce-kafka-closes-on": [
        T0,
        {"api": "Produce", "version": 5, "body": {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t1", "partition_data": [{"index": 0, "records": None}, {"index": 2, "records": {"<batch>": dict(
                BATCH, n=2, start=1, pid=999999999999, epoch=1, seq=0, codec=1, keys=False)}}]},
            {"name": {"<long>": 250}, "partition_data": [{"index": 0, "records": {"<batch>": dict(
                BATCH, n=3, start=1, epoch=0, seq=0, txn=True, codec=3, timestamps="none", mutation="two_batches")}}]}]}},
        {"api": "Produce", "version": 5, "body": {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": None}]},
            {"name": "<T>-t9", "partition_data": [{"index": 0, "records": {"<batch>": dict(BATCH, txn=True)}}]}]}},
        {"api": "Produce", "version": 5, "body": {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
            {"name": {"<long>": 250}, "partition_data": [{"index": 0, "records": {"<batch>": dict(
                BATCH, txn=True, mutation="two_batches")}}]}]}},
        {"api": "Produce", "version": 5, "body": {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t9", "partition_data": [{"index": 0, "records": {"<batch>": dict(BATCH, txn=True)}}]}]}},
    ],
    # the long run's last findings (seeds 3620-3629): SyncGroup v5 without a protocol type,
    # AddPartitionsToTxn v0-3 naming a topic of no partition, zstd before Produce v7
    "generated/late-findings-of-the-long-run": [
        T0,
        {"api": "SyncGroup", "version": 5, "body": {"group_id": "<T>-g0", "generation_id": 0, "member_id": "",
                                                    "group_instance_id": None, "protocol_type": None,
                                                    "protocol_name": "range", "assignments": []}},
        {"api": "AddPartitionsToTxn", "version": 0, "body": {
            "v3_and_below_transactional_id": "", "v3_and_below_producer_id": 5, "v3_and_below_producer_epoch": 0,
            "v3_and_below_topics": [{"name": "<T>-t2", "partitions": [1]}, {"name": "<T>-t0", "partitions": []}]}},
        {"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": dict(BATCH, codec=4)}}]}]}},
    ],
    # the second run's and the bounded run's: WriteTxnMarkers naming a partition of an unknown topic
    # twice, AddPartitionsToTxn v5 naming a topic of no partition, ElectLeaders past its deadline
    # with an unknown election type
    "generated/second-run-findings": [
        T0,
        {"api": "WriteTxnMarkers", "version": 1, "body": {"markers": [
            {"producer_id": 5, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
             "topics": [{"name": "<T>-t1", "partition_indexes": [0, 0]}]}]}},
        {"api": "AddPartitionsToTxn", "version": 5, "body": {"transactions": [
            {"transactional_id": "<T>-x0", "producer_id": 5, "producer_epoch": 0, "verify_only": False,
             "topics": [{"name": "<T>-t0", "partitions": []}]}]}},
        {"api": "ElectLeaders", "version": 2, "body": {"election_type": 9, "topic_partitions": None, "timeout_ms": 0}},
    ],
    # the bounded run's: AlterShareGroupOffsets naming a topic (unknown, or known) of no partition
    "generated/alter-share-group-offsets-topic-of-no-partition": [
        T0,
        {"api": "IncrementalAlterConfigs", "version": 1, "body": {"resources": [
            {"resource_type": 32, "resource_name": "<T>-g2", "configs": [
                {"name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"}]}],
            "validate_only": False}},
        {"api": "AlterShareGroupOffsets", "version": 0, "body": {"group_id": "<T>-g2", "topics": [
            {"topic_name": "<T>-missing", "partitions": []}, {"topic_name": "<T>-t0", "partitions": []}]}},
    ],
    # CI's bounded run: a replica's Fetch from a broker id the partition does not have, with a
    # leader epoch (told the epoch is not known yet), without one, and with a stale one
    "generated/fetch-from-a-replica-the-partition-does-not-have": [
        T0,
        *({"api": "Fetch", "version": 13, "body": {
            "cluster_id": None, "replica_id": 7, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 100,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
            "topics": [{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [
                {"partition": 0, "current_leader_epoch": epoch, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": 1048576}]}]}} for epoch in (0, -1, 5)),
    ],
    # the findings FUZZ_FINDINGS.md handed on, shrunk by hand: a group's assignment intervals
    # (described with every config, -1 refused)
    "generated/handed-on-group-assignment-intervals": [
        {"api": "DescribeConfigs", "version": 4, "body": {"resources": [
            {"resource_type": 32, "resource_name": "<T>-g0", "configuration_keys": None}],
            "include_synonyms": True, "include_documentation": False}},
        *({"api": "IncrementalAlterConfigs", "version": 1, "body": {"validate_only": True, "resources": [
            {"resource_type": 32, "resource_name": "<T>-g0", "configs": [
                {"name": name, "config_operation": 0, "value": value}]}]}}
          for name in ("consumer.assignment.interval.ms", "share.assignment.interval.ms") for value in ("-1", "0")),
    ],
    # ShareAcknowledge of group "" (a member id, every epoch); ShareFetch of group ""
    "generated/handed-on-share-requests-of-group-empty": [
        T0,
        *({"api": "ShareAcknowledge", "version": 2, "body": {"group_id": "", "member_id": "<T>-m0",
                                                             "share_session_epoch": epoch, "is_renew_ack": False,
                                                             "topics": []}} for epoch in (1, 0, -1)),
        {"api": "ShareAcknowledge", "version": 1, "body": {"group_id": None, "member_id": "<T>-m0",
                                                           "share_session_epoch": 0, "topics": []}},
        share_fetch(group_id=""),
    ],
    # Metadata v10-11 naming a topic by id (and by name beside it), v12 by both
    "generated/handed-on-metadata-topic-ids-before-v12": [
        T0,
        *({"api": "Metadata", "version": version, "body": {
            "topics": [{"name": "<T>-t0", "topic_id": {"<topic_id>": "<T>-t0"}}, {"name": "<T>-t0"}],
            "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}}
          for version in (10, 11)),
    ],
    # ListOffsets naming a topic of no partition, by a principal that may describe it and by one
    # that may not (each topic as asked, after the rest)
    "generated/handed-on-list-offsets-topic-of-no-partition": [
        T0,
        *({"api": "ListOffsets", "version": 6, "body": {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "<T>-t0", "partitions": []},
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]},
            {"name": "<T>-t1", "partitions": []}]}, "conn": conn} for conn in ("main", "sasl")),
    ],
    # AlterClientQuotas v0 naming an entity twice, and two refused entries of one entity
    "generated/handed-on-alter-client-quotas-entities-twice": [
        {"api": "AlterClientQuotas", "version": 0, "body": {"validate_only": True, "entries": [
            {"entity": [{"entity_type": "client-id", "entity_name": "<T>-c0"}],
             "ops": [{"key": "producer_byte_rate", "value": 1000.0, "remove": False}]},
            {"entity": [{"entity_type": "user", "entity_name": "<T>-u0"}],
             "ops": [{"key": "producer_byte_rate", "value": 1000.0, "remove": False}]},
            {"entity": [{"entity_type": "client-id", "entity_name": "<T>-c0"}],
             "ops": [{"key": "consumer_byte_rate", "value": 1000.0, "remove": False}]}]}},
        {"api": "AlterClientQuotas", "version": 0, "body": {"validate_only": True, "entries": [
            {"entity": [{"entity_type": "nope", "entity_name": "<T>-c0"}],
             "ops": [{"key": "producer_byte_rate", "value": 1000.0, "remove": False}]},
            {"entity": [{"entity_type": "nope", "entity_name": "<T>-c0"}],
             "ops": [{"key": "bogus", "value": 1.0, "remove": False}]}]}},
    ],
    # AddPartitionsToTxn refusals naming several topics (an invalid name, unknown ones, a known one)
    "generated/handed-on-add-partitions-to-txn-refusal-order": [
        T0,
        {"api": "AddPartitionsToTxn", "version": 3, "body": {
            "v3_and_below_transactional_id": "<T>-x0", "v3_and_below_producer_id": 5, "v3_and_below_producer_epoch": 0,
            "v3_and_below_topics": [{"name": n, "partitions": [0]} for n in (
                "<T>-t0", {"<long>": 250}, "<T>-missing-a", "<T>-missing-b", "<T>-zz")]}},
        {"api": "AddPartitionsToTxn", "version": 4, "body": {"transactions": [
            {"transactional_id": "<T>-x0", "producer_id": 5, "producer_epoch": 0, "verify_only": False,
             "topics": [{"name": n, "partitions": [0]} for n in (
                 "<T>-t0", {"<long>": 250}, "<T>-missing-a", "<T>-missing-b", "<T>-zz")]}]}},
        # a verification is answered from the partitions too (the long run's finding 7): a topic
        # of no partition is not answered
        {"api": "AddPartitionsToTxn", "version": 4, "body": {"transactions": [
            {"transactional_id": "", "producer_id": 5, "producer_epoch": 0, "verify_only": True,
             "topics": [{"name": "<T>-t0", "partitions": []}]},
            {"transactional_id": "<T>-x0", "producer_id": 5, "producer_epoch": 0, "verify_only": True,
             "topics": [{"name": "<T>-t0", "partitions": []}, {"name": "<T>-t0", "partitions": [0]}]},
            {"transactional_id": "<T>-x1", "producer_id": 5, "producer_epoch": 0, "verify_only": False,
             "topics": [{"name": "<T>-t0", "partitions": []}]}]}},
    ],
    # Fetch v14 by topic id: a partition the topic lacks beside one it has, and a topic id no
    # topic has, in both orders; in a new session, then on it
    "generated/handed-on-fetch-unknown-topic-ids": [
        T0,
        *({"api": "Fetch", "version": 14, "body": {
            "cluster_id": None, "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1048576,
            "isolation_level": 0, "session_id": session, "session_epoch": epoch, "rack_id": "",
            "forgotten_topics_data": [], "topics": topics}}
          for topics in (
              [{"topic_id": "6b1ff3f0-0000-4000-8000-0000deadbeef", "partitions": [FETCH_AT_0]},
               {"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [dict(FETCH_AT_0, partition=7), FETCH_AT_0]}],
              [{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [dict(FETCH_AT_0, partition=7), FETCH_AT_0]},
               {"topic_id": "6b1ff3f0-0000-4000-8000-0000deadbeef", "partitions": [FETCH_AT_0]}])
          for session, epoch in ((0, -1), (0, 0))),
    ],
    # AddPartitionsToTxn v5 naming one transactional id twice (declared: one-transactional-id-twice)
    "generated/handed-on-add-partitions-to-txn-one-id-twice": [
        T0,
        {"api": "InitProducerId", "version": 5, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1}},
        *({"api": "AddPartitionsToTxn", "version": 5, "body": {"transactions": [
            {"transactional_id": "<T>-x0", "producer_id": pid, "producer_epoch": 0, "verify_only": False,
             "topics": first},
            {"transactional_id": "<T>-x0", "producer_id": pid, "producer_epoch": 0, "verify_only": False,
             "topics": second}]}}
          for pid in (5, {"<pid>": "<T>-x0"})
          for first, second in (([], [{"name": "<T>-t0", "partitions": [0]}]),
                                ([{"name": "<T>-t0", "partitions": [0]}], []),
                                ([{"name": "<T>-t0", "partitions": [1]}], [{"name": "<T>-t0", "partitions": [0]}]))),
    ],
    # the long run beside the fifth loaded make test: Metadata v12 naming a topic by id and
    # another by name (Kafka uses the ids alone), and JoinGroup naming a protocol twice
    "generated/metadata-by-id-and-name": [
        T0,
        {"api": "Metadata", "version": 12, "body": {"topics": [{"topic_id": {"<topic_id>": "<T>-t0"}, "name": "<T>-t1"}],
                                                    "allow_auto_topic_creation": False,
                                                    "include_topic_authorized_operations": False}},
        {"api": "Metadata", "version": 12, "body": {"topics": [{"topic_id": {"<topic_id>": "<T>-t0"}, "name": None},
                                                               {"topic_id": "00000000-0000-0000-0000-000000000000",
                                                                "name": "<T>-t1"}],
                                                    "allow_auto_topic_creation": True,
                                                    "include_topic_authorized_operations": False}},
    ],
    # ElectLeaders naming no partition (an empty list) past its deadline; the share-group
    # offsets of an unknown topic's partition named twice
    "generated/late-findings-of-the-fifth-run": [
        T0,
        {"api": "ElectLeaders", "version": 1, "body": {"election_type": 0, "topic_partitions": [], "timeout_ms": 0}},
        {"api": "ElectLeaders", "version": 2, "body": {"election_type": 9, "topic_partitions": [], "timeout_ms": 30000}},
        {"api": "DescribeShareGroupOffsets", "version": 0, "body": {"groups": [
            {"group_id": "<T>-g0", "topics": [{"topic_name": "bad name!", "partitions": [0, 0]},
                                             {"topic_name": "<T>-missing", "partitions": [1, 1]}]}]}},
        # two markers of one producer id: one answer
        {"api": "WriteTxnMarkers", "version": 1, "body": {"markers": [
            {"producer_id": 5, "producer_epoch": 0, "transaction_result": False, "coordinator_epoch": 0,
             "topics": [{"name": "<T>-t0", "partition_indexes": [-1]}]},
            {"producer_id": 5, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 5,
             "topics": [{"name": "bad name!", "partition_indexes": [7, 1]}]},
            {"producer_id": 6, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 5,
             "topics": [{"name": "<T>-missing", "partition_indexes": [0]}]}]}},
    ],
    "generated/join-group-naming-a-protocol-twice": [
        T0,
        {"api": "JoinGroup", "version": 3, "body": {
            "group_id": "<T>-g0", "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
            "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}},
                                                       {"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}]}},
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
            "deletions": [{"name": "<T>-u2", "mechanism": 9}],
            "upsertions": [{"name": "<T>-u2", "mechanism": 2, "iterations": 1, "salt": {"<hex>": "00"},
                            "salted_password": {"<hex>": "00"}}]}},
    ],
    # DeleteTopics past its deadline (timeout -1): by id the name is not looked up; by name as asked
    "generated/delete-topics-by-id-past-the-deadline": [
        T0,
        {"api": "DeleteTopics", "version": 6, "body": {"topics": [
            {"name": None, "topic_id": {"<topic_id>": "<T>-t0"}}, {"name": "<T>-t0", "topic_id": None},
            {"name": None, "topic_id": "00000000-0000-0000-0000-000000000007"}], "timeout_ms": -1}},
        {"api": "DeleteTopics", "version": 6, "body": {"topics": [
            {"name": None, "topic_id": {"<topic_id>": "<T>-t0"}}], "timeout_ms": 0}},
    ],
}

for _name, _steps in FOUND.items():
    register(_name, replay(_steps))


@scenario("generated/a-member-that-never-syncs", timed=True)
def _(run):
    """A member that joins and never sends SyncGroup is removed once the rebalance timeout
    has passed again (Kafka's pending syncs): the group is empty when described."""
    t = k.create_topic(run)
    g = run.name("g")
    k.join_member(run, g, [t], version=1, session_ms=30000, rebalance_ms=1000)
    time.sleep(2.5)
    run.call(k.DESCRIBE_GROUPS, 0, {"groups": [g]}, label="described after the rebalance timeout")
