"""What the generator's first ``--messages`` runs (error texts compared word for word, seed
10601, docs/FUZZ_FINDINGS.md) handed on, and what probing beside them found, replayed
against Kafka 4.4 with the texts compared (tests/unit/test_messages_run_findings.py states
each answer): AlterClientQuotas' duplicate entities, CreateAcls' order of checks and CIDR
hosts, a group's unknown config names, DescribeConfigs of an unknown resource type, the
order of ConsumerGroupHeartbeat's own checks, Share- and ConsumerGroupDescribe of another kind of
group, a fenced member's epoch in its refusal, a SCRAM user described twice."""

from __future__ import annotations

from tests.conformance.scenarios import register
from tests.conformance.scenarios.generated import replay


def _quotas(*entries: dict) -> dict:
    return {"api": "AlterClientQuotas", "version": 1, "body": {"validate_only": True, "entries": list(entries)}}


def _entry(*entity: tuple[str, str | None], ops: int = 1) -> dict:
    return {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
            "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}] * ops}


def _acl(resource_type: int, name: str, pattern: int, host: str = "*", operation: int = 2, permission: int = 3) -> dict:
    return {"principal": "User:<T>-u0", "resource_type": resource_type, "resource_name": name,
            "resource_pattern_type": pattern, "operation": operation, "permission_type": permission, "host": host}


def _heartbeat(version: int = 1, **fields) -> dict:
    body = {"group_id": "<T>-g", "member_id": "<T>-m", "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["<T>-t"], "server_assignor": None,
            "topic_partitions": []}
    if version >= 1:
        body["subscribed_topic_regex"] = None
    return {"api": "ConsumerGroupHeartbeat", "version": version, "body": {**body, **fields}}


def _join(group: str, protocol_type: str) -> dict:
    return {"api": "JoinGroup", "version": 9, "body": {
        "group_id": group, "session_timeout_ms": 45000, "rebalance_timeout_ms": 1000, "member_id": "",
        "group_instance_id": None, "protocol_type": protocol_type, "reason": None,
        "protocols": [{"name": "roundrobin", "metadata": {"<subscription>": ["<T>-t0"]}}]}}


def _topic(name: str, configs: dict | None = None) -> dict:
    return {"api": "CreateTopics", "version": 7, "body": {"topics": [{
        "name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}], "timeout_ms": 30000,
        "validate_only": False}}


def _marked(topic: str, codec: int) -> dict:
    """Produce one batch of two records its producer marked LogAppendTime (refused)."""
    return {"api": "Produce", "version": 11, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
            "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": {"<batch>": {
                "n": 2, "start": 0, "pid": -1, "epoch": -1, "seq": -1, "txn": False, "codec": codec,
                "timestamps": "none", "keys": True, "mutation": "log_append_time"}}}]}]}}


CLUSTER, TOPIC, LITERAL, PREFIXED = 4, 2, 3, 4
HOSTS = ["10.0.0.0/8", "1.2.3.4/99", "abc/3", "300.1.1.1/8", "1.2.3.4/", "fd00::/8", "fd00::/129", "fd00::/x",
         "::ffff:1.2.3.4/96", "a:b/8", "[::1]/128", "1.2.3.4/8:", "10.0.0.1/+8", "/", "1.2.3.4/8/9", " 1.2.3.4/8"]

