"""kafka-topics, kafka-configs and kafka-acls against Kafka and kipper: the same commands,
the same outcomes (issue 30)."""

from __future__ import annotations

import re

from tests.java_ecosystem.tool_pair import only, sorted_lines, usage_error, without_lines

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
    out = tools.same("kafka-topics", "--bootstrap-server", bs, "--list", normalisers=(only(t, assigned),))
    assert out.stdout.split() == sorted([assigned, t])
    tools.same("kafka-topics", "--bootstrap-server", bs, "--list", "--exclude-internal", "--topic", f"{t}|{assigned}")
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


def mechanisms_sorted(text: str) -> str:
    """Kafka lists a user's SCRAM mechanisms in its hash map's order."""
    def sort(m: re.Match) -> str:
        return m.group(1) + ", ".join(sorted(m.group(2).split(", ")))
    return re.sub(r"^(SCRAM credential configs for user-principal '[^']+' are )(.*)$", sort, text, flags=re.M)


def test_kafka_configs_topics_brokers_groups(tools):
    t, group = tools.name("configs"), tools.name("configs-group")
    bs = "{bootstrap}"
    tools.same("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", t, "--config", "cleanup.policy=compact")
    topic = ("kafka-configs", "--bootstrap-server", bs, "--entity-type", "topics", "--entity-name", t)
    tools.same(*topic, "--describe")
    tools.same(*topic, "--alter", "--add-config", "retention.ms=5000,max.message.bytes=2000000")
    out = tools.same(*topic, "--describe")
    assert "max.message.bytes=2000000" in out.stdout
    tools.same(*topic, "--alter", "--add-config", "cleanup.policy=[compact,delete]")
    tools.same(*topic, "--alter", "--delete-config", "retention.ms")
    tools.same(*topic, "--describe")
    tools.same(*topic, "--alter", "--add-config", "no.such.config=1", exit=1)
    tools.same(*topic, "--alter", "--add-config", "retention.ms=soon", exit=1)
    tools.same(*topic, "--alter", "--delete-config", "no.such.config")  # deleting what is not set is fine
    tools.same("kafka-configs", "--bootstrap-server", bs, "--entity-type", "topics", "--entity-name",
               tools.name("missing"), "--describe")  # "doesn't exist and doesn't have dynamic config", exit 0

    broker = ("kafka-configs", "--bootstrap-server", bs, "--entity-type", "brokers")
    tools.same(*broker, "--entity-name", "1", "--describe")
    tools.same(*broker, "--entity-default", "--alter", "--add-config", "log.cleaner.threads=2")
    tools.same(*broker, "--entity-name", "1", "--alter", "--add-config", "log.cleaner.threads=1")
    tools.same(*broker, "--entity-name", "1", "--describe", settle=10)
    tools.same(*broker, "--entity-default", "--describe", normalisers=(without_lines("^  min.insync.replicas="),),
               settle=10)
    tools.same(*broker, "--entity-name", "1", "--alter", "--delete-config", "log.cleaner.threads")
    tools.same(*broker, "--entity-default", "--alter", "--delete-config", "log.cleaner.threads")
    tools.same(*broker, "--entity-name", "1", "--alter", "--add-config", "broker.id=7", exit=1)

    grp = ("kafka-configs", "--bootstrap-server", bs, "--entity-type", "groups", "--entity-name", group)
    tools.same(*grp, "--alter", "--add-config", "consumer.session.timeout.ms=50000,share.record.lock.duration.ms=15000")
    out = tools.same(*grp, "--describe")
    assert "consumer.session.timeout.ms=50000" in out.stdout
    tools.same(*grp, "--alter", "--add-config", "consumer.session.timeout.ms=1", exit=1)
    tools.same(*grp, "--alter", "--delete-config", "share.record.lock.duration.ms")
    tools.same(*grp, "--describe")


