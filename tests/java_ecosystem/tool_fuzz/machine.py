"""The tool generator's state machine: sequences of Kafka's own command-line tools, each
command run in both brokers' tool JVMs at once (tests/java_ecosystem/tool_pair.py) and the
outcomes compared: exit code, stdout and stderr, with the error texts the tools print
compared word for word (``messages=True``), as a new user at a terminal sees them.

It reuses the protocol generator's rounds, findings and shrinking
(tests/conformance/fuzz/explore.py): a difference is a ``Difference`` whose "API" is the tool,
whose request is the command, and whose path is the stream and line that differ. A command
that changes nothing is run again for up to ``SETTLE_S`` while the outcomes differ (Kafka
applies configs and ACLs from its metadata log a moment after it answers); after one that
may change topics, both brokers' metadata of the sequence's topics is waited for until it
agrees (Kafka makes and deletes topics a moment after it answers)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from tests.conformance.compare import Difference
from tests.conformance.fuzz.machine import Outcomes, Run, counted
from tests.java_ecosystem.tool_fuzz import commands
from tests.java_ecosystem.tool_fuzz.settle import cleanup, topics_agree
from tests.java_ecosystem.tool_pair import Outcome, ToolPair, member_epochs_blank

SETTLE_S = 5.0
COMMAND_TIMEOUT_S = 60.0
# the Java admin client's words when a call's time runs out depend on where the call was at
# that moment (between tries, or in one): timing, not the broker's answer
TIMED_OUT = re.compile(r"Timed out waiting for a node assignment\. Call: \S+?(?=\.?(?:\s|$))|"
                       r"Call\(callName=\S+, deadlineMs=\S+, tries=\d+, nextAllowedTryMs=\S+\) timed out at \S+ "
                       r"after \d+ attempt\(s\)")
ERROR_LINE = re.compile(r"(Exception|Error)\b")
REQUEST_OBJECT = re.compile(r"Request Request\(.*\) needs (\w+) permission\.")
# a partition's log directory as kafka-reassign-partitions prints it: each broker's own path
# (kipper in memory: "memory:"); "any" is the tool's own word
LOG_DIRS = re.compile(r'"log_dirs":\[([^\]]*)\]')


def log_dirs_blank(text: str) -> str:
    return LOG_DIRS.sub(lambda m: '"log_dirs":[' + ",".join(
        d if d == '"any"' else '"<dir>"' for d in m.group(1).split(",")) + "]", text)
# listed differences the tools show, masked where they show (docs/KAFKA_DIFFERENCES.md names each)
LISTED: list[tuple[str, Callable[[str], str]]] = [
    # Kafka's format writes min.insync.replicas=1 as a cluster default: its describe lists it among
    # a topic's overrides
    # (a describe's line of it goes whole, whatever its synonyms: kipper's --all lists it as a default)
    ("min-insync-replicas-cluster-default", lambda text: re.sub(r"min\.insync\.replicas=1,?", "", re.sub(
        r"^\s*min\.insync\.replicas=1 sensitive=false synonyms=\{[^}]*\}\n?", "", text, flags=re.M))),
    # KIP-848 and KIP-932 group and member epochs count one or two more on Kafka
    ("group-assignment-off-the-heartbeat", member_epochs_blank),
    # seed 004: share.auto.offset.reset is a topic config too, which a topic's describe --all lists
    ("share-auto-offset-reset-topic-config", lambda text: re.sub(
        r"^\s*share\.auto\.offset\.reset=\S* sensitive=false synonyms=\{\}\n?", "", text, flags=re.M)),
]
# the masks that apply only to some commands (a group's share.auto.offset.reset is Kafka's too)
LISTED_FOR = {"share-auto-offset-reset-topic-config": lambda args: "topics" in args}


@dataclass
class ToolRun(Run):
    """A generator run over the tools: the protocol generator's ``Run`` and the tool JVMs."""

    pair: ToolPair | None = None
    files: Path | None = None  # where a command's files (a delete-records plan) are written
    masked: dict = field(default_factory=dict)  # listed entry -> outcomes it masked
    tools: dict = field(default_factory=dict)  # tool -> commands run (summary.json)

    def token(self) -> str:
        return f"k{next(self.tokens) % 1_000_000:06d}"


