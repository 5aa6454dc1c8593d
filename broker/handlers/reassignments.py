"""AlterPartitionReassignments, ListPartitionReassignments and UnregisterBroker on one node
(a cluster's brokers forward them to the controller, handlers/forward.py).

Kafka's controller authorizes the cluster operation first (ALTER; DESCRIBE to list) and
refuses the whole request as its getErrorResponse builds it: every partition named answered
with the error. Then the checks of its alterPartitionReassignment run over this node's
topics (broker/log/topics.py's TopicManager.reassign): one node holds every partition
already, so no move is ever in progress. The node is registered under its own id; any other
is not (BROKER_ID_NOT_REGISTERED), and the node itself is never taken out of its own cluster.
"""

from __future__ import annotations

from kipper.broker.acl.model import ALTER, CLUSTER, CLUSTER_NAME, DESCRIBE
from kipper.broker.handlers.controller_apis import (
    handle_alter_partition_reassignments, handle_list_partition_reassignments, refused, unregister_answer,
)
from kipper.protocol.errors import ErrorCode


def handle_alter_reassignments_here(req, ctx):
    if not ctx.authorize(ALTER, CLUSTER, CLUSTER_NAME):
        return refused(45, req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ctx.needs_permission("ALTER"))
    return handle_alter_partition_reassignments(req, ctx)


def handle_list_reassignments_here(req, ctx):
    if not ctx.authorize(DESCRIBE, CLUSTER, CLUSTER_NAME):
        return refused(46, req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ctx.needs_permission("DESCRIBE"))
    return handle_list_partition_reassignments(req, ctx)


def handle_unregister_broker_here(req, ctx):
    if not ctx.authorize(ALTER, CLUSTER, CLUSTER_NAME):
        return refused(64, req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ctx.needs_permission("ALTER"))
    own = req.broker_id == ctx.engines.node_id
    return unregister_answer(ErrorCode.NONE if own else ErrorCode.BROKER_ID_NOT_REGISTERED, req.broker_id)
