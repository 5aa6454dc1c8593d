"""The new admin APIs under an authorizer: Kafka's checks (ALTER on a topic to grow it,
DELETE on a group, ALTER_CONFIGS / DESCRIBE_CONFIGS, DESCRIBE on the cluster and on
transactional ids) and authorized-operations fields that list what the ACLs allow."""

from __future__ import annotations

from kipper.broker.acl.model import (
    ALLOW, CLUSTER, CLUSTER_NAME, DESCRIBE, GROUP, LITERAL, READ, TOPIC, AclBinding,
)
from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

ME = "User:ANONYMOUS"


def broker(*acls: tuple[int, str, int]):
    b = InProcessBroker(**{"authorizer.class.name": "standard"})
    b.state.topics.create("t", 1)
    if acls:
        b.state.acls.create([AclBinding(rtype, name, LITERAL, ME, "*", op, ALLOW) for rtype, name, op in acls])
    return b


def test_without_acls_the_new_apis_are_refused_with_kafkas_codes():
    b = broker()
    grow = {"topics": [{"name": "t", "count": 2, "assignments": None}], "timeout_ms": 1000,
            "validate_only": False}
    assert b.call(37, 3, grow).results[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    assert b.call(42, 2, {"groups_names": ["g"]}).results[0].error_code == E.GROUP_AUTHORIZATION_FAILED
    body = {"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 0}]}]}
    assert b.call(47, 0, body).error_code == E.GROUP_AUTHORIZATION_FAILED
    alter = {"resources": [{"resource_type": 4, "resource_name": "", "configs": [
        {"name": "log.retention.ms", "value": "1"}]}], "validate_only": False}
    assert b.call(33, 2, alter).responses[0].error_code == E.CLUSTER_AUTHORIZATION_FAILED
    describe = {"resources": [{"resource_type": 2, "resource_name": "t", "configuration_keys": None}],
                "include_synonyms": False, "include_documentation": False}
    assert b.call(32, 4, describe).results[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    assert b.call(35, 4, {"topics": None}).error_code == E.CLUSTER_AUTHORIZATION_FAILED
    txns = b.call(65, 0, {"transactional_ids": ["tx"]}).transaction_states[0]
    assert txns.error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    cluster = b.call(60, 2, {"include_cluster_authorized_operations": True, "endpoint_type": 1,
                             "include_fenced_brokers": False})
    assert cluster.error_code == 0 and cluster.cluster_authorized_operations == 0


def test_authorized_operations_list_what_the_acls_allow():
    b = broker((TOPIC, "t", READ), (CLUSTER, CLUSTER_NAME, DESCRIBE), (GROUP, "g", DESCRIBE))
    meta = b.call(3, 12, {"topics": [{"name": "t", "topic_id": None}], "allow_auto_topic_creation": False,
                          "include_topic_authorized_operations": True})
    assert meta.topics[0].topic_authorized_operations == (1 << READ) | (1 << DESCRIBE)  # READ implies it
    cluster = b.call(60, 2, {"include_cluster_authorized_operations": True, "endpoint_type": 1,
                             "include_fenced_brokers": False})
    assert cluster.cluster_authorized_operations == 1 << DESCRIBE
    groups = b.call(15, 5, {"groups": ["g"], "include_authorized_operations": True}).groups
    assert groups[0].authorized_operations == 1 << DESCRIBE
