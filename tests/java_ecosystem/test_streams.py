"""Kafka Streams against Kafka and kipper (issue 30): our word count
(tests/java/kipper/ecosystem/WordCount.java) with processing.guarantee=exactly_once_v2, a
repartition topic and a compacted changelog. The same text in gives the same counts out on
both, read read_committed; then a durable kipper is SIGKILLed while the application works,
restarted on the same port, and the counts come out exactly once across the crash."""

from __future__ import annotations

import threading
import time

import pytest

from tests.java_ecosystem.streams_app import WordCountApp, counts, produce_lines, read_counts, text, wait_for_counts
from tests.support.broker import BrokerProcess, free_port

PARTITIONS = 3


def _topics(bootstrap: str, *names: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names]).values():
        future.result(30)


def _topic_config(bootstrap: str, topic: str, key: str) -> str:
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource("topic", topic)
    return admin.describe_configs([resource])[resource].result(30)[key].value


def _exactly_once(got: dict[str, list[int]]) -> dict[str, list[int]]:
    """Words whose counts on the output do not run 1, 2, 3, ...: counted twice, or lost."""
    return {word: values for word, values in got.items() if values != list(range(1, len(values) + 1))}


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
        _topics(bootstrap, names["input"], names["output"])
        started[name] = WordCountApp(bootstrap, names["app"], names["input"], names["output"],
                                     tmp_path_factory.mktemp(f"wordcount-{name}")).start()
    for app in started.values():
        app.wait_for_state("RUNNING")
    yield {"names": names, "apps": started, "bootstrap": {"kafka": kafka_reference.bootstrap,
                                                          "kipper": durable_kipper.bootstrap}}
    for app in started.values():
        app.stop()


def test_word_count_exactly_once_gives_the_same_counts_on_kafka_and_kipper(apps):
    names, bootstrap = apps["names"], apps["bootstrap"]
    lines = text(300, seed=1)
    expected = counts(lines)
    for name in ("kafka", "kipper"):
        produce_lines(bootstrap[name], names["input"], lines)
    got = {name: wait_for_counts(bootstrap[name], names["output"], PARTITIONS, expected) for name in ("kafka", "kipper")}
    for name, per_word in got.items():
        assert {w: v[-1] for w, v in per_word.items()} == dict(expected), f"{name}:\n{apps['apps'][name].log()[-3000:]}"
        assert _exactly_once(per_word) == {}, name
    assert got["kipper"] == got["kafka"]
    # the topics Streams made: a repartition topic that deletes, a changelog that compacts
    for name in ("kafka", "kipper"):
        assert _topic_config(bootstrap[name], f"{names['app']}-by-word-repartition", "cleanup.policy") == "delete"
        assert _topic_config(bootstrap[name], f"{names['app']}-counts-changelog", "cleanup.policy") == "compact"


def test_word_count_is_exactly_once_across_a_sigkill_of_kipper(apps, durable_kipper):
    names, app = apps["names"], apps["apps"]["kipper"]
    bootstrap = durable_kipper.bootstrap
    before = text(300, seed=1)
    during, after = text(4000, seed=2), text(300, seed=3)
    expected = counts(before + during + after)
    # the new lines go in a chunk at a time while the application counts them, so that it is
    # still counting when the broker is killed, however fast it runs on this machine
    chunks = [during[i:i + 50] for i in range(0, len(during), 50)]
    sent, between_chunks, stop = [], threading.Lock(), threading.Event()

    def feed():
        for chunk in chunks:
            with between_chunks:
                if stop.is_set():
                    return
                produce_lines(bootstrap, names["input"], chunk)
                sent.append(chunk)
            time.sleep(0.1)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    target = sum(counts(before).values()) + sum(counts(during).values()) // 20
    deadline = time.monotonic() + 120
    while (progress := sum(v[-1] for v in read_counts(bootstrap, names["output"], PARTITIONS).values())) < target:
        assert time.monotonic() < deadline, "the application did not start counting the new lines"
        time.sleep(0.2)
    with between_chunks:  # no chunk half sent: every line is either acknowledged or not sent yet
        stop.set()
        durable_kipper.kill()
    feeder.join(30)
    produced = before + [line for chunk in sent for line in chunk]
    assert len(sent) < len(chunks), "every line was sent before the kill: nothing to count across it"
    assert progress < sum(counts(produced).values()), "the kill came after the application had counted all it was sent"
    states = app.states_seen()
    time.sleep(2)
    durable_kipper.start(timeout=60)
    produce_lines(bootstrap, names["input"], [line for chunk in chunks[len(sent):] for line in chunk] + after)
    got = wait_for_counts(bootstrap, names["output"], PARTITIONS, expected, timeout=240)
    log = app.log()
    assert {w: v[-1] for w, v in got.items()} == dict(expected), log[-4000:]
    assert _exactly_once(got) == {}, log[-4000:]
    assert app.proc.poll() is None, "the application ended instead of recovering"
    assert app.states_seen() >= states  # (it may or may not have rebalanced: the counts are what matter)
