"""What the tool generator draws: commands of Kafka's own tools, over the sequence's own
topics <T>-t0..2, groups <T>-g0..1, user <T>-u0, client <T>-c0 and transactional id <T>-x0,
with valid and invalid values (numbers out of range, unknown configs, malformed quotas, names
that do not exist), as a user at a terminal types them.

A command is a dict: ``tool`` (its bin/ name), ``args`` (``{bootstrap}`` and ``<T>`` are
resolved for each broker), ``stdin``, ``files`` ({name: text}, written beside the run and
named ``<file:name>`` in ``args``) and ``reads`` (a command that changes nothing: run again for
a moment while the outcomes differ, as Kafka applies some changes from its metadata log a
moment after it answers)."""

from __future__ import annotations

import json

from hypothesis import strategies as st

BS = ["--bootstrap-server", "{bootstrap}"]
# an admin tool gives up on what it cannot find in seconds, not its client's minute (a partition
# no topic has, a group coordinator that never comes): the outcome is the same, sooner
ADMIN_CONFIG = "default.api.timeout.ms=6000\nrequest.timeout.ms=5000\n"
ADMIN = [*BS, "--command-config", "<file:admin>"]
# the same as the sequence's own user <T>-u0 over SASL/SCRAM, who is no super user: what the
# ACLs drawn for it allow decides what the tools may do
USER_CONFIG = ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
               'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
               'username="<T>-u0" password="<T>-secret";\n' + ADMIN_CONFIG)
USER = ["--bootstrap-server", "{sasl}", "--command-config", "<file:user>"]
USER_SECRET = "SCRAM-SHA-256=[iterations=4096,password=<T>-secret]"
TOPICS = ["<T>-t0", "<T>-t1", "<T>-t2"]
GROUPS = ["<T>-g0", "<T>-g1"]

# values by config: the valid, the boundary and the wrong
TOPIC_CONFIGS = {
    "retention.ms": ["1000000", "-1", "0", "-2", "soon", "9223372036854775807"],
    "cleanup.policy": ["compact", "delete", "[compact,delete]", "sometimes", ""],
    "max.message.bytes": ["2000000", "0", "-5", "2147483648"],
    "segment.bytes": ["1048576", "14", "1073741824"],
    "min.insync.replicas": ["1", "2", "0"],
    "message.timestamp.type": ["LogAppendTime", "CreateTime", "Bogus"],
    "compression.type": ["gzip", "zstd", "uncompressed", "producer", "brotli"],
    "unclean.leader.election.enable": ["true", "maybe"],
    "retention.bytes": ["1024", "-1", "x"],
    "segment.ms": ["1", "604800000"],
    "message.timestamp.before.max.ms": ["1000", "-1"],
    "local.retention.ms": ["-2", "1000"],
    "min.cleanable.dirty.ratio": ["0.5", "1.5", "abc"],
    "compression.gzip.level": ["9", "10", "-1"],
    "compression.zstd.level": ["22", "23", "-131072"],
    "delete.retention.ms": ["0", "-1"],
    "min.compaction.lag.ms": ["1000", "-1"],
    "max.compaction.lag.ms": ["0", "1000"],
    "leader.replication.throttled.replicas": ["*", "0:1", "bad", "0:1,1:1"],
    "message.timestamp.after.max.ms": ["0", "3600000"],
    "preallocate": ["true", "yes"],
    "message.downconversion.enable": ["true"],
    "remote.storage.enable": ["true"],
    "segment.index.bytes": ["4", "10485760"],
    "flush.messages": ["1", "0"],
    "no.such.config": ["1"],
}
GROUP_CONFIGS = {
    "consumer.session.timeout.ms": ["45000", "1", "60001", "x"],
    "consumer.heartbeat.interval.ms": ["5000", "0", "15000"],
    "share.auto.offset.reset": ["earliest", "latest", "by_duration:PT1H", "sometime"],
    "share.record.lock.duration.ms": ["30000", "1", "x"],
    "share.session.timeout.ms": ["45000", "-1"],
    "streams.num.standby.replicas": ["0", "1", "100"],
    "no.such.config": ["1"],
}
QUOTAS = {
    "producer_byte_rate": ["1024", "0", "-1", "1.5", "x"],
    "consumer_byte_rate": ["2048", "1e3"],
    "request_percentage": ["50", "200.5", "-3"],
    "controller_mutation_rate": ["10", "0.5"],
    "no_such_quota": ["1"],
}
# (not -3, MAX_TIMESTAMP: the console clients stamp records with each tool JVM's own clock, so
# which record is the latest differs by a millisecond between the two runs; the protocol
# generator and the scenarios ask it over records stamped alike)
TIMES = ["-1", "-2", "-4", "-5", "0", "1000", "sometime"]


