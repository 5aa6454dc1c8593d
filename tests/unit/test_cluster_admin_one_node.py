"""Reassignments, UnregisterBroker and the delegation-token APIs on one node, as Kafka 4.4
answers them (tests/conformance/scenarios/cluster_admin.py replays each against Kafka; what
a shared reference cannot be asked, the node's own unregistration and SSL, is stated here)."""

from __future__ import annotations

from kipper.broker.context import Session
from tests.support.inproc import InProcessBroker

ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS, UNREGISTER_BROKER = 45, 46, 64
CREATE_TOKEN, RENEW_TOKEN, EXPIRE_TOKEN, DESCRIBE_TOKENS = 38, 39, 40, 41
INVALID_REPLICA_ASSIGNMENT, NO_REASSIGNMENT_IN_PROGRESS, REQUEST_TIMED_OUT = 39, 85, 7
AUTH_DISABLED, REQUEST_NOT_ALLOWED, TOKEN_AUTHORIZATION_FAILED, INVALID_PRINCIPAL_TYPE = 61, 64, 65, 67
SECURED = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
           "super.users": "User:admin", "allow.everyone.if.no.acl.found": "false"}


def _session(protocol: str = "PLAINTEXT", principal: str = "User:ANONYMOUS") -> Session:
    return Session(protocol, "127.0.0.1:6000", security_protocol=protocol, principal=principal)


def _broker_with_topic(**config) -> InProcessBroker:
    broker = InProcessBroker(**config)
    broker.call(19, 7, {"topics": [{"name": "t", "num_partitions": 2, "replication_factor": 1, "assignments": [],
                                    "configs": []}], "timeout_ms": 1000, "validate_only": False}, _session(
        principal="User:admin"))
    return broker


def _alter(broker, rows, session=None, timeout=5000) -> dict:
    return broker.call(ALTER_REASSIGNMENTS, 1, {"timeout_ms": timeout, "allow_replication_factor_change": True,
                                                "topics": [{"name": n, "partitions": [
                                                    {"partition_index": i, "replicas": r}]} for n, i, r in rows]},
                       session or _session())


def test_a_reassignment_is_checked_as_kafkas_controller_checks_it_and_nothing_moves():
    broker = _broker_with_topic()
    answer = _alter(broker, [("t", 0, [1]), ("t", 1, None), ("t", 5, [1]), ("u", 0, [1]), ("t", 0, []),
                             ("t", 0, [1, 1]), ("t", 0, [2, 2]), ("t", 0, [-1, 1])])
    rows = [(p["error_code"], p["error_message"]) for t in answer["responses"] for p in t["partitions"]]
    assert rows == [
        (0, None), (NO_REASSIGNMENT_IN_PROGRESS, None), (3, "Unable to find partition t:5."),
        (3, "Unable to find a topic named u."),
        (INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list."),
        (INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the broker 1 more than once."),
        (INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker 2, but no such broker is "
                                     "registered."),
        (INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker -1, but no such broker is "
                                     "registered.")]
    listed = broker.call(LIST_REASSIGNMENTS, 0, {"timeout_ms": 5000, "topics": None}, _session())
    assert (listed["error_code"], listed["topics"]) == (0, [])
    late = _alter(broker, [("t", 0, [1])], timeout=0)
    assert [late["error_code"]] + [p["error_code"] for p in late["responses"][0]["partitions"]] == [REQUEST_TIMED_OUT] * 2
    assert _alter(broker, [])["error_message"] == ""


def test_without_the_cluster_operation_every_partition_named_is_refused():
    broker = _broker_with_topic(**SECURED)
    user = _session(principal="User:u0")
    answer = _alter(broker, [("t", 0, [1]), ("t", 3, None)], user)
    assert answer["error_code"] == 31 and answer["error_message"].endswith("needs ALTER permission.")
    assert [p["error_code"] for t in answer["responses"] for p in t["partitions"]] == [31, 31]
    listed = broker.call(LIST_REASSIGNMENTS, 0, {"timeout_ms": 5000, "topics": [
        {"name": "t", "partition_indexes": [0, 9]}]}, user)
    assert listed["error_message"].endswith("needs DESCRIBE permission.")
    assert [p["partition_index"] for p in listed["topics"][0]["partitions"]] == [0, 9]
    assert broker.call(UNREGISTER_BROKER, 0, {"broker_id": 7}, user)["error_code"] == 31


def test_only_the_nodes_own_id_is_registered_and_unregistering_it_leaves_the_node_serving():
    broker = _broker_with_topic()
    other = broker.call(UNREGISTER_BROKER, 0, {"broker_id": 7}, _session())
    assert (other["error_code"], other["error_message"]) == (102, "Broker ID 7 is not currently registered")
    # Kafka takes its only broker out of the cluster (its partitions go offline until it starts
    # again); a test broker keeps serving (docs/ADMIN.md)
    own = broker.call(UNREGISTER_BROKER, 0, {"broker_id": 1}, _session())
    assert (own["error_code"], own["error_message"]) == (0, "")
    meta = broker.call(3, 12, {"topics": [{"name": "t", "topic_id": None}], "allow_auto_topic_creation": False,
                               "include_topic_authorized_operations": False}, _session())
    assert [b["node_id"] for b in meta["brokers"]] == [1]
    assert meta["topics"][0]["partitions"][0]["leader_id"] == 1


def test_delegation_tokens_are_not_allowed_over_plaintext_nor_anonymous_ssl_and_never_issued():
    broker = InProcessBroker()
    create = {"owner_principal_type": None, "owner_principal_name": None, "renewers": [], "max_lifetime_ms": -1}
    for session, code, stamp in ((_session(), REQUEST_NOT_ALLOWED, -1), (_session("SSL"), REQUEST_NOT_ALLOWED, -1),
                                 (_session("SSL", "User:CN=client"), AUTH_DISABLED, 0),
                                 (_session("SASL_PLAINTEXT", "User:alice"), AUTH_DISABLED, 0)):
        answer = broker.call(CREATE_TOKEN, 3, create, session)
        assert (answer["error_code"], answer["issue_timestamp_ms"], answer["token_id"]) == (code, stamp, "")
        assert broker.call(DESCRIBE_TOKENS, 3, {"owners": None}, session) == {
            "error_code": code, "tokens": [], "throttle_time_ms": 0}
        for key, field in ((RENEW_TOKEN, "renew_period_ms"), (EXPIRE_TOKEN, "expiry_time_period_ms")):
            renewed = broker.call(key, 2, {"hmac": b"\x00", field: 1}, session)
            assert (renewed["error_code"], renewed["expiry_timestamp_ms"]) == (code, stamp)
    alice = _session("SASL_PLAINTEXT", "User:alice")
    other = broker.call(CREATE_TOKEN, 3, {**create, "owner_principal_type": "User", "owner_principal_name": "bob"},
                        alice)
    assert (other["error_code"], other["principal_name"], other["token_requester_principal_name"]) == (
        AUTH_DISABLED, "bob", "alice")  # (no authorizer: alice may create bob's)
    grouped = broker.call(CREATE_TOKEN, 2, {"renewers": [{"principal_type": "Group", "principal_name": "x"}],
                                            "max_lifetime_ms": 5}, alice)
    assert grouped["error_code"] == INVALID_PRINCIPAL_TYPE
    secured = InProcessBroker(**SECURED)
    refused = secured.call(CREATE_TOKEN, 3, {**create, "owner_principal_type": "User", "owner_principal_name": "bob"},
                           alice)
    assert refused["error_code"] == TOKEN_AUTHORIZATION_FAILED
