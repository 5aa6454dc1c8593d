"""kafka-metadata-quorum, kafka-leader-election, `kafka-configs --describe --all` of a broker and
the error texts Kafka's tools print, against Kafka and kipper (issue 36)."""

from __future__ import annotations

import re

from kipper.broker.kafka_broker_configs import KAFKA_BROKER_CONFIGS
from tests.java_ecosystem.tool_pair import listed_difference, only

# Lines of `--describe --all` that depend on how each reference broker was started, not on
# what the broker does: its listeners and directories, KRaft's controller settings, the
# thread counts the reference script gives Kafka (kipper has no such setting to give), and
# the replicas of Kafka's internal topics, which a one-node Kafka is told to keep at 1 and
# which are 1 on kipper by default
SETUP = {"advertised.listeners", "listeners", "listener.security.protocol.map", "log.dirs", "controller.listener.names",
         "controller.quorum.bootstrap.servers", "process.roles", "inter.broker.listener.name", "num.io.threads",
         "num.network.threads", "offsets.topic.replication.factor", "transaction.state.log.replication.factor",
         "transaction.state.log.min.isr", "share.coordinator.state.topic.replication.factor",
         "share.coordinator.state.topic.min.isr", "share.coordinator.state.topic.num.partitions"}
# Lines that differ as docs/KAFKA_DIFFERENCES.md says (the entry, or its section on what is
# not seen on the wire): kipper keeps its logs in memory unless told (log.dir), has no JMX
# (metric.reporters), no GSSAPI (the default of sasl.enabled.mechanisms), reads PEM, not JKS
# (ssl.keystore.type), and its own defaults of two group settings
DECLARED = {"log.dir": None, "metric.reporters": None, "sasl.enabled.mechanisms": None, "ssl.keystore.type": None,
            "min.insync.replicas": "min-insync-replicas-cluster-default",
            "group.initial.rebalance.delay.ms": "group-initial-rebalance-delay-default",
            "group.share.min.record.lock.duration.ms": "share-min-record-lock-duration-default",
            "socket.receive.buffer.bytes": "socket-receive-buffer-default"}
_CONFIG_LINE = re.compile(r"^  ([a-z0-9._-]+)=")


def kafkas_broker_configs(text: str) -> str:
    """Kafka's configs (kipper lists its own settings besides), without the lines above."""
    out = []
    for line in text.splitlines():
        m = _CONFIG_LINE.match(line)
        if m is None:
            out.append(line)
        elif m.group(1) in KAFKA_BROKER_CONFIGS and m.group(1) not in SETUP and m.group(1) not in DECLARED:
            out.append(line)
    return "\n".join(out)


def test_kafka_configs_describes_every_config_of_a_broker_as_kafka(tools):
    for entry in DECLARED.values():
        assert entry is None or listed_difference(entry) is not None, entry
    broker = ("kafka-configs", "--bootstrap-server", "{bootstrap}", "--entity-type", "brokers", "--entity-name", "1")
    out = tools.same(*broker, "--describe", "--all", normalisers=(kafkas_broker_configs,), settle=10)
    for line in ("  default.replication.factor=1 ", "  delete.topic.enable=true ", "  log.retention.minutes=null ",
                 "  connections.max.idle.ms=600000 ", "  sasl.kerberos.min.time.before.relogin=60000 ",
                 "  log.cleaner.io.max.bytes.per.second=1.7976931348623157E308 "):
        assert line in out.stdout, line
    # a config Kafka changes at run time, which kipper does not use (librdkafka's test 0081)
    name = "sasl.kerberos.min.time.before.relogin"
    tools.same(*broker, "--alter", "--add-config", f"{name}=60001")
    out = tools.same(*broker, "--describe", settle=10)
    assert f"{name}=60001 sensitive=false synonyms={{DYNAMIC_BROKER_CONFIG:{name}=60001, " \
           f"DEFAULT_CONFIG:{name}=60000}}" in out.stdout
    tools.same(*broker, "--alter", "--delete-config", name)
    tools.same(*broker, "--describe", settle=10)
    out = tools.same("kafka-configs", "--bootstrap-server", "{bootstrap}", "--entity-type", "topics",
                     "--entity-name", "__consumer_offsets", "--describe")
    assert "compression.type=producer" in out.stdout