def command(tool: str, *args: str, stdin: str | None = None, reads: bool = False, files: dict | None = None) -> dict:
    step = {"tool": tool, "args": list(args), "reads": reads}
    if stdin is not None:
        step["stdin"] = stdin
    files = dict(files or {})
    for name, text in (("admin", ADMIN_CONFIG), ("user", USER_CONFIG)):
        if f"<file:{name}>" in args:
            files[name] = text
    if files:
        step["files"] = files
    return step


def _pairs(table: dict) -> st.SearchStrategy[str]:
    """``name=value`` from a table of configs, one to three joined as kafka-configs takes them."""
    one = st.sampled_from(sorted(table)).flatmap(lambda k: st.sampled_from(table[k]).map(lambda v: f"{k}={v}"))
    return st.lists(one, min_size=1, max_size=3).map(",".join)


def _flags(*flags: str) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(flags), max_size=2, unique=True)


def _who() -> st.SearchStrategy[list[str]]:
    """An admin tool's connection: a super user's mostly, sometimes the sequence's user's."""
    return st.sampled_from([ADMIN, ADMIN, USER])


def _client(option: str) -> st.SearchStrategy[list[str]]:
    """A console client's: ANONYMOUS (a super user), or the sequence's user with ``option``
    (--producer.config, --consumer.config) naming its SASL settings."""
    return st.sampled_from([BS, BS, ["--bootstrap-server", "{sasl}", option, "<file:user>"]])


@st.composite
def topics(draw) -> dict:
    action = draw(st.sampled_from(["create", "describe", "list", "alter", "delete"]))
    topic = draw(st.sampled_from(TOPICS + ["<T>-t.*", "<T>-missing"]))
    t = ["kafka-topics", *draw(_who())]
    if action == "create":
        extra = []
        assignment = draw(st.sampled_from([None, None, None, "1", "1,1", "1:1", "2", "1,,1"]))
        if assignment:
            extra += ["--replica-assignment", assignment]
        else:
            for flag, values in (("--partitions", ["1", "2", "3", "0", "-1"]),
                                 ("--replication-factor", ["1", "2", "-1"])):
                value = draw(st.sampled_from([None, *values]))
                extra += [flag, value] if value else []
        for pair in draw(st.lists(_pairs(TOPIC_CONFIGS), max_size=2)):
            extra += ["--config", pair.split(",")[0]]
        extra += draw(_flags("--if-not-exists"))
        return command(*t, "--create", "--topic", topic.replace(".*", "0"), *extra)
    if action == "describe":
        extra = draw(_flags("--topics-with-overrides", "--under-replicated-partitions", "--unavailable-partitions",
                            "--under-min-isr-partitions", "--at-min-isr-partitions", "--exclude-internal"))
        if draw(st.booleans()):
            extra += ["--partition-size-limit-per-response", draw(st.sampled_from(["1", "2", "0"]))]
        return command(*t, "--describe", "--topic", topic, *extra, reads=True)
    if action == "list":
        return command(*t, "--list", "--topic", topic, *draw(_flags("--exclude-internal")), reads=True)
    if action == "alter":
        return command(*t, "--alter", "--topic", topic, "--partitions", draw(st.sampled_from(["1", "2", "4", "0"])))
    return command(*t, "--delete", "--topic", topic, *draw(_flags("--if-exists")))


