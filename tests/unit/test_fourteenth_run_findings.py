"""What the generator's fourteenth run (a short one after the thirteenth, seed 9601) met
(issue 36, docs/FUZZ_FINDINGS.md): a transactional batch being verified holds back the
producer's later sequences, and a diverging fetch lists no aborted transactions; each is a
scenario in tests/conformance/scenarios/generated_run14.py."""

from __future__ import annotations

import uuid

import pytest

from kipper.broker.producer_state import APPEND, REJECT, ProducerStateManager
from kipper.protocol.errors import ErrorCode as E
from tests.conformance.fuzz import batches
from tests.support.inproc import InProcessBroker
from tests.unit.test_producer_state import PID, Log, header

CREATE_TOPICS, PRODUCE, FETCH, INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN = 19, 0, 1, 22, 24


def _broker(topic: str = "t") -> InProcessBroker:
    b = InProcessBroker()
    b.state.topics.create(topic, 1)
    return b


def _produce(b: InProcessBroker, seq: int, *, txn: bool = False, tid: str | None = None, pid: int = PID,
             epoch: int = 0, version: int = 3) -> tuple[int, int]:
    records = batches.build({"n": 1, "txn": txn, "start": 0, "codec": 0, "timestamps": "create", "keys": True,
                             "mutation": None}, pid, epoch, seq)
    answer = b.call(PRODUCE, version, {"transactional_id": tid, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": records}]}]})
    [row] = [p for t in answer.responses for p in t.partition_responses]
    return row.error_code, row.base_offset


def test_a_batch_that_failed_verification_is_not_overtaken_by_a_later_sequence():
    """Kafka notes the lowest sequence of a transactional batch it verifies before asking the
    coordinator; whatever the coordinator answers, a later batch of that producer with a
    higher first sequence is OUT_OF_ORDER_SEQUENCE_NUMBER until a transactional batch of it
    is appended."""
    b = _broker()
    assert _produce(b, 0, txn=True, tid="x0") == (E.INVALID_PRODUCER_ID_MAPPING, -1)  # no such transaction
    assert _produce(b, 0, tid="x0") == (E.NONE, 0)  # not past the note
    assert _produce(b, 1, tid="x0") == (E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert _produce(b, 1) == (E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)  # any request of that producer
    assert _produce(b, 0) == (E.NONE, 0)  # the retry is still answered as one


def test_a_transactional_batch_without_a_transactional_id_leaves_no_note():
    b = _broker()
    assert _produce(b, 0, txn=True) == (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
    assert _produce(b, 0) == (E.NONE, 0)
    assert _produce(b, 1) == (E.NONE, 1)


def test_the_note_goes_once_a_transactional_batch_of_the_producer_is_appended():
    b = _broker()
    init = b.call(INIT_PRODUCER_ID, 4, {"transactional_id": "x", "transaction_timeout_ms": 60000,
                                        "producer_id": -1, "producer_epoch": -1})
    pid, epoch = init.producer_id, init.producer_epoch
    assert _produce(b, 0, txn=True, tid="x", pid=pid, epoch=epoch) == (E.INVALID_TXN_STATE, -1)  # not added yet
    assert _produce(b, 1, tid="x", pid=pid, epoch=epoch)[0] == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    added = b.call(ADD_PARTITIONS_TO_TXN, 3, {"v3_and_below_transactional_id": "x", "v3_and_below_producer_id": pid,
                                              "v3_and_below_producer_epoch": epoch,
                                              "v3_and_below_topics": [{"name": "t", "partitions": [0]}]})
    assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.NONE
    assert _produce(b, 0, txn=True, tid="x", pid=pid, epoch=epoch) == (E.NONE, 0)
    assert _produce(b, 1, txn=True, tid="x", pid=pid, epoch=epoch) == (E.NONE, 1)
    assert b.state.topics.partition("t", 0).producer_state.verifying == {}
    # a plain batch of a producer whose transaction is open here is refused, at any epoch
    # (Kafka's appendDataBatch: "Expected transactional write"; found writing this test)
    assert _produce(b, 2, tid="x", pid=pid, epoch=epoch) == (E.INVALID_TXN_STATE, -1)
    assert _produce(b, 0, pid=pid, epoch=epoch + 1) == (E.INVALID_TXN_STATE, -1)
    assert _produce(b, 2, txn=True, tid="x", pid=pid, epoch=epoch) == (E.NONE, 2)


@pytest.mark.parametrize("version", [3, 11, 12])
def test_a_transactional_batch_of_an_older_epoch_is_fenced_before_any_coordinator(version):
    """Kafka's leader refuses it (INVALID_PRODUCER_EPOCH, log_start_offset -1) before it asks
    the coordinator, so a transactional id no InitProducerId made is not what it answers."""
    b = _broker()
    assert _produce(b, 0, epoch=5) == (E.NONE, 0)
    assert _produce(b, 0, epoch=3, txn=True, tid="x0", version=version) == (E.INVALID_PRODUCER_EPOCH, -1)
    assert b.state.topics.partition("t", 0).producer_state.verifying == {}
    assert _produce(b, 1, epoch=5) == (E.NONE, 1)


@pytest.fixture
def log():
    return Log(ProducerStateManager(max_in_flight_sequences=1000))


def test_a_note_keeps_its_lowest_sequence_and_starts_afresh_at_a_newer_epoch(log):
    psm = log.psm
    psm.start_verification(PID, 5, 0, False, now=0)
    psm.start_verification(PID, 3, 0, False, now=0)
    psm.start_verification(PID, 9, 0, False, now=0)
    assert psm.verifying[PID].lowest_sequence == 3
    assert log.produce(header(4))[0].error == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.produce(header(3))[0].outcome == APPEND
    psm.start_verification(PID, 7, 1, False, now=0)
    assert (psm.verifying[PID].epoch, psm.verifying[PID].lowest_sequence) == (1, 7)


def test_a_transaction_version_2_note_wants_sequence_0_of_a_producer_with_no_batch(log):
    log.psm.start_verification(PID, 3, 0, True, now=0)
    v, _ = log.produce(header(2))
    assert (v.outcome, v.error) == (REJECT, E.OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert log.produce(header(0))[0].outcome == APPEND


def test_a_note_never_verified_expires_with_producer_id_expiration(log):
    psm = log.psm
    psm.start_verification(PID, 0, 0, False, now=1_000)
    psm.expire(86_400_999, 86_400_000)
    assert PID in psm.verifying
    psm.expire(86_401_000, 86_400_000)
    assert psm.verifying == {}
    assert log.produce(header(7))[0].outcome == APPEND


def test_a_marker_of_the_notes_own_epoch_keeps_a_transaction_version_2_note(log):
    psm = log.psm
    psm.start_verification(PID, 0, 2, True, now=0)
    psm.end_verification(PID, 2, control=True)
    assert PID in psm.verifying
    psm.end_verification(PID, 3, control=True)
    assert psm.verifying == {}


def test_a_diverging_read_committed_fetch_lists_no_aborted_transactions():
    """Kafka answers a fetch past the end of its last fetched epoch with nothing read
    (FetchDataInfo.empty): aborted_transactions is null even at READ_COMMITTED."""
    b = _broker()
    assert _produce(b, -1, pid=-1, epoch=-1) == (E.NONE, 0)
    topic_id = b.state.topics.get("t").topic_id
    answer = b.call(FETCH, 14, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                "isolation_level": 1, "session_id": 0, "session_epoch": -1, "rack_id": "",
                                "forgotten_topics_data": [], "topics": [{"topic_id": topic_id, "partitions": [
                                    {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 5,
                                     "last_fetched_epoch": 0, "log_start_offset": -1,
                                     "partition_max_bytes": 1 << 20}]}]})
    [row] = answer.responses[0].partitions
    assert (row.diverging_epoch.epoch, row.diverging_epoch.end_offset) == (0, 1)
    assert row.aborted_transactions is None


@pytest.mark.parametrize("replica_id, order", [(1, ["t", None]), (-1, [None, "t"])])
def test_a_replicas_fetch_answers_what_it_cannot_read_in_the_order_asked(replica_id, order):
    """Kafka's KafkaApis reads a follower's partitions in one pass: an unknown partition and an
    unknown topic id are answered in the order asked; a consumer's unknown topic ids come first."""
    b = _broker()
    topic_id = b.state.topics.get("t").topic_id
    answer = b.call(FETCH, 14, {"replica_id": replica_id, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
                                "forgotten_topics_data": [], "topics": [
                                    {"topic_id": tid, "partitions": [
                                        {"partition": index, "current_leader_epoch": -1, "fetch_offset": 0,
                                         "last_fetched_epoch": -1, "log_start_offset": -1,
                                         "partition_max_bytes": 1 << 20}]}
                                    for tid, index in ((topic_id, 2), (uuid.UUID(int=7), 0))]})
    names = {topic_id: "t"}
    assert [names.get(r.topic_id) for r in answer.responses] == order
    assert {names.get(r.topic_id): r.partitions[0].error_code for r in answer.responses} == {
        "t": E.UNKNOWN_TOPIC_OR_PARTITION, None: E.UNKNOWN_TOPIC_ID}


def test_a_refused_commits_group_is_seen_once_another_write_to_its_partition_commits_it():
    """Kafka's reads see its coordinator's state as of the last committed offset: the simple
    group a wholly refused commit made appears once any later record is written to the same
    __consumer_offsets partition (the sixteenth run met the shared group "" so)."""
    b = InProcessBroker(**{"offsets.topic.num.partitions": "1"})
    b.state.topics.create("t", 1)

    def commit(group: str, metadata: str) -> int:
        return b.call(8, 5, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                             "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
                                 {"partition_index": 0, "committed_offset": 0, "committed_metadata": metadata}]}]}
                      ).topics[0].partitions[0].error_code

    def states() -> list:
        return [(g.group_id, g.group_state) for g in b.call(15, 0, {"groups": ["", "g1"]}).groups]
    assert commit("", "x" * 5000) == E.OFFSET_METADATA_TOO_LARGE
    assert states() == [("", "Dead"), ("g1", "Dead")]
    assert commit("g1", "") == E.NONE  # a record in the one partition
    assert states() == [("", "Empty"), ("g1", "Empty")]
    assert sorted(g.group_id for g in b.call(16, 0, {}).groups) == ["", "g1"]