def test_kafka_configs_scram_users(tools):
    user = tools.name("carol")
    users = ("kafka-configs", "--bootstrap-server", "{bootstrap}", "--entity-type", "users")
    # Kafka refuses two changes for one user in a request (both mechanisms at once): so does kipper
    tools.same(*users, "--entity-name", user, "--alter", "--add-config",
               "SCRAM-SHA-256=[iterations=8192,password=pw],SCRAM-SHA-512=[password=pw]", exit=1)
    tools.same(*users, "--entity-name", user, "--describe")
    tools.same(*users, "--entity-name", user, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=pw]")
    tools.same(*users, "--entity-name", user, "--alter", "--add-config", "SCRAM-SHA-512=[password=pw]")
    tools.same(*users, "--entity-name", user, "--alter", "--add-config", "SCRAM-SHA-512=[iterations=100,password=pw]",
               exit=1)
    out = tools.same(*users, "--entity-name", user, "--describe", normalisers=(mechanisms_sorted,))
    assert "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096" in out.stdout
    tools.same(*users, "--describe", normalisers=(only(user, "admin", "alice", "bob"), mechanisms_sorted, sorted_lines))
    tools.same(*users, "--entity-name", user, "--alter", "--delete-config", "SCRAM-SHA-512")
    tools.same(*users, "--entity-name", user, "--alter", "--delete-config", "SCRAM-SHA-512", exit=1)
    tools.same(*users, "--entity-name", user, "--describe")
    # the new credential logs in, over SASL_PLAINTEXT with SCRAM-SHA-256
    tools.same("kafka-topics", "--bootstrap-server", "{sasl}", "--list", "--exclude-internal",
               "--command-config", tools.client_config("SCRAM-SHA-256", user, "pw"),
               normalisers=(without_lines("."),))
    tools.same(*users, "--entity-name", user, "--alter", "--delete-config", "SCRAM-SHA-256")


def test_kafka_configs_refuses_producer_ids_rate_before_asking_either_broker(tools):
    # seed 002's quota is not one Kafka 4.4's ConfigCommand knows: it refuses it itself, so
    # kipper's producer_ids_rate is set with kipper's own `kipper configs` or Admin
    # alterClientQuotas (tests/java_ecosystem/test_java_clients.py; docs/QUOTAS.md)
    out = tools.same("kafka-configs", "--bootstrap-server", "{bootstrap}", "--entity-type", "users",
                     "--entity-name", "alice", "--alter", "--add-config", "producer_ids_rate=10", exit=1)
    assert "Unexpected config names: producer_ids_rate" in out.stderr


def test_kafka_configs_client_quotas(tools):
    user, client = tools.name("quota-user"), tools.name("quota-client")
    cfg = ("kafka-configs", "--bootstrap-server", "{bootstrap}")
    tools.same(*cfg, "--entity-type", "users", "--entity-name", user, "--alter", "--add-config",
               "producer_byte_rate=1048576,consumer_byte_rate=2097152")
    # (Kafka applies a quota from its metadata log, a moment after answering: read-only commands settle)
    tools.same(*cfg, "--entity-type", "users", "--entity-name", user, "--describe", settle=10)
    tools.same(*cfg, "--entity-type", "clients", "--entity-name", client, "--alter", "--add-config",
               "request_percentage=50")
    tools.same(*cfg, "--entity-type", "users", "--entity-name", user, "--entity-type", "clients", "--entity-name",
               client, "--alter", "--add-config", "consumer_byte_rate=1048576")
    tools.same(*cfg, "--entity-type", "users", "--entity-name", user, "--entity-type", "clients", "--describe",
               normalisers=(sorted_lines,), settle=10)
    tools.same(*cfg, "--entity-type", "clients", "--entity-name", client, "--describe", settle=10)
    tools.same(*cfg, "--entity-type", "ips", "--entity-name", "127.0.0.9", "--alter", "--add-config",
               "connection_creation_rate=100")
    tools.same(*cfg, "--entity-type", "ips", "--entity-name", "127.0.0.9", "--describe", settle=10)
    tools.same(*cfg, "--entity-type", "users", "--entity-name", user, "--alter", "--add-config",
               "producer_byte_rate=many", exit=1)
    for entity in (("users", user), ("clients", client), ("ips", "127.0.0.9")):
        tools.same(*cfg, "--entity-type", entity[0], "--entity-name", entity[1], "--alter", "--delete-config",
                   {"users": "producer_byte_rate,consumer_byte_rate", "clients": "request_percentage",
                    "ips": "connection_creation_rate"}[entity[0]])