@st.composite
def configs(draw) -> dict:
    kind, names, table = draw(st.sampled_from([
        ("topics", TOPICS + ["<T>-missing"], TOPIC_CONFIGS), ("groups", GROUPS, GROUP_CONFIGS),
        ("users", ["<T>-u0"], QUOTAS), ("clients", ["<T>-c0"], QUOTAS)]))
    c = ["kafka-configs", *draw(_who()), "--entity-type", kind, "--entity-name", draw(st.sampled_from(names))]
    action = draw(st.sampled_from(["add", "add", "delete", "describe"]))
    if action == "add":
        return command(*c, "--alter", "--add-config", draw(_pairs(table)))
    if action == "delete":
        return command(*c, "--alter", "--delete-config", ",".join(draw(st.lists(st.sampled_from(sorted(table)),
                                                                                   min_size=1, max_size=2))))
    return command(*c, "--describe", *draw(_flags("--all")), reads=True)


@st.composite
def data(draw) -> dict:
    """Records in (keyed, so that both brokers' partitions hold the same), records out, offsets."""
    action = draw(st.sampled_from(["produce", "produce", "consume", "offsets", "delete-records"]))
    topic = draw(st.sampled_from(["<T>-t0", "<T>-t0", "<T>-t1", "<T>-p"]))
    if action == "produce":
        n = draw(st.integers(1, 6))
        lines = "".join(f"k{draw(st.integers(0, 9))}:v{i}\n" for i in range(n))
        extra = draw(st.lists(st.sampled_from(["--compression-codec=gzip", "--request-required-acks=0",
                                                "--request-required-acks=1", "--sync"]), max_size=2, unique=True))
        return command("kafka-console-producer", *draw(_client("--producer.config")), "--topic", topic,
                       "--property", "parse.key=true", "--property", "key.separator=:",
                       "--producer-property", "max.block.ms=10000", *extra, stdin=lines)
    if action == "consume":  # (a few records of one partition, or every record: which records of
        # several partitions come first is the client's to choose)
        if draw(st.booleans()):
            extra = ["--partition", draw(st.sampled_from(["0", "1", "5"])), "--offset",
                     draw(st.sampled_from(["earliest", "latest", "0", "2", "-1"])), "--max-messages",
                     str(draw(st.integers(1, 3)))]
        else:
            extra = ["--from-beginning"]
        for prop in draw(st.lists(st.sampled_from(["print.key=true", "print.partition=true", "print.offset=true",
                                                    "print.headers=true"]), max_size=3, unique=True)):
            extra += ["--property", prop]
        extra += draw(st.sampled_from([[], ["--isolation-level", "read_committed"]]))
        return command("kafka-console-consumer", *draw(_client("--consumer.config")), "--topic", topic,
                       "--timeout-ms", "3000", *extra, reads=True)
    if action == "offsets":
        extra = ["--time", draw(st.sampled_from(TIMES))] if draw(st.booleans()) else []
        where = draw(st.sampled_from([["--topic", topic], ["--topic", topic], ["--topic", topic, "--partitions", "0,1"],
                                      ["--topic-partitions", f"{topic}:0-1"], ["--topic-partitions", "<T>-.*:0"],
                                      ["--topic", topic, "--exclude-internal-topics"], ["--partitions", "x"]]))
        return command("kafka-get-offsets", *draw(_who()), *where, *extra, reads=True)
    one = st.fixed_dictionaries({"topic": st.sampled_from([topic, "<T>-t0", "<T>-missing"]),
                                 "partition": st.sampled_from([0, 1, 7]),
                                 "offset": st.sampled_from([0, 1, 3, -1, 100])})
    plan = {"version": draw(st.sampled_from([1, 1, 2])), "partitions": draw(st.lists(one, min_size=1, max_size=3))}
    return command("kafka-delete-records", *draw(_who()), "--offset-json-file", "<file:plan>",
                   files={"plan": json.dumps(plan)})


