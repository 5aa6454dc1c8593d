"""What each loadgen sink can do is checked before Spark starts (spark_jobs/loadgen.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kipper.spark_jobs.common import JobError
from kipper.spark_jobs.kafka_options import admin_settings, connector_options
from kipper.spark_jobs.loadgen import check_sink, parse_args
from kipper.spark_jobs.workload import load

ROOT = Path(__file__).resolve().parents[2]


def args(*extra: str):
    return parse_args(["--bootstrap-server", "127.0.0.1:9092", "--workload", "w.yaml", *extra])


def test_the_java_sink_refuses_roles_only_kippers_tasks_have():
    w = load(str(ROOT / "workloads" / "seeds.yaml"))
    with pytest.raises(JobError) as refused:
        check_sink(args("--sink", "spark-kafka"), w, {})
    assert refused.value.code == 2
    assert "transactionalProducersPerTopic, shareConsumersPerTopic, producerIdChurnPerSecond, producerIdsRate" \
        in str(refused.value)
    check_sink(args(), w, {})  # kipper's tasks run all of it


def test_kippers_producer_on_a_sasl_listener_is_refused_with_the_way_out():
    w = load(str(ROOT / "workloads" / "small.yaml"))
    a = args("--kafka-option", "kafka.security.protocol=SASL_PLAINTEXT")
    with pytest.raises(JobError, match="use --sink spark-kafka"):
        check_sink(a, w, admin_settings(a))


def test_client_settings_reach_the_connector_prefixed_and_kippers_client_parsed(tmp_path):
    config = tmp_path / "c.properties"
    config.write_text('security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config='
                      'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
                      'password="s3cret";\n')
    a = args("--command-config", str(config), "--kafka-option", "kafka.request.timeout.ms=5000")
    assert connector_options(a)["kafka.security.protocol"] == "SASL_PLAINTEXT"
    assert connector_options(a)["kafka.request.timeout.ms"] == "5000" and "kafka.sasl.username" not in connector_options(a)
    assert admin_settings(a)["sasl.username"] == "alice" and admin_settings(a)["sasl.password"] == "s3cret"
    with pytest.raises(JobError, match="expected kafka.KEY=VALUE"):
        connector_options(args("--kafka-option", "security.protocol=SSL"))
