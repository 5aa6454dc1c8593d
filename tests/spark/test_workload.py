"""Workload files, task planning and result merging: no Spark, no broker."""

from __future__ import annotations

import random

import pytest

from kipper.protocol.histogram import LatencyHistogram
from kipper.spark_jobs.common import JobError, spark_error_line
from kipper.spark_jobs.loadgen import merge, plan
from kipper.spark_jobs.workload import load, parse

BASE = {"topics": 2, "partitionsPerTopic": 3, "messageSize": 100, "producersPerTopic": 3,
        "producerRate": 9000, "testDurationMinutes": 0.5}


def test_an_omb_workload_with_kipper_keys_loads(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("name: w\ntopics: 1\npartitionsPerTopic: 4\nmessageSize: 1024\nproducersPerTopic: 2\n"
                    "producerRate: 100\ntestDurationMinutes: 1\nkeyDistributor: RANDOM_NANO\n"
                    "subscriptionsPerTopic: 1\nidempotence: false\nproducerIdChurnPerSecond: 0.5\n"
                    "shareConsumersPerTopic: 2\nproducerConfig: {linger.ms: 10, acks: 1}\n")
    w = load(path)
    assert (w.topics, w.partitions_per_topic, w.message_size, w.producers) == (1, 4, 1024, 2)
    assert w.duration_s == 60 and not w.idempotence and w.producer_id_churn_per_second == 0.5
    assert w.producer_config == {"linger.ms": "10", "acks": "1"} and w.ignored == ("subscriptionsPerTopic",)


@pytest.mark.parametrize("change,message", [
    ({"messageSize": None}, "missing workload key(s): messageSize"),
    ({"topics": "two"}, "'topics' must be an integer, got 'two'"),
    ({"topics": True}, "'topics' must be an integer, got True"),
    ({"partitionsPerTopic": 0}, "'partitionsPerTopic' must be at least 1, got 0"),
    ({"producerRate": -1}, "'producerRate' must be at least 0"),
    ({"testDurationMinutes": 0}, "'testDurationMinutes' must be above 0"),
    ({"keyDistributor": "ZIPF"}, "'keyDistributor' must be one of NO_KEY, KEY_ROUND_ROBIN, RANDOM_NANO"),
    ({"idempotence": "yes"}, "'idempotence' must be true or false"),
    ({"shareConsumersPerTopic": 1.5}, "'shareConsumersPerTopic' must be an integer"),
    ({"producerConfig": {"bootstrap.servers": "x:1"}}, "may not set bootstrap.servers"),
    ({"brokers": 3}, "unknown workload key(s): brokers"),
])
def test_a_bad_workload_is_refused_with_a_message_naming_the_key(change, message):
    data = {**BASE, **change}
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(JobError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        parse(data, "w.yaml")
    assert err.value.code == 2


def test_yaml_that_does_not_parse_or_is_not_a_mapping_is_refused(tmp_path):
    (tmp_path / "a.yaml").write_text("topics: [1\n")
    with pytest.raises(JobError, match=r"not valid YAML \(line 2"):
        load(tmp_path / "a.yaml")
    (tmp_path / "b.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(JobError, match="must be a YAML mapping"):
        load(tmp_path / "b.yaml")
    with pytest.raises(JobError, match="cannot read workload file"):
        load(tmp_path / "missing.yaml")


def test_producers_and_their_rate_are_dealt_over_tasks_without_loss():
    w = parse({**BASE, "shareConsumersPerTopic": 1, "producerIdChurnPerSecond": 6}, "w")
    specs = plan(w, "h:1", "run", ["run-0", "run-1"], 4, 30)
    assert sorted(t for s in specs for t in s["topics"]) == ["run-0"] * 3 + ["run-1"] * 3
    assert sum(s["rate"] for s in specs) == pytest.approx(9000)
    assert sum(s["churn"] for s in specs) == pytest.approx(6)
    assert sorted(t for s in specs for t in s["share_topics"]) == ["run-0", "run-1"]


def test_histograms_merge_by_addition_and_percentiles_stay_within_a_bucket():
    values = [random.randint(50, 500_000) for _ in range(20_000)]
    a, b, whole = LatencyHistogram(), LatencyHistogram(), LatencyHistogram()
    for i, v in enumerate(values):
        (a if i % 2 else b).record(v)
        whole.record(v)
    merged = LatencyHistogram.from_dict(a.to_dict())
    merged.add(LatencyHistogram.from_dict(b.to_dict()))
    assert merged.to_dict() == whole.to_dict()
    values.sort()
    for q in (0.5, 0.99):
        true = values[int(q * len(values)) - 1]
        assert true <= merged.percentile(q) <= true * 1.13 + 1


def test_task_results_merge_into_one_result():
    def task(i, acked, lat):
        h = LatencyHistogram()
        for v in lat:
            h.record(v)
        return {"task": i, "host": "h", "producers": 1, "producers_created": 2, "sent": acked + 1,
                "acked": acked, "failed": 1, "unacknowledged": 0, "errors": {"REQUEST_TIMED_OUT": 1},
                "first_error": "REQUEST_TIMED_OUT: x", "started_at": 100.0 + i, "load_seconds": 10.0,
                "seconds": 11.0, "latency": h.to_dict(), "share_consumed": 0,
                "share_delivery_counts": {"1": 5}, "share_errors": []}
    w = parse(BASE, "w")
    r = merge([task(0, 100, [1000] * 100), task(1, 300, [3000] * 300)], 13.0, 400, w, "run", ["t"],
              "local[2]", 2)
    assert (r["acked"], r["sent"], r["failed"], r["producers_created"]) == (400, 402, 2, 4)
    assert r["records_per_sec"] == 40.0 and r["stored_matches_acked"] is True
    assert r["errors"] == {"REQUEST_TIMED_OUT": 2} and r["share_delivery_counts"] == {"1": 10}
    assert r["latency"]["count"] == 400 and r["latency"]["p50_ms"] == 3.0
    assert r["overhead"] == {"job_minus_longest_task_s": 2.0, "task_start_spread_s": 1.0,
                             "first_task_start_s": None}


def test_a_spark_failure_is_reduced_to_the_python_error_of_the_task():
    text = ("An error occurred while calling o1.collect.\n: org.apache.spark.SparkException: Job aborted\n"
            "Traceback (most recent call last):\n  File \"x\", line 1\n"
            "ConnectionError: cannot reach any bootstrap server\n\tat org.apache.spark.api.python...\n")
    assert spark_error_line(Exception(text)) == "ConnectionError: cannot reach any bootstrap server"


def test_the_analysis_input_must_be_a_directory_holding_dump_lines(tmp_path):
    from kipper.spark_jobs.analyze_metrics import find_inputs

    with pytest.raises(JobError, match="is not a directory"):
        find_inputs(str(tmp_path / "missing"))
    (tmp_path / "metrics-1-0.jsonl").write_text("")
    with pytest.raises(JobError, match="holds no metrics dump lines"):
        find_inputs(str(tmp_path))
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "metrics-2-0.jsonl").write_text("{}\n")
    assert find_inputs(str(tmp_path)) == [str(tmp_path / "old" / "metrics-2-0.jsonl")]


SEEDS = {**BASE, "shareConsumersPerTopic": 1, "shareReleasePercent": 10, "shareRejectPercent": 5,
         "shareStallingConsumersPerTopic": 1, "producerIdChurnPerSecond": 8, "churnRecordsPerProducer": 5,
         "producerIdsRate": 2, "transactionalProducersPerTopic": 1, "transactionRecords": 30,
         "transactionsPerSecond": 4, "transactionAbortPercent": 25, "transactionFence": True}


def test_the_seeds_workload_file_loads():
    from pathlib import Path

    w = load(Path(__file__).resolve().parents[2] / "workloads" / "seeds.yaml")
    assert w.producer_ids_rate < w.producer_id_churn_per_second and w.churn_records_per_producer > 0
    assert w.transactional_producers and w.transaction_fence and 0 < w.transaction_abort_percent < 100
    assert w.share_release_percent and w.share_reject_percent and w.share_stalling_consumers_per_topic


@pytest.mark.parametrize("change,message", [
    ({"shareReleasePercent": 101}, "'shareReleasePercent' must be at most 100"),
    ({"shareReleasePercent": 60, "shareRejectPercent": 50}, "add up to more than 100"),
    ({"shareConsumersPerTopic": 0}, "'shareReleasePercent' needs shareConsumersPerTopic of at least 1"),
    ({"producerIdsRate": 0}, "'producerIdsRate' must be above 0"),
    ({"producerIdChurnPerSecond": 0}, "'churnRecordsPerProducer' needs producerIdChurnPerSecond above 0"),
    ({"idempotence": False}, "'producerIdsRate' needs idempotence"),
    ({"transactionsPerSecond": 0}, "'transactionsPerSecond' must be above 0"),
    ({"transactionFence": "yes"}, "'transactionFence' must be true or false"),
])
def test_bad_seed_keys_are_refused_naming_the_key(change, message):
    with pytest.raises(JobError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        parse({**SEEDS, **change}, "w.yaml")
    assert err.value.code == 2


def test_transactional_producers_and_stalling_consumers_are_dealt_over_tasks():
    w = parse(SEEDS, "w")
    specs = plan(w, "h:1", "run", ["run-0", "run-1"], 2, 30, lock_ms=1000)
    txn = [t for s in specs for t in s["transactional"]]
    assert sorted(topic for topic, _ in txn) == ["run-0", "run-1"] and len({tid for _, tid in txn}) == 2
    assert sorted(t for s in specs for t in s["stalling_topics"]) == ["run-0", "run-1"]
    assert all(s["lock_ms"] == 1000 and s["churn_records"] == 5 for s in specs)
    assert sum(s["churn"] for s in specs) == pytest.approx(8)


def role(acked=0, failed=0, unacked=0, errors=None):
    return {"sent": acked + failed + unacked, "acked": acked, "failed": failed, "unacknowledged": unacked,
            "errors": errors or {}, "first_error": None, "latency": LatencyHistogram().to_dict()}


def test_churn_records_refused_by_the_runs_own_quota_do_not_fail_the_run():
    from kipper.spark_jobs.result import problems

    def result(quota, churn, steady=role(100)):
        roles = {"steady": steady, "churn": churn, "transactional": role()}
        task = {"task": 0, "host": "h", "producers": 1, "producers_created": 3, "started_at": 1.0,
                "load_seconds": 1.0, "seconds": 1.0, "latency": LatencyHistogram().to_dict(), "share_consumed": 0,
                "share_delivery_counts": {}, "share_errors": [], "roles": roles, "first_error": None,
                **{k: sum(r[k] for r in roles.values()) for k in ("sent", "acked", "failed", "unacknowledged")},
                "errors": {k: v for r in roles.values() for k, v in r["errors"].items()}}
        return merge([task], 2.0, 110, parse(BASE, "w"), "run", ["t"], "local[2]", 1,
                     quota={"user": "ANONYMOUS", "rate": 2} if quota else None)

    throttled = role(10, failed=7, errors={"THROTTLING_QUOTA_EXCEEDED": 5, "TimeoutError": 2})
    assert problems(result(True, throttled)) == []
    assert problems(result(False, throttled))[0].startswith("7 record(s) failed")
    broken = role(10, failed=1, errors={"CORRUPT_MESSAGE": 1})
    assert problems(result(True, broken))  # anything else still fails the run
    assert problems(result(True, throttled, steady=role(99, failed=1, errors={"THROTTLING_QUOTA_EXCEEDED": 1})))


def test_analysis_inputs_are_local_directories_or_uris_that_spark_reads(tmp_path):
    from kipper.spark_jobs.analyze_metrics import input_paths, remote

    (tmp_path / "metrics-1-0.jsonl").write_text("{}\n")
    assert input_paths(str(tmp_path)) == input_paths(f"file://{tmp_path}") == [str(tmp_path / "metrics-1-0.jsonl")]
    assert remote("s3a://bucket/dumps") and remote("hdfs://nn:8020/kipper") and not remote("/tmp/x")
    assert input_paths("s3a://bucket/dumps") == ["s3a://bucket/dumps"]  # listed by Spark, not here
    with pytest.raises(JobError, match="is not a directory"):
        input_paths(f"file://{tmp_path}/missing")