def _txn_commit(group: str, metadata) -> dict:
    return {"api": "TxnOffsetCommit", "version": 5, "body": {
        "transactional_id": "<T>-x0", "group_id": group, "producer_id": {"<pid>": "<T>-x0"},
        "producer_epoch": {"<epoch>": 0}, "generation_id_or_member_epoch": -1, "member_id": "<T>-m0",
        "group_instance_id": "", "topics": [{"name": "<T>-t0", "partitions": [
            {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": 0, "committed_metadata": metadata}]}]}}


def _describe_groups(group: str) -> dict:
    return {"api": "DescribeGroups", "version": 5, "body": {"groups": [group], "include_authorized_operations": False}}


_TOO_LARGE = {"<long>": 5000}  # (past offset.metadata.max.bytes: refused)
_LIST_GROUPS = {"api": "ListGroups", "version": 5, "body": {"states_filter": [], "types_filter": []}}
TXN_OFFSET_GROUPS = [
    {"api": "CreateTopics", "version": 7, "body": {"topics": [{"name": "<T>-t0", "num_partitions": 1,
        "replication_factor": 1, "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False}},
    {"api": "InitProducerId", "version": 5, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                     "producer_id": -1, "producer_epoch": -1}},
    # (g3's and g4's offsets refused: whether Kafka's DescribeGroups, ListGroups and the describes
    # of other kinds show those groups at once depends on when its coordinator's write of them is
    # committed, so only g2 is looked at before the transaction ends: CI met both answers)
    _txn_commit("<T>-g2", ""), _txn_commit("<T>-g3", _TOO_LARGE), _txn_commit("<T>-g4", _TOO_LARGE),
    _describe_groups("<T>-g2"),
    {"api": "ShareGroupDescribe", "version": 1, "body": {"include_authorized_operations": False,
                                                         "group_ids": ["<T>-g2"]}},
    {"api": "ConsumerGroupDescribe", "version": 0, "body": {"include_authorized_operations": False,
                                                            "group_ids": ["<T>-g2"]}},
    {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-g3", "member_id": "<T>-m1", "member_epoch": 0,
                                                          "rack_id": None, "subscribed_topic_names": ["<T>-t0"]}},
    {"api": "DeleteShareGroupOffsets", "version": 0, "body": {"group_id": "<T>-g4", "topics": [{"topic_name": "<T>-t0"}]}},
    {"api": "AlterShareGroupOffsets", "version": 0, "body": {"group_id": "<T>-g4", "topics": [
        {"topic_name": "<T>-t0", "partitions": [{"partition_index": 0, "start_offset": 0}]}]}},
    {"api": "EndTxn", "version": 3, "body": {"transactional_id": "<T>-x0", "producer_id": {"<pid>": "<T>-x0"},
                                             "producer_epoch": {"<epoch>": 0}, "committed": False}},
    _LIST_GROUPS, _describe_groups("<T>-g2"),
]
DESCRIBE_G0 = {"api": "DescribeGroups", "version": 0, "body": {"groups": ["<T>-g0"]}}
SHARE_DESCRIBE = {"api": "ShareGroupDescribe", "version": 1, "body": {
    "include_authorized_operations": True, "group_ids": ["<T>-g0", "<T>-g1", "<T>-g2"]}}
MINE = {"resource_name_filter": None, "pattern_type_filter": 1, "principal_filter": "User:<T>-u0",
        "host_filter": None, "operation": 1, "permission_type": 1}  # this scenario's ACLs, whatever else is there

MESSAGES: dict[str, list[dict]] = {
    # an entity again (or one whose ops name a key twice) is "Ignoring duplicate entity" with
    # the entity's Java text, checked before the entity itself; the answer's entity in the
    # order of Kafka's map of it
    "generated/alter-client-quotas-duplicate-entity-texts": [
        _quotas(_entry(("user", "<T>-a"), ("client-id", "<T>-c")), _entry(("client-id", "<T>-c"), ("user", "<T>-a"))),
        _quotas(_entry(), _entry()),
        _quotas(_entry(ops=2)),
        _quotas(_entry(("user", ""), ops=2)),
        _quotas(_entry(("user", None), ("client-id", None), ops=2)),
        _quotas(_entry(("zz", "q"), ("aa", "r"), ("user", "u"), ops=2)),
        _quotas(_entry(("user", "a"), ("user", "b"), ("client-id", "c"), ops=2)),
    ],
    # the broker's two checks (a CLUSTER's name, an empty name) before the controller's; a
    # CLUSTER ACL may be PREFIXED; a host with a "/" is a CIDR network, checked
    "generated/create-acls-check-order-and-cidr-hosts": [
        {"api": "CreateAcls", "version": 3, "body": {"creations": [
            _acl(CLUSTER, "kafka-cluster", PREFIXED), _acl(99, "", LITERAL, operation=99, permission=9),
            _acl(CLUSTER, "", LITERAL)] + [_acl(TOPIC, "<T>-t", LITERAL, host=h) for h in HOSTS]}},
        {"api": "DescribeAcls", "version": 3, "body": {**MINE, "resource_type_filter": 1}},
        {"api": "DeleteAcls", "version": 3, "body": {"filters": [  # (no ACL outlives the scenario)
            {**MINE, "resource_type_filter": t} for t in (CLUSTER, TOPIC)]}},
    ],
    # a group's unknown config names: the first in the order of a Java Properties of them
    "generated/group-config-unknown-names-in-hash-order": [
        {"api": "AlterConfigs", "version": 2, "body": {"validate_only": True, "resources": [
            {"resource_type": 32, "resource_name": "<T>-g", "configs": [{"name": n, "value": "1"} for n in [
                "segment.index.bytes", "remote.storage.enable", "zzz", "aaa", "consumer.session.timeout.ms", "x.y"]]}]}},
        {"api": "IncrementalAlterConfigs", "version": 1, "body": {"validate_only": True, "resources": [
            {"resource_type": 32, "resource_name": "<T>-g", "configs": [
                {"name": n, "config_operation": 0, "value": "1"} for n in ["q1", "q2", "q3", "q4", "q5"]]}]}},
    ],
    # DescribeConfigs of an unknown resource type: INVALID_REQUEST's own text for every resource
    "generated/describe-configs-unknown-resource-type-text": [
        {"api": "DescribeConfigs", "version": 4, "body": {"resources": [
            {"resource_type": 99, "resource_name": "x", "configuration_keys": None},
            {"resource_type": 2, "resource_name": "<T>-t", "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False}},
    ],
    # ShareGroupDescribe of an id a group of another kind has (a classic group with a member, a
    # simple group of offsets, a consumer group): "is not a share group" (run 26, seed 11701)
    "generated/share-group-describe-of-another-kind-of-group": [
        {"api": "CreateTopics", "version": 7, "body": {"topics": [{"name": "<T>-t0", "num_partitions": 1,
            "replication_factor": 1, "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False}},
        SHARE_DESCRIBE,
        {"api": "JoinGroup", "version": 0, "body": {"group_id": "<T>-g0", "session_timeout_ms": 45000, "member_id": "",
            "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}]}},
        {"api": "OffsetCommit", "version": 2, "body": {"group_id": "<T>-g1", "generation_id_or_member_epoch": -1,
            "member_id": "", "retention_time_ms": -1, "topics": [{"name": "<T>-t0", "partitions": [
                {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}]}},
        _heartbeat(group_id="<T>-g2", subscribed_topic_names=["<T>-t0"]),
        SHARE_DESCRIBE,
    ],
    # a share member's epoch above the coordinator's: the refusal names both (group-epochs-in-texts;
    # run 26, seed 11703)
    "generated/share-heartbeat-fenced-epoch-text": [
        {"api": "CreateTopics", "version": 7, "body": {"topics": [{"name": "<T>-t0", "num_partitions": 1,
            "replication_factor": 1, "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "<T>-m1",
            "member_epoch": 0, "rack_id": None, "subscribed_topic_names": ["<T>-t0"]}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "<T>-m1",
            "member_epoch": 99, "rack_id": None, "subscribed_topic_names": None}},
        {"api": "ShareGroupHeartbeat", "version": 1, "body": {"group_id": "<T>-g0", "member_id": "<T>-m1",
            "member_epoch": -1, "rack_id": None, "subscribed_topic_names": None}},
    ],
    # ConsumerGroupDescribe of a classic group, an empty one too (a join refused for its empty
    # protocol type leaves one): "is not a consumer group" (run 26, seed 11704); a SCRAM user
    # described twice, in Kafka's words and its HashMap's order (seed 10704)
    "generated/consumer-group-describe-of-an-empty-classic-group": [
        {"api": "CreateTopics", "version": 7, "body": {"topics": [{"name": "<T>-t0", "num_partitions": 1,
            "replication_factor": 1, "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False}},
        _join("<T>-g0", ""), _join("<T>-g1", "consumer"),
        {"api": "ConsumerGroupDescribe", "version": 0, "body": {"include_authorized_operations": False,
                                                                "group_ids": ["<T>-g0", "<T>-g1", "<T>-g2"]}},
        {"api": "DescribeUserScramCredentials", "version": 0, "body": {"users": [
            {"name": "<T>-u0"}, {"name": "<T>-u0"}, {"name": "<T>-u1"}]}},
    ],
    # a KIP-848 join Kafka refuses (no subscription) leaves a classic group with a member as it
    # was: Kafka checks the request before a join may convert the group (run 26, seed 11708)
    "generated/a-refused-consumer-heartbeat-converts-no-classic-group": [
        {"api": "CreateTopics", "version": 7, "body": {"topics": [{"name": "<T>-t0", "num_partitions": 1,
            "replication_factor": 1, "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False}},
        {"api": "JoinGroup", "version": 0, "body": {"group_id": "<T>-g0", "session_timeout_ms": 45000, "member_id": "",
            "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}]}},
        DESCRIBE_G0,
        _heartbeat(0, group_id="<T>-g0", member_id={"<member>": 0}, rebalance_timeout_ms=1000,
                   subscribed_topic_names=None),
        DESCRIBE_G0,
    ],
    # a list config's refusal shows what its validator shows: ValidList the first bad element,
    # the throttled-replica lists the whole list as Java prints one (run 27, seed 10805)
    "generated/list-config-refusals-show-what-kafka-shows": [
        {"api": "CreateTopics", "version": 7, "body": {"topics": [{"name": "<T>-t0", "num_partitions": 1,
            "replication_factor": 1, "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False}},
    ] + [{"api": "AlterConfigs", "version": 0, "body": {"validate_only": True, "resources": [
        {"resource_type": 2, "resource_name": "<T>-t0", "configs": [{"name": n, "value": v}]}]}} for n, v in [
            ("leader.replication.throttled.replicas", "1"), ("follower.replication.throttled.replicas", "0:1, x"),
            ("leader.replication.throttled.replicas", " 1 , 2 "), ("leader.replication.throttled.replicas", "*,0:1"),
            ("leader.replication.throttled.replicas", "0:1,"), ("cleanup.policy", "compact, foo"),
            ("cleanup.policy", " compact ,foo ,bar")]],
    # a TxnOffsetCommit makes its (empty, classic) group at once, listed and described, whatever
    # the transaction then does; one whose every offset is refused leaves a group only writes see
    # (share heartbeats, Alter/DeleteShareGroupOffsets), until a record is written to its
    # __consumer_offsets partition (the abort's marker here) (run 27, seed 10814)
    "generated/a-txn-offset-commit-makes-its-group": TXN_OFFSET_GROUPS,
    # a batch marked LogAppendTime by its producer: each record's refusal prints it as Kafka's
    # LogValidator read it, PartialDefaultRecord when it keeps a compressed batch as it is
    # (run 29, seed 13002)
    "generated/log-append-time-refusals-name-the-record-as-read": [
        _topic("<T>-t0"), _topic("<T>-t1", {"compression.type": "gzip"}), _topic("<T>-t2", {"compression.type": "lz4"}),
    ] + [_marked(t, codec) for t in ("<T>-t0", "<T>-t1", "<T>-t2") for codec in (0, 1, 3)],
    # MemberId first (v1, or an epoch above 0 or -1), then GroupId, InstanceId, RackId
    "generated/consumer-heartbeat-check-order": [
        _heartbeat(member_id="", rack_id=""), _heartbeat(member_id="", group_id=""),
        _heartbeat(0, member_id="", group_id=""), _heartbeat(0, member_id="", rack_id="", member_epoch=3),
        _heartbeat(subscribed_topic_names=None), _heartbeat(0, member_epoch=-3, member_id="", group_id=""),
        _heartbeat(member_epoch=-2, rack_id=""),
    ],
}


for _name, _steps in MESSAGES.items():
    register(_name, replay(_steps, messages=True))
