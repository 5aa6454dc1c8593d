"""OffsetForLeaderEpoch: where a leader epoch ended (KIP-101; KIP-320's position check).

The leader answers from its leader-epoch cache (broker/cluster/epochs.py): the largest
epoch at or below the one asked and the offset where the next one began, or the log end
for the current epoch; -1/-1 for an epoch it does not know. Only the leader answers
(NOT_LEADER_OR_FOLLOWER), after the current_leader_epoch check. On one node every batch
is of epoch 0: epoch 0 ends at the log end. CLUSTER_ACTION (a follower's) allows every topic,
else a topic needs DESCRIBE (TOPIC_AUTHORIZATION_FAILED), whatever replica_id says, as in Kafka.
"""

from __future__ import annotations

from kipper.broker.acl.model import CLUSTER, CLUSTER_ACTION, CLUSTER_NAME, DESCRIBE, TOPIC
from kipper.broker.handlers.leaders import epoch_end_offset, leader_error
from kipper.protocol.errors import ErrorCode


def handle_offset_for_leader_epoch(req, ctx):
    topics = ctx.engines.topics
    cluster_action = ctx.authorize(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME, counted=False)
    out = []
    for t in req.topics:
        allowed = cluster_action or ctx.authorize(DESCRIBE, TOPIC, t.topic)
        rows = []
        for p in t.partitions:
            row = {"partition": p.partition, "error_code": 0, "leader_epoch": -1, "end_offset": -1}
            partition = topics.partition(t.topic, p.partition) if allowed else None
            if not allowed:
                row["error_code"] = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            elif partition is None:
                row["error_code"] = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            elif (error := leader_error(partition, p.get("current_leader_epoch", -1))) is not None:
                row["error_code"] = int(error)
            else:
                row["leader_epoch"], row["end_offset"] = epoch_end_offset(partition, p.leader_epoch)
            rows.append(row)
        out.append({"topic": t.topic, "partitions": rows})
    return {"throttle_time_ms": 0, "topics": out}