@st.composite
def groups(draw) -> dict:
    group = draw(st.sampled_from(GROUPS))
    cg = ["kafka-consumer-groups", *draw(_who())]
    action = draw(st.sampled_from(["consume", "consume", "describe", "list", "reset", "delete", "delete-offsets"]))
    if action == "consume":
        protocol = draw(st.sampled_from(["classic", "consumer"]))
        return command("kafka-console-consumer", *draw(_client("--consumer.config")), "--topic", "<T>-t0",
                       "--group", group, "--from-beginning", "--timeout-ms", "3000",
                       "--consumer-property", f"group.protocol={protocol}")
    if action == "describe":
        extra = draw(st.sampled_from([[], ["--members"], ["--members", "--verbose"], ["--offsets"], ["--state"],
                                      ["--state", "--verbose"]]))
        return command(*cg, "--describe", "--group", group, *extra, reads=True)
    if action == "list":
        extra = draw(st.sampled_from([[], ["--state"], ["--state", "empty"], ["--type"], ["--type", "classic"]]))
        return command(*cg, "--list", *extra, reads=True)
    if action == "reset":
        scope = draw(st.sampled_from([["--topic", "<T>-t0"], ["--topic", "<T>-t0:0"], ["--all-topics"],
                                      ["--topic", "<T>-missing"]]))
        to = draw(st.sampled_from([["--to-earliest"], ["--to-latest"], ["--to-offset", "1"], ["--shift-by", "-2"],
                                   ["--shift-by", "100"], ["--to-datetime", "2000-01-01T00:00:00.000"],
                                   ["--by-duration", "PT1H"], ["--to-current"]]))
        mode = draw(st.sampled_from([["--dry-run"], ["--execute"]]))
        return command(*cg, "--reset-offsets", "--group", group, *scope, *to, *mode)
    if action == "delete":
        return command(*cg, "--delete", "--group", group)
    return command(*cg, "--delete-offsets", "--group", group, "--topic",
                   draw(st.sampled_from(["<T>-t0", "<T>-t0:1", "<T>-missing"])))


@st.composite
def acls(draw) -> dict:
    a = ["kafka-acls", *draw(_who())]
    resource = draw(st.sampled_from([["--topic", "<T>-t0"], ["--topic", "<T>-t"], ["--group", "<T>-g0"],
                                     ["--transactional-id", "<T>-x0"], ["--cluster"]]))
    pattern = draw(st.sampled_from([[], ["--resource-pattern-type", "prefixed"],
                                    ["--resource-pattern-type", "literal"]]))
    action = draw(st.sampled_from(["add", "list", "remove", "convenience"]))
    if action == "convenience":  # --producer / --consumer: the ACLs a producer or a consumer needs
        role = draw(st.sampled_from([["--producer", "--topic", "<T>-t0"],
                                     ["--producer", "--topic", "<T>-t0", "--idempotent"],
                                     ["--producer", "--topic", "<T>-t0", "--transactional-id", "<T>-x0"],
                                     ["--consumer", "--topic", "<T>-t0", "--group", "<T>-g0"],
                                     ["--consumer", "--topic", "<T>-t0"]]))
        return command(*a, draw(st.sampled_from(["--add", "--remove"])), "--allow-principal", "User:<T>-u0", *role,
                       *draw(st.sampled_from([[], ["--resource-pattern-type", "prefixed"]])), "--force")
    if action == "list":
        return command(*a, "--list", *resource, *(pattern if resource != ["--cluster"] else []), reads=True)
    operation = draw(st.sampled_from(["Read", "Write", "Describe", "All", "Alter", "IdempotentWrite", "Jump"]))
    who = draw(st.sampled_from(["--allow-principal", "--deny-principal"]))
    extra = [who, "User:<T>-u0", "--operation", operation, *resource, *pattern]
    if draw(st.booleans()):
        host = "--allow-host" if who == "--allow-principal" else "--deny-host"
        extra += [host, draw(st.sampled_from(["*", "10.0.0.1"]))]
    return command(*a, f"--{action}", *extra, *(["--force"] if action == "remove" else []))