def resolve(step: dict, token: str, files: Path) -> tuple[list[str], str | None]:
    """A command's arguments and input for this sequence: its names, its files written."""
    paths = {}
    for name, text in (step.get("files") or {}).items():
        path = files / f"{token}-{name}.json"
        path.write_text(text.replace("<T>", token))
        paths[f"<file:{name}>"] = str(path)
    args = [paths.get(a, a.replace("<T>", token)) for a in step["args"]]
    stdin = step.get("stdin")
    return args, stdin.replace("<T>", token) if stdin is not None else None


def normalisers(run: ToolRun, step: dict, token: str) -> tuple:
    """What every outcome goes through past tool_pair's own normalising: what is each broker's
    own masked (``volatile``), listings cut to the sequence's own names and to errors (the
    broker is shared with other sequences and tests), listed differences masked, lines sorted
    (tools print maps in their hash order, and console consumers partitions as they come)."""
    listing = "--list" in step["args"] or step["args"][:1] == ["list"]

    def own(text: str) -> str:
        if not listing:
            return text
        return "\n".join(line for line in text.splitlines()
                         if token in line or re.match(r"^[A-Z][A-Za-z]+\s", line) or ERROR_LINE.search(line))

    def listed(text: str) -> str:
        for entry, mask in LISTED:
            if entry in LISTED_FOR and not LISTED_FOR[entry](step["args"]):
                continue
            masked = mask(text)
            if masked != text:
                run.masked[entry] = run.masked.get(entry, 0) + 1
            text = masked
        return re.sub(r"[ \t]+$", "", text, flags=re.M)  # (what a mask leaves at a line's end)

    return volatile, own, listed, sets_sorted, own_ids, padding, lambda text: "\n".join(sorted(text.splitlines()))


def padding(text: str) -> str:
    """Runs of spaces as one: a group tool pads its columns to the longest value on the whole
    broker, other sequences' groups too (a console consumer's own group has a random name)."""
    return re.sub(r" {2,}", " ", text)


PERF_FIGURES = re.compile(r"[\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency"
                          r"(, \d+ ms \d+(\.\d+)?th)*\.?")


def volatile(text: str) -> str:
    """What is each broker's own, as tests/conformance/normalise.py has it: the finalized
    features' epoch (Kafka's metadata log's offset), the Request object Kafka's refusals print
    (its connection, its session's hash), log directories; the admin client's timing words (``TIMED_OUT``) and a
    perf test's figures (its interim lines dropped)."""
    text = log_dirs_blank(REQUEST_OBJECT.sub(r"Request <the request> needs \1 permission.", text))
    text = PERF_FIGURES.sub("<figures>", re.sub(r"^\d+ records sent, .* max latency\.\n?", "", text, flags=re.M))
    return re.sub(r"(?<=Epoch: )\d+", "<n>", TIMED_OUT.sub("<the call timed out>", text))


# tab-separated columns whose values each broker gives its own way: ids, and how long a
# transaction has run when it is looked at (a clock's)
OWN_IDS = ("ProducerId", "TransactionDurationMs")


def own_ids(text: str) -> str:
    """The values under an ``OWN_IDS`` header (kafka-transactions' tables) as ``<id>``."""
    out, columns = [], []
    for line in text.splitlines():
        cells = line.split("\t")
        if any(name in cells for name in OWN_IDS):
            columns = [i for i, cell in enumerate(cells) if cell in OWN_IDS]
        elif columns and len(cells) > max(columns):
            cells = ["<id>" if i in columns else cell for i, cell in enumerate(cells)]
        out.append("\t".join(cells))
    return "\n".join(out)


def sets_sorted(text: str) -> str:
    """The items of every [a, b, c] sorted: a tool prints a Java set in its hash order, which
    for enums (identity hash codes) differs from one JVM to the next."""
    return re.sub(r"\[([^\[\]]*,[^\[\]]*)\]",
                  lambda m: "[" + ", ".join(sorted(i.strip() for i in m.group(1).split(","))) + "]", text)


