"""What the generator's fourteenth run (a short one after the thirteenth, seed 9601) met
(issue 36, docs/FUZZ_FINDINGS.md), replayed against Kafka 4.4
(tests/unit/test_fourteenth_run_findings.py states each answer)."""

from __future__ import annotations

from tests.conformance.scenarios import register
from tests.conformance.scenarios.generated import NO_SUCH_PID, T0, marker_step, produce_step, replay

X0, X1, X2 = ({"<pid>": f"<T>-x{i}"} for i in range(3))
INIT_X2 = {"api": "InitProducerId", "version": 4, "body": {"transactional_id": "<T>-x2", "transaction_timeout_ms": 60000,
                                                           "producer_id": -1, "producer_epoch": -1}}
ADD_X2 = {"api": "AddPartitionsToTxn", "version": 3, "body": {
    "v3_and_below_transactional_id": "<T>-x2", "v3_and_below_producer_id": X2, "v3_and_below_producer_epoch": 0,
    "v3_and_below_topics": [{"name": "<T>-t0", "partitions": [0]}]}}


def _partition(index: int = 0, offset: int = 0, last_fetched_epoch: int = -1) -> dict:
    return {"partition": index, "current_leader_epoch": -1, "fetch_offset": offset, "log_start_offset": -1,
            "last_fetched_epoch": last_fetched_epoch, "partition_max_bytes": 1048576}


def _fetch(*topics: tuple, isolation_level: int = 0, replica_id: int = -1, version: int = 14) -> dict:
    """Fetch (v14 unless told) of (topic id, partition) pairs."""
    return {"api": "Fetch", "version": version, "body": {
        "replica_id": replica_id, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1048576,
        "isolation_level": isolation_level, "session_id": 0, "session_epoch": -1, "rack_id": None,
        "forgotten_topics_data": [], "topics": [{"topic_id": t, "partitions": [p]} for t, p in topics]}}


def _commit(group: str, metadata: str) -> dict:
    return {"api": "OffsetCommit", "version": 5, "body": {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
        "topics": [{"name": "<T>-t0", "partitions": [
            {"partition_index": 0, "committed_offset": 0, "committed_metadata": metadata}]}]}}


T0_ID = {"<topic_id>": "<T>-t0"}
UNKNOWN_ID = "6b1ff3f0-0000-4000-8000-0000deadbeef"
ZERO_ID = "00000000-0000-0000-0000-000000000000"


