"""What the generator's sixth run found (issue 36, docs/FUZZ_FINDINGS.md), each the sequence a
difference shrank to or a few variants of it, replayed as generated.py replays (every one
passes against Kafka 4.4; tests/unit/test_sixth_run_findings.py states each answer)."""

from __future__ import annotations

from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios import register, scenario
from tests.conformance.scenarios.generated import T0, replay

_ACL = {"resource_type": 2, "resource_name": "<T>-t0", "resource_pattern_type": 3, "principal": "User:<T>-u0",
        "host": "*", "operation": 2, "permission_type": 3}
_FILTER = {"resource_type_filter": 2, "resource_name_filter": "<T>-t0", "pattern_type_filter": 3,
           "principal_filter": "User:<T>-u0", "host_filter": None, "operation": 2, "permission_type": 3}
_ANY_OPERATION = dict(_FILTER, operation=1)


def _join(version: int, group: str, protocols: list[str]) -> dict:
    body = {"group_id": group, "session_timeout_ms": 45000, "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": p, "metadata": {"<subscription>": ["<T>-t0"]}} for p in protocols]}
    if version >= 1:
        body["rebalance_timeout_ms"] = 1000
    return {"api": "JoinGroup", "version": version, "body": body}


RUN_6: dict[str, list[dict]] = {
    # every filter of one DeleteAcls matches the ACLs as they were before it (seed 7001)
    "generated/delete-acls-filters-see-the-acls-before-the-request": [
        T0,
        {"api": "CreateAcls", "version": 1, "body": {"creations": [_ACL, dict(_ACL, operation=3)]}},
        {"api": "DeleteAcls", "version": 1, "body": {"filters": [_FILTER, _FILTER, _ANY_OPERATION]}},
        {"api": "DescribeAcls", "version": 1, "body": {**_ANY_OPERATION, "permission_type": 1}},
    ],
    # a new member naming a protocol twice: Kafka fails inside and closes the connection, and
    # the group it made keeps the member's protocol type (seed 7003)
    "generated/join-group-protocol-twice-leaves-its-group": [
        T0,
        _join(0, "<T>-g2", ["roundrobin", "roundrobin"]),
        {"api": "ListGroups", "version": 1, "body": {}},
        {"api": "DescribeGroups", "version": 0, "body": {"groups": ["<T>-g2"]}},
        _join(5, "<T>-g3", ["range", "range"]),
        {"api": "ListGroups", "version": 1, "body": {}},
        {"api": "DescribeGroups", "version": 0, "body": {"groups": ["<T>-g3"]}},
    ],
    # topics listed in the order of Kafka's metadata image (by String.hashCode) (seed 7006)
    "generated/list-config-resources-topic-order": [
        T0,
        {"api": "CreateTopics", "version": 7, "body": {"topics": [
            {"name": f"<T>-{n}", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
            for n in ("b", "a", "zz", "t9")], "timeout_ms": 30000, "validate_only": False}},
        {"api": "FindCoordinator", "version": 3, "body": {"key": "<T>-g0", "key_type": 0}},
        {"api": "ListConfigResources", "version": 1, "body": {"resource_types": [2]}},
        {"api": "ListConfigResources", "version": 1, "body": {"resource_types": []}},
    ],
    # (seed 7011)
    "generated/share-heartbeat-of-a-classic-groups-member": [
        {'api': 'CreateTopics', 'version': 7, 'body': {'topics': [{'name': '<T>-t0', 'num_partitions': 1, 'replication_factor': 1, 'assignments': [], 'configs': []}], 'timeout_ms': 30000, 'validate_only': False}},
        {'api': 'IncrementalAlterConfigs', 'version': 1, 'body': {'resources': [{'resource_type': 32, 'resource_name': '<T>-g2', 'configs': [{'name': 'share.auto.offset.reset', 'config_operation': 0, 'value': 'earliest'}]}], 'validate_only': False}},
        {'api': 'LeaveGroup', 'version': 0, 'body': {'group_id': '<T>-g0', 'member_id': {'<member>': 0}}, 'conn': 'main'},
        {'api': 'OffsetCommit', 'version': 2, 'body': {'group_id': '<T>-g0', 'generation_id_or_member_epoch': {'<generation>': 0}, 'member_id': {'<member>': 0}, 'retention_time_ms': -1, 'topics': [{'name': '<T>-t0', 'partitions': [{'partition_index': 0, 'committed_offset': 0, 'committed_metadata': ''}]}]}, 'conn': 'main'},
        {'api': 'DescribeGroups', 'version': 0, 'body': {'groups': ['<T>-g0']}, 'conn': 'main'},
        {'api': 'DescribeGroups', 'version': 5, 'body': {'groups': ['<T>-g0'], 'include_authorized_operations': False}, 'conn': 'main'},
        {'api': 'CreateAcls', 'version': 1, 'body': {'creations': [{'resource_type': 2, 'operation': 2, 'principal': 'User:<T>-u0', 'host': '*', 'resource_pattern_type': 3, 'resource_name': '<T>-t0', 'permission_type': 3}]}, 'conn': 'main'},
        {'api': 'DescribeGroups', 'version': 0, 'body': {'groups': []}, 'conn': 'other'},
        {'api': 'DeleteAcls', 'version': 2, 'body': {'filters': [{'resource_type_filter': 2, 'resource_name_filter': None, 'pattern_type_filter': 3, 'principal_filter': 'User:<T>-u0', 'host_filter': None, 'operation': 2, 'permission_type': 1}]}, 'conn': 'main'},
        {'api': 'DescribeAcls', 'version': 1, 'body': {'resource_type_filter': 2, 'resource_name_filter': '<T>-t0', 'pattern_type_filter': 3, 'principal_filter': '', 'host_filter': None, 'operation': 3, 'permission_type': 3}, 'conn': 'main'},
        {'api': 'DescribeGroups', 'version': 3, 'body': {'groups': [], 'include_authorized_operations': False}, 'conn': 'main'},
        {'api': 'OffsetForLeaderEpoch', 'version': 4, 'body': {'replica_id': 0, 'topics': [{'topic': {'<long>': 249}, 'partitions': [{'leader_epoch': -1, 'current_leader_epoch': 5, 'partition': 1}, {'partition': 0, 'leader_epoch': -2147483648, 'current_leader_epoch': 0}]}]}, 'conn': 'other'},
        {'api': 'ConsumerGroupHeartbeat', 'version': 1, 'body': {'subscribed_topic_names': ['<T>-t0', '<T>-t0'], 'group_id': '<T>-g2', 'server_assignor': 'range', 'rebalance_timeout_ms': 1000, 'rack_id': None, 'member_epoch': {'<member_epoch>': 0}, 'member_id': '<T>-unknown-member', 'instance_id': '<T>-i0', 'subscribed_topic_regex': None, 'topic_partitions': None}, 'conn': 'main'},
        {'api': 'ConsumerGroupDescribe', 'version': 0, 'body': {'include_authorized_operations': False, 'group_ids': []}, 'conn': 'main'},
        {'api': 'JoinGroup', 'version': 3, 'body': {'protocol_type': '', 'session_timeout_ms': 45000, 'rebalance_timeout_ms': 1000, 'member_id': {'<member>': 0}, 'group_id': '<T>-g0', 'protocols': [{'name': 'range', 'metadata': {'<hex>': '00'}}, {'name': 'range', 'metadata': {'<subscription>': ['<T>-t0']}}]}, 'conn': 'main'},
        {'api': 'DescribeGroups', 'version': 0, 'body': {'groups': ['<T>-g2']}, 'conn': 'main'},
        {'api': 'Heartbeat', 'version': 0, 'body': {'group_id': '<T>-g0', 'generation_id': {'<generation>': 0}, 'member_id': {'<member>': 0}}, 'conn': 'main'},
        {'api': 'JoinGroup', 'version': 0, 'body': {'session_timeout_ms': 45000, 'member_id': {'<member>': 0}, 'protocol_type': 'consumer', 'protocols': [{'name': 'range', 'metadata': {'<subscription>': []}}], 'group_id': '<T>-g0'}, 'conn': 'main'},
        {'api': 'DescribeGroups', 'version': 0, 'body': {'groups': ['<T>-g0']}, 'conn': 'main'},
        {'api': 'DescribeGroups', 'version': 1, 'body': {'groups': ['<T>-g0']}, 'conn': 'other'},
        {'api': 'DescribeGroups', 'version': 3, 'body': {'groups': ['<T>-g0'], 'include_authorized_operations': True}, 'conn': 'main'},
        {'api': 'DescribeGroups', 'version': 3, 'body': {'groups': ['<T>-g0'], 'include_authorized_operations': False}, 'conn': 'main'},
        {'api': 'ShareGroupHeartbeat', 'version': 1, 'body': {'subscribed_topic_names': ['<T>-t0'], 'member_id': {'<member>': 0}, 'member_epoch': {'<member_epoch>': 0}, 'rack_id': None, 'group_id': '<T>-g0'}, 'conn': 'main'},
    ],
    # a share member id of 36 characters at most (a UUID's text), 37 refused (seed 7011's sequence above)
    "generated/share-heartbeat-member-id-lengths": [
        T0,
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-s36", "member_id": "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", "member_epoch": 0, "rack_id": None, "subscribed_topic_names": ["<T>-t0"]}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-s37", "member_id": "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", "member_epoch": 0, "rack_id": None, "subscribed_topic_names": ["<T>-t0"]}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-s0", "member_id": "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm", "member_epoch": -1, "rack_id": None, "subscribed_topic_names": None}},
    ],
    # a partition named twice in an acks=0 Produce, zstd at v3 and then a transactional batch
    # without a producer id: Kafka closes the connection (seed 7009)
    "generated/produce-acks-0-zstd-at-v3-then-a-transactional-batch": [
        T0,
        {"api": "Produce", "version": 3, "body": {"acks": -1, "transactional_id": "<T>-x0", "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"codec": 4, "timestamps": "create", "keys": True, "epoch": 0, "seq": 0, "txn": False, "n": 3, "start": 0, "pid": -1, "mutation": None}}},
            {"index": 0, "records": {"<batch>": {"epoch": 0, "n": 3, "pid": -1, "start": 1, "seq": 0, "txn": True, "codec": 0, "timestamps": "none", "keys": True, "mutation": None}}}]}]}},
        {"api": "Produce", "version": 3, "body": {"acks": 0, "transactional_id": "<T>-x0", "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"codec": 4, "timestamps": "create", "keys": True, "epoch": 0, "seq": 0, "txn": False, "n": 3, "start": 0, "pid": -1, "mutation": None}}},
            {"index": 0, "records": {"<batch>": {"epoch": 0, "n": 3, "pid": -1, "start": 1, "seq": 0, "txn": True, "codec": 0, "timestamps": "none", "keys": True, "mutation": None}}}]}]}},
        {"api": "Produce", "version": 3, "body": {"acks": -1, "transactional_id": "<T>-x0", "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"epoch": 0, "n": 3, "pid": -1, "start": 1, "seq": 0, "txn": True, "codec": 0, "timestamps": "none", "keys": True, "mutation": None}}}]}]}},
        {"api": "Produce", "version": 3, "body": {"acks": -1, "transactional_id": "<T>-x0", "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"codec": 4, "timestamps": "create", "keys": True, "epoch": 0, "seq": 0, "txn": False, "n": 3, "start": 0, "pid": -1, "mutation": None}}}]}]}},
    ],
    # a batch the producer marked LogAppendTime: refused when its records have no timestamp, or
    # on a LogAppendTime topic; on a CreateTime topic with timestamps, rewritten (seed 7013)
    "generated/produce-marked-log-append-time": [
        T0,
        {"api": "CreateTopics", "version": 7, "body": {"topics": [{"name": "<T>-t1", "num_partitions": 1, "replication_factor": 1, "assignments": [],
            "configs": [{"name": "message.timestamp.type", "value": "LogAppendTime"}]}], "timeout_ms": 30000, "validate_only": False}},
        {"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"n": 2, "codec": 0, "pid": -1, "seq": -1, "timestamps": "none", "txn": False, "epoch": -1, "mutation": "log_append_time", "keys": True, "start": 0}}}]}]}},
        {"api": "Produce", "version": 9, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"n": 2, "codec": 0, "pid": -1, "seq": -1, "timestamps": "none", "txn": False, "epoch": -1, "mutation": "log_append_time", "keys": True, "start": 0}}}]}]}},
        {"api": "Produce", "version": 9, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"n": 2, "codec": 0, "pid": -1, "seq": -1, "timestamps": "create", "txn": False, "epoch": -1, "mutation": "log_append_time", "keys": True, "start": 0}}}]}]}},
        {"api": "Produce", "version": 9, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [{"name": "<T>-t1", "partition_data": [
            {"index": 0, "records": {"<batch>": {"n": 2, "codec": 0, "pid": -1, "seq": -1, "timestamps": "create", "txn": False, "epoch": -1, "mutation": "log_append_time", "keys": True, "start": 0}}}]}]}},
        {"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [{"name": "<T>-t1", "partition_data": [
            {"index": 0, "records": {"<batch>": {"n": 2, "codec": 0, "pid": -1, "seq": -1, "timestamps": "none", "txn": False, "epoch": -1, "mutation": "log_append_time", "keys": True, "start": 0}}}]}]}},
    ],
    # a topic by its id and again by name and id: the second INVALID_REQUEST, the topic deleted;
    # Kafka lists the two in either order from one run to the next (seed 7015)
    "generated/delete-topics-by-id-and-by-name-and-id": [
        T0,
        {"api": "DeleteTopics", "version": 6, "body": {"topics": [{"name": None, "topic_id": {"<topic_id>": "<T>-t0"}},
                                                                  {"name": "<T>-t0", "topic_id": {"<topic_id>": "<T>-t0"}}],
                                                       "timeout_ms": 30000}},
    ],
    # a topic there is, named twice, is one topic of the answer; one there is not, answered as
    # asked (seed 8003, the seventh run)
    "generated/describe-share-group-offsets-a-topic-twice": [
        T0,
        {"api": "DescribeShareGroupOffsets", "version": 0, "body": {"groups": [{"group_id": "<T>-g0", "topics": [
            {"topic_name": "<T>-t0", "partitions": [0]}, {"topic_name": "<T>-t0", "partitions": [0]}]}]}},
        {"api": "DescribeShareGroupOffsets", "version": 0, "body": {"groups": [{"group_id": "<T>-g0", "topics": [
            {"topic_name": "<T>-t9", "partitions": [0]}, {"topic_name": "<T>-t0", "partitions": [0]},
            {"topic_name": "<T>-t9", "partitions": [0]}]}]}},
    ],
    # a Fetch of max_bytes 0: the first batch alone (seed 8004, the seventh run)
    "generated/fetch-max-bytes-0": [
        T0,
        {"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"n": 1, "start": 0, "pid": -1, "epoch": -1, "seq": -1, "txn": False, "codec": 0, "timestamps": "create", "keys": True, "mutation": None}}}]}]}},
        {"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [{"name": "<T>-t0", "partition_data": [
            {"index": 0, "records": {"<batch>": {"n": 2, "start": 0, "pid": -1, "epoch": -1, "seq": -1, "txn": False, "codec": 0, "timestamps": "create", "keys": True, "mutation": None}}}]}]}},
        {"api": "Fetch", "version": 4, "body": {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 0, "isolation_level": 0,
                                                "topics": [{"topic": "<T>-t0", "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1048576}]}]}},
        {"api": "Fetch", "version": 11, "body": {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 0, "isolation_level": 0,
                                                 "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
                                                 "topics": [{"topic": "<T>-t0", "partitions": [{"partition": 0, "current_leader_epoch": -1, "fetch_offset": 1,
                                                                                                "log_start_offset": -1, "partition_max_bytes": 1048576}]}]}},
    ],
    # a user upserted twice, the second time with an unknown mechanism: DUPLICATE_RESOURCE
    # (seed 8012, the seventh run)
    "generated/scram-credentials-user-twice-second-of-an-unknown-mechanism": [
        {"api": "AlterUserScramCredentials", "version": 0, "body": {"deletions": [{"name": "<T>-u9", "mechanism": 1}], "upsertions": [
            {"name": "<T>-u0", "mechanism": 1, "iterations": 8192, "salt": {"<hex>": "00"}, "salted_password": {"<hex>": "0001020304"}},
            {"name": "<T>-u0", "mechanism": 3, "iterations": 4096, "salt": {"<hex>": "0001020304"}, "salted_password": {"<hex>": "0001020304"}},
            {"name": "<T>-u1", "mechanism": 3, "iterations": 4096, "salt": {"<hex>": "01"}, "salted_password": {"<hex>": "01"}},
            {"name": "<T>-u1", "mechanism": 1, "iterations": 4096, "salt": {"<hex>": "01"}, "salted_password": {"<hex>": "01"}}]}},
    ],
    # an empty classic group (a join refused for its protocols) holds its id against a share
    # group; ids a refused heartbeat, OffsetDelete or AddOffsetsToTxn named do not (seed 8020)
    "generated/share-heartbeat-of-an-empty-classic-group": [
        T0,
        {"api": "JoinGroup", "version": 1, "body": {"session_timeout_ms": 45000, "protocol_type": "", "member_id": "", "protocols": [], "rebalance_timeout_ms": 1000, "group_id": "<T>-g0"}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"rack_id": None, "member_id": "<T>-m1", "group_id": "<T>-g0", "subscribed_topic_names": ["<T>-t0"], "member_epoch": 0}},
        {"api": "Heartbeat", "version": 0, "body": {"group_id": "<T>-g1", "member_id": "<T>-m1", "generation_id": -1}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"rack_id": None, "member_id": "<T>-m1", "group_id": "<T>-g1", "subscribed_topic_names": ["<T>-t0"], "member_epoch": 0}},
        {"api": "OffsetDelete", "version": 0, "body": {"group_id": "<T>-g2", "topics": [{"name": "..", "partitions": [{"partition_index": 0}]}]}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"rack_id": None, "member_id": "<T>-m1", "group_id": "<T>-g2", "subscribed_topic_names": ["<T>-t0"], "member_epoch": 0}},
        {"api": "AddOffsetsToTxn", "version": 2, "body": {"group_id": "<T>-g3", "transactional_id": "<T>-x0", "producer_id": 5, "producer_epoch": 32767}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"rack_id": None, "member_id": "<T>-m1", "group_id": "<T>-g3", "subscribed_topic_names": ["<T>-t0"], "member_epoch": 0}},
    ],
    # a broker has no config named retention.ms or retention.bytes (seed 8027, the seventh run)
    "generated/broker-configs-named-as-topic-configs": [
        {"api": "DescribeConfigs", "version": 1, "body": {"resources": [{"resource_type": 4, "resource_name": "1",
                                                                         "configuration_keys": ["retention.ms", "retention.bytes"]}],
                                                          "include_synonyms": False}},
    ],
}

for _name, _steps in RUN_6.items():
    register(_name, replay(_steps))


@scenario("generated/join-group-rebalance-timeout-0")
def _(run):
    """A new member of rebalance timeout 0 (v1+: kept as given) is answered, and leaves at once
    without a SyncGroup: Kafka's timer for its sync fires straight away (seed 7004; a request
    right after may still find it, on Kafka: the poll waits for both)."""
    t = k.create_topic(run)
    g = run.name("g")
    k.join_member(run, g, [t], version=1, session_ms=45000, rebalance_ms=0)
    run.poll(lambda: run.call(k.DESCRIBE_GROUPS, 0, {"groups": [g]}, record=False),
             lambda answer: answer["groups"][0]["group_state"] == "Empty", timeout=10)
    run.call(k.DESCRIBE_GROUPS, 0, {"groups": [g]}, label="described after the member left")
