"""What a user's admin tools ask of the cluster on one node (kafka-reassign-partitions,
kafka-cluster unregister, kafka-delegation-tokens), the tool generator's finds once it drew
those tools: Kafka answers them all on one node, and kipper closed the connection.

Reassignments: Kafka's controller checks each partition (the topic, the partition, the
replicas named) and no move is ever in progress on one node. UnregisterBroker: any id but the
node's is not registered (the node's own is never asked here: Kafka would take its only broker
out of the shared reference). Delegation tokens: both brokers run without
delegation.token.secret.key, so no token is issued; over PLAINTEXT the request is not even
allowed. Error texts are compared word for word."""

from __future__ import annotations

from tests.conformance.fuzz.side import user_credential
from tests.conformance.scenarios import register
from tests.conformance.scenarios import kit as k
from tests.conformance.scenarios.generated import T0, replay
from kipper.protocol.messages import APIS

USER = {"api": "AlterUserScramCredentials", "version": 0, "body": {"deletions": [], "upsertions": [user_credential()]}}


def _step(api: str, version: int, body: dict, conn: str = "main") -> dict:
    return {"api": api, "version": version, "conn": conn, "body": body}


def _alter(version: int, partitions: dict[str, list], *, timeout: int = 5000, allow: bool = True,
           conn: str = "main") -> dict:
    body = {"timeout_ms": timeout, "topics": [
        {"name": name, "partitions": [{"partition_index": i, "replicas": r} for i, r in rows]}
        for name, rows in partitions.items()]}
    if version >= 1:
        body["allow_replication_factor_change"] = allow
    return _step("AlterPartitionReassignments", version, body, conn)


def _list(topics, conn: str = "main", timeout: int = 5000) -> dict:
    return _step("ListPartitionReassignments", 0, {"timeout_ms": timeout, "topics": topics}, conn)


def _tokens(conn: str) -> list[dict]:
    mine = {"owner_principal_type": None, "owner_principal_name": None}
    steps = [_step("CreateDelegationToken", v, {**mine, "renewers": [], "max_lifetime_ms": -1}, conn) for v in (1, 2, 3)]
    steps += [
        # another owner needs CREATE_TOKENS on that user; a renewer must be a User
        _step("CreateDelegationToken", 3, {"owner_principal_type": "User", "owner_principal_name": "other",
                                           "renewers": [], "max_lifetime_ms": -1}, conn),
        _step("CreateDelegationToken", 3, {"owner_principal_type": "Group", "owner_principal_name": "g",
                                           "renewers": [], "max_lifetime_ms": 5}, conn),
        _step("CreateDelegationToken", 2, {"renewers": [{"principal_type": "Group", "principal_name": "x"}],
                                           "max_lifetime_ms": 5}, conn),
    ]
    for v in (1, 2):
        steps += [_step("RenewDelegationToken", v, {"hmac": {"<hex>": "00ff"}, "renew_period_ms": 1000}, conn),
                  _step("ExpireDelegationToken", v, {"hmac": {"<hex>": ""}, "expiry_time_period_ms": -1}, conn)]
    for v in (1, 3):
        steps += [_step("DescribeDelegationToken", v, {"owners": owners}, conn)
                  for owners in (None, [], [{"principal_type": "User", "principal_name": "x"}])]
    return steps


SCENARIOS: dict[str, list[dict]] = {
    "cluster-admin/reassignments-on-one-node": [
        T0,
        _list(None), _list([{"name": "<T>-t0", "partition_indexes": [0, 1, 5]},
                            {"name": "<T>-missing", "partition_indexes": [0]}]),
        # where it is already; cancelling no move; a partition, a topic that is not; empty,
        # twice, unregistered and negative brokers
        _alter(1, {"<T>-t0": [(0, [1]), (1, None), (5, [1]), (0, []), (1, [1, 1]), (1, [2]), (1, [1, 2]), (1, [-1])],
                   "<T>-missing": [(0, [1]), (0, None)]}),
        _alter(1, {"<T>-t0": [(0, [1]), (1, [1, 2]), (1, [])]}, allow=False),
        _alter(0, {}), _alter(1, {}), _alter(1, {}, allow=False),  # (found by the generator, run 36)
        # its deadline passed before the controller took it (a listing has none)
        _alter(0, {"<T>-t0": [(0, [1])]}, timeout=0), _list([{"name": "<T>-t0", "partition_indexes": [0]}], timeout=0),
    ],
    "cluster-admin/refused-without-the-cluster-operation": [
        T0, USER,
        _list(None, "user"), _list([{"name": "<T>-t0", "partition_indexes": [0, 9]}], "user"),
        _alter(1, {"<T>-t0": [(0, [1]), (3, None)]}, allow=False, conn="user"), _alter(0, {}, conn="user"),
        _step("UnregisterBroker", 0, {"broker_id": 7}, "user"),
    ],
    "cluster-admin/unregister-a-broker-that-is-not-registered": [
        _step("UnregisterBroker", 0, {"broker_id": 7}), _step("UnregisterBroker", 0, {"broker_id": -1}),
    ],
    "cluster-admin/delegation-tokens-without-a-secret-key": [USER, *_tokens("main"), *_tokens("user")],
}

for _name, _steps in SCENARIOS.items():
    register(_name, replay(_steps, messages=True))


def _probe(api_key: int, body: dict):
    return lambda run, v: run.call(APIS[api_key], v, body)


def _probe_alter(run, v):
    t = k.create_topic(run, partitions=2)
    body = {"timeout_ms": 5000, "topics": [{"name": t, "partitions": [
        {"partition_index": 0, "replicas": [1]}, {"partition_index": 1, "replicas": None}]}]}
    if v >= 1:
        body["allow_replication_factor_change"] = True
    run.call(APIS[45], v, body)


# the version probes of the APIs this module covers (scenarios/versions.py runs them)
PROBES = {
    38: _probe(38, {"owner_principal_type": None, "owner_principal_name": None, "renewers": [], "max_lifetime_ms": -1}),
    39: _probe(39, {"hmac": b"\x00", "renew_period_ms": 1000}),
    40: _probe(40, {"hmac": b"\x00", "expiry_time_period_ms": 1000}),
    41: _probe(41, {"owners": None}),
    45: _probe_alter,
    46: _probe(46, {"timeout_ms": 5000, "topics": None}),
    64: _probe(64, {"broker_id": 7}),
}
