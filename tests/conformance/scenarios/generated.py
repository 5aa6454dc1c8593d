"""Scenarios the generator found (tests/conformance/fuzz, issue 36): each is the shortest
sequence a difference shrank to, with the name of what it shows, replayed step by step as it
was generated (a step's symbols, such as ``{"<pid>": "<T>-x0"}``, resolved on each broker by
tests/conformance/fuzz/symbols.py; the waits of fuzz/side.py between steps, unrecorded).

``python -m tests.conformance.fuzz --scenario fuzz-findings/finding-007.json NAME`` prints a
finding as an entry of ``GENERATED``.
"""

from __future__ import annotations

from tests.conformance.fuzz.side import Side
from tests.conformance.scenarios import register

T0 = {"api": "CreateTopics", "version": 7, "body": {
    "topics": [{"name": "<T>-t0", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
    "timeout_ms": 30000, "validate_only": False}}


NO_SUCH_PID = 999_999_999_000  # a producer id no broker issued


def produce_step(pid, epoch, seq: int, n: int = 1, *, txn: bool = False, transactional_id: str | None = None,
                 version: int = 3, timestamps: str = "create") -> dict:
    """Produce (v3 unless told) of one idempotent batch of ``n`` records to partition 0 of
    ``<T>-t0``; ``pid`` and ``epoch`` a number or a symbol (``{"<pid>": "<T>-x0"}``);
    ``timestamps`` "none" stamps no record (retention then reads the write's time)."""
    return {"api": "Produce", "version": version, "body": {
            "transactional_id": transactional_id, "acks": -1, "timeout_ms": 30000,
            "topic_data": [{"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {
                "n": n, "start": 0, "pid": pid, "epoch": epoch, "seq": seq, "txn": txn, "codec": 0,
                "timestamps": timestamps, "keys": True, "mutation": None}}}]}]}}


def marker_step(pid: int, epoch: int, committed: bool = False) -> dict:
    """WriteTxnMarkers v1 of one marker (ABORT unless told) to partition 0 of ``<T>-t0``."""
    return {"api": "WriteTxnMarkers", "version": 1, "body": {"markers": [
        {"producer_id": pid, "producer_epoch": epoch, "transaction_result": committed,
         "topics": [{"name": "<T>-t0", "partition_indexes": [0]}], "coordinator_epoch": 0}]}}


def replay(steps: list[dict], messages: bool = False):
    """The steps as a scenario; ``messages``: their error texts compared word for word."""
    def run_steps(run) -> None:
        side = Side(run, messages)
        for step in steps:
            side.step(step)
    return run_steps


