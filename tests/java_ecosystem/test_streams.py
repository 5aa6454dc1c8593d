"""Kafka Streams against Kafka and kipper (issue 30): our word count
(tests/java/kipper/ecosystem/WordCount.java) with processing.guarantee=exactly_once_v2, a
repartition topic and a compacted changelog. The same text in gives the same counts out on
both, read read_committed; then a durable kipper is SIGKILLed while the application works,
restarted on the same port, and the counts come out exactly once across the crash."""

from __future__ import annotations

import pytest

from tests.java_ecosystem.streams_app import (
    WordCountApp, counts, create_topics, exactly_once, kill_while_counting, produce_lines, text, topic_config,
    wait_for_counts,
)
from tests.support.broker import BrokerProcess, free_port

PARTITIONS = 3


@pytest.fixture(scope="module")
def durable_kipper(tmp_path_factory):
    """A kipper with log.dirs on a fixed port, for a SIGKILL and a restart."""
    data = tmp_path_factory.mktemp("durable-kipper")
    proc = BrokerProcess({"log.dirs": str(data), "num.partitions": str(PARTITIONS), "group.initial.rebalance.delay.ms": "0",
                          "offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1"},
                         port=free_port())
    proc.start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def apps(kafka_reference, durable_kipper, tmp_path_factory, tools):
    """The word count against each broker, running for the module's tests."""
    names = {"input": tools.name("words"), "output": tools.name("word-counts"), "app": tools.name("wordcount")}
    started = {}
    for name, bootstrap in (("kafka", kafka_reference.bootstrap), ("kipper", durable_kipper.bootstrap)):
        create_topics(bootstrap, PARTITIONS, names["input"], names["output"])
        started[name] = WordCountApp(bootstrap, names["app"], names["input"], names["output"],
                                     tmp_path_factory.mktemp(f"wordcount-{name}")).start()
    for app in started.values():
        app.wait_for_state("RUNNING")
    # every line the module's tests put on each input topic, so that a test's expected counts do
    # not depend on which tests ran before it (pytest -k runs any one of them alone)
    yield {"names": names, "apps": started, "produced": {"kafka": [], "kipper": []},
           "bootstrap": {"kafka": kafka_reference.bootstrap, "kipper": durable_kipper.bootstrap}}
    for app in started.values():
        app.stop()


def test_word_count_exactly_once_gives_the_same_counts_on_kafka_and_kipper(apps):
    names, bootstrap = apps["names"], apps["bootstrap"]
    lines = text(300, seed=1)
    expected = counts(lines)
    for name in ("kafka", "kipper"):
        produce_lines(bootstrap[name], names["input"], lines)
        apps["produced"][name] += lines
    got = {name: wait_for_counts(bootstrap[name], names["output"], PARTITIONS, expected) for name in ("kafka", "kipper")}
    for name, per_word in got.items():
        assert {w: v[-1] for w, v in per_word.items()} == dict(expected), f"{name}:\n{apps['apps'][name].log()[-3000:]}"
        assert exactly_once(per_word) == {}, name
    assert got["kipper"] == got["kafka"]
    # the topics Streams made: a repartition topic that deletes, a changelog that compacts
    for name in ("kafka", "kipper"):
        assert topic_config(bootstrap[name], f"{names['app']}-by-word-repartition", "cleanup.policy") == "delete"
        assert topic_config(bootstrap[name], f"{names['app']}-counts-changelog", "cleanup.policy") == "compact"


def test_word_count_is_exactly_once_across_a_sigkill_of_kipper(apps, durable_kipper):
    names, app = apps["names"], apps["apps"]["kipper"]
    states = app.states_seen()
    lines = kill_while_counting(durable_kipper, app, names["input"], names["output"], PARTITIONS,
                                list(apps["produced"]["kipper"]))
    got = wait_for_counts(durable_kipper.bootstrap, names["output"], PARTITIONS, counts(lines), timeout=240)
    log = app.log()
    assert {w: v[-1] for w, v in got.items()} == dict(counts(lines)), log[-4000:]
    assert exactly_once(got) == {}, log[-4000:]
    assert app.proc.poll() is None, "the application ended instead of recovering"
    assert app.states_seen() >= states  # (it may or may not have rebalanced: the counts are what matter)