@st.composite
def transactions(draw) -> dict:
    """Transactions made by kafka-producer-perf-test (a transactional id, commits every few ms)
    into <T>-p, one partition (its keyless records land alike on both brokers), every value the
    payload file's "p"; and kafka-transactions over them."""
    tx = ["kafka-transactions", *draw(_who())]
    action = draw(st.sampled_from(["load", "load", "describe", "describe-producers", "find-hanging", "list"]))
    if action == "load":
        extra = []
        if draw(st.booleans()):
            extra = ["--transactional-id", "<T>-x0", "--transaction-duration-ms", draw(st.sampled_from(["50", "1000"]))]
        acks = draw(st.sampled_from(["all", "1", "0"]))
        return command("kafka-producer-perf-test", "--bootstrap-server", "{bootstrap}", "--topic", "<T>-p",
                       "--num-records", draw(st.sampled_from(["1", "7", "30"])), "--throughput", "-1",
                       "--payload-file", "<file:payload>", "--command-property", f"acks={acks}", *extra,
                       files={"payload": "p\n"})
    if action == "describe":
        return command(*tx, "describe", "--transactional-id", "<T>-x0", reads=True)
    if action == "describe-producers":
        topic = draw(st.sampled_from(["<T>-t0", "<T>-p", "<T>-missing"]))
        return command(*tx, "describe-producers", "--topic", topic, "--partition", draw(st.sampled_from(["0", "9"])),
                       reads=True)
    if action == "find-hanging":
        return command(*tx, "find-hanging", "--topic", draw(st.sampled_from(["<T>-t0", "<T>-p"])), reads=True)
    return command(*tx, "list", "--transactional-id-pattern", "<T>-.*", reads=True)


@st.composite
def shares(draw) -> dict:
    group = "<T>-g1"
    sg = ["kafka-share-groups", *draw(_who())]
    action = draw(st.sampled_from(["describe", "list", "reset", "delete", "delete-offsets"]))
    if action == "describe":
        extra = draw(st.sampled_from([[], ["--members"], ["--state"], ["--offsets"], ["--members", "--verbose"]]))
        return command(*sg, "--describe", "--group", group, *extra, reads=True)
    if action == "list":
        return command(*sg, "--list", *draw(st.sampled_from([[], ["--state"], ["--state", "empty"]])), reads=True)
    if action == "reset":
        to = draw(st.sampled_from([["--to-earliest"], ["--to-latest"], ["--to-offset", "1"],
                                   ["--to-datetime", "2000-01-01T00:00:00.000"]]))
        mode = draw(st.sampled_from([["--dry-run"], ["--execute"]]))
        return command(*sg, "--reset-offsets", "--group", group, "--topic", "<T>-t0", *to, *mode)
    if action == "delete":
        return command(*sg, "--delete", "--group", group)
    return command(*sg, "--delete-offsets", "--group", group, "--topic", "<T>-t0")


