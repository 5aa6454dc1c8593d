"""kafka-topics, kafka-configs and kafka-acls against Kafka and kipper: the same commands,
the same outcomes (issue 30)."""

from __future__ import annotations

import re

from tests.java_ecosystem.tool_pair import sorted_lines, without_lines

INTERNAL = without_lines(r"^__")  # docs/KAFKA_DIFFERENCES.md: internal-topics-not-listed


def cluster_min_isr(text: str) -> str:
    """Kafka's format writes min.insync.replicas=1 as a cluster default, so its describe lists
    it among a topic's overrides (KAFKA_DIFFERENCES.md: min-insync-replicas-cluster-default)."""
    return re.sub(r"min\.insync\.replicas=1,?", "", text)


def test_kafka_topics_create_list_describe_alter_delete(tools):
    t, assigned = tools.name("topics"), tools.name("assigned")
    bs = "{bootstrap}"
    tools.same("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", t, "--partitions", "2",
               "--replication-factor", "1", "--config", "cleanup.policy=compact", "--config", "retention.ms=100000")
    tools.same("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", assigned, "--replica-assignment", "1,1,1")
    tools.same("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", t, exit=1)
    tools.same("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", t, "--if-not-exists")
    tools.same("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", tools.name("bad"),
               "--config", "cleanup.policy=sometimes", exit=1)
    tools.same("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", tools.name("rf"),
               "--replication-factor", "3", exit=1)
    listed = tools.same("kafka-topics", "--bootstrap-server", bs, "--list", "--exclude-internal",
                        normalisers=(without_lines(tools.run_id + "$"),))
    assert listed.stdout == ""  # only this run's topics differ from run to run; see below
    mine = without_lines(r"^(?!.*-" + tools.run_id + r"$)")
    out = tools.same("kafka-topics", "--bootstrap-server", bs, "--list", normalisers=(mine,))
    assert out.stdout.split() == sorted([assigned, t])
    out = tools.same("kafka-topics", "--bootstrap-server", bs, "--describe", "--topic", t, normalisers=(cluster_min_isr,))
    assert "PartitionCount: 2" in out.stdout and "cleanup.policy=compact" in out.stdout
    tools.same("kafka-topics", "--bootstrap-server", bs, "--alter", "--topic", t, "--partitions", "4")
    tools.same("kafka-topics", "--bootstrap-server", bs, "--alter", "--topic", t, "--partitions", "3", exit=1)
    out = tools.same("kafka-topics", "--bootstrap-server", bs, "--describe", "--topic", t,
                     "--partition-size-limit-per-response", "3", normalisers=(cluster_min_isr,))
    assert out.stdout.count("Partition:") == 4
    tools.same("kafka-topics", "--bootstrap-server", bs, "--describe", "--topics-with-overrides", "--topic", t,
               normalisers=(cluster_min_isr,))
    tools.same("kafka-topics", "--bootstrap-server", bs, "--describe", "--under-replicated-partitions")
    tools.same("kafka-topics", "--bootstrap-server", bs, "--describe", "--unavailable-partitions")
    tools.same("kafka-topics", "--bootstrap-server", bs, "--delete", "--topic", assigned)
    tools.same("kafka-topics", "--bootstrap-server", bs, "--describe", "--topic", assigned, exit=1)
    tools.same("kafka-topics", "--bootstrap-server", bs, "--delete", "--topic", assigned, exit=1)
    tools.same("kafka-topics", "--bootstrap-server", bs, "--delete", "--topic", assigned, "--if-exists")