def test_offset_delete_answers_as_kafkas_builder_shapes_it():
    """A topic entry per name for the refusals (an unknown topic has one even with no
    partition), the coordinator's entries merged into them by name; with no refusal, the
    coordinator's entries as they are, one a request topic (the sixteenth run, seed 9801)."""
    b = _broker()
    b.call(8, 5, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 0, "committed_metadata": ""}]}]})

    def delete(*topics) -> list:
        answer = b.call(47, 0, {"group_id": "g", "topics": [
            {"name": name, "partitions": [{"partition_index": i} for i in indexes]} for name, indexes in topics]})
        return [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in answer.topics]
    assert delete(("t", []), ("t", [-1])) == [("t", [(-1, E.UNKNOWN_TOPIC_OR_PARTITION)])]
    assert delete(("t", [-1]), ("u", []), ("t", [0])) == [
        ("t", [(-1, E.UNKNOWN_TOPIC_OR_PARTITION), (0, E.NONE)]), ("u", [])]
    assert delete(("t", [0]), ("t", [0])) == [("t", [(0, E.NONE)]), ("t", [(0, E.NONE)])]
    assert delete(("t", [])) == []


@pytest.mark.parametrize("storage", ["memory", "file"])
def test_list_offsets_by_timestamp_finds_a_transaction_markers_record(storage, tmp_path):
    """Kafka's FileRecords.searchForTimestamp reads every batch, a marker's too: its record
    carries the time it was written (the seventeenth run, seed 10915)."""
    b = InProcessBroker(**({"log.dirs": str(tmp_path)} if storage == "file" else {}))
    b.state.topics.create("t", 1)
    assert _produce(b, -1, pid=-1, epoch=-1) == (E.NONE, 0)  # at 1_700_000_000_000
    b.now += 60_000
    written = b.call(27, 1, {"markers": [{"producer_id": PID, "producer_epoch": 0, "transaction_result": False,
                                          "topics": [{"name": "t", "partition_indexes": [0]}],
                                          "coordinator_epoch": 0}]})
    assert written.markers[0].topics[0].partitions[0].error_code == E.NONE

    def list_offsets(timestamp: int) -> tuple[int, int]:
        answer = b.call(2, 7 if timestamp == -3 else 2, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "t", "partitions": [{"partition_index": 0, "timestamp": timestamp}]}]})
        row = answer.topics[0].partitions[0]
        return row.offset, row.timestamp
    assert list_offsets(1_700_000_000_001) == (1, 1_700_000_060_000)
    assert list_offsets(1_700_000_000_000) == (0, 1_700_000_000_000)
    assert list_offsets(-3) == (1, 1_700_000_060_000)  # MAX_TIMESTAMP: the marker's too