@st.composite
def cluster(draw) -> dict:
    """The tools of the cluster and its clients, kept to the sequence's own names: client-metrics
    subscriptions, streams groups, leader elections, broker configs read, features read."""
    action = draw(st.sampled_from(["metrics", "metrics", "streams", "election", "broker-configs", "features"]))
    if action == "metrics":
        m = ["kafka-client-metrics", *draw(_who())]
        verb = draw(st.sampled_from(["alter", "describe", "list", "delete"]))
        if verb == "alter":
            extra = []
            for flag, values in (("--metrics", ["org.apache.kafka.producer.", "*", ""]),
                                 ("--interval", ["1000", "50", "3600001", "x"]),
                                 # (only the sequence's own names: a subscription that matched every
                                 # Java client would reach the other tests' clients on a shared broker)
                                 ("--match", ["client_id=<T>-c0", "client_software_name=<T>-software",
                                              "nonsense=1", "client_id="])):
                value = draw(st.sampled_from([None, *values]))
                extra += [flag, value] if value is not None else []
            return command(*m, "--alter", "--name", "<T>-m", *extra, *draw(_flags("--generate-name")))
        if verb == "list":
            return command(*m, "--list", reads=True)
        name = draw(st.sampled_from(["<T>-m", "<T>-missing"]))
        return command(*m, f"--{verb}", "--name", name, reads=verb != "delete")
    if action == "streams":
        sg = ["kafka-streams-groups", *draw(_who())]
        verb = draw(st.sampled_from([["--list"], ["--describe", "--group", "<T>-g0"],
                                     ["--describe", "--group", "<T>-g0", "--members"],
                                     ["--describe", "--group", "<T>-g0", "--offsets"],
                                     ["--delete", "--group", "<T>-g0"]]))
        return command(*sg, *verb, reads=verb[0] != "--delete")
    if action == "election":
        kind = draw(st.sampled_from(["preferred", "unclean", "PREFERRED", "sometimes"]))
        where = draw(st.sampled_from([["--topic", "<T>-t0", "--partition", "0"],
                                      ["--topic", "<T>-t0", "--partition", "9"],
                                      ["--topic", "<T>-missing", "--partition", "0"], ["--topic", "<T>-t0"]]))
        return command("kafka-leader-election", *draw(_who()), "--election-type", kind, *where)
    if action == "broker-configs":
        who = draw(st.sampled_from([["--entity-name", "1"], ["--entity-default"], ["--entity-name", "7"]]))
        return command("kafka-configs", *draw(_who()), "--entity-type", "brokers", *who, "--describe", reads=True)
    return command("kafka-features", *BS, "describe", reads=True)


@st.composite
def share_consume(draw) -> dict:
    """kafka-console-share-consumer in group g1 (its records acknowledged as the console's
    implicit mode does; 8 s without records ends it: Kafka loads a share partition's state on
    first use): seed 004 then writes share state into the partition, so the sequence ends after
    it (the protocol generator's listed share-state-in-the-partition)."""
    extra = []
    for prop in draw(st.lists(st.sampled_from(["print.key=true", "print.partition=true", "print.offset=true"]),
                              max_size=2, unique=True)):
        extra += ["--property", prop]
    return command("kafka-console-share-consumer", *draw(_client("--consumer-config")), "--topic", "<T>-t0",
                   "--group", "<T>-g1", "--timeout-ms", "8000", *extra)


def _plan(draw, topic_names) -> str:
    """A kafka-reassign-partitions plan: partitions of the sequence's topics (or one that is
    not) onto broker 1 (where each is), onto 2 (not registered), twice or none."""
    one = st.fixed_dictionaries({"topic": st.sampled_from(topic_names), "partition": st.sampled_from([0, 1, 5]),
                                 "replicas": st.sampled_from([[1], [1], [2], [1, 1], []])})
    return json.dumps({"version": 1, "partitions": draw(st.lists(one, min_size=1, max_size=3))})


