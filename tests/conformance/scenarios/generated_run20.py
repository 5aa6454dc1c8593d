"""What the generator's twentieth and twenty-first runs (the hour-long ones, seeds 10201 and
10301) met (issue 36,
docs/FUZZ_FINDINGS.md), replayed against Kafka 4.4
(tests/unit/test_twentieth_run_findings.py states each answer)."""

from __future__ import annotations

from tests.conformance.scenarios import register
from tests.conformance.scenarios.generated import T0, produce_step, replay


def _join(version: int, protocols: int) -> dict:
    body = {"group_id": "<T>-g0", "session_timeout_ms": 45000, "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}] * protocols}
    if version:
        body["rebalance_timeout_ms"] = 1000
    return {"api": "JoinGroup", "version": version, "body": body}


def _init(tid: str) -> dict:
    return {"api": "InitProducerId", "version": 4, "body": {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                                            "producer_id": -1, "producer_epoch": -1}}


def _txn_batch(index: int, tid: str | None, epoch: int = 0) -> dict:
    pid = {"<pid>": tid} if tid else -1
    return {"index": index, "records": {"<batch>": {
        "n": 1, "start": 0, "pid": pid, "epoch": epoch if tid else -1, "seq": 0 if tid else -1, "txn": bool(tid),
        "codec": 0, "timestamps": "none", "keys": True, "mutation": None}}}


def _mixed(acks: int, *batches: dict) -> dict:
    return {"api": "Produce", "version": 11, "body": {"transactional_id": "<T>-x0", "acks": acks, "timeout_ms": 30000,
                                                      "topic_data": [{"name": "<T>-t3", "partition_data": list(batches)}]}}


RUN_20: dict[str, list[dict]] = {
    # a join naming `range` twice fails inside Kafka (the connection closes) with its member
    # kept, voting twice for `range`: no protocol then has as many votes as members, so the
    # next new member is INCONSISTENT_GROUP_PROTOCOL at once (seed 11241; kipper added it and
    # never answered)
    "generated/a-join-after-a-protocol-named-twice-is-inconsistent": [_join(2, 2), _join(0, 1), _join(1, 1)],
    # a TxnOffsetCommit whose partitions the broker refuses all (an unknown topic, a partition
    # named twice) never reaches the group coordinator: at v5 nothing joins the transaction,
    # which stays Empty (seed 10223; kipper counted the partition once and added the group)
    "generated/a-txn-offset-commit-refused-whole-adds-nothing": [
        {"api": "InitProducerId", "version": 5, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                         "producer_id": -1, "producer_epoch": -1}},
        {"api": "TxnOffsetCommit", "version": 5, "body": {
            "transactional_id": "<T>-x0", "group_id": "<T>-g0", "producer_id": {"<pid>": "<T>-x0"},
            "producer_epoch": 0, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "<T>-t9", "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                           "committed_leader_epoch": -1, "committed_metadata": ""}] * 2}]}},
        {"api": "ListTransactions", "version": 0, "body": {"state_filters": [],
                                                           "producer_id_filters": [{"<pid>": "<T>-x0"}]}},
    ],
    # transactional batches of more than one (producer id, epoch) in one Produce: Kafka's
    # ReplicaManager refuses the whole request before anything is appended, every partition
    # INVALID_PRODUCER_ID_MAPPING with its message (an unknown partition and a plain batch
    # too; acks=0 closes the connection). Batches of one producer at one epoch go on (seed
    # 11308; kipper checked each partition alone)
    "generated/transactional-batches-of-two-producers-are-refused-whole": [
        {"api": "CreateTopics", "version": 7, "body": {"topics": [{"name": "<T>-t3", "num_partitions": 3,
                                                                   "replication_factor": 1, "assignments": [],
                                                                   "configs": []}], "timeout_ms": 30000,
                                                       "validate_only": False}},
        _init("<T>-x0"), _init("<T>-x1"),
        _mixed(-1, _txn_batch(0, "<T>-x0"), _txn_batch(1, None), _txn_batch(2, "<T>-x1"), _txn_batch(7, "<T>-x0")),
        _mixed(0, _txn_batch(0, "<T>-x0"), _txn_batch(2, "<T>-x1")),
        _init("<T>-x0"),  # epoch 1: one producer id at two epochs is two as well
        _mixed(-1, _txn_batch(0, "<T>-x0", 1), _txn_batch(2, "<T>-x0", 0)),
        {"api": "ListOffsets", "version": 7, "body": {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "<T>-t3", "partitions": [{"partition_index": i, "current_leader_epoch": -1, "timestamp": -1}
                                              for i in range(3)]}]}},
    ],
    # AlterConfigs (which replaces the whole set) of the cluster-wide BROKER resource "": the
    # broker checks the values' types first (INVALID_REQUEST "Invalid value 0.5 for
    # configuration compression.gzip.level: Not a number of type INT"); only then its
    # controller refuses a set without min.insync.replicas while ELR is on (seed 11319; kipper
    # answered the controller's refusal first)
    "generated/a-default-broker-resource-s-values-are-read-before-the-controller": [
        {"api": "AlterConfigs", "version": 2, "body": {"validate_only": True, "resources": [
            {"resource_type": 4, "resource_name": name, "configs": configs}]}}
        for name in ("", "1") for configs in (
            [{"name": "retention.ms", "value": "1"}, {"name": "compression.gzip.level", "value": "0.5"}],
            [{"name": "log.retention.ms", "value": "abc"}], [{"name": "retention.ms", "value": "1"}])],
    # TxnOffsetCommit with a generation to a group that does not exist: GROUP_ID_NOT_FOUND from
    # v6 (TxnOffsetCommitRequest.supportsGroupIdNotFoundError), ILLEGAL_GENERATION before (seed
    # 11316; kipper answered ILLEGAL_GENERATION at every version)
    "generated/a-txn-offset-commit-to-no-group-is-group-id-not-found-from-v6": [
        T0, {"api": "InitProducerId", "version": 5, "body": {"transactional_id": "<T>-x0", "transaction_timeout_ms": 60000,
                                                             "producer_id": -1, "producer_epoch": -1}},
        *({"api": "TxnOffsetCommit", "version": v, "body": {
            "transactional_id": "<T>-x0", "group_id": "<T>-g0", "producer_id": {"<pid>": "<T>-x0"},
            "producer_epoch": 0, "generation_id_or_member_epoch": 1, "member_id": "<T>-m0", "group_instance_id": None,
            "topics": [{**({"topic_id": {"<topic_id>": "<T>-t0"}} if v >= 6 else {"name": "<T>-t0"}), "partitions": [
                {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1,
                 "committed_metadata": ""}]}]}} for v in (5, 6)),
    ],
    # DeleteRecords moves the log start; the segment's file keeps the bytes below it until
    # the whole segment goes, so DescribeLogDirs still counts them (seed 12232; kipper's
    # in-memory log answered 0). Records stamped with no time, so retention reads the write's.
    "generated/a-segment-keeps-its-size-after-delete-records": [
        T0, produce_step(-1, -1, -1, 2, timestamps="none"),
        {"api": "DeleteRecords", "version": 0, "body": {"topics": [{"name": "<T>-t0", "partitions": [
            {"partition_index": 0, "offset": -1}]}], "timeout_ms": 30000}},
        {"api": "DescribeLogDirs", "version": 1, "body": {"topics": [{"topic": "<T>-t0", "partitions": [0]}]}},
        produce_step(-1, -1, -1, 1, timestamps="none"),
        {"api": "DescribeLogDirs", "version": 1, "body": {"topics": [{"topic": "<T>-t0", "partitions": [0]}]}},
    ],
}

for _name, _steps in RUN_20.items():
    register(_name, replay(_steps))
