"""Our Kafka Streams word count (tests/java/kipper/ecosystem/WordCount.java) as a JVM of its
own, its input text and the counts it must produce, and its output read back read_committed
(issue 30)."""

from __future__ import annotations

import random
import re
import struct
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

from tests.support.java_programs import java_command

VOCABULARY = ("kafka kipper stream table topic partition offset record batch broker producer consumer "
              "group commit abort fence epoch leader replica segment index compact delete").split()


def text(lines: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(3, 9))) + rng.choice([".", "!", ""])
            for _ in range(lines)]


def counts(lines: list[str]) -> Counter:
    """What WordCount counts: lower case, split on Java's \\W+."""
    return Counter(w for line in lines for w in re.split(r"[^a-z0-9_]+", line.lower()) if w)


class WordCountApp:
    def __init__(self, bootstrap: str, application_id: str, input_topic: str, output_topic: str, workdir: Path,
                 group_protocol: str = "classic"):
        """``group_protocol``: "classic" or "streams" (KIP-1071, the broker assigns the tasks)."""
        workdir.mkdir(parents=True, exist_ok=True)
        self.stop_file = workdir / "stop"
        self.log_path = workdir / "wordcount.log"
        self.cmd = java_command("kipper.ecosystem.WordCount", "streams", heap="384m") + [
            bootstrap, application_id, input_topic, output_topic, str(workdir / "state"), str(self.stop_file),
            group_protocol]
        self.proc: subprocess.Popen | None = None

    def start(self) -> "WordCountApp":
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT)
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_state(self, state: str, timeout: float = 120.0, after: int = 0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = [line for line in self.log().splitlines() if line.startswith("state ")]
            if f"state {state}" in states[after:]:
                return
            assert self.proc.poll() is None, f"WordCount ended:\n{self.log()[-3000:]}"
            time.sleep(0.2)
        raise AssertionError(f"WordCount did not reach {state} in {timeout:.0f}s:\n{self.log()[-3000:]}")

    def states_seen(self) -> int:
        return sum(1 for line in self.log().splitlines() if line.startswith("state "))

    def stop(self, timeout: float = 60.0) -> None:
        if self.proc is None:
            return
        self.stop_file.touch()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


def create_topics(bootstrap: str, partitions: int, *names: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(n, partitions, 1) for n in names]).values():
        future.result(30)


def topic_config(bootstrap: str, topic: str, key: str) -> str:
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource("topic", topic)
    return admin.describe_configs([resource])[resource].result(30)[key].value


def produce_lines(bootstrap: str, topic: str, lines: list[str]) -> None:
    from confluent_kafka import Producer

    failed = []
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    for line in lines:
        producer.produce(topic, line.encode(), on_delivery=lambda err, msg: err and failed.append(err))
        producer.poll(0)
    assert producer.flush(60) == 0 and not failed, failed[:3]


def read_counts(bootstrap: str, topic: str, partitions: int, timeout: float = 60.0) -> dict[str, list[int]]:
    """Each word's counts in the order the output topic holds them, read_committed, to the end."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "wordcount-reader", "enable.auto.commit": False,
                         "isolation.level": "read_committed", "enable.partition.eof": True})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        done: set[int] = set()
        out: dict[str, list[int]] = {}
        deadline = time.monotonic() + timeout
        while len(done) < partitions:
            assert time.monotonic() < deadline, f"could not read {topic} to its end"
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == msg.error()._PARTITION_EOF:
                    done.add(msg.partition())
                    continue
                raise AssertionError(msg.error())
            out.setdefault(msg.key().decode(), []).append(struct.unpack(">q", msg.value())[0])
        return out
    finally:
        consumer.close()


def wait_for_counts(bootstrap: str, topic: str, partitions: int, expected: Counter, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while True:
        got = read_counts(bootstrap, topic, partitions)
        last = {word: values[-1] for word, values in got.items()}
        if last == dict(expected) or time.monotonic() > deadline:
            return got
        time.sleep(1.0)


def exactly_once(got: dict[str, list[int]]) -> dict[str, list[int]]:
    """Words whose counts on the output do not run 1, 2, 3, ...: counted twice, or lost."""
    return {word: values for word, values in got.items() if values != list(range(1, len(values) + 1))}


def kill_while_counting(broker, app: WordCountApp, input_topic: str, output_topic: str, partitions: int,
                        before: list[str]) -> list[str]:
    """Feed new text to ``app`` a chunk at a time and SIGKILL the durable ``broker``
    (tests.support.broker.BrokerProcess) while the application counts it, so that it is
    still counting when the broker dies, however fast it runs on this machine; then restart
    the broker on its port and send the rest. ``before``: what the input already held.
    Returns every line the input holds now; the caller checks the counts."""
    bootstrap = broker.bootstrap
    during, after = text(4000, seed=2), text(300, seed=3)
    chunks = [during[i:i + 50] for i in range(0, len(during), 50)]
    sent, between_chunks, stop = [], threading.Lock(), threading.Event()

    def feed():
        for chunk in chunks:
            with between_chunks:
                if stop.is_set():
                    return
                produce_lines(bootstrap, input_topic, chunk)
                sent.append(chunk)
            time.sleep(0.1)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    target = sum(counts(before).values()) + sum(counts(during).values()) // 20
    deadline = time.monotonic() + 120
    while (progress := sum(v[-1] for v in read_counts(bootstrap, output_topic, partitions).values())) < target:
        assert time.monotonic() < deadline, "the application did not start counting the new lines"
        time.sleep(0.2)
    with between_chunks:  # no chunk half sent: every line is either acknowledged or not sent yet
        stop.set()
        broker.kill()
    feeder.join(30)
    produced = before + [line for chunk in sent for line in chunk]
    assert len(sent) < len(chunks), "every line was sent before the kill: nothing to count across it"
    assert progress < sum(counts(produced).values()), "the kill came after the application had counted all it was sent"
    time.sleep(2)
    broker.start(timeout=60)
    rest = [line for chunk in chunks[len(sent):] for line in chunk] + after
    produce_lines(bootstrap, input_topic, rest)
    return produced + rest
