"""Kafka Streams with its own rebalance protocol (KIP-1071, ``group.protocol=streams``) against
Kafka and kipper (issue 38): the broker creates the repartition topic and the changelog and
assigns the tasks. Our word count (tests/java/kipper/ecosystem/WordCount.java, exactly once)
counts the same text to the same output on both, through a second instance that joins and
then leaves; ``kafka-streams-groups`` lists, describes, resets and deletes the group alike on
both; and on a durable kipper the counts come out exactly once across a SIGKILL."""

from __future__ import annotations

import time

import pytest

from kipper.client.blocking import connect_any
from tests.java_ecosystem.streams_app import (
    WordCountApp, counts, create_topics, exactly_once, kill_while_counting, produce_lines, text, topic_config,
    wait_for_counts,
)
from tests.java_ecosystem.tool_pair import only, sorted_lines
from tests.support.broker import BrokerProcess, free_port

PARTITIONS = 3
STREAMS = "streams"


def group_members(bootstrap: str, group: str) -> tuple[str, list[int]]:
    """(state, active tasks of each member) of a streams group, by StreamsGroupDescribe."""
    with connect_any(bootstrap) as conn:
        conn.negotiate()
        g = conn.request(89, {"group_ids": [group], "include_authorized_operations": False}).groups[0]
    return g.group_state, sorted(sum(len(t.partitions) for t in m.assignment.active_tasks) for m in g.members)


def wait_for_members(bootstrap: str, group: str, tasks: list[int], timeout: float = 90.0) -> None:
    """Until the group is Stable with members running these many tasks (Empty for none)."""
    wanted = ("Stable" if tasks else "Empty", tasks)
    deadline = time.monotonic() + timeout
    while (got := group_members(bootstrap, group)) != wanted:
        assert time.monotonic() < deadline, f"{group} on {bootstrap}: {got}, expected {wanted}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def apps(kafka_reference, kipper_reference, tmp_path_factory, tools):
    """The word count with group.protocol=streams against each broker, for the module's tests."""
    names = {"input": tools.name("s-words"), "output": tools.name("s-word-counts"), "app": tools.name("s-wordcount")}
    bootstrap = {"kafka": kafka_reference.bootstrap, "kipper": kipper_reference.bootstrap}
    started = {}
    for name, address in bootstrap.items():
        create_topics(address, PARTITIONS, names["input"], names["output"])
        started[name] = WordCountApp(address, names["app"], names["input"], names["output"],
                                     tmp_path_factory.mktemp(f"streams-wordcount-{name}"), STREAMS).start()
    for app in started.values():
        app.wait_for_state("RUNNING")
    yield {"names": names, "apps": started, "produced": [], "bootstrap": bootstrap}
    for app in started.values():
        app.stop()


def _count_on_both(apps, lines: list[str]) -> None:
    names, bootstrap = apps["names"], apps["bootstrap"]
    for address in bootstrap.values():
        produce_lines(address, names["input"], lines)
    apps["produced"] += lines
    expected = counts(apps["produced"])
    got = {name: wait_for_counts(address, names["output"], PARTITIONS, expected) for name, address in bootstrap.items()}
    for name, per_word in got.items():
        assert {w: v[-1] for w, v in per_word.items()} == dict(expected), f"{name}:\n{apps['apps'][name].log()[-3000:]}"
        assert exactly_once(per_word) == {}, name
    assert got["kipper"] == got["kafka"]


def test_the_streams_protocol_counts_the_same_on_kafka_and_kipper_with_topics_the_broker_made(apps, tools):
    _count_on_both(apps, text(300, seed=11))
    names = apps["names"]
    for address in apps["bootstrap"].values():
        assert topic_config(address, f"{names['app']}-by-word-repartition", "cleanup.policy") == "delete"
        assert topic_config(address, f"{names['app']}-counts-changelog", "cleanup.policy") == "compact"
        wait_for_members(address, names["app"], [2 * PARTITIONS])
    group = names["app"]
    tools.same("kafka-streams-groups", "--bootstrap-server", "{bootstrap}", "--list", normalisers=(only(group),))
    # the tool prints partitions in a hash map's order, which differs from broker to broker
    tools.same("kafka-streams-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group", group,
               normalisers=(sorted_lines,))
    tools.same("kafka-streams-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group", group,
               "--members", normalisers=(sorted_lines,))
    tools.same("kafka-streams-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group", group,
               "--offsets", settle=15, normalisers=(sorted_lines,))


