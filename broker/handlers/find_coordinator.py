"""FindCoordinator: on one node this broker coordinates every group, transaction and share
group; in a cluster (docs/CLUSTER.md), the leader of the key's `__consumer_offsets` or
`__transaction_state` partition, whose topic is made (through the controller) the first time
it is looked for, COORDINATOR_NOT_AVAILABLE being the answer meanwhile, as from Kafka. A
share key names its data partition, whose leader keeps the share-partition's state (seed 004).

A group or transactional id may be empty, as on Kafka; a share-partition key must be
Kafka's ``group:topic-id:partition`` (SharePartitionKey.validate) or is INVALID_REQUEST."""

from __future__ import annotations

import base64
import binascii
import re

from kipper.broker.acl.model import CLUSTER, CLUSTER_ACTION, CLUSTER_NAME, DESCRIBE, TRANSACTIONAL_ID
from kipper.broker.acl.model import GROUP as ACL_GROUP
from kipper.protocol.errors import ErrorCode, kafka_text

GROUP, TRANSACTION, SHARE = 0, 1, 2


_INT = re.compile(r"^[+-]?[0-9]+$")  # what Java's Integer.parseInt reads


def share_key_valid(key: str) -> bool:
    """Kafka's SharePartitionKey.validate: three ':'-separated parts (Java's split drops
    trailing empty ones), a group that is not blank, a topic id, a partition number."""
    parts = key.split(":")
    while parts and parts[-1] == "":
        parts.pop()
    if len(parts) != 3 or not parts[0].strip() or not _INT.match(parts[2]):
        return False
    if not -2**31 <= int(parts[2]) < 2**31:
        return False
    return is_topic_id(parts[1])


def is_topic_id(text: str) -> bool:
    """Kafka's Uuid.fromString: URL-safe base64 of 16 bytes, at most 24 characters."""
    if len(text) > 24 or not re.fullmatch(r"[A-Za-z0-9_-]+=*", text):
        return False
    try:
        return len(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))) == 16
    except (binascii.Error, ValueError):
        return False


def _coordinator(key: str, key_type: int, ctx) -> dict:
    host, port = ctx.engines.advertised_address(ctx.session.listener)
    if key_type not in (GROUP, TRANSACTION, SHARE):
        return {"key": key, "error_code": int(ErrorCode.INVALID_REQUEST),
                "error_message": f"unknown key type {key_type}", "node_id": -1, "host": "", "port": -1}
    if key_type == SHARE and ctx.api_version < 6:  # (share keys came in v6, whoever asks)
        return {"key": key, "error_code": int(ErrorCode.INVALID_REQUEST),
                "error_message": "", "node_id": -1, "host": "", "port": -1}
    refused = _refused(key, key_type, ctx)
    if refused is not None:
        return {"key": key, "error_code": int(refused), "error_message": None, "node_id": -1, "host": "", "port": -1}
    if key_type == SHARE and not share_key_valid(key):
        return {"key": key, "error_code": int(ErrorCode.INVALID_REQUEST),
                "error_message": "", "node_id": -1, "host": "", "port": -1}
    if ctx.engines.cluster is not None:
        return _in_cluster(key, key_type, ctx)
    # Kafka's text for success: "" in a v4+ coordinator, the error's name (NONE) before
    return {"key": key, "error_code": 0, "error_message": "" if ctx.api_version >= 4 else "NONE",
            "node_id": ctx.engines.node_id, "host": host, "port": port}


def _refused(key: str, key_type: int, ctx) -> ErrorCode | None:
    """Kafka's getCoordinator asks first: DESCRIBE on the group or transactional id; for a
    share-partition key, which only brokers look up, CLUSTER_ACTION on the cluster, before
    the key is read."""
    if key_type == TRANSACTION:
        allowed = ctx.authorize(DESCRIBE, TRANSACTIONAL_ID, key)
        return None if allowed else ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if key_type == SHARE:
        return None if ctx.authorize(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME) else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None if ctx.authorize(DESCRIBE, ACL_GROUP, key) else ErrorCode.GROUP_AUTHORIZATION_FAILED


def _in_cluster(key: str, key_type: int, ctx) -> dict:
    cluster = ctx.engines.cluster
    if key_type == SHARE:
        leader = cluster.share_coordinator(key)
    else:
        leader = cluster.find_coordinator(key, key_type == TRANSACTION)
    found = cluster.endpoint(leader, ctx.session.listener) if leader >= 0 else None
    if found is None:
        return {"key": key, "error_code": int(ErrorCode.COORDINATOR_NOT_AVAILABLE),
                "error_message": "The coordinator is not available.", "node_id": -1, "host": "", "port": -1}
    return {"key": key, "error_code": 0, "error_message": "" if ctx.api_version >= 4 else "NONE",
            "node_id": leader, "host": found[0], "port": found[1]}


def handle_find_coordinator(req, ctx):
    key_type = req.get("key_type", GROUP)
    if key_type == GROUP:  # Kafka makes the coordinators' topics when they are first looked for
        ctx.engines.groups.offsets_topic()
    elif key_type == TRANSACTION:
        ctx.engines.txn.state_topic()
    if ctx.api_version >= 4:
        coordinators = [_coordinator(k, key_type, ctx) for k in req.coordinator_keys]
        for c in coordinators:  # Kafka never sets a v4+ coordinator's message: its default, "";
            # but a key type it cannot read fails the request, and a share key refused to a
            # principal without CLUSTER_ACTION is answered from the error: both with the text
            refused = c["error_code"] == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            texted = key_type not in (GROUP, TRANSACTION, SHARE) or refused
            c["error_message"] = kafka_text(c["error_code"]) if texted else ""
        return {"throttle_time_ms": 0, "coordinators": coordinators}
    one = _coordinator(req.key, key_type, ctx)
    one.pop("key")
    one["throttle_time_ms"] = 0
    # before v4, Kafka's error.message(): the error's text, or NONE
    one["error_message"] = kafka_text(one["error_code"]) if one["error_code"] else "NONE"
    return one