def _fetch_v17(b: InProcessBroker, topics, max_wait_ms: int = 0):
    return b.call(FETCH, 17, {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20,
                              "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
                              "forgotten_topics_data": [], "topics": [
                                  {"topic_id": tid, "partitions": [
                                      {"partition": i, "current_leader_epoch": -1, "fetch_offset": 0,
                                       "last_fetched_epoch": -1, "log_start_offset": -1,
                                       "partition_max_bytes": 1 << 20} for i in indexes]}
                                  for tid, indexes in topics]})


def test_a_fetch_kafka_fails_building_fails_whole():
    """Kafka's FetchResponse.toMessage matches a partition to the previous topic entry by name
    when that entry's id is the zero UUID, whose name is null: a partition after one of the
    zero id throws, and the Fetch answers UNKNOWN_SERVER_ERROR with nothing in it (the
    seventeenth run, seed 11910). Another unknown id is matched by id: answered."""
    b = _broker()
    zero, other = uuid.UUID(int=0), uuid.UUID(int=7)
    failed = _fetch_v17(b, [(zero, [2147483647, 2])])
    assert (failed.error_code, failed.responses) == (E.UNKNOWN_SERVER_ERROR, [])
    answered = _fetch_v17(b, [(other, [1, 2]), (zero, [2])])  # the zero id's partition last
    assert answered.error_code == E.NONE
    assert [[p.error_code for p in r.partitions] for r in answered.responses] == [[E.UNKNOWN_TOPIC_ID] * 2,
                                                                               [E.UNKNOWN_TOPIC_ID]]
    assert _fetch_v17(b, [(zero, [2]), (other, [1])]).error_code == E.UNKNOWN_SERVER_ERROR