GENERATED: dict[str, list[dict]] = {
    # Produce naming a topic twice (issue 36 item 8, branch 36a)
    "generated/produce-naming-a-topic-twice": [
        {"api": "Produce", "version": 5, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t9", "partition_data": [{"index": 0, "records": None}]},
            {"name": "<T>-t9", "partition_data": [{"index": -1, "records": None}]}]}},
    ],
    # share-group offsets of a partition the topic lacks: no state (Kafka's answer alone); beside
    # one it has, Kafka closes the connection (kafka-closes-the-connection)
    "generated/kafka-closes-the-connection": [
        T0,
        {"api": "DescribeShareGroupOffsets", "version": 1, "body": {"groups": [
            {"group_id": "<T>-g0", "topics": [{"topic_name": "<T>-t0", "partitions": [7]}]}]}},
        {"api": "DescribeShareGroupOffsets", "version": 1, "body": {"groups": [
            {"group_id": "<T>-g0", "topics": [{"topic_name": "<T>-t0", "partitions": [0, 7]}]}]}},
        {"api": "InitProducerId", "version": 4, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1}},
        {"api": "WriteTxnMarkers", "version": 1, "body": {"markers": [
            {"producer_id": {"<pid>": "<T>-x0"}, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
             "topics": [{"name": "<T>-t0", "partition_indexes": [0, 0]}]}]}},
    ],
    # invalid acks and a transactional batch of a producer its transactional id does not have (open)
    "generated/produce-invalid-acks-after-transaction-checks": [
        T0,
        {"api": "Produce", "version": 8, "body": {"acks": 2, "transactional_id": "<T>-x0", "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {
                "epoch": 0, "start": 1, "timestamps": "create", "pid": 999999999999, "codec": 0, "txn": True, "seq": 0,
                "mutation": None, "n": 2, "keys": True}}}]}]}},
    ],
    # Produce with invalid acks: unknown partitions are answered first (the broker's checks, then Kafka's ReplicaManager)
    "generated/produce-invalid-acks-and-unknown-partitions": [
        T0,
        {"api": "Produce", "version": 8, "body": {"transactional_id": None, "acks": 2, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [
                {"index": i, "records": {"<batch>": {"n": 1, "start": 0, "pid": -1, "epoch": -1, "seq": -1, "txn": False,
                                                    "codec": 0, "timestamps": "create", "keys": True, "mutation": None}}}
                for i in (0, 5)]},
            {"name": "", "partition_data": [{"index": 0, "records": None}]}]}},
    ],
    # a share heartbeat Kafka refuses before the group: an empty rack id, an epoch below -1, a join without topics
    "generated/share-heartbeat-request-checks": [
        {'api': 'CreateTopics', 'version': 7, 'body': {'topics': [{'name': '<T>-t0', 'num_partitions': 1, 'replication_factor': 1, 'assignments': [], 'configs': []}], 'timeout_ms': 30000, 'validate_only': False}},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '<T>-g2', 'member_id': '<T>-m1', 'member_epoch': 0, 'rack_id': '', 'subscribed_topic_names': []}},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '<T>-g2', 'member_id': '<T>-m1', 'member_epoch': 0, 'rack_id': None, 'subscribed_topic_names': None}},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '<T>-g2', 'member_id': '', 'member_epoch': 0, 'rack_id': None, 'subscribed_topic_names': ['<T>-t0']}},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '<T>-g2', 'member_id': '<T>-m1', 'member_epoch': 0, 'rack_id': None, 'subscribed_topic_names': ['<T>-t0']}},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '<T>-g2', 'member_id': '<T>-m1', 'member_epoch': -2, 'rack_id': None, 'subscribed_topic_names': None}},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '<T>-g2', 'member_id': '<T>-m1', 'member_epoch': -1, 'rack_id': None, 'subscribed_topic_names': None}},
    ],
    # Metadata asking a topic twice: one answer
    "generated/metadata-asking-a-topic-twice": [
        T0,
        {"api": "Metadata", "version": 5, "body": {"topics": [{"name": "<T>-t0"}, {"name": "<T>-t0"}, {"name": "<T>-t9"},
                                                              {"name": "<T>-t9"}], "allow_auto_topic_creation": False}},
    ],
    # AlterClientQuotas naming an entity type twice: the last name, as Kafka's map
    "generated/client-quota-entity-type-named-twice": [
        {"api": "AlterClientQuotas", "version": 1, "body": {"entries": [
            {"entity": [{"entity_type": "client-id", "entity_name": None}, {"entity_type": "client-id", "entity_name": "<T>-q0"}],
             "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}], "validate_only": True}},
    ],
    # config requests for a topic no topic could have: INVALID_TOPIC_EXCEPTION; altering "" is a default resource
    "generated/configs-of-a-topic-no-topic-could-have": [
        {'api': 'AlterConfigs', 'version': 2, 'body': {'resources': [{'resource_type': 2, 'resource_name': '', 'configs': [{'name': 'retention.ms', 'value': '1000'}]}], 'validate_only': True}},
        {'api': 'AlterConfigs', 'version': 0, 'body': {'resources': [{'resource_type': 2, 'resource_name': '', 'configs': [{'name': 'retention.ms', 'value': '1000'}]}], 'validate_only': True}},
        {'api': 'IncrementalAlterConfigs', 'version': 1, 'body': {'resources': [{'resource_type': 2, 'resource_name': '', 'configs': [{'name': 'retention.ms', 'config_operation': 0, 'value': '1000'}]}], 'validate_only': True}},
        {'api': 'DescribeConfigs', 'version': 4, 'body': {'resources': [{'resource_type': 2, 'resource_name': '', 'configuration_keys': None}], 'include_synonyms': False, 'include_documentation': False}},
        {'api': 'DescribeConfigs', 'version': 2, 'body': {'resources': [{'resource_type': 2, 'resource_name': '', 'configuration_keys': None}], 'include_synonyms': False}},
        {'api': 'DescribeConfigs', 'version': 1, 'body': {'resources': [{'resource_type': 2, 'resource_name': 'bad name!', 'configuration_keys': None}], 'include_synonyms': False}},
        {'api': 'AlterConfigs', 'version': 2, 'body': {'resources': [{'resource_type': 2, 'resource_name': 'bad name!', 'configs': [{'name': 'retention.ms', 'value': '1000'}]}], 'validate_only': True}},
    ],
    # a ShareFetch with fields Kafka refuses up front (open)
    "generated/share-fetch-request-checks": [
        T0,
        {"api": "ShareFetch", "version": 2, "body": {
            "group_id": "<T>-g0", "member_id": "<T>-m0", "share_session_epoch": -1, "max_wait_ms": 0, "min_bytes": 1,
            "max_bytes": 0, "max_records": 0, "batch_size": 1, "share_acquire_mode": 9, "is_renew_ack": True,
            "topics": [{"topic_id": {"<topic_id>": "<T>-t0"}, "partitions": [
                {"partition_index": 0, "acknowledgement_batches": [
                    {"first_offset": 0, "last_offset": 0, "acknowledge_types": [2]}]}]}],
            "forgotten_topics_data": []}},
    ],
    # SUBTRACT on a broker config that is not a list: INVALID_CONFIG on Kafka (open)
    "generated/broker-config-list-operation": [
        {"api": "IncrementalAlterConfigs", "version": 1, "body": {"validate_only": True, "resources": [
            {"resource_name": "1", "resource_type": 4, "configs": [
                {"name": "min.insync.replicas", "value": "1", "config_operation": 3}]}]}},
    ],
    # Fetch asking a partition twice, or a topic twice in a row: read once, one topic (Kafka's map)
    "generated/fetch-asking-a-partition-twice": [
        dict(T0, body=dict(T0["body"], topics=[dict(T0["body"]["topics"][0], num_partitions=2)])),
        {"api": "Fetch", "version": 4, "body": {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1048576,
                                                "isolation_level": 0, "topics": [
            {"topic": "<T>-t0", "partitions": [{"partition": 0, "fetch_offset": 0, "log_start_offset": -1,
                                                "partition_max_bytes": 1048576},
                                               {"partition": 0, "fetch_offset": 5, "log_start_offset": -1,
                                                "partition_max_bytes": 1048576}]},
            {"topic": "<T>-t0", "partitions": [{"partition": 1, "fetch_offset": 0, "log_start_offset": -1,
                                                "partition_max_bytes": 1048576}]},
            {"topic": "<T>-t9", "partitions": [{"partition": 0, "fetch_offset": 0, "log_start_offset": -1,
                                                "partition_max_bytes": 1048576}]}]}},
    ],
    # empty ids of issue 36 item 14 (branch 36b fixes them); not InitProducerId "", which kipper
    # takes and would then list in every ListTransactions of the session
    "generated/empty-ids-of-item-14": [
        {'api': 'DeleteGroups', 'version': 0, 'body': {'groups_names': ['']}},
        {'api': 'FindCoordinator', 'version': 3, 'body': {'key': '', 'key_type': 0}},
        {'api': 'FindCoordinator', 'version': 4, 'body': {'key_type': 0, 'coordinator_keys': ['']}},
    ],
    # SCRAM upsertions: an empty salt is taken; an empty salted password fails inside Kafka
    "generated/scram-credentials-with-empty-bytes": [
        {'api': 'AlterUserScramCredentials', 'version': 0, 'body': {'deletions': [], 'upsertions': [{'salt': {'<hex>': ''}, 'iterations': 4096, 'name': '<T>-u0', 'mechanism': 1, 'salted_password': {'<hex>': '00'}}]}},
        {'api': 'AlterUserScramCredentials', 'version': 0, 'body': {'deletions': [], 'upsertions': [{'salt': {'<hex>': '00'}, 'iterations': 4096, 'name': '<T>-u1', 'mechanism': 1, 'salted_password': {'<hex>': ''}}]}},
        {'api': 'AlterUserScramCredentials', 'version': 0, 'body': {'deletions': [], 'upsertions': [{'salt': {'<hex>': ''}, 'iterations': 4096, 'name': '<T>-u2', 'mechanism': 2, 'salted_password': {'<hex>': ''}}]}},
        {'api': 'DescribeUserScramCredentials', 'version': 0, 'body': {'users': [{'name': '<T>-u0'}, {'name': '<T>-u1'}, {'name': '<T>-u2'}]}},
        {'api': 'AlterUserScramCredentials', 'version': 0, 'body': {'deletions': [{'name': '<T>-u0', 'mechanism': 3}], 'upsertions': []}},
        {'api': 'AlterUserScramCredentials', 'version': 0, 'body': {'deletions': [], 'upsertions': [{'salt': {'<hex>': '00'}, 'iterations': 4096, 'name': '<T>-u3', 'mechanism': 1, 'salted_password': {'<hex>': '00'}}, {'salt': {'<hex>': '00'}, 'iterations': 4096, 'name': '<T>-u3', 'mechanism': 1, 'salted_password': {'<hex>': '0000'}}]}},
    ],
    # DeleteRecords naming a partition twice: one answer, the last offset applied
    "generated/delete-records-naming-a-partition-twice": [
        T0,
        {"api": "Produce", "version": 9, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {
                "n": 3, "start": 0, "pid": -1, "epoch": -1, "seq": -1, "txn": False, "codec": 0, "timestamps": "create",
                "keys": True, "mutation": None}}}]}]}},
        {"api": "DeleteRecords", "version": 2, "body": {"topics": [
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "offset": 1}]},
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "offset": 2}, {"partition_index": -1, "offset": 3},
                                              {"partition_index": -1, "offset": 2}]}], "timeout_ms": 30000}},
    ],
    # OffsetCommit and TxnOffsetCommit naming a topic twice: as asked, but merged by name when the broker
    # answered some partitions itself (Kafka's response builder)
    "generated/offset-commits-naming-a-topic-twice": [
        T0,
        {"api": "OffsetCommit", "version": 2, "body": {"group_id": "<T>-g0", "generation_id_or_member_epoch": 5,
                                                       "member_id": "nobody", "retention_time_ms": -1, "topics": [
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "committed_offset": 0, "committed_metadata": ""}]},
            {"name": "<T>-t0", "partitions": [{"partition_index": 0, "committed_offset": 0, "committed_metadata": ""}]}]}},
        {'api': 'OffsetCommit', 'version': 8, 'body': {'group_id': '<T>-g1', 'generation_id_or_member_epoch': -1, 'member_id': '', 'group_instance_id': None, 'topics': [{'name': '<T>-t0', 'partitions': [{'partition_index': 0, 'committed_offset': 1}, {'partition_index': 2, 'committed_offset': 1}]}, {'name': '<T>-t9', 'partitions': [{'partition_index': 0, 'committed_offset': 1}]}, {'name': '<T>-t0', 'partitions': [{'partition_index': 0, 'committed_offset': 2}, {'partition_index': 7, 'committed_offset': 1}]}]}},
        {'api': 'OffsetFetch', 'version': 7, 'body': {'group_id': '<T>-g1', 'topics': [{'name': '<T>-t0', 'partition_indexes': [0]}], 'require_stable': False}},
        {'api': 'TxnOffsetCommit', 'version': 1, 'body': {'group_id': '<T>-g1', 'producer_id': 5, 'producer_epoch': 0, 'transactional_id': '<T>-x0', 'topics': [{'name': '<T>-t0', 'partitions': [{'partition_index': 0, 'committed_offset': 0, 'committed_metadata': ''}, {'committed_metadata': '', 'partition_index': 2, 'committed_offset': 0}]}, {'name': '<T>-t9', 'partitions': [{'partition_index': 0, 'committed_offset': 1}]}, {'name': '<T>-t0', 'partitions': [{'committed_offset': 0, 'partition_index': 0, 'committed_metadata': ''}, {'committed_offset': 0, 'partition_index': 7, 'committed_metadata': ''}]}]}},
    ],
    # acks=0, the same partition twice (one with null records): Kafka keeps the connection (items 6, 8)
    "generated/produce-acks-0-the-same-partition-twice": [
        T0,
        {"api": "Produce", "version": 12, "body": {"timeout_ms": 0, "transactional_id": "<T>-x1", "acks": 0, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": None}, {"index": 0, "records": {"<batch>": {
                "seq": 1, "txn": True, "codec": 2, "start": 1, "mutation": None, "timestamps": "create", "keys": False,
                "epoch": 0, "pid": -1, "n": 1}}}]}]}},
    ],
    # a transactional batch of no producer: Kafka appends it, kipper refuses it (open)
    "generated/produce-transactional-batch-without-producer": [
        T0,
        {"api": "Produce", "version": 9, "body": {"timeout_ms": 30000, "transactional_id": "<T>-x1", "acks": -1, "topic_data": [
            {"name": "<T>-t0", "partition_data": [{"index": 0, "records": {"<batch>": {
                "seq": 1, "txn": True, "codec": 0, "start": 1, "mutation": None, "timestamps": "create", "keys": False,
                "epoch": 0, "pid": -1, "n": 1}}}]}]}},
    ],
    # AddPartitionsToTxn naming a topic (or a partition) twice: answered as asked, a refusal from a map
    "generated/add-partitions-to-txn-naming-a-topic-twice": [
        dict(T0, body=dict(T0["body"], topics=[dict(T0["body"]["topics"][0], num_partitions=2)])),
        {"api": "InitProducerId", "version": 4, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1}},
        {"api": "AddPartitionsToTxn", "version": 3, "body": {
            "v3_and_below_transactional_id": "<T>-x0", "v3_and_below_producer_id": {"<pid>": "<T>-x0"},
            "v3_and_below_producer_epoch": {"<epoch>": 0}, "v3_and_below_topics": [
                {"name": "<T>-t0", "partitions": [0, 0]}, {"name": "<T>-t0", "partitions": []},
                {"name": "<T>-t0", "partitions": [1]}]}},
        {"api": "AddPartitionsToTxn", "version": 2, "body": {
            "v3_and_below_transactional_id": "", "v3_and_below_producer_id": -1, "v3_and_below_producer_epoch": 0,
            "v3_and_below_topics": [{"name": "<T>-t0", "partitions": [2147483647]}, {"name": "<T>-t0", "partitions": []}]}},
    ],
    # DescribeConfigs with include_documentation: kipper's own words (config-documentation-text)
    "generated/config-documentation": [
        T0,
        {'api': 'DescribeConfigs', 'version': 4, 'body': {'resources': [{'resource_type': 2, 'resource_name': '<T>-t0', 'configuration_keys': ['retention.ms', 'cleanup.policy']}], 'include_synonyms': False, 'include_documentation': True}},
    ],
    # every log dir's topics: the internal topics differ (internal-topics-in-log-dirs, share-group-state-topic)
    "generated/internal-topics-in-log-dirs": [
        T0,
        {'api': 'DescribeLogDirs', 'version': 4, 'body': {'topics': [  # (every topic: other scenarios' sizes too)
            {'topic': '<T>-t0', 'partitions': [0]}, {'topic': '__consumer_offsets', 'partitions': [0, 1]},
            {'topic': '__transaction_state', 'partitions': [0, 1]}, {'topic': '__share_group_state', 'partitions': [0]}]}},
    ],
    # a share group that does not exist: heartbeats (share-heartbeat-lost-group) and a fetch
    # (share-fetch-by-a-missing-member)
    "generated/share-heartbeat-to-a-missing-group": [
        T0,
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '<T>-g0', 'member_id': '<T>-m0', 'member_epoch': 3, 'rack_id': None, 'subscribed_topic_names': None}},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '<T>-g0', 'member_id': '<T>-m0', 'member_epoch': -1, 'rack_id': None, 'subscribed_topic_names': None}},
        {'api': 'ShareFetch', 'version': 1, 'body': {'group_id': '<T>-g0', 'member_id': '<T>-m0', 'share_session_epoch': 0, 'max_wait_ms': 0, 'min_bytes': 1, 'max_bytes': 1048576, 'max_records': 10, 'batch_size': 10, 'topics': [{'topic_id': {'<topic_id>': '<T>-t0'}, 'partitions': [{'partition_index': 0, 'acknowledgement_batches': []}]}], 'forgotten_topics_data': []}},
    ],
    # an empty transactional id is INVALID_REQUEST, an empty group id INVALID_GROUP_ID (and
    # INVALID_REQUEST in the heartbeats), before anything else the coordinators check
    "generated/empty-ids": [
        T0,
        {"api": "TxnOffsetCommit", "version": 1, "body": {"transactional_id": "", "group_id": "<T>-g0", "producer_id": 5,
                                                         "producer_epoch": 0, "topics": [{"name": "<T>-t0", "partitions": [
                                                             {"partition_index": 0, "committed_offset": 0}]}]}},
        {'api': 'EndTxn', 'version': 3, 'body': {'transactional_id': '', 'producer_id': 999999999999, 'producer_epoch': 0, 'committed': False}},
        {'api': 'ShareGroupDescribe', 'version': 1, 'body': {'group_ids': [''], 'include_authorized_operations': False}},
        {'api': 'DescribeTransactions', 'version': 0, 'body': {'transactional_ids': ['']}},
        {'api': 'TxnOffsetCommit', 'version': 3, 'body': {'transactional_id': '<T>-x0', 'group_id': '', 'producer_id': 999999999999, 'producer_epoch': 0, 'generation_id': -1, 'member_id': '', 'group_instance_id': None, 'topics': [{'name': '<T>-t0', 'partitions': [{'partition_index': 0, 'committed_offset': 1, 'committed_leader_epoch': -1, 'committed_metadata': ''}]}]}},
        {'api': 'Heartbeat', 'version': 0, 'body': {'group_id': '', 'generation_id': -1, 'member_id': ''}},
        {'api': 'LeaveGroup', 'version': 2, 'body': {'group_id': '', 'member_id': ''}},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'group_id': '', 'member_id': '<T>-m0', 'member_epoch': 0, 'rack_id': None, 'subscribed_topic_names': ['<T>-t0']}},
        {'api': 'SyncGroup', 'version': 3, 'body': {'group_id': '', 'generation_id': -1, 'member_id': '', 'group_instance_id': None, 'assignments': []}},
        {'api': 'AddOffsetsToTxn', 'version': 3, 'body': {'transactional_id': '', 'producer_id': 999999999999, 'producer_epoch': 0, 'group_id': '<T>-g0'}},
        {'api': 'AddPartitionsToTxn', 'version': 3, 'body': {'v3_and_below_transactional_id': '', 'v3_and_below_producer_id': 999999999999, 'v3_and_below_producer_epoch': 0, 'v3_and_below_topics': [{'name': '<T>-t0', 'partitions': [0]}]}},
        {'api': 'ConsumerGroupHeartbeat', 'version': 0, 'body': {'group_id': '', 'member_id': '', 'member_epoch': 0, 'instance_id': None, 'rack_id': None, 'rebalance_timeout_ms': 30000, 'subscribed_topic_names': ['<T>-t0'], 'server_assignor': None, 'topic_partitions': []}},
        {'api': 'ConsumerGroupDescribe', 'version': 0, 'body': {'group_ids': [''], 'include_authorized_operations': False}},
        {'api': 'StreamsGroupDescribe', 'version': 0, 'body': {'group_ids': ['', '<T>-g0'], 'include_authorized_operations': False}},
        {'api': 'OffsetDelete', 'version': 0, 'body': {'group_id': '', 'topics': [{'name': '<T>-t0', 'partitions': [{'partition_index': 0}]}]}},
    ],
    # a topic named twice in DeleteTopics: Kafka answers it once, INVALID_REQUEST, and deletes nothing
    "generated/delete-topics-naming-a-topic-twice": [
        T0,
        {'api': 'DeleteTopics', 'version': 4, 'body': {'topic_names': ['<T>-t0', '<T>-t0'], 'timeout_ms': 30000}},
        {'api': 'DeleteTopics', 'version': 6, 'body': {'topics': [{'name': '<T>-t9', 'topic_id': '00000000-0000-0000-0000-000000000000'}, {'name': '<T>-t9', 'topic_id': '00000000-0000-0000-0000-000000000000'}, {'name': '<T>-t8', 'topic_id': '00000000-0000-0000-0000-000000000000'}], 'timeout_ms': 30000}},
        {'api': 'Metadata', 'version': 12, 'body': {'topics': [{'name': '<T>-t0'}], 'allow_auto_topic_creation': False}},
    ],
    # a cursor at a negative partition: INVALID_REQUEST for every topic asked
    "generated/describe-topic-partitions-negative-cursor": [
        T0,
        {'api': 'CreateTopics', 'version': 7, 'body': {'topics': [{'name': '<T>-t1', 'num_partitions': 1, 'replication_factor': 1, 'assignments': [], 'configs': []}], 'timeout_ms': 30000, 'validate_only': False}},
        {'api': 'DescribeTopicPartitions', 'version': 0, 'body': {'topics': [{'name': 'bad name!'}, {'name': '<T>-t1'}], 'cursor': {'topic_name': '<T>-t1', 'partition_index': -1}, 'response_partition_limit': 10}},
        {'api': 'DescribeTopicPartitions', 'version': 0, 'body': {'topics': [], 'cursor': {'topic_name': '<T>-t1', 'partition_index': -1}, 'response_partition_limit': 10}},
    ],
    # OffsetCommit and TxnOffsetCommit: unknown topics and partitions are the broker's to answer, before the coordinator's errors
    "generated/unknown-partitions-before-the-coordinator": [
        T0,
        {'api': 'CreateTopics', 'version': 7, 'body': {'topics': [{'name': '<T>-t1', 'num_partitions': 1, 'replication_factor': 1, 'assignments': [], 'configs': []}], 'timeout_ms': 30000, 'validate_only': False}},
        {'api': 'InitProducerId', 'version': 4, 'body': {'transactional_id': '<T>-x0', 'transaction_timeout_ms': 60000, 'producer_id': -1, 'producer_epoch': -1}},
        {'api': 'TxnOffsetCommit', 'version': 3, 'body': {'transactional_id': '<T>-x0', 'group_id': '<T>-g0', 'producer_id': {'<pid>': '<T>-x0'}, 'producer_epoch': {'<epoch>': 0}, 'generation_id': -1, 'member_id': '', 'group_instance_id': None, 'topics': [{'name': 'bad name!', 'partitions': [{'partition_index': 0, 'committed_offset': 1, 'committed_leader_epoch': -1, 'committed_metadata': ''}]}, {'name': '<T>-t1', 'partitions': [{'partition_index': 0, 'committed_offset': 1, 'committed_leader_epoch': -1, 'committed_metadata': ''}, {'partition_index': 5, 'committed_offset': 1, 'committed_leader_epoch': -1, 'committed_metadata': ''}]}]}},
        {'api': 'OffsetCommit', 'version': 8, 'body': {'group_id': '<T>-g1', 'generation_id_or_member_epoch': 5, 'member_id': 'nobody', 'group_instance_id': None, 'topics': [{'name': '<T>-t9', 'partitions': [{'partition_index': 0, 'committed_offset': 1, 'committed_leader_epoch': -1, 'committed_metadata': ''}]}, {'name': '<T>-t1', 'partitions': [{'partition_index': 0, 'committed_offset': 1, 'committed_leader_epoch': -1, 'committed_metadata': ''}]}]}},
    ],
    # JoinGroup: an invalid session timeout is answered before an unknown member
    "generated/join-group-session-timeout-first": [
        T0,
        {'api': 'JoinGroup', 'version': 8, 'body': {'group_id': '<T>-g2', 'session_timeout_ms': 1800001, 'rebalance_timeout_ms': 1000, 'member_id': '<T>-unknown', 'group_instance_id': None, 'protocol_type': 'consumer', 'protocols': [], 'reason': None}},
        {'api': 'JoinGroup', 'version': 8, 'body': {'group_id': '<T>-g2', 'session_timeout_ms': 0, 'rebalance_timeout_ms': 1000, 'member_id': '<T>-unknown', 'group_instance_id': None, 'protocol_type': 'consumer', 'protocols': [], 'reason': None}},
    ],
    # a topic (or a transaction marker) that names no partition has no answer on Kafka, whose
    # answers are maps by partition; OffsetFetch and DescribeProducers answer it empty on both
    "generated/a-topic-that-names-no-partition": [
        T0,
        {'api': 'Produce', 'version': 9, 'body': {'transactional_id': None, 'acks': -1, 'timeout_ms': 30000, 'topic_data': [{'name': '<T>-t0', 'partition_data': []}]}},
        {'api': 'Fetch', 'version': 12, 'body': {'replica_id': -1, 'max_wait_ms': 0, 'min_bytes': 1, 'max_bytes': 1048576, 'isolation_level': 0, 'session_id': 0, 'session_epoch': -1, 'topics': [{'topic': '<T>-t0', 'partitions': []}], 'forgotten_topics_data': [], 'rack_id': ''}},
        {'api': 'ListOffsets', 'version': 7, 'body': {'replica_id': -1, 'isolation_level': 0, 'topics': [{'name': '<T>-t0', 'partitions': []}]}},
        {'api': 'DeleteRecords', 'version': 2, 'body': {'topics': [{'name': '<T>-t0', 'partitions': []}], 'timeout_ms': 30000}},
        {'api': 'OffsetCommit', 'version': 8, 'body': {'group_id': '<T>-g0', 'generation_id_or_member_epoch': -1, 'member_id': '', 'group_instance_id': None, 'topics': [{'name': '<T>-t0', 'partitions': []}]}},
        {'api': 'OffsetFetch', 'version': 7, 'body': {'group_id': '<T>-g0', 'topics': [{'name': '<T>-t0', 'partition_indexes': []}], 'require_stable': False}},
        {'api': 'DescribeProducers', 'version': 0, 'body': {'topics': [{'name': '<T>-t0', 'partition_indexes': []}]}},
        {'api': 'InitProducerId', 'version': 4, 'body': {'transactional_id': '<T>-x0', 'transaction_timeout_ms': 60000, 'producer_id': -1, 'producer_epoch': -1}},
        {'api': 'TxnOffsetCommit', 'version': 3, 'body': {'transactional_id': '<T>-x0', 'group_id': '<T>-g0', 'producer_id': {'<pid>': '<T>-x0'}, 'producer_epoch': {'<epoch>': 0}, 'generation_id': -1, 'member_id': '', 'group_instance_id': None, 'topics': [{'name': '<T>-t0', 'partitions': []}]}},
        {'api': 'WriteTxnMarkers', 'version': 1, 'body': {'markers': [{'producer_id': {'<pid>': '<T>-x0'}, 'producer_epoch': {'<epoch>': 0}, 'transaction_result': False, 'topics': [], 'coordinator_epoch': 0}]}},
        {'api': 'WriteTxnMarkers', 'version': 1, 'body': {'markers': [{'producer_id': {'<pid>': '<T>-x0'}, 'producer_epoch': {'<epoch>': 0}, 'transaction_result': False, 'topics': [{'name': '<T>-t0', 'partition_indexes': []}], 'coordinator_epoch': 0}]}},
    ],
    # Kafka fails inside (UNKNOWN_SERVER_ERROR) where kipper answers: KAFKA_DIFFERENCES.md kafka-unknown-server-error
    "generated/kafka-fails-inside": [
        T0,
        {'api': 'ListOffsets', 'version': 2, 'body': {'replica_id': -1, 'isolation_level': 3, 'topics': [{'name': '<T>-t0', 'partitions': [{'partition_index': 0, 'timestamp': -1}]}]}},
        {'api': 'Fetch', 'version': 5, 'body': {'replica_id': -1, 'max_wait_ms': 0, 'min_bytes': 1, 'max_bytes': 1048576, 'isolation_level': 3, 'topics': [{'topic': '<T>-t0', 'partitions': [{'partition': 0, 'fetch_offset': 0, 'log_start_offset': -1, 'partition_max_bytes': 1048576}]}]}},
        {'api': 'IncrementalAlterConfigs', 'version': 1, 'body': {'resources': [{'resource_type': 2, 'resource_name': '<T>-t0', 'configs': [{'name': 'retention.ms', 'config_operation': 7, 'value': '1'}]}], 'validate_only': True}},
        {'api': 'DescribeShareGroupOffsets', 'version': 1, 'body': {'groups': [{'group_id': '<T>-g0', 'topics': [{'topic_name': '<T>-t0', 'partitions': [-1]}]}]}},
        {'api': 'AlterShareGroupOffsets', 'version': 0, 'body': {'group_id': '<T>-g0', 'topics': [{'topic_name': '<T>-t0', 'partitions': [{'partition_index': -1, 'start_offset': 0}]}]}},
    ],
    # timeout_ms 0 or -1: Kafka's controller finds its deadline passed and does nothing (REQUEST_TIMED_OUT)
    "generated/a-deadline-already-passed": [
        dict(T0, body=dict(T0["body"], topics=[dict(T0["body"]["topics"][0], num_partitions=2)])),
        {"api": "CreateTopics", "version": 4, "body": {"topics": [
            {"name": "<T>-t1", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
            "timeout_ms": 0, "validate_only": False}},
        {"api": "CreatePartitions", "version": 3, "body": {"topics": [{"name": "<T>-t0", "count": 3, "assignments": None}],
                                                          "timeout_ms": -1, "validate_only": False}},
        {"api": "DeleteTopics", "version": 6, "body": {"topics": [
            {"name": "<T>-t0", "topic_id": "00000000-0000-0000-0000-000000000000"}], "timeout_ms": 0}},
        {"api": "Metadata", "version": 12, "body": {"topics": [{"name": "<T>-t0"}, {"name": "<T>-t1"}],
                                                    "allow_auto_topic_creation": False}},
    ],
    # a response_partition_limit of 0 or less: Kafka still pages one partition
    "generated/describe-topic-partitions-limit-zero": [
        dict(T0, body=dict(T0["body"], topics=[dict(T0["body"]["topics"][0], num_partitions=2)])),
        {"api": "DescribeTopicPartitions", "version": 0, "body": {
            "topics": [{"name": "<T>-t0"}], "response_partition_limit": 0, "cursor": None}},
        {"api": "DescribeTopicPartitions", "version": 0, "body": {
            "topics": [{"name": "<T>-t0"}], "response_partition_limit": -1,
            "cursor": {"topic_name": "<T>-t0", "partition_index": 1}}},
    ],
    # DescribeConfigs of a topic: kipper lists share.auto.offset.reset among a topic's configs (seed 004)
    "generated/describe-a-topic-s-configs": [
        T0,
        {"api": "DescribeConfigs", "version": 4, "body": {"resources": [
            {"resource_type": 2, "resource_name": "<T>-t0", "configuration_keys": None}],
            "include_synonyms": True, "include_documentation": False}},
    ],
}

for _name, _steps in GENERATED.items():
    register(_name, replay(_steps))