RUN_14: dict[str, list[dict]] = {
    # a transactional batch the leader verifies leaves a note of its producer's lowest sequence,
    # whatever the coordinator answers: until a transactional batch of the producer is appended,
    # any batch of it with a higher first sequence is OUT_OF_ORDER (Kafka's
    # VerificationStateEntry, seed 9607; kipper appended it). Without a transactional id the
    # batch is refused before verification and leaves none; at transaction version 2 (v12) a
    # producer with no batch must start at 0.
    "generated/a-batch-being-verified-is-not-overtaken": [
        T0,
        produce_step(NO_SUCH_PID, 0, 0, txn=True, transactional_id="<T>-x0"),
        produce_step(NO_SUCH_PID, 0, 0, transactional_id="<T>-x0"), produce_step(NO_SUCH_PID, 0, 1),
        produce_step(NO_SUCH_PID, 0, 1, transactional_id="<T>-x0"), produce_step(NO_SUCH_PID, 0, 0),
        produce_step(NO_SUCH_PID + 1, 0, 3, txn=True, transactional_id="<T>-x1"),
        produce_step(NO_SUCH_PID + 1, 0, 0, 3), produce_step(NO_SUCH_PID + 1, 0, 3),
        produce_step(NO_SUCH_PID + 1, 0, 4),
        produce_step(NO_SUCH_PID + 2, 0, 0, txn=True),
        produce_step(NO_SUCH_PID + 2, 0, 0), produce_step(NO_SUCH_PID + 2, 0, 1),
        produce_step(NO_SUCH_PID + 3, 0, 3, txn=True, transactional_id="<T>-x1", version=12),
        produce_step(NO_SUCH_PID + 3, 0, 2), produce_step(NO_SUCH_PID + 3, 0, 0),
    ],
    # the note goes once a transactional batch of the producer is appended in the partition
    "generated/a-verification-note-ends-with-the-transactions-first-batch": [
        T0, INIT_X2,
        produce_step(X2, 0, 0, txn=True, transactional_id="<T>-x2"),  # not added: INVALID_TXN_STATE
        produce_step(X2, 0, 1, transactional_id="<T>-x2"),
        ADD_X2,
        produce_step(X2, 0, 0, txn=True, transactional_id="<T>-x2"),
        produce_step(X2, 0, 1, txn=True, transactional_id="<T>-x2"),
        produce_step(X2, 0, 2, transactional_id="<T>-x2"),
    ],
    # a transactional batch of an older epoch than the partition's is INVALID_PRODUCER_EPOCH
    # before any coordinator is asked, at every version (kipper asked its coordinator, which
    # answered INVALID_PRODUCER_ID_MAPPING or INVALID_TXN_STATE; met probing the above)
    "generated/a-transactional-batch-of-an-older-epoch-is-fenced-before-verification": [
        T0, produce_step(NO_SUCH_PID, 5, 0),
        *(produce_step(NO_SUCH_PID, 3, 0, txn=True, transactional_id="<T>-x0", version=v) for v in (3, 11, 12)),
        produce_step(NO_SUCH_PID, 5, 1),
        INIT_X2, produce_step(X2, 7, 0),
        *(produce_step(X2, 0, 0, txn=True, transactional_id="<T>-x2", version=v) for v in (3, 12)),
        produce_step(X2, 7, 1, txn=True, transactional_id="<T>-x2"), produce_step(X2, 7, 1),
    ],
    # a replica's Fetch (replica id 1) is read in one pass: a partition the topic lacks and an
    # unknown topic id are answered in the order asked; a consumer's unknown ids come first
    # (the fifteenth run, seed 11704)
    "generated/a-replicas-fetch-answers-in-the-order-asked": [
        T0, *(_fetch((T0_ID, _partition(2)), (UNKNOWN_ID, _partition()), replica_id=r) for r in (1, -1)),
    ],
    # a wholly refused commit's simple group is seen once a later record commits the
    # coordinator's state of its __consumer_offsets partition (one, in both references): after
    # another group's commit DescribeGroups shows it Empty (the sixteenth run, seeds 11807,
    # 10807: the shared group ""; before that write it is racy, other scenarios write too)
    "generated/a-refused-commits-group-is-seen-after-the-next-write": [
        T0, _commit("<T>-g0", "x" * 5000), _commit("<T>-g1", ""),
        {"api": "DescribeGroups", "version": 0, "body": {"groups": ["<T>-g0", "<T>-g1"]}},
    ],
    # OffsetDelete's answer as Kafka's KafkaApis builds it: the refusals one entry a topic name
    # (an unknown topic one even with no partition), the coordinator's entries merged into them
    # by name, or as they are if nothing was refused (the sixteenth run, seed 9801)
    "generated/offset-delete-answers-shaped-as-kafkas-builder": [
        T0, _commit("<T>-g0", ""),
        *({"api": "OffsetDelete", "version": 0, "body": {"group_id": "<T>-g0", "topics": [
            {"name": name, "partitions": [{"partition_index": i} for i in indexes]} for name, indexes in topics]}}
          for topics in ((("<T>-t0", []), ("<T>-t0", [-1])), (("<T>-t0", [-1]), ("<T>-t9", []), ("<T>-t0", [0])),
                         (("<T>-t0", [0]), ("<T>-t0", [0])), (("<T>-t0", []),), (("<T>-t9", [1]), ("<T>-t0", [0, 5])))),
    ],
    # ListOffsets by timestamp reads a transaction marker's record too (Kafka's
    # FileRecords.searchForTimestamp): its time is the marker's writing (the seventeenth run,
    # seed 10915; kipper skipped markers)
    "generated/list-offsets-by-timestamp-finds-a-marker": [
        T0, produce_step(-1, -1, -1), marker_step(NO_SUCH_PID, 0),
        *({"api": "ListOffsets", "version": version, "body": {
            "replica_id": -1, "isolation_level": 0, "topics": [
                {"name": "<T>-t0", "partitions": [{"partition_index": 0, "timestamp": timestamp}]}]}}
          for version, timestamp in ((2, 1700000000000), (2, 1700000000001), (7, -3))),
    ],
    # Kafka's FetchResponse.toMessage matches a partition to the previous topic entry by name
    # where that entry's id is the zero UUID, whose name is null: a partition after one of the
    # zero id throws; the Fetch answers UNKNOWN_SERVER_ERROR, or, had it waited, never answers
    # (kipper closes). Another unknown id is matched by id (the seventeenth run, seed 11910)
    "generated/a-fetch-kafka-fails-building": [
        T0, *(_fetch(*((tid, _partition(i)) for tid, i in topics), version=17)
              for topics in (((ZERO_ID, 2147483647), (ZERO_ID, 2)), ((UNKNOWN_ID, 1), (UNKNOWN_ID, 2), (ZERO_ID, 2)),
                             ((ZERO_ID, 2), (UNKNOWN_ID, 1)), ((T0_ID, 0), (ZERO_ID, 1)))),
        # (not asked here: one that would wait, as Kafka never answers it, the read timeout's 30 s)
    ],
    # a fetch past the end of its last fetched epoch reads nothing: Kafka lists no aborted
    # transactions (null) even read_committed (seed 10607; kipper answered [])
    "generated/a-diverging-fetch-lists-no-aborted-transactions": [
        T0, produce_step(-1, -1, -1, 3),
        *(_fetch((T0_ID, _partition(0, offset, epoch)), isolation_level=isolation)
          for isolation in (1, 0) for offset, epoch in ((5, 0), (1, 5), (1, 0))),
    ],
}

for _name, _steps in RUN_14.items():
    register(_name, replay(_steps))
