"""kafka-features and kafka-client-metrics against Kafka and kipper (issue 38), and a Java
producer pushing its metrics (KIP-714) that shows up on kipper's /metrics with what its
subscription asked for. The session's brokers are shared: nothing here changes a finalized
level for real (--dry-run), and each subscription matches only this module's clients."""

from __future__ import annotations

import re
import threading
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

EPOCH = (lambda text: re.sub(r"Epoch: \d+", "Epoch: <n>", text),)


def test_kafka_features_describe_prints_the_same_levels(tools):
    out = tools.same("kafka-features", "--bootstrap-server", "{bootstrap}", "describe", normalisers=EPOCH)
    text = re.sub(r"\s+", " ", out.stdout)
    assert ("Feature: transaction.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 2"
            in text), out.stdout
    assert "Feature: metadata.version SupportedMinVersion: 3.3-IV3 SupportedMaxVersion: 4.4-IV2" in text


def test_kafka_features_upgrade_and_downgrade_dry_runs_answer_alike(tools):
    bs = "{bootstrap}"
    for args, exit in ((("upgrade", "--feature", "transaction.version=2"), 0),
                       (("downgrade", "--feature", "transaction.version=1"), 0),
                       (("downgrade", "--feature", "group.version=0", "--feature", "streams.version=0"), 0),
                       (("disable", "--feature", "streams.version"), 0),
                       (("upgrade", "--feature", "transaction.version=3"), 1),
                       (("downgrade", "--feature", "share.version=2"), 1),
                       (("upgrade", "--feature", "no.such.version=1"), 1),
                       (("downgrade", "--metadata", "3.3-IV3"), 1),
                       (("upgrade", "--release-version", "4.4-IV2"), 0)):
        tools.same("kafka-features", "--bootstrap-server", bs, *args, "--dry-run", exit=exit, normalisers=EPOCH)


def test_kafka_client_metrics_alter_describe_list_delete(tools):
    name = tools.name("sub")
    bs = "{bootstrap}"
    only_ours = f"client_software_name={tools.name('nobody')}"
    tools.same("kafka-client-metrics", "--bootstrap-server", bs, "--alter", "--name", name,
               "--metrics", "org.apache.kafka.producer.,org.apache.kafka.consumer.", "--interval", "2000",
               "--match", only_ours)
    time.sleep(1.0)  # Kafka's broker learns it from the metadata log a moment later
    out = tools.same("kafka-client-metrics", "--bootstrap-server", bs, "--describe", "--name", name)
    assert "interval.ms=2000" in out.stdout.replace(" ", "") or "2000" in out.stdout
    tools.same("kafka-client-metrics", "--bootstrap-server", bs, "--alter", "--name", name, "--interval", "50", exit=1)
    tools.same("kafka-client-metrics", "--bootstrap-server", bs, "--list",
               normalisers=(lambda t: "\n".join(line for line in t.split("\n") if name in line),))
    tools.same("kafka-client-metrics", "--bootstrap-server", bs, "--delete", "--name", name)


def _client_series(url: str, client_id: str) -> dict[str, dict]:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {s.name: s.labels for family in text_string_to_metric_families(text) for s in family.samples
            if s.labels.get("client_id") == client_id}


def test_a_java_producer_pushing_its_metrics_shows_up_on_kippers_prometheus_endpoint(tools, kipper_reference):
    name, client_id = tools.name("push"), tools.name("pusher")
    topic = tools.name("pushed")
    tools.create_topic(topic, 1)
    tools.same("kafka-client-metrics", "--bootstrap-server", "{bootstrap}", "--alter", "--name", name,
               "--metrics", "org.apache.kafka.producer.", "--interval", "500", "--match", f"client_id={client_id}")
    seen: dict[str, dict] = {}
    done = threading.Event()

    def produce():
        try:  # a producer that runs a few seconds: enable.metrics.push is the Java client's default
            tools.run("kafka-producer-perf-test", "--topic", topic, "--num-records", "4000", "--record-size", "100",
                      "--throughput", "400", "--bootstrap-server", "{bootstrap}",
                      "--command-property", f"client.id={client_id}", timeout=120)
        finally:
            done.set()
    worker = threading.Thread(target=produce, daemon=True)
    worker.start()
    while not done.is_set() and not seen:
        seen = _client_series(kipper_reference.metrics_url, client_id)
        time.sleep(0.2)
    worker.join(120)
    tools.same("kafka-client-metrics", "--bootstrap-server", "{bootstrap}", "--delete", "--name", name)
    telemetry = {k: v for k, v in kipper_reference.request_counts().items() if "Telemetry" in k[0]}
    assert seen, f"the producer's pushed metrics never showed up on kipper's /metrics; telemetry requests: {telemetry}"
    assert all(n.startswith("org_apache_kafka_producer_") for n in seen), sorted(seen)
    labels = next(iter(seen.values()))
    assert labels["client_software_name"] == "apache-kafka-java" and re.fullmatch(
        r"[0-9a-f-]{36}", labels["client_instance_id"])
