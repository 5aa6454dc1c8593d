"""What the generator's fourth long run found (issue 36, docs/FUZZ_FINDINGS.md), fixed: each
test states Kafka 4.4's answer; each sequence is a named scenario in
tests/conformance/scenarios/generated_found.py."""

from __future__ import annotations

from kipper.protocol.errors import ErrorCode as E
from tests.support.inproc import InProcessBroker

METADATA, SHARE_FETCH = 3, 78
NOT_PROVIDED = -(1 << 31)


def _metadata(b, version: int, names: list[str]):
    return b.call(METADATA, version, {"topics": [{"name": n, "topic_id": None} for n in names],
                                      "allow_auto_topic_creation": False,
                                      "include_cluster_authorized_operations": False,
                                      "include_topic_authorized_operations": True})


def test_metadata_names_the_operations_on_a_topic_it_does_not_have():
    b = InProcessBroker()
    b.state.topics.create("t", 1)
    answer = _metadata(b, 9, ["t", "missing", "bad name!"])
    rows = {t.name: t for t in answer.topics}
    assert rows["missing"].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert rows["bad name!"].error_code == E.INVALID_TOPIC_EXCEPTION
    # no authorizer: every operation of a topic, as Kafka answers (3576) for all three
    assert {t.topic_authorized_operations for t in answer.topics} == {rows["t"].topic_authorized_operations}
    assert rows["t"].topic_authorized_operations not in (0, NOT_PROVIDED)


def test_a_share_fetch_of_group_empty_is_a_missing_members():
    b = InProcessBroker(**{"group.share.enable": "true"})
    answer = b.call(SHARE_FETCH, 2, {"group_id": "", "member_id": "m" * 22, "share_session_epoch": 0,
                                     "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10,
                                     "batch_size": 10, "share_acquire_mode": 0, "is_renew_ack": False,
                                     "topics": [], "forgotten_topics_data": []})
    # Kafka opens a session and answers 0; kipper refuses a member its group does not have
    # (declared: share-fetch-by-a-missing-member), not the request (INVALID_REQUEST before)
    assert answer.error_code == E.UNKNOWN_MEMBER_ID
