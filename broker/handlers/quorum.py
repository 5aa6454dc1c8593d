"""DescribeQuorum and ElectLeaders: who leads the metadata log and the partitions, as the
``Quorum`` engine says (broker/quorum.py), in Kafka's answers."""

from __future__ import annotations

from kipper.broker.acl.model import ALTER, CLUSTER, CLUSTER_NAME, DESCRIBE
from kipper.broker.quorum import METADATA_TOPIC, PREFERRED, UNCLEAN
from kipper.protocol.errors import ErrorCode

NOT_HOSTED = "This server does not host this topic-partition."


def _replica(voter) -> dict:
    return {"replica_id": voter.node_id, "replica_directory_id": voter.directory_id,
            "log_end_offset": voter.log_end_offset, "last_fetch_timestamp": voter.last_fetch_timestamp,
            "last_caught_up_timestamp": voter.last_caught_up_timestamp}


def handle_describe_quorum(req, ctx):
    if not ctx.authorize(DESCRIBE, CLUSTER, CLUSTER_NAME):
        return {"error_code": int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                "error_message": "Cluster authorization failed.", "topics": [], "nodes": []}
    state = ctx.engines.quorum.state(ctx.now)
    topics, answered = [], False
    for t in req.topics:
        partitions = []
        for p in t.partitions:
            if t.topic_name == METADATA_TOPIC and p.partition_index == 0:
                answered = True
                partitions.append({
                    "partition_index": 0, "error_code": 0, "error_message": "",
                    "leader_id": state.leader_id, "leader_epoch": state.leader_epoch,
                    "high_watermark": state.high_watermark,
                    "current_voters": [_replica(v) for v in state.voters],
                    "observers": [_replica(v) for v in state.observers]})
            else:
                partitions.append({
                    "partition_index": p.partition_index, "error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
                    "error_message": NOT_HOSTED, "leader_id": 0, "leader_epoch": 0, "high_watermark": 0,
                    "current_voters": [], "observers": []})
        topics.append({"topic_name": t.topic_name, "partitions": partitions})
    nodes = [{"node_id": v.node_id, "listeners": [{"name": n, "host": h, "port": port} for n, h, port in v.endpoints]}
             for v in state.voters] if answered else []
    return {"error_code": 0, "error_message": "", "topics": topics, "nodes": nodes}


def handle_elect_leaders(req, ctx):
    election_type = req.get("election_type", PREFERRED)
    wanted = None if req.topic_partitions is None else [(t.topic, list(t.partitions)) for t in req.topic_partitions]
    if not ctx.authorize(ALTER, CLUSTER, CLUSTER_NAME):
        denied, why = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), ctx.needs_permission("ALTER")
        return {"throttle_time_ms": 0, "error_code": denied, "replica_election_results": [
            {"topic": name, "partition_result": [{"partition_id": p, "error_code": denied, "error_message": why}
                                                 for p in parts]} for name, parts in wanted or []]}
    if wanted == []:  # Kafka's controller: nothing to elect is answered at once, whatever the deadline
        return {"throttle_time_ms": 0, "error_code": 0, "replica_election_results": []}
    if req.timeout_ms <= 0:  # the controller finds its deadline passed: every partition times out, before the
        # election type is looked at
        timed_out = int(ErrorCode.REQUEST_TIMED_OUT)
        return {"throttle_time_ms": 0, "error_code": timed_out, "replica_election_results": [
            {"topic": name, "partition_result": [{"partition_id": p, "error_code": timed_out, "error_message": None}
                                                 for p in parts]} for name, parts in wanted or []]}
    known = election_type in (PREFERRED, UNCLEAN)
    if not known and wanted is None:
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.INVALID_REQUEST), "replica_election_results": []}
    results = ctx.engines.quorum.elect(election_type, wanted)
    return {"throttle_time_ms": 0, "error_code": 0 if known else int(ErrorCode.INVALID_REQUEST),
            "replica_election_results": [
                {"topic": name, "partition_result": [{"partition_id": p, "error_code": int(code), "error_message": message}
                                                     for p, code, message in rows]} for name, rows in results]}