def test_a_fetch_kafka_would_fail_after_waiting_is_closed_at_once():
    """Kafka's delayed fetch fails as it completes and never answers; kipper closes at once."""
    from kipper.broker.handlers.replies import NO_RESPONSE, Reply
    from kipper.protocol.header import encode_request
    from kipper.protocol.messages import APIS

    b = _broker()
    topic_id = b.state.topics.get("t").topic_id
    body = {"replica_id": -1, "max_wait_ms": 200, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [], "topics": [
                {"topic_id": tid, "partitions": [{"partition": i, "current_leader_epoch": -1, "fetch_offset": 0,
                                                  "last_fetched_epoch": -1, "log_start_offset": -1,
                                                  "partition_max_bytes": 1 << 20} for i in indexes]}
                for tid, indexes in ((topic_id, [0]), (uuid.UUID(int=0), [1, 2]))]}
    frame = encode_request(APIS[FETCH], 17, 1, "test", body)[4:]
    [result], _ = b.dispatcher.dispatch([frame], 0, b.session)
    assert type(result) is Reply and result.body is NO_RESPONSE and result.abort


def test_a_failed_share_offsets_alter_leaves_the_group_it_made_at_epoch_one():
    """AlterShareGroupOffsets naming a negative partition fails whole, but Kafka's coordinator
    made the group and bumped its epoch before its state was refused: ShareGroupDescribe shows
    epoch 1 and a joining member gets epoch 2 (the eighteenth run, seed 11001)."""
    b = _broker()
    refused = b.call(91, 0, {"group_id": "g", "topics": [{"topic_name": "t", "partitions": [
        {"partition_index": p, "start_offset": 0} for p in (-1, 0)]}]})
    assert refused.error_code == E.UNKNOWN_SERVER_ERROR
    [group] = b.call(77, 1, {"group_ids": ["g"], "include_authorized_operations": False}).groups
    assert (group.group_state, group.group_epoch, group.assignment_epoch) == ("Empty", 1, 1)
    joined = b.call(76, 1, {"group_id": "g", "member_id": "m0", "member_epoch": 0, "rack_id": None,
                            "subscribed_topic_names": ["t"]})
    assert (joined.error_code, joined.member_epoch) == (E.NONE, 2)


def test_a_broker_resource_with_an_unknown_operation_anywhere_is_refused_first():
    """Kafka's broker reads every operation type of a BROKER resource before it applies one
    (ConfigAdminManager.validateBrokerConfigChange): an unknown one anywhere is INVALID_REQUEST,
    before a SUBTRACT of no list met first in key order (the nineteenth run, seed 10103)."""
    b = _broker()
    answer = b.call(44, 0, {"validate_only": True, "resources": [{"resource_type": 4, "resource_name": "", "configs": [
        {"name": "message.timestamp.after.max.ms", "config_operation": 7, "value": "1"},
        {"name": "retention.ms", "config_operation": 2, "value": "1"}]}]})
    assert [(r.error_code, r.error_message) for r in answer.responses] == [
        (E.INVALID_REQUEST, "Unknown operations type 7")]