def test_a_second_instance_joins_and_leaves_and_every_word_is_counted_once(apps, tools, tmp_path_factory):
    names = apps["names"]
    second = {name: WordCountApp(address, names["app"], names["input"], names["output"],
                                 tmp_path_factory.mktemp(f"streams-second-{name}"), STREAMS).start()
              for name, address in apps["bootstrap"].items()}
    try:
        for name, app in second.items():
            app.wait_for_state("RUNNING")
            wait_for_members(apps["bootstrap"][name], names["app"], [PARTITIONS, PARTITIONS])
        _count_on_both(apps, text(300, seed=12))
        tools.same("kafka-streams-groups", "--bootstrap-server", "{bootstrap}", "--describe", "--group",
                   names["app"], "--members", normalisers=(sorted_lines,))
    finally:
        for app in second.values():
            app.stop()
    for address in apps["bootstrap"].values():
        wait_for_members(address, names["app"], [2 * PARTITIONS])
    _count_on_both(apps, text(300, seed=13))


def test_kafka_streams_groups_resets_and_deletes_a_stopped_group_alike(apps, tools):
    for app in apps["apps"].values():
        app.stop()
    names = apps["names"]
    group, tool = names["app"], "kafka-streams-groups"
    for address in apps["bootstrap"].values():
        wait_for_members(address, group, [])
    tools.same(tool, "--bootstrap-server", "{bootstrap}", "--describe", "--group", group, "--state")
    tools.same(tool, "--bootstrap-server", "{bootstrap}", "--reset-offsets", "--group", group, "--input-topic",
               names["input"], "--to-earliest", "--dry-run")
    tools.same(tool, "--bootstrap-server", "{bootstrap}", "--reset-offsets", "--group", group, "--all-input-topics",
               "--to-offset", "1", "--execute")
    tools.same(tool, "--bootstrap-server", "{bootstrap}", "--describe", "--group", group, "--offsets",
               normalisers=(sorted_lines,))
    tools.same(tool, "--bootstrap-server", "{bootstrap}", "--delete", "--group", group)
    tools.same(tool, "--bootstrap-server", "{bootstrap}", "--describe", "--group", group, exit=None)


@pytest.fixture(scope="module")
def durable_kipper(tmp_path_factory):
    """A kipper with log.dirs on a fixed port, for a SIGKILL and a restart."""
    data = tmp_path_factory.mktemp("durable-kipper-streams")
    proc = BrokerProcess({"log.dirs": str(data), "num.partitions": str(PARTITIONS),
                          "offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1",
                          "group.streams.initial.rebalance.delay.ms": "0"}, port=free_port())
    proc.start()
    yield proc
    proc.stop()


def test_the_streams_protocol_counts_exactly_once_across_a_sigkill_of_kipper(durable_kipper, tools, tmp_path_factory):
    bootstrap = durable_kipper.bootstrap
    names = {"input": tools.name("k-words"), "output": tools.name("k-word-counts"), "app": tools.name("k-wordcount")}
    create_topics(bootstrap, PARTITIONS, names["input"], names["output"])
    app = WordCountApp(bootstrap, names["app"], names["input"], names["output"],
                       tmp_path_factory.mktemp("streams-durable"), STREAMS).start()
    try:
        app.wait_for_state("RUNNING")
        first = text(200, seed=21)
        produce_lines(bootstrap, names["input"], first)
        wait_for_counts(bootstrap, names["output"], PARTITIONS, counts(first))
        before = group_members(bootstrap, names["app"])
        lines = kill_while_counting(durable_kipper, app, names["input"], names["output"], PARTITIONS, first)
        got = wait_for_counts(bootstrap, names["output"], PARTITIONS, counts(lines), timeout=240)
        log = app.log()
        assert {w: v[-1] for w, v in got.items()} == dict(counts(lines)), log[-4000:]
        assert exactly_once(got) == {}, log[-4000:]
        assert app.proc.poll() is None, "the application ended instead of recovering"
        # the group came back from __consumer_offsets: the same member, its tasks, no fatal error
        assert group_members(bootstrap, names["app"]) == before
        assert "GroupIdNotFoundException" not in log and "fatal" not in log.lower(), log[-4000:]
    finally:
        app.stop()
