"""The tool generator's comparison (tests/java_ecosystem/tool_fuzz/machine.py): what it masks as
each broker's own, what it keeps, and how a difference is reported, on outputs the tools print."""

from __future__ import annotations

from tests.java_ecosystem.tool_fuzz import commands
from tests.java_ecosystem.tool_fuzz.machine import ToolRun, differences, normalisers, resolve
from tests.java_ecosystem.tool_pair import Outcome

TOKEN = "k000042"


def _apply(step: dict, text: str) -> str:
    run = ToolRun(None, None, [], [])
    for step_fn in normalisers(run, step, TOKEN):
        text = step_fn(text)
    return text


def _step(*args: str) -> dict:
    return commands.command("kafka-acls", *commands.USER, *args)


def test_kafkas_request_object_is_masked_before_a_listing_is_cut_to_the_sequences_names():
    kafka = ("Error while executing ACL command: x.ClusterAuthorizationException: Request Request(processor=3, "
             "session=org.apache.kafka.network.Session@2338f99f, envelope=Optional.empty) needs DESCRIBE permission.\n"
             "java.util.concurrent.ExecutionException: x.ClusterAuthorizationException: Request Request(processor=3, "
             "session=org.apache.kafka.network.Session@2338f99f) needs DESCRIBE permission.")
    kipper = kafka.replace("org.apache.kafka.network.Session@2338f99f", f"Session(User:{TOKEN}-u0)")
    listing = _step("--list", "--topic", "<T>-t0")
    assert _apply(listing, kafka) == _apply(listing, kipper)
    assert _apply(listing, kafka).count("Request <the request> needs DESCRIBE permission.") == 2
    # another sequence's names are cut from a listing; this one's and the headers are kept
    # (columns padded to the longest name on the broker: padding counts for nothing)
    table = f"GROUP                STATE\n{TOKEN}-g0           Empty\nconsumer-group-4bd3ef  Empty"
    assert _apply(commands.command("kafka-consumer-groups", *commands.ADMIN, "--list"), table).splitlines() == [
        "GROUP STATE", f"{TOKEN}-g0 Empty"]


def test_sets_in_hash_order_producer_ids_timeouts_and_perf_figures_are_masked():
    step = commands.command("kafka-transactions", *commands.ADMIN, "describe-producers", "--topic", "<T>-t0")
    a = "ProducerId\tProducerEpoch\n133\t0\nonly supports operations [TWO_PHASE_COMMIT, ALL, WRITE]"
    b = "ProducerId\tProducerEpoch\n1133\t0\nonly supports operations [ALL, WRITE, TWO_PHASE_COMMIT]"
    assert _apply(step, a) == _apply(step, b)
    timed = ("x: Timed out waiting for a node assignment. Call: deleteRecords(api=METADATA)",
             "x: Call(callName=deleteRecords(api=METADATA), deadlineMs=1, tries=24831, nextAllowedTryMs=2) timed out "
             "at 3 after 24831 attempt(s)")
    assert _apply(step, timed[0]) == _apply(step, timed[1]) == "x: <the call timed out>"
    perf = ("7 records sent, 12.5 records/sec (0.00 MB/sec), 3.10 ms avg latency, 9.00 ms max latency.\n"
            "30 records sent, 187.5 records/sec (0.00 MB/sec), 12.30 ms avg latency, 150.00 ms max latency, "
            "5 ms 50th, 150 ms 95th, 150 ms 99th, 150 ms 99.9th.")
    assert _apply(step, perf) == "30 records sent, <figures>"
    # what is not each broker's own still differs
    assert _apply(step, "ProducerId\tProducerEpoch\n133\t0") != _apply(step, "ProducerId\tProducerEpoch\n133\t1")


def test_a_difference_names_the_command_and_the_first_line_that_differs():
    step = commands.command("kafka-topics", *commands.ADMIN, "--describe", "--topic", "<T>-t0", reads=True)
    found = differences(step, "kafka-topics ...", Outcome(0, "a\nb\nc", ""), Outcome(1, "a\nx\ny", "oops"))
    assert [(d.path, d.kafka, d.kipper) for d in found] == [
        ("exit", 0, 1), ("stdout line 2", "b", "x"), ("stderr line 1", "<absent>", "oops")]
    assert differences(step, "kafka-topics ...", Outcome(0, "a", ""), Outcome(0, "a", "")) == []


def test_a_commands_names_and_files_are_the_sequences(tmp_path):
    step = commands.command("kafka-delete-records", *commands.ADMIN, "--offset-json-file", "<file:plan>",
                            files={"plan": '{"topic": "<T>-t0"}'})
    args, stdin = resolve(step, TOKEN, tmp_path)
    assert stdin is None and "{bootstrap}" in args
    plan = args[args.index("--offset-json-file") + 1]
    assert open(plan).read() == f'{{"topic": "{TOKEN}-t0"}}'
    admin = args[args.index("--command-config") + 1]
    assert "default.api.timeout.ms=6000" in open(admin).read()


def test_log_directories_are_each_brokers_own_and_the_tools_any_stays():
    from tests.java_ecosystem.tool_fuzz.machine import log_dirs_blank

    kafka = '{"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["/tmp/k/data"]}]}'
    kipper = '{"partitions":[{"topic":"a","partition":0,"replicas":[1],"log_dirs":["memory:"]}]}'
    assert log_dirs_blank(kafka) == log_dirs_blank(kipper)
    assert log_dirs_blank('"log_dirs":["any","any"]') == '"log_dirs":["any","any"]'


def test_a_topics_describe_all_loses_the_listed_lines_whole_on_both_brokers():
    from tests.java_ecosystem.tool_fuzz.machine import LISTED, LISTED_FOR

    masks = dict(LISTED)
    kafka = ("  min.insync.replicas=1 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1, "
             "DEFAULT_CONFIG:min.insync.replicas=1}\n  retention.ms=1 sensitive=false synonyms={}\n")
    kipper = ("  min.insync.replicas=1 sensitive=false synonyms={DEFAULT_CONFIG:min.insync.replicas=1}\n"
              "  retention.ms=1 sensitive=false synonyms={}\n  share.auto.offset.reset=latest sensitive=false synonyms={}\n")
    mask = masks["min-insync-replicas-cluster-default"]
    assert mask(kafka) == "  retention.ms=1 sensitive=false synonyms={}\n"
    assert masks["share-auto-offset-reset-topic-config"](mask(kipper)) == mask(kafka)
    assert LISTED_FOR["share-auto-offset-reset-topic-config"](["--entity-type", "topics", "--describe"])
    assert not LISTED_FOR["share-auto-offset-reset-topic-config"](["--entity-type", "groups", "--describe"])
