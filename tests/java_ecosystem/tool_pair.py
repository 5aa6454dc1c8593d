"""Kafka's command-line tools run alike against Apache Kafka and kipper, and their outcomes
compared (issue 30; ``messages=True`` compares the error texts too, issue 36).

``ToolPair.same`` runs one command (``{bootstrap}`` and ``{sasl}`` stand for each broker's
addresses) in both brokers' tool JVMs at once and asserts the same exit code and the same
stdout and stderr after ``normalise``: addresses, ids, timestamps, stack frames and exception
message text (error text differs freely, as in the conformance suite) are replaced by
placeholders; everything else, the tools' own words, columns and values, must be equal.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from tests.conformance.compare import load_allowed
from tests.support.java_programs import ToolResult, ToolServer

Normaliser = Callable[[str], str]
RETRIABLE_PRODUCE = (3, 5, 6)  # UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER

# exception message text: the broker's to choose, unless a check keeps it (``messages=True``:
# where Kafka's tools print a broker's error message, kipper's must be Kafka's words)
_MESSAGE_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"((?:Exception|Error)(?::| -)) .*"), r"\1 <message>"),        # exception text
    (re.compile(r"^(Error while executing [a-z ]+? command ?:) .*", re.M), r"\1 <message>"),
]
_RULES: list[tuple[re.Pattern, str]] = [
    (re.compile(r"^\[[^\]]+\] ERROR ", re.M), "[<time>] ERROR "),
    (re.compile(r"^\s+at .*\n|^\s*\.\.\. \d+ more\n", re.M), ""),              # stack frames
    (re.compile(r"TopicId: [A-Za-z0-9_-]{22}"), "TopicId: <topic-id>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    # base64 uuids (member, topic, cluster ids): 22 characters, some upper case or digits
    (re.compile(r"(?<![A-Za-z0-9_-])(?=[a-z_-]*[A-Z0-9])[A-Za-z0-9_-]{22}(?![A-Za-z0-9_.-])"), "<id>"),
    (re.compile(r"\b1[5-9]\d{11}\b"), "<ts>"),                                 # epoch milliseconds
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[:.,]\d{3}"), "<time>"),
    (re.compile(r"console-(share-)?consumer-\d+"), r"console-\1consumer-<n>"),
    # tab-separated tables pad a column to its longest value, which may be another test's
    (re.compile(r" +(?=\t)| +$", re.M), ""),
]


def listed_difference(difference_id: str):
    """The entry of tests/conformance/allowed_differences.toml (= docs/KAFKA_DIFFERENCES.md)."""
    return next((a for a in load_allowed() if a.id == difference_id), None)


_LOG_LINE = re.compile(r"^\[[^\]]+\] (WARN|INFO|DEBUG|TRACE) ")
_TRACE_LINE = re.compile(r"^(\s+at |\s*\.\.\. \d+ more|Caused by: |[\w.$]+(Exception|Error)\b)")


def without_warnings(text: str) -> str:
    """Log lines below ERROR, with the exception and stack trace that may follow them."""
    out, skipping = [], False
    for line in text.split("\n"):
        if _LOG_LINE.match(line):
            skipping = True
            continue
        if skipping and _TRACE_LINE.match(line):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out)


def normalise(text: str, messages: bool = False) -> str:
    text = without_warnings(text)
    rules = _RULES[:2] + ([] if messages else _MESSAGE_RULES) + _RULES[2:]
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def sorted_lines(text: str) -> str:
    """For output in a hash map's order (groups, users, ACL principals)."""
    return "\n".join(sorted(text.splitlines()))


def without_lines(pattern: str) -> Normaliser:
    compiled = re.compile(pattern)
    return lambda text: "\n".join(line for line in text.splitlines() if not compiled.search(line))


def only(*names: str) -> Normaliser:
    """Listings (topics, groups, transactions, users) cut down to a test's own names, and their
    header lines: the session's brokers hold what every other test made too."""
    words = [re.compile(rf"(?<![\w.-]){re.escape(n)}(?![\w.-])") for n in names]
    heads = ("GROUP", "TransactionalId", "Topic\t")

    def keep(text: str) -> str:
        return "\n".join(line for line in text.splitlines()
                         if line.startswith(heads) or any(w.search(line) for w in words))
    return keep


