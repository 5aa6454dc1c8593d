"""The generator's requests without a broker: every API kipper declares and advertises, at
every version it supports, gets bodies whose symbols resolve and which encode with kipper's
schema (what the generator sends, tests/conformance/fuzz); and its record sets decode as
what they claim to be."""

from __future__ import annotations

import time
import uuid

import pytest
from hypothesis import HealthCheck, given, settings

from kipper.protocol import records
from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.conformance.compare import load_allowed
from tests.conformance.fuzz import batches, bodies
from tests.conformance.fuzz.machine import SHARE_STATE, Pair, Run
from tests.conformance.fuzz.symbols import Resolver
from tests.conformance.harness import Exchange, api as api_named
from tests.support.reference import Reference

DECLARED = bodies.advertised([{"api_key": a.key, "min_version": a.min_version, "max_version": a.max_version}
                              for a in APIS.values() if a.advertise])


@pytest.mark.parametrize("entry", DECLARED, ids=[a.name for a, _, _ in DECLARED])
def test_drawn_bodies_resolve_and_encode_at_every_version(entry):
    @settings(max_examples=12, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(step=bodies.steps([entry]))
    def check(step):
        api = api_named(step["api"])
        body = Resolver("f000001").body(api, step["version"], step["body"])
        assert encode_request(api, step["version"], 1, "fuzz", body)
    check()


def test_every_advertised_api_is_drawn_and_none_that_changes_the_whole_broker():
    names = {a.name for a, _, _ in DECLARED}
    assert names == {a.name for a in APIS.values() if a.advertise} - bodies.UNSAFE


def test_a_batch_spec_builds_the_batch_it_describes():
    spec = {"n": 3, "start": 1, "pid": 7, "epoch": 2, "seq": 5, "txn": True, "codec": 0, "timestamps": "create",
            "keys": True, "mutation": None}
    (batch,) = records.decode_all(batches.build(spec, 7, 2, 5))
    assert (batch.header.producer_id, batch.header.producer_epoch, batch.header.base_sequence) == (7, 2, 5)
    assert [r.value for r in batch.records] == [b"v1", b"v2", b"v3"]
    two = records.decode_all(batches.build(dict(spec, mutation="two_batches"), 7, 2, 5))
    assert [b.header.base_sequence for b in two] == [5, 8]


def test_sequences_wrap_past_the_largest_int32_as_kafka_counts_them():
    assert batches.next_sequence(2**31 - 1, 1) == 0
    assert batches.next_sequence(2**31 - 2, 3) == 1


def test_a_declared_shape_is_not_drawn_again():
    """AddPartitionsToTxn v4+ naming one transactional id twice (one-transactional-id-twice)."""
    step = {"api": "AddPartitionsToTxn", "version": 4, "conn": "main", "body": {"transactions": [
        {"transactional_id": "<T>-x0", "topics": []}, {"transactional_id": "<T>-x1", "topics": []},
        {"transactional_id": "<T>-x0", "topics": [{"name": "<T>-t0", "partitions": [0]}]}]}}
    kept = bodies.without_declared(step)["body"]["transactions"]
    assert [(t["transactional_id"], t["topics"]) for t in kept] == [("<T>-x0", []), ("<T>-x1", [])]
    # CreateTopics: no topic share.auto.offset.reset (share-auto-offset-reset-topic-config)
    step = {"api": "CreateTopics", "version": 5, "conn": "main", "body": {"topics": [{"name": "<T>-t1", "configs": [
        {"name": "share.auto.offset.reset", "value": "latest"}, {"name": "retention.ms", "value": "1"}]}]}}
    assert bodies.without_declared(step)["body"]["topics"][0]["configs"] == [{"name": "retention.ms", "value": "1"}]


def _answers(pair, api: str, kafka: dict, kipper: dict):
    return pair.compare({"api": api}, [Exchange(api, api, 9, {}, kafka)], [Exchange(api, api, 9, {}, kipper)])


@pytest.mark.parametrize("diverged", [False, True])
def test_past_share_state_only_what_the_logs_length_decides_is_the_seeds(diverged):
    nowhere = Reference("x", "127.0.0.1:1", "127.0.0.1:1", "0")
    pair = Pair(Run(nowhere, nowhere, load_allowed(), []), "f000001")
    pair.diverged = diverged
    produce = _answers(pair, "Produce", {"responses": [{"base_offset": 3, "error_code": 0}]},
                       {"responses": [{"base_offset": 4, "error_code": 0}]})
    fetch_codes = _answers(pair, "Fetch", {"error_code": 1}, {"error_code": 0})
    acquired = _answers(pair, "ShareFetch", {"acquired_records": [{"first_offset": 3}]},
                        {"acquired_records": [{"first_offset": 4}]})
    acknowledged = _answers(pair, "ShareAcknowledge", {"error_code": 0}, {"error_code": 121})
    lag = _answers(pair, "DescribeShareGroupOffsets", {"lag": -5}, {"lag": -4})  # (the log end less the start)
    seeds = SHARE_STATE if diverged else None
    assert [d.allowed for d in produce + fetch_codes + acquired + lag] == [seeds] * 4
    assert [d.allowed for d in acknowledged] == [None]  # a share group's own answer is still compared
    assert pair.run.stats.past_share_state == (5 if diverged else 0)


def test_a_cursor_cut_in_another_sequences_topic_names_no_partition():
    from tests.conformance.normalise import Normaliser

    norm = Normaliser("f000001")
    cut = norm.response({"next_cursor": {"topic_name": "f999999-t0", "partition_index": 2}})
    ours = norm.response({"next_cursor": {"topic_name": "f000001-t0", "partition_index": 2}})
    assert cut["next_cursor"] == {"topic_name": "<another scenario's>", "partition_index": "<another scenario's>"}
    assert ours["next_cursor"]["partition_index"] == 2


def test_delete_topics_refusals_compare_in_any_order():
    """Kafka answers one DeleteTopics request's refusals (both given, neither, a duplicate id) in
    a hash map's order, which changes from one request to the next: ids are named after sorting."""
    from tests.conformance.normalise import Normaliser

    both = {"name": "f000001-t0", "topic_id": "9da4f3cc-be93-44c7-873b-c4b945362c23", "error_code": 42,
            "error_message": "You may not specify both topic name and topic id."}
    dup = {"name": None, "topic_id": "6b1ff3f0-0000-4000-8000-0000deadbeef", "error_code": 42,
           "error_message": "Duplicate topic id."}
    neither = {"name": None, "topic_id": "00000000-0000-0000-0000-000000000000", "error_code": 42,
               "error_message": "Neither topic name nor id were specified."}
    answers = []
    for order in ([both, neither, dup], [dup, neither, both]):
        norm = Normaliser("f000001")
        norm.response({"topics": [{"name": both["name"], "topic_id": both["topic_id"]}]})  # (its CreateTopics)
        answers.append(norm.response({"responses": order}))
    assert answers[0] == answers[1]


def test_a_members_subscribed_topic_names_compare_in_any_order():
    """Kafka describes a member's subscription from a set (the eleventh run's flaky finding)."""
    from tests.conformance.normalise import Normaliser

    answers = [Normaliser("f000001").response({"members": [{"member_id": "m", "subscribed_topic_names": names}]})
               for names in (["f000001-t9", "f000001-t0"], ["f000001-t0", "f000001-t9"])]
    assert answers[0] == answers[1]


def test_write_txn_markers_results_compare_in_any_order():
    """Kafka answers WriteTxnMarkers from a map by producer id (the eleventh run's flaky finding)."""
    from tests.conformance.normalise import Normaliser

    one, two = ({"producer_id": pid, "topics": [{"name": "f000001-t0", "partitions": [
        {"partition_index": 0, "error_code": code}]}]} for pid, code in ((11, 0), (12, 3)))
    answers = []
    for order in ([one, two], [two, one]):
        norm = Normaliser("f000001")
        norm.response({"producer_id": 11})  # (their InitProducerId answers)
        norm.response({"producer_id": 12})
        answers.append(norm.response({"markers": order}))
    assert answers[0] == answers[1]


def test_the_acls_a_delete_matched_compare_in_any_order():
    """Kafka lists the ACLs one DeleteAcls filter matched in a set's order (the eleventh run)."""
    from tests.conformance.normalise import Normaliser

    acls = [{"error_code": 0, "error_message": None, "resource_type": 2, "resource_name": name, "pattern_type": 3,
             "principal": "User:f000001-u0", "host": "*", "operation": 2, "permission_type": 3}
            for name in ("f000001-t0", "f000001-g0")]
    answers = [Normaliser("f000001").response({"filter_results": [{"error_code": 0, "matching_acls": order}]})
               for order in (acls, acls[::-1])]
    assert answers[0] == answers[1]


def test_another_sequences_acls_are_left_out_of_a_listing():
    """DescribeAcls with no name or principal filter lists every sequence's ACLs: another's user
    (on a resource named without a token, "1") is another's, as its topics are (the thirteenth
    run met another worker's)."""
    from tests.conformance.normalise import Normaliser

    acl = lambda user: {"principal": f"User:{user}-u0", "host": "*", "operation": 2, "permission_type": 3}  # noqa: E731
    listed = Normaliser("f000001").response({"resources": [
        {"resource_type": 2, "resource_name": "1", "pattern_type": 3, "acls": [acl("f999999")]},
        {"resource_type": 2, "resource_name": "2", "pattern_type": 3, "acls": [acl("f999999"), acl("f000001")]}]})
    assert listed == Normaliser("f000001").response({"resources": [
        {"resource_type": 2, "resource_name": "2", "pattern_type": 3, "acls": [acl("f000001")]}]})


def test_a_member_epoch_each_broker_resolved_differently_is_no_difference():
    nowhere = Reference("x", "127.0.0.1:1", "127.0.0.1:1", "0")
    pair = Pair(Run(nowhere, nowhere, load_allowed(), []), "f000001")
    api = "ShareGroupHeartbeat"

    def beat(kafka_epoch: int, kipper_epoch: int):  # "the member's epoch - 1": Kafka's 2, kipper's 0
        return pair.compare({"api": api}, [Exchange(api, api, 1, {"member_epoch": kafka_epoch}, {"error_code": 0})],
                            [Exchange(api, api, 1, {"member_epoch": kipper_epoch}, {"error_code": 42})])
    assert [d.allowed for d in beat(2, 0)] == ["group-assignment-off-the-heartbeat"]
    assert [d.allowed for d in beat(2, 2)] == [None]  # the same epoch asked: compared


def test_a_step_that_changes_acls_or_configs_waits_until_a_description_shows_it(kipper_reference):
    """Kafka's broker applies ACLs and a topic's configs from the metadata log a moment after
    CreateAcls, DeleteAcls and (Incremental)AlterConfigs answer (a listing at once may miss
    them: CI met it). The step waits with unrecorded descriptions until they agree. On kipper,
    which applies them at once, one look settles each wait; a binding or a value read
    differently from the request and from the description would instead poll until the wait
    ran out."""
    from tests.conformance.fuzz.side import Side
    from tests.conformance.harness import Run as Conn

    token = f"f{uuid.uuid4().hex[:6]}"
    run = Conn(kipper_reference, token)
    try:
        side = Side(run)
        acl = {"principal": "User:<T>-u0", "resource_type": 2, "resource_name": "<T>-t", "resource_pattern_type": 4,
               "operation": 2, "permission_type": 3, "host": "10.0.0.0/8"}
        side.step({"api": "CreateTopics", "version": 7, "body": {"topics": [{
            "name": "<T>-t0", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
            "timeout_ms": 30000, "validate_only": False}})
        configs = [{"name": "retention.ms", "value": "86400000"}, {"name": "cleanup.policy", "value": "compact"}]
        looks = []
        for step in ({"api": "CreateAcls", "version": 3, "body": {"creations": [acl]}},
                     {"api": "AlterConfigs", "version": 2, "body": {"validate_only": False, "resources": [
                         {"resource_type": 2, "resource_name": "<T>-t0", "configs": configs}]}},
                     {"api": "IncrementalAlterConfigs", "version": 1, "body": {"validate_only": False, "resources": [
                         {"resource_type": 2, "resource_name": "<T>-t0", "configs": [
                             {"name": "retention.ms", "config_operation": 0, "value": "3600000"}]}]}},
                     {"api": "DeleteAcls", "version": 3, "body": {"filters": [{
                         "resource_type_filter": 2, "resource_name_filter": "<T>-t", "pattern_type_filter": 4,
                         "principal_filter": "User:<T>-u0", "host_filter": None, "operation": 1,
                         "permission_type": 1}]}}):
            start = time.monotonic()
            side.step(step)
            described = ("DescribeAcls", "DescribeConfigs")
            looks.append(sum(1 for x in run.transcript if not x.recorded and x.api in described) - sum(looks))
            assert time.monotonic() - start < 2
        assert looks == [1, 1, 1, 1]
    finally:
        run.close()


def test_the_user_connection_is_the_sequences_own_user_whom_its_acls_decide(kipper_reference):
    """Steps on the "user" connection authenticate (SCRAM-SHA-256) as the sequence's own user,
    made by its first steps; what they may do is what the ACLs drawn for User:<T>-u0 say. A
    password the broker does not know is an answer compared too."""
    from tests.conformance.fuzz.side import Side, user_credential
    from tests.conformance.harness import Run as Conn

    run = Conn(kipper_reference, f"f{uuid.uuid4().hex[:6]}")
    try:
        side = Side(run)
        metadata = {"api": "Metadata", "version": 12, "conn": "user", "body": {
            "topics": [{"name": "<T>-t0", "topic_id": None}], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False}}
        assert side.step(metadata)[0].response == {"<authentication>": {"error_code": 58}}  # SASL_AUTHENTICATION_FAILED
        side.step({"api": "CreateTopics", "version": 7, "body": {"topics": [{
            "name": "<T>-t0", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}],
            "timeout_ms": 30000, "validate_only": False}})
        side.step({"api": "AlterUserScramCredentials", "version": 0, "body": {"deletions": [],
                                                                               "upsertions": [user_credential()]}})
        codes = lambda: [t["error_code"] for t in side.step(metadata)[0].response["topics"]]  # noqa: E731
        assert codes() == [29]  # TOPIC_AUTHORIZATION_FAILED: no ACL allows the user anything
        side.step({"api": "CreateAcls", "version": 3, "body": {"creations": [{
            "resource_type": 2, "resource_name": "<T>-t", "resource_pattern_type": 4, "principal": "User:<T>-u0",
            "host": "*", "operation": 2, "permission_type": 3}]}})
        assert codes() == [0]
    finally:
        run.close()


def test_a_partitions_active_producers_compare_in_any_order():
    """Kafka lists them from a hash map by producer id, and each broker gives its own ids (the
    thirty-first run met two listed in the other order)."""
    from tests.conformance.normalise import Normaliser

    producers = [{"producer_id": pid, "producer_epoch": 0, "last_sequence": -1, "last_timestamp": 1,
                  "coordinator_epoch": 0, "current_txn_start_offset": -1} for pid in (1, 999)]
    answers = []
    for order in (producers, producers[::-1]):
        norm = Normaliser("f000001")
        norm.response({"producer_id": 1})  # (each broker's ids become symbols in the order they are met)
        norm.response({"producer_id": 999})
        answers.append(norm.response({"topics": [{"name": "f000001-t0", "partitions": [
            {"partition_index": 0, "error_code": 0, "active_producers": order}]}]}))
    assert answers[0] == answers[1]


def test_a_golden_scenarios_topic_is_never_a_sequences_own():
    """make test's references hold the golden scenarios' topics (golden-aiokafka...), whose
    sizes differ by how each broker stored a client's replay: a listing of every topic leaves
    them out, as it leaves out other sequences' ones."""
    from tests.conformance.fuzz.symbols import Resolver

    norm = Resolver("f000001").norm
    answer = norm.response({"results": [{"log_dir": "d", "topics": [
        {"name": "golden-aiokafka", "partitions": [{"partition_index": 0, "partition_size": 145}]},
        {"name": "f000001-t0", "partitions": [{"partition_index": 0, "partition_size": 0}]}]}]})
    assert "f000001-t0" in repr(answer) and "golden-aiokafka" not in repr(answer)
