"""What the generator's eleventh run found (issue 36, docs/FUZZ_FINDINGS.md), each the sequence a
difference shrank to or a few variants of it, replayed as generated.py replays (every one
passes against Kafka 4.4; tests/unit/test_eleventh_run_findings.py states each answer)."""

from __future__ import annotations

from tests.conformance.scenarios import register
from tests.conformance.scenarios.generated import NO_SUCH_PID, T0, produce_step, replay


def _delete_offsets(*names: str) -> dict:
    return {"api": "DeleteShareGroupOffsets", "version": 0, "body": {
        "group_id": "<T>-g0", "topics": [{"topic_name": name} for name in names]}}


RUN_11: dict[str, list[dict]] = {
    # a producer whose batches had no epoch (-1) may start its first epoch at any sequence;
    # once it has one, a newer epoch starts at 0 (Kafka's checkSequence, seed 11308)
    "generated/produce-a-producer-without-an-epoch-starts-anywhere": [
        T0, *(produce_step(NO_SUCH_PID, epoch, seq, n) for epoch, seq, n in ((-1, 0, 2), (0, 2, 1), (1, 3, 1), (1, 0, 1))),
    ],
    # DeleteShareGroupOffsets reads its topics as a set: a topic named twice is answered once,
    # with offsets or without, known or not (seed 9307)
    "generated/delete-share-group-offsets-a-topic-named-twice": [
        T0,
        {"api": "AlterShareGroupOffsets", "version": 0, "body": {"group_id": "<T>-g0", "topics": [
            {"topic_name": "<T>-t0", "partitions": [{"partition_index": 0, "start_offset": 0}]}]}},
        _delete_offsets("<T>-t0", "<T>-t0"),
        _delete_offsets("<T>-t0", "<T>-t0"),
        _delete_offsets("<T>-t9", "<T>-t0", "<T>-t9"),
    ],
    # OffsetFetch v8+ answers each entry in its place: a group named twice, once for a partition
    # and once for all it committed (seed 9310)
    "generated/offset-fetch-a-group-named-twice": [
        T0,
        *({"api": "OffsetFetch", "version": version, "body": {"require_stable": False, "groups": [
            {"group_id": "<T>-g1", "member_id": None, "member_epoch": -1,
             "topics": [{"name": "<T>-t0", "partition_indexes": [0]}]},
            {"group_id": "<T>-g1", "member_id": None, "member_epoch": -1, "topics": None}]}} for version in (8, 9)),
    ],
    # a consumer heartbeat that leaves (or beats for) a classic group: only a join converts
    # one; the rest are told it is no consumer group (seed 10339)
    "generated/consumer-heartbeat-leaving-a-classic-group": [
        T0,
        {"api": "JoinGroup", "version": 0, "body": {"group_id": "<T>-g2", "protocol_type": "consumer", "member_id": "",
                                                    "session_timeout_ms": 45000,
                                                    "protocols": [{"name": "range", "metadata": {"<subscription>": ["<T>-t0"]}}]}},
        *({"api": "ConsumerGroupHeartbeat", "version": 0, "body": {
            "group_id": "<T>-g2", "member_id": {"<member>": 0}, "member_epoch": epoch, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["<T>-t0"], "server_assignor": None,
            "topic_partitions": []}} for epoch in (-1, 3)),
        {"api": "DescribeGroups", "version": 0, "body": {"groups": ["<T>-g2"]}},
    ],
    # APPEND or SUBTRACT of a key that is no LIST, an unknown one included, is refused first
    # (a broker's unknown key by name); the default broker keeps min.insync.replicas (seeds 9319,
    # 11319)
    "generated/alter-configs-unknown-list-keys-and-the-cluster-min-insync": [
        T0,
        *({"api": "IncrementalAlterConfigs", "version": 0, "body": {"validate_only": True, "resources": [
            {"resource_type": kind, "resource_name": name, "configs": [
                {"name": key, "config_operation": op, "value": "1"} for key, op in ops]}]}}
          for kind, name, ops in ((2, "<T>-t0", (("", 3), ("retention.ms", 7))), (2, "<T>-t0", (("no.such.config", 2),)),
                                  (32, "<T>-g0", (("no.such.config", 2),)), (4, "", (("no.such.config", 2),)),
                                  (4, "1", (("no.such.config", 3),)))),
        {"api": "IncrementalAlterConfigs", "version": 0, "body": {"validate_only": True, "resources": [
            {"resource_type": 4, "resource_name": "", "configs": [
                {"name": "min.insync.replicas", "config_operation": 1, "value": None}]}]}},
        *({"api": "AlterConfigs", "version": 2, "body": {"validate_only": True, "resources": [
            {"resource_type": 4, "resource_name": name, "configs": [{"name": "retention.ms", "value": "1"}]}]}}
          for name in ("", "1")),
    ],
    # JoinGroup v7+ of a protocol named "": Kafka answers a null protocol name (seed 9316)
    "generated/join-group-a-protocol-named-empty": [
        T0,
        {"api": "JoinGroup", "version": 8, "body": {
            "group_id": "<T>-g0", "rebalance_timeout_ms": 1000, "group_instance_id": "<T>-i1", "reason": None,
            "member_id": "", "protocols": [{"name": "", "metadata": {"<subscription>": ["<T>-t0"]}}],
            "protocol_type": "consumer", "session_timeout_ms": 45000}},
    ],
}

for _name, _steps in RUN_11.items():
    register(_name, replay(_steps))