def columns_blank(text: str, heading: str, columns: Callable[[str], bool], placeholder: str) -> str:
    """A group tool's table with some columns' values replaced: the first header line that
    starts with GROUP and names ``heading``, and the columns whose names ``columns`` picks
    (split on whitespace: the tool pads columns to their longest value)."""
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("GROUP") and heading in line]
    if not heads:
        return text
    head = lines[heads[0]].split()
    picked = [i for i, name in enumerate(head) if columns(name)]
    out = lines[:heads[0]] + [" ".join(head)]
    for line in lines[heads[0] + 1:]:
        cells = line.split()
        for i in picked:
            if i < len(cells):
                cells[i] = placeholder
        out.append(" ".join(cells))
    return "\n".join(out)


def member_epochs_blank(text: str) -> str:
    """KIP-848 and KIP-932 group and member epochs: Kafka assigns off the heartbeat path, its
    epochs count one or two more (KAFKA_DIFFERENCES.md group-assignment-off-the-heartbeat)."""
    return columns_blank(text, "EPOCH", lambda name: name.endswith("EPOCH"), "<epoch>")


def usage_error(text: str) -> str:
    """A tool's own refusal of its arguments: the message (with the items of a set in its
    [...] sorted: printed in a hash set's order) without the usage text after it."""
    first = text.split("\n", 1)[0]
    return re.sub(r"\[([^\]]*)\]", lambda m: "[" + ", ".join(sorted(m.group(1).split(", "))) + "]", first)


def column(index: int, placeholder: str, sep: str = "\t") -> Normaliser:
    """Blank one column of a table (a producer id, a coordinator epoch...)."""
    def apply(text: str) -> str:
        lines = []
        for line in text.splitlines():
            cells = line.split(sep)
            if len(cells) > index and not line.startswith(("ProducerId", "Topic\t", "TransactionalId")):
                cells[index] = placeholder
            lines.append(sep.join(cells))
        return "\n".join(lines)
    return apply


@dataclass
class Outcome:
    exit: int
    stdout: str
    stderr: str
    raw_stderr: str = field(default="", compare=False)  # before normalising: warnings, for a failure's report

    def __str__(self) -> str:
        text = f"exit {self.exit}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"
        warnings = [line for line in self.raw_stderr.splitlines() if " WARN " in line]
        return text + ("\n--- warnings (not compared)\n" + "\n".join(warnings[-10:]) if warnings else "")


@dataclass
class Broker:
    name: str
    bootstrap: str
    sasl: str


