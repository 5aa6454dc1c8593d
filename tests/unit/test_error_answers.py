"""Error answers built from the declarations (protocol/error_answers.py), for every API and
version kipper serves, and the fault plan's choices (broker/faults/plan.py)."""

from __future__ import annotations

import pytest

from kipper.broker.faults.plan import Fault, FaultPlan
from kipper.protocol import error_answers as ea
from kipper.protocol.messages import APIS
from kipper.protocol.messages.metadata import METADATA
from kipper.protocol.messages.produce import PRODUCE

SERVED = [(api, v) for api in APIS.values() for v in range(api.min_version, api.max_version + 1)]
CODE = 6  # NOT_LEADER_OR_FOLLOWER


@pytest.mark.parametrize("api, version", SERVED, ids=lambda x: getattr(x, "name", x))
def test_every_error_answer_encodes_and_carries_its_code(api, version):
    request = ea.one_of_each(api.request, version)
    body = ea.error_answer(api, version, request, CODE)
    schema = api.response_schema(version)
    back = schema.parse(schema.build(body))
    assert back == schema.parse(schema.build(back))
    if api.name == "AlterUserScramCredentials":  # answers keyed by user: a fault is refused there
        assert not ea.carries_code(api, version)
    else:
        assert ea.carries_code(api, version), f"{api.name} v{version}: no place for the code"


def _produce(version=9):
    return {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "a", "partition_data": [{"index": 0, "records": b""}, {"index": 1, "records": b""}]},
        {"name": "b", "partition_data": [{"index": 0, "records": b""}]}]}


def test_a_picked_partition_is_answered_and_left_out_of_what_is_handled():
    pick = ea.picks("a", [1])
    assert ea.named(PRODUCE, 9, _produce()) == [("a", 0), ("a", 1), ("b", 0)]
    errors = ea.error_answer(PRODUCE, 9, _produce(), CODE, pick)
    assert [(t["name"], [(p["index"], p["error_code"]) for p in t["partition_responses"]])
            for t in errors["responses"]] == [("a", [(1, CODE)])]
    rest = ea.without(PRODUCE, 9, _produce(), pick)
    assert [(t["name"], [p["index"] for p in t["partition_data"]]) for t in rest["topic_data"]] == \
        [("a", [0]), ("b", [0])]
    assert ea.without(PRODUCE, 9, _produce(), ea.picks(None, None)) is None


def test_merge_puts_error_entries_in_place_of_the_real_ones():
    real = {"throttle_time_ms": 0, "responses": [{"name": "a", "partition_responses": [
        {"index": 0, "error_code": 0, "base_offset": 5}, {"index": 1, "error_code": 0, "base_offset": 7}]}]}
    errors = ea.error_answer(PRODUCE, 9, _produce(), CODE, ea.picks("a", [1]))
    merged = ea.merge(PRODUCE, 9, real, errors)
    assert [(p["index"], p["error_code"]) for p in merged["responses"][0]["partition_responses"]] == \
        [(0, 0), (1, CODE)]


def test_a_metadata_error_keeps_the_real_answer_s_brokers():
    request = {"topics": [{"name": "a", "topic_id": None}], "allow_auto_topic_creation": False,
               "include_topic_authorized_operations": False}
    real = {"brokers": [{"node_id": 1, "host": "h", "port": 1, "rack": None}], "cluster_id": "c",
            "controller_id": 1, "topics": [{"error_code": 0, "name": "a", "partitions": [{"partition_index": 0}]}]}
    errors = ea.error_answer(METADATA, 12, request, 3)
    merged = ea.merge(METADATA, 12, real, errors)
    assert merged["brokers"][0]["node_id"] == 1 and merged["topics"][0]["error_code"] == 3


def test_a_fault_takes_the_next_requests_that_name_its_topic():
    plan = FaultPlan()
    plan.add(Fault.from_dict({"api": "Produce", "action": "error", "code": "NOT_LEADER_OR_FOLLOWER",
                              "count": 2, "skip": 1, "topic": "a", "partitions": [1]}))
    names = {"hit": lambda: [("a", 1)], "miss": lambda: [("a", 0), ("b", 1)]}
    taken = [plan.take(0, 9, names[k], str) is not None for k in ("miss", "hit", "hit", "miss", "hit", "hit")]
    assert taken == [False, False, True, False, True, False]  # one skipped, then two taken
    assert plan.by_api == {}


def test_a_fault_for_some_versions_leaves_the_others():
    plan = FaultPlan()
    plan.add(Fault.from_dict({"api": 0, "action": "close", "versions": [3, 8]}))
    assert plan.take(0, 9, list, str) is None
    assert plan.take(0, 8, list, str).action == "close"


@pytest.mark.parametrize("spec", [
    {"api": "Produce", "action": "explode"},
    {"api": "Produce", "action": "delay", "nonsense": 1},
    {"api": 999, "action": "close"},
])
def test_a_malformed_fault_is_refused(spec):
    with pytest.raises(ValueError):
        Fault.from_dict(spec)
