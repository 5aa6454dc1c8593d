"""FindCoordinator: on one node this broker coordinates every group, transaction and share
group; in a cluster (docs/CLUSTER.md), the leader of the key's `__consumer_offsets` or
`__transaction_state` partition, whose topic is made (through the controller) the first time
it is looked for, COORDINATOR_NOT_AVAILABLE being the answer meanwhile, as from Kafka. A
share key (``group:topicId:partition``) names its data partition, whose leader keeps the
share-partition's state (seed 004)."""

from __future__ import annotations

from kipper.broker.acl.model import DESCRIBE, TRANSACTIONAL_ID
from kipper.broker.acl.model import GROUP as ACL_GROUP
from kipper.protocol.errors import ErrorCode

GROUP, TRANSACTION, SHARE = 0, 1, 2


def _coordinator(key: str, key_type: int, ctx) -> dict:
    host, port = ctx.engines.advertised_address(ctx.session.listener)
    if key_type not in (GROUP, TRANSACTION, SHARE):
        return {"key": key, "error_code": int(ErrorCode.INVALID_REQUEST),
                "error_message": f"unknown key type {key_type}", "node_id": -1, "host": "", "port": -1}
    if not key:
        return {"key": key, "error_code": int(ErrorCode.INVALID_REQUEST),
                "error_message": "empty coordinator key", "node_id": -1, "host": "", "port": -1}
    if key_type == TRANSACTION and not ctx.authorize(DESCRIBE, TRANSACTIONAL_ID, key):
        return {"key": key, "error_code": int(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
                "error_message": None, "node_id": -1, "host": "", "port": -1}
    if key_type != TRANSACTION and not ctx.authorize(DESCRIBE, ACL_GROUP, key):
        return {"key": key, "error_code": int(ErrorCode.GROUP_AUTHORIZATION_FAILED),
                "error_message": None, "node_id": -1, "host": "", "port": -1}
    if ctx.engines.cluster is not None:
        return _in_cluster(key, key_type, ctx)
    return {"key": key, "error_code": 0, "error_message": None, "node_id": ctx.engines.node_id,
            "host": host, "port": port}


def _in_cluster(key: str, key_type: int, ctx) -> dict:
    cluster = ctx.engines.cluster
    leader = cluster.share_coordinator(key) if key_type == SHARE else cluster.find_coordinator(key, key_type == TRANSACTION)
    found = cluster.endpoint(leader, ctx.session.listener) if leader >= 0 else None
    if found is None:
        return {"key": key, "error_code": int(ErrorCode.COORDINATOR_NOT_AVAILABLE),
                "error_message": "The coordinator is not available.", "node_id": -1, "host": "", "port": -1}
    return {"key": key, "error_code": 0, "error_message": None, "node_id": leader, "host": found[0],
            "port": found[1]}


def handle_find_coordinator(req, ctx):
    key_type = req.get("key_type", GROUP)
    if ctx.api_version >= 4:
        return {"throttle_time_ms": 0,
                "coordinators": [_coordinator(k, key_type, ctx) for k in req.coordinator_keys]}
    one = _coordinator(req.key, key_type, ctx)
    one.pop("key")
    one["throttle_time_ms"] = 0
    return one