class ToolPair:
    """A tool JVM for each broker; every command goes to both."""

    def __init__(self, kafka: Broker, kipper: Broker, log_dir: Path):
        self.brokers = (kafka, kipper)
        self.servers = {b.name: ToolServer(b.name, log_dir) for b in self.brokers}
        self.run_id = uuid.uuid4().hex[:6]
        # record timestamps for the run: recent ones (records older than retention.ms, 7 days,
        # go at Kafka's first retention pass, 30 s after it starts), on a whole minute
        self.base_ms = (int(time.time()) // 60 - 10) * 60_000
        self.log_dir = log_dir

    def name(self, base: str) -> str:
        """A topic or group name for this run: the same on both brokers."""
        return f"{base}-{self.run_id}"

    def iso(self, ms: int) -> str:
        """A timestamp as the tools' --to-datetime takes it (UTC)."""
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}"

    def client_config(self, mechanism: str, user: str, password: str) -> str:
        """A --command-config file for SASL_PLAINTEXT (the same for both brokers)."""
        module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
        path = self.log_dir / f"client-{mechanism}-{user}.properties"
        path.write_text("security.protocol=SASL_PLAINTEXT\n"
                        f"sasl.mechanism={mechanism}\n"
                        f"sasl.jaas.config=org.apache.kafka.common.security.{module} required "
                        f'username="{user}" password="{password}";\n')
        return str(path)

    def _args(self, broker: Broker, args: tuple[str, ...]) -> list[str]:
        return [a.replace("{bootstrap}", broker.bootstrap).replace("{sasl}", broker.sasl) for a in args]

    def run(self, tool: str, *args: str, stdin: str | None = None, timeout: float = 120.0) -> dict[str, ToolResult]:
        for broker in self.brokers:
            self.servers[broker.name].submit(tool, self._args(broker, args), stdin)
        return {b.name: self.servers[b.name].result(timeout) for b in self.brokers}

    def outcome(self, broker: Broker, result: ToolResult, extra: tuple[Normaliser, ...],
                messages: bool = False) -> Outcome:
        def clean(text: str) -> str:
            for address, placeholder in ((broker.sasl, "<sasl-bootstrap>"), (broker.bootstrap, "<bootstrap>")):
                text = text.replace(address, placeholder)
            text = normalise(text, messages)
            for step in extra:
                text = step(text)
            return text.strip()
        return Outcome(result.exit, clean(result.stdout), clean(result.stderr), result.stderr)

    def compare(self, tool: str, *args: str, stdin: str | None = None, normalisers: tuple[Normaliser, ...] = (),
                timeout: float = 120.0, messages: bool = False) -> tuple[Outcome, Outcome]:
        results = self.run(tool, *args, stdin=stdin, timeout=timeout)
        kafka, kipper = (self.outcome(b, results[b.name], normalisers, messages) for b in self.brokers)
        return kafka, kipper

    def same(self, tool: str, *args: str, stdin: str | None = None, normalisers: tuple[Normaliser, ...] = (),
             exit: int | None = 0, timeout: float = 120.0, settle: float = 0.0,
             unless: str | None = None, messages: bool = False) -> Outcome:
        """Run on both; assert equal outcomes (and, unless None, this exit code). Kipper's outcome.

        ``messages``: the exception texts are compared too (where a tool prints a broker's
        error message, kipper's must be Kafka's words).

        ``unless``: the id of a difference listed as pending or open (another branch owns the
        fix): while it is listed, differing outcomes end the test as an expected failure; once
        its entry is gone, they fail it.

        ``settle``: Kafka applies some changes a moment later (dynamic broker configs reach
        the broker through the metadata log): a read-only command is run again for up to
        that many seconds until the outcomes agree.
        """
        deadline = time.monotonic() + settle
        while True:
            kafka, kipper = self.compare(tool, *args, stdin=stdin, normalisers=normalisers, timeout=timeout,
                                         messages=messages)
            if kipper == kafka or time.monotonic() >= deadline:
                break
            time.sleep(0.3)
        command = f"{tool} {' '.join(args)}"
        if unless is not None and kipper != kafka:
            entry = listed_difference(unless)
            if entry is not None and entry.kind in ("pending", "open"):
                pytest.xfail(f"{unless} ({entry.kind}, issue {entry.issue}): {command}: {entry.reason}")
        if kipper != kafka:
            # run it once more, for the report: a difference that goes away is a timing one
            again_kafka, again_kipper = self.compare(tool, *args, stdin=stdin, normalisers=normalisers, timeout=timeout,
                                                     messages=messages)
            again = "the same" if again_kafka == again_kipper else "still different"
            assert kipper == kafka, (f"{command}\n===== Kafka\n{kafka}\n===== kipper\n{kipper}\n"
                                     f"===== run again at once, the outcomes are {again}:\n"
                                     f"Kafka: {again_kafka}\nkipper: {again_kipper}")
        if exit is not None:
            assert kafka.exit == exit, f"{command}: exit {kafka.exit}, expected {exit}\n{kafka}"
        return kipper

    def create_topic(self, topic: str, partitions: int, *extra: str) -> None:
        """kafka-topics --create on both, then wait until every partition answers ListOffsets.
        Kafka answers CreateTopics before its broker leads the new partitions; a producer
        writing in that moment is answered NOT_LEADER_OR_FOLLOWER, and an idempotent one's
        retried batches can then meet OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout
        (seen with Kafka 4.4's Java producer: tests/java/kipper/ecosystem/clients/Common.java)."""
        from kipper.client.blocking import BlockingConnection
        from kipper.client.consumer_requests import LATEST_TIMESTAMP, list_offsets

        self.same("kafka-topics", "--bootstrap-server", "{bootstrap}", "--create", "--topic", topic,
                  "--partitions", str(partitions), *extra)
        for broker in self.brokers:
            host, port = broker.bootstrap.rsplit(":", 1)
            with BlockingConnection(host, int(port)) as conn:
                conn.negotiate()
                deadline = time.monotonic() + 20
                while True:
                    answer = list_offsets(conn, {(topic, p): LATEST_TIMESTAMP for p in range(partitions)})
                    codes = {p.error_code for t in answer.topics for p in t.partitions}
                    if codes == {0} or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
                assert codes == {0}, f"{topic} on {broker.name}: ListOffsets errors {codes}"

    def produce(self, topic: str, partition: int, batches: list[list[tuple]]) -> None:
        """The same batches (each a list of (key, value, timestamp)) to a partition of both
        brokers, from kipper's protocol layer: records whose offsets and timestamps a tool's
        answer depends on, byte for byte the same on both."""
        from kipper.client.blocking import BlockingConnection
        from kipper.protocol import records

        for broker in self.brokers:
            host, port = broker.bootstrap.rsplit(":", 1)
            with BlockingConnection(host, int(port)) as conn:
                conn.negotiate()
                for batch in batches:
                    deadline = time.monotonic() + 15
                    while True:  # a new topic's leader takes Kafka a moment (NOT_LEADER_OR_FOLLOWER...)
                        answer = conn.request(0, {"transactional_id": None, "acks": -1, "timeout_ms": 10000,
                                                  "topic_data": [{"name": topic, "partition_data": [
                                                      {"index": partition, "records": records.build_batch(batch)}]}]},
                                              version=9)
                        code = answer.responses[0].partition_responses[0].error_code
                        if code not in RETRIABLE_PRODUCE or time.monotonic() > deadline:
                            break
                        time.sleep(0.2)
                    assert code == 0, f"Produce to {broker.name} {topic}-{partition}: error {code}"

    def member(self, group: str, topic: str, protocol: str, client_id: str, tmp: Path) -> "Background":
        """A GroupMember (KafkaConsumer or KafkaShareConsumer) in each broker's tool JVM."""
        return Background(self, f"{group}-{client_id}", "kipper.ecosystem.GroupMember",
                          [group, topic, protocol, client_id], tmp)

    def open_transaction(self, transactional_id: str, topic: str, records: int, tmp: Path) -> "Background":
        """An OpenTransaction (a transactional KafkaProducer with a transaction left open)."""
        return Background(self, transactional_id, "kipper.ecosystem.OpenTransaction",
                          [transactional_id, topic, str(records)], tmp)

    def close(self) -> None:
        for server in self.servers.values():
            server.close()


class Background:
    """One of our programs per broker (BOOTSTRAP ARGS... READY_FILE STOP_FILE), in a thread of
    the broker's tool JVM, alive until ``stop``."""

    def __init__(self, pair: ToolPair, key: str, main: str, args: list[str], tmp: Path):
        self.pair = pair
        self.key = key
        self.files = {}
        for broker in pair.brokers:
            ready, stop = tmp / f"{broker.name}-{self.key}.ready", tmp / f"{broker.name}-{self.key}.stop"
            self.files[broker.name] = (ready, stop)
            pair.servers[broker.name].submit_background(self.key, main,
                                                        [broker.bootstrap, *args, str(ready), str(stop)])

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        for name, (ready, _) in self.files.items():
            while not ready.exists():
                assert time.monotonic() < deadline, f"{self.key} on {name} was not ready in {timeout}s"
                time.sleep(0.1)

    def stop(self) -> None:
        for name, (_, stop) in self.files.items():
            stop.touch()
        for name in self.files:
            done = self.pair.servers[name].join(self.key)
            assert done.exit == 0, f"{self.key} on {name} failed: {done.stderr}"

    def __enter__(self) -> "Background":
        self.wait_ready()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