def differences(step: dict, command: str, kafka: Outcome, kipper: Outcome) -> list[Difference]:
    out = []
    if kafka.exit != kipper.exit:
        out.append(Difference("tools", command, step["tool"], -1, "exit", kafka.exit, kipper.exit))
    for stream in ("stdout", "stderr"):
        a, b = getattr(kafka, stream).splitlines(), getattr(kipper, stream).splitlines()
        for i in range(max(len(a), len(b))):
            la, lb = (a[i] if i < len(a) else "<absent>"), (b[i] if i < len(b) else "<absent>")
            if la != lb:
                out.append(Difference("tools", command, step["tool"], -1, f"{stream} line {i + 1}", la, lb))
                break  # the first line that differs: the rest follows from it, mostly
    return out


def run_step(run: ToolRun, step: dict, token: str) -> list[Difference]:
    args, stdin = resolve(step, token, run.files)
    command = " ".join([step["tool"], *step["args"]])
    deadline = time.monotonic() + (SETTLE_S if step.get("reads") else 0)
    while True:
        kafka, kipper = run.pair.compare(step["tool"], *args, stdin=stdin, messages=True,
                                         normalisers=normalisers(run, step, token), timeout=COMMAND_TIMEOUT_S)
        if kafka == kipper or time.monotonic() >= deadline:
            break
        time.sleep(0.3)
    if not step.get("reads"):
        topics_agree(run, token)
    found = differences(step, command, kafka, kipper)
    run.tools[step["tool"]] = run.tools.get(step["tool"], 0) + 1
    return counted(run, found)


def machine(run: ToolRun) -> type[RuleBasedStateMachine]:
    """The state machine class for this run's tool JVMs."""

    class Commands(Outcomes):
        @initialize(partitions=st.sampled_from(["1", "3"]))
        def setup(self, partitions):
            """Topic t0 with a few keyed records, topic p (one partition, for the perf producer's
            transactions), the sequence's user <T>-u0 (its SCRAM credential, waited for: Kafka
            applies it a moment after it answers) and group g1 reading from the earliest offset."""
            self.send(commands.command("kafka-topics", *commands.BS, "--create", "--topic", "<T>-t0",
                                       "--partitions", partitions))
            self.send(commands.command("kafka-topics", *commands.BS, "--create", "--topic", "<T>-p",
                                       "--partitions", "1"))
            self.send(commands.command("kafka-configs", *commands.BS, "--entity-type", "users", "--entity-name",
                                       "<T>-u0", "--alter", "--add-config", commands.USER_SECRET))
            self.send(commands.command("kafka-topics", *commands.USER, "--list", reads=True))
            self.send(commands.command("kafka-configs", *commands.BS, "--entity-type", "groups", "--entity-name",
                                       "<T>-g1", "--alter", "--add-config", "share.auto.offset.reset=earliest"))
            self.send(commands.command("kafka-console-producer", *commands.BS, "--topic", "<T>-t0", "--property",
                                       "parse.key=true", "--property", "key.separator=:",
                                       stdin="".join(f"k{i}:v{i}\n" for i in range(5))))

        @rule(step=commands.topics())
        def topics(self, step):
            self.send(step)

        @rule(step=commands.configs())
        def configs(self, step):
            self.send(step)

        @rule(step=commands.data())
        def data(self, step):
            self.send(step)

        @rule(step=commands.groups())
        def groups(self, step):
            self.send(step)

        @rule(step=commands.acls())
        def acls(self, step):
            self.send(step)

        @rule(step=commands.transactions())
        def transactions(self, step):
            self.send(step)

        @rule(step=commands.shares())
        def shares(self, step):
            self.send(step)

        @rule(step=commands.cluster())
        def cluster(self, step):
            self.send(step)

        @rule(step=commands.cluster_admin())
        def cluster_admin(self, step):
            self.send(step)

        @rule(step=commands.share_consume())
        def share_consume(self, step):
            self.send(step)
            self.ended = self.ended or "after a share consumer (share-state-in-the-partition)"

        def compare(self, step: dict) -> list[Difference]:
            return run_step(run, step, self.token)

        def cleanup(self) -> None:
            cleanup(run, self.token)

    Commands.run = run
    return Commands
