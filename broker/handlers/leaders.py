"""Who leads a partition, as the data handlers check it (Produce, Fetch, ListOffsets,
OffsetForLeaderEpoch, DeleteRecords...).

On one node this broker leads every partition at leader epoch 0. In a cluster the
partition's ``replica`` (broker/cluster/replica.py) says: a request must reach the leader
(NOT_LEADER_OR_FOLLOWER otherwise), and a client's current_leader_epoch must be the
leader's (KIP-320: FENCED_LEADER_EPOCH when older, UNKNOWN_LEADER_EPOCH when newer),
checked in Kafka's order, the epoch first. The refusal carries the leader this broker
knows (KIP-951's current_leader, with its endpoint in node_endpoints).
"""

from __future__ import annotations

from kipper.broker.cluster.replica import FOLLOWER
from kipper.protocol.batch import LEADER_EPOCH
from kipper.protocol.errors import ErrorCode


def epoch_error(current_leader_epoch: int | None, leader_epoch: int = LEADER_EPOCH) -> ErrorCode | None:
    """A client's current_leader_epoch against the leader's; -1 (or a version without the
    field) skips the check."""
    if current_leader_epoch is None or current_leader_epoch < 0:
        return None
    if current_leader_epoch > leader_epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    if current_leader_epoch < leader_epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    return None


def leader_error(partition, current_leader_epoch: int | None = None, *,
                 follower_may_answer: bool = False) -> ErrorCode | None:
    """``follower_may_answer``: a consumer's Fetch v11+, which a follower serves too (up to
    its high watermark), as Kafka's brokers do since KIP-392."""
    replica = partition.replica
    if replica is None:
        return epoch_error(current_leader_epoch)
    error = epoch_error(current_leader_epoch, replica.leader_epoch)
    if error is None and not replica.is_leader and not (follower_may_answer and replica.role == FOLLOWER):
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    return error


def leader_epoch(partition) -> int:
    replica = partition.replica
    return LEADER_EPOCH if replica is None else replica.leader_epoch


def epoch_end_offset(partition, epoch: int) -> tuple[int, int]:
    """(the largest epoch at or below ``epoch``, where it ended) from the leader-epoch cache;
    (-1, -1) for an epoch it does not know. On one node every batch is of epoch 0, which
    ends at the log end."""
    replica = partition.replica
    if replica is None:
        if epoch == LEADER_EPOCH:
            return LEADER_EPOCH, partition.log_end_offset
        # older than every epoch (but -1, undefined): that one and where the first began,
        # as Kafka's LeaderEpochFileCache.endOffsetFor (its first entry moves with the log start)
        return (epoch, partition.log_start_offset) if -1 != epoch < LEADER_EPOCH else (-1, -1)
    return replica.epochs.end_offset_for(epoch, partition.log_end_offset)


def divergence(partition, fetch_offset: int, last_fetched_epoch: int | None) -> tuple[int, int] | ErrorCode | None:
    """Kafka's check of a Fetch's last_fetched_epoch (v12+) before the read: (epoch, end
    offset) to truncate to when the fetcher's log is not a prefix of this one (its epoch
    ended earlier here, or it fetches past that end), OFFSET_OUT_OF_RANGE for an epoch
    this log does not know, None when the read may go on (and for -1: no epoch sent)."""
    if last_fetched_epoch is None or last_fetched_epoch < 0:
        return None
    epoch, end = epoch_end_offset(partition, last_fetched_epoch)
    if epoch < 0 or end < 0:
        return ErrorCode.OFFSET_OUT_OF_RANGE
    if epoch < last_fetched_epoch or end < fetch_offset:
        return epoch, end
    return None


def current_leader(partition, node_id: int = -1) -> dict:
    """KIP-951's current_leader of a refusal: the leader and epoch this broker knows (on one
    node, given ``node_id``: this broker and the partition's epoch)."""
    replica = partition.replica
    if replica is None:
        return {"leader_id": node_id, "leader_epoch": partition.leader_epoch if node_id >= 0 else -1}
    return {"leader_id": replica.leader_id, "leader_epoch": replica.leader_epoch}


def node_endpoints(ctx, leader_ids) -> list[dict]:
    """KIP-951's node_endpoints: where the leaders named in the answer listen."""
    cluster = ctx.engines.cluster
    out = []
    for node_id in sorted({i for i in leader_ids if i >= 0}):
        found = cluster.endpoint(node_id, ctx.session.listener) if cluster is not None else None
        if found is not None:
            out.append({"node_id": node_id, "host": found[0], "port": found[1],
                        "rack": cluster.broker(node_id).rack})
    return out


def partition_row(ctx, topic, index: int) -> dict:
    """A partition as Metadata and DescribeTopicPartitions describe it: on one node this
    broker alone; in a cluster, the registration the metadata log holds, with Kafka's
    errors for a leader that is not there (LEADER_NOT_AVAILABLE) or has no endpoint on the
    request's listener (LISTENER_NOT_FOUND), and the replicas on fenced brokers offline."""
    cluster = ctx.engines.cluster
    if cluster is None:
        node_id = ctx.engines.node_id
        return {"error_code": 0, "partition_index": index, "leader_id": node_id, "leader_epoch": 0,
                "replica_nodes": [node_id], "isr_nodes": [node_id], "offline_replicas": []}
    part = cluster.registration(topic.name, index)
    if part is None:
        return {"error_code": int(ErrorCode.LEADER_NOT_AVAILABLE), "partition_index": index, "leader_id": -1,
                "leader_epoch": -1, "replica_nodes": [], "isr_nodes": [], "offline_replicas": []}
    listener = ctx.session.listener
    code, leader = ErrorCode.NONE, part.leader
    found = cluster.broker(leader)
    if found is None:
        code, leader = ErrorCode.LEADER_NOT_AVAILABLE, -1
    elif listener not in found.endpoints:
        code, leader = ErrorCode.LISTENER_NOT_FOUND, -1
    offline = [r for r in part.replicas if (b := cluster.broker(r)) is None or b.fenced
               or listener not in b.endpoints]
    return {"error_code": int(code), "partition_index": index, "leader_id": leader,
            "leader_epoch": part.leader_epoch, "replica_nodes": list(part.replicas),
            "isr_nodes": list(part.isr), "offline_replicas": offline}