def acl_blocks_sorted(text: str, lines_too: bool = False) -> str:
    """kafka-acls groups a listing by resource in a hash map's order: sort the blocks (and,
    for what --add prints from the tool's own sets, the lines in each block)."""
    blocks = text.split("\n\n")
    head = blocks[0].split("\n", 1)[0] if blocks[0].startswith("ACLs for principal") else None
    if head:
        blocks[0] = blocks[0].split("\n", 1)[1]
    if lines_too:
        blocks = ["\n".join([b.splitlines()[0], *sorted(line.strip() for line in b.splitlines()[1:])])
                  for b in blocks if b.strip()]
    out = "\n\n".join(sorted(b.strip("\n") for b in blocks))
    return f"{head}\n{out}" if head else out


def acl_sets_sorted(text: str) -> str:
    return acl_blocks_sorted(text, lines_too=True)


def test_kafka_acls_add_list_remove(tools):
    topic, prefix, txn = tools.name("acl-topic"), tools.name("acl-group"), tools.name("acl-txn")

    def acl(*args, **kw):
        # kafka-acls prints ACLs in hash sets' order (bindings, resources): sorted, blocks and lines
        kw.setdefault("normalisers", (acl_sets_sorted,))
        return tools.same("kafka-acls", "--bootstrap-server", "{bootstrap}", *args, **kw)

    acl("--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe",
               "--topic", topic)
    acl("--add", "--allow-principal", "User:bob", "--producer", "--topic", topic,
               "--transactional-id", txn)
    acl("--add", "--allow-principal", "User:bob", "--consumer", "--topic", topic, "--group", prefix,
               "--resource-pattern-type", "prefixed")
    acl("--add", "--deny-principal", "User:alice", "--deny-host", "10.0.0.1", "--operation", "Alter",
               "--cluster")
    acl("--add", "--allow-principal", "User:alice", "--operation", "Write", "--cluster", exit=1,
               normalisers=(usage_error,))
    acl("--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", tools.name("x"),
               "--resource-pattern-type", "match", exit=1, normalisers=(usage_error,))
    acl("--list", "--topic", topic)
    acl("--list", "--topic", topic, "--resource-pattern-type", "match")
    acl("--list", "--principal", "User:bob")
    acl("--list", "--cluster")
    acl("--remove", "--allow-principal", "User:alice", "--operation", "Read", "--topic", topic, "--force")
    acl("--list", "--topic", topic)
    # alice may describe the topic but neither read nor write it: refused the same way
    tools.same("kafka-topics", "--bootstrap-server", "{bootstrap}", "--create", "--topic", topic, "--partitions", "1")
    alice = tools.client_config("PLAIN", "alice", "alice-secret")
    # (not idempotent: its InitProducerId refusal would race the send, on either broker)
    out = tools.same("kafka-console-producer", "--bootstrap-server", "{sasl}", "--topic", topic,
                     "--command-config", alice, "--command-property", "enable.idempotence=false", stdin="refused\n")
    assert "TopicAuthorizationException" in out.stderr
    out = tools.same("kafka-console-consumer", "--bootstrap-server", "{sasl}", "--topic", topic, "--from-beginning",
                     "--timeout-ms", "3000", "--command-config", alice, "--group", tools.name("g"))
    assert "GroupAuthorizationException" in out.stderr
    for resource in (("--topic", topic), ("--group", prefix, "--resource-pattern-type", "prefixed"),
                     ("--transactional-id", txn), ("--cluster",),
                     ("--topic", topic, "--resource-pattern-type", "prefixed")):
        acl("--remove", *resource, "--force")
    acl("--list", "--principal", "User:bob")
    acl("--list", "--principal", "User:alice")