@st.composite
def cluster_admin(draw) -> dict:
    """The cluster's admin tools on one node: kafka-reassign-partitions, kafka-groups,
    kafka-cluster unregister (never the broker's own id, 1: Kafka would take its only broker
    out of the shared reference), kafka-delegation-tokens (neither broker has a secret key),
    kafka-streams-application-reset of group g0."""
    action = draw(st.sampled_from(["reassign", "reassign", "groups", "unregister", "tokens", "tokens", "reset"]))
    who = draw(_who())
    if action == "reassign":
        verb = draw(st.sampled_from(["--list", "--verify", "--execute", "--execute", "--cancel", "--generate"]))
        if verb == "--list":
            return command("kafka-reassign-partitions", *who, "--list", reads=True)
        if verb == "--generate":
            move = json.dumps({"version": 1, "topics": [{"topic": t} for t in draw(st.lists(
                st.sampled_from(["<T>-t0", "<T>-p", "<T>-missing"]), min_size=1, max_size=2, unique=True))]})
            return command("kafka-reassign-partitions", *who, "--generate", "--topics-to-move-json-file",
                           "<file:move>", "--broker-list", draw(st.sampled_from(["1", "1,2", "x"])),
                           files={"move": move}, reads=True)
        extra = []
        if verb == "--execute" and draw(st.booleans()):  # (broker 1's replication throttles, which --verify clears)
            extra = ["--throttle", draw(st.sampled_from(["1000", "-5"]))] + draw(st.sampled_from(
                [[], ["--replica-alter-log-dirs-throttle", "500"], ["--additional"]]))
        elif verb == "--verify" and draw(st.booleans()):
            extra = ["--preserve-throttles"]
        return command("kafka-reassign-partitions", *who, verb, "--reassignment-json-file", "<file:plan>", *extra,
                       files={"plan": _plan(draw, ["<T>-t0", "<T>-t0", "<T>-missing"])}, reads=verb == "--verify")
    if action == "groups":
        kind = draw(st.sampled_from([[], ["--consumer"], ["--share"], ["--streams"], ["--group-type", "classic"],
                                     ["--group-type", "consumer"], ["--group-type", "bogus"],
                                     ["--protocol", "consumer"], ["--consumer", "--share"]]))
        return command("kafka-groups", *who, "--list", *kind, reads=True)
    if action == "unregister":
        if draw(st.booleans()):
            return command("kafka-cluster", "cluster-id", *who, reads=True)
        # (ids only: kafka-cluster's argparse4j ends the JVM itself on an argument it cannot read)
        return command("kafka-cluster", "unregister", *who, "--id", draw(st.sampled_from(["7", "-1", "1000"])))
    if action == "reset":
        how = draw(st.sampled_from([[], ["--to-earliest"], ["--to-latest"], ["--to-offset", "1"], ["--shift-by", "-1"],
                                    ["--by-duration", "PT1H"], ["--to-datetime", "2000-01-01T00:00:00.000"]]))
        inputs = draw(st.sampled_from([["--input-topics", "<T>-t0"], ["--input-topics", "<T>-missing"], []]))
        return command("kafka-streams-application-reset", *who, "--application-id", "<T>-g0", *inputs, *how,
                       *draw(st.sampled_from([["--dry-run"], []])))
    t = ["kafka-delegation-tokens", *draw(st.sampled_from([ADMIN, USER, USER]))]
    verb = draw(st.sampled_from(["create", "describe", "renew", "expire"]))
    if verb == "create":
        extra = []
        for flag, values in (("--renewer-principal", ["User:<T>-u1", "Group:g"]),
                             ("--owner-principal", ["User:<T>-u0", "User:<T>-other"])):
            value = draw(st.sampled_from([None, *values]))
            extra += [flag, value] if value else []
        return command(*t, "--create", "--max-life-time-period", draw(st.sampled_from(["-1", "3600000"])), *extra)
    if verb == "describe":
        return command(*t, "--describe", *draw(st.sampled_from([[], ["--owner-principal", "User:<T>-u0"]])),
                       reads=True)
    period = "--renew-time-period" if verb == "renew" else "--expiry-time-period"
    return command(*t, f"--{verb}", "--hmac", "AAAA", period, draw(st.sampled_from(["-1", "1000"])))