def test_kafka_tools_print_kafkas_error_texts(tools):
    bs = "{bootstrap}"
    topics = ("kafka-topics", "--bootstrap-server", bs)
    tools.same(*topics, "--create", "--topic", "bad name!", exit=1, messages=True)
    tools.same(*topics, "--create", "--topic", tools.name("rf"), "--replication-factor", "3", exit=1, messages=True)
    tools.same(*topics, "--create", "--topic", tools.name("null"), "--partitions", "0", exit=1, messages=True)
    configs = ("kafka-configs", "--bootstrap-server", bs)
    tools.same(*configs, "--entity-type", "topics", "--entity-name", tools.name("missing"), "--alter",
               "--add-config", "retention.ms=1000", exit=1, messages=True)
    topic = tools.name("texts")
    tools.create_topic(topic, 1)
    tools.same(*configs, "--entity-type", "topics", "--entity-name", topic, "--alter", "--add-config",
               "segment.bytes=abc", exit=1, messages=True)
    broker = (*configs, "--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config")
    tools.same(*broker, "broker.id=7", exit=1, messages=True)
    tools.same(*broker, "log.cleaner.threads=abc", exit=1, messages=True)
    group = (*configs, "--entity-type", "groups", "--entity-name", tools.name("g"), "--alter", "--add-config")
    tools.same(*group, "consumer.session.timeout.ms=1", exit=1, messages=True)
    tools.same(*group, "share.delivery.count.limit=99", exit=1, messages=True)


def quorum_figures(text: str) -> str:
    """What a metadata log and a directory make of each broker's own: the high watermark and
    log end offset (kipper has no metadata log: 0, KAFKA_DIFFERENCES.md
    quorum-without-metadata-log), the fetch times, the voter's endpoints (quorum-voter-endpoints)."""
    text = re.sub(r"^(HighWatermark:\s+)\d+", r"\1<offset>", text, flags=re.M)
    text = re.sub(r'"endpoints": \[[^\]]*\]', '"endpoints": [<endpoints>]', text)
    text = re.sub(r"^(ClusterId:\s+)\S+", r"\1<cluster>", text, flags=re.M)
    text = re.sub(r"^(LeaderEpoch:\s+)\d+", r"\1<epoch>", text, flags=re.M)  # quorum-leader-epoch
    lines = []
    for line in text.splitlines():
        cells = line.split("\t")
        if len(cells) > 5 and cells[0].strip().isdigit():  # NodeId DirectoryId LogEndOffset Lag times...
            cells[2], cells[4], cells[5] = "<offset>", "<time>", "<time>"
        lines.append("\t".join(c.strip() for c in cells))
    return "\n".join(lines)


def test_kafka_metadata_quorum_describes_a_quorum_of_one(tools):
    for entry in ("quorum-without-metadata-log", "quorum-voter-endpoints", "quorum-leader-epoch"):
        assert listed_difference(entry) is not None, entry
    quorum = ("kafka-metadata-quorum", "--bootstrap-server", "{bootstrap}", "describe")
    out = tools.same(*quorum, "--status", normalisers=(quorum_figures,))
    assert "LeaderId:               1" in out.stdout and "CurrentObservers:       []" in out.stdout
    out = tools.same(*quorum, "--replication", normalisers=(quorum_figures,))
    assert "Leader" in out.stdout
    tools.same(*quorum, "--replication", "--human-readable", normalisers=(quorum_figures,))


def test_kafka_leader_election_finds_nothing_to_elect_on_one_node(tools):
    topic = tools.name("elect")
    tools.create_topic(topic, 2)
    election = ("kafka-leader-election", "--bootstrap-server", "{bootstrap}")
    # every partition: nothing needed an election, nothing is printed
    tools.same(*election, "--election-type", "preferred", "--all-topic-partitions", normalisers=(only(topic),))
    out = tools.same(*election, "--election-type", "unclean", "--topic", topic, "--partition", "1")
    assert f"Valid replica already elected for partitions {topic}-1" in out.stdout
    tools.same(*election, "--election-type", "preferred", "--topic", tools.name("missing"), "--partition", "0",
               exit=1, messages=True)
