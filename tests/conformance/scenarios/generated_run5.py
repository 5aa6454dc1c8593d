"""What the generator's fifth run handed on (issue 36, docs/FUZZ_FINDINGS.md), each the
sequence a difference shrank to or a few variants of it, replayed as generated.py replays
(every one passes against Kafka 4.4; tests/unit/test_fifth_run_findings.py states each
answer)."""

from __future__ import annotations

from tests.conformance.scenarios import register
from tests.conformance.scenarios.generated import T0, replay


def _batch(n: int, timestamps: str = "create") -> dict:
    return {"<batch>": {"n": n, "start": 0, "pid": -1, "epoch": -1, "seq": -1, "txn": False, "codec": 0,
                        "timestamps": timestamps, "keys": True, "mutation": None}}


def _produce(*batches: dict) -> dict:
    return {"api": "Produce", "version": 3, "body": {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": "<T>-t0", "partition_data": [{"index": 0, "records": b} for b in batches]}]}}


def _fetch(version: int, topics: list[list[int]]) -> dict:
    return {"api": "Fetch", "version": version, "body": {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1048576, "isolation_level": 0,
        "topics": [{"topic": "<T>-t0", "partitions": [{"partition": p, "fetch_offset": 0, "partition_max_bytes": 1048576}
                                                      for p in partitions]} for partitions in topics]}}


def _marker(pid: int, partitions: list[int]) -> dict:
    return {"producer_id": pid, "producer_epoch": 0, "transaction_result": False, "coordinator_epoch": 0,
            "transaction_version": 0, "topics": [{"name": "<T>-t0", "partition_indexes": partitions}]}


UNKNOWN = 999_999_999_000  # producer ids no broker issued (tests/conformance/fuzz/symbols.py)

RUN_5: dict[str, list[dict]] = {
    # one partition named three times, twice in one topic entry: Kafka's request map keeps it
    # once, so the partition is read once, whole (seed 6002)
    "generated/fetch-v4-one-partition-named-three-times": [
        T0,
        _fetch(4, [[0], [0]]),
        _produce(_batch(1)),
        _produce(_batch(2, "none")),
        _fetch(4, [[0]]),
        _fetch(4, [[0, 0], [0]]),
        _fetch(4, [[0], [0]]),
        _fetch(4, [[0, 0]]),
    ],
    # markers answered in the order of Kafka's map by producer id, not as asked; a marker
    # naming no partition has no answer; a partition the topic lacks named twice is answered
    # (seed 6005). Only requests whose last marker writes, or none does: Kafka never answers
    # one where a marker that writes is followed by one that writes nothing (declared in
    # kafka-closes-the-connection)
    "generated/write-txn-markers-answer-order": [
        T0,
        {"api": "WriteTxnMarkers", "version": 2, "body": {"markers": [_marker(UNKNOWN + 2, [7]), _marker(UNKNOWN, [0])]}},
        {"api": "WriteTxnMarkers", "version": 2, "body": {"markers": [
            _marker(UNKNOWN + 17, [9]), _marker(UNKNOWN + 5, [7]), _marker(UNKNOWN + 33, [0])]}},
        {"api": "WriteTxnMarkers", "version": 2, "body": {"markers": [_marker(UNKNOWN + 17, [9]), _marker(UNKNOWN + 17, [0])]}},
        {"api": "WriteTxnMarkers", "version": 2, "body": {"markers": [_marker(UNKNOWN + 17, [0, 3])]}},
        {"api": "WriteTxnMarkers", "version": 2, "body": {"markers": [_marker(UNKNOWN + 1, []), _marker(UNKNOWN + 17, [0])]}},
        {"api": "WriteTxnMarkers", "version": 2, "body": {"markers": [
            _marker(UNKNOWN + 17, [3]), _marker(UNKNOWN + 1, []), _marker(UNKNOWN + 5, [3])]}},
    ],
}

for _name, _steps in RUN_5.items():
    register(_name, replay(_steps))
