"""The state machine Hypothesis drives: a sequence of steps over this sequence's topics,
idempotent and transactional producers, classic, KIP-848 and share groups, each step sent to
both brokers at once and their answers compared as the conformance suite compares a
scenario's (normalise.py, compare.py, allowed_differences.toml).

Rules: one draws a step of any API kipper advertises; five more draw from an area's APIs
(topics, producers, groups, shares, admin), so that related requests meet in one sequence.
An unlisted difference fails the sequence and Hypothesis shrinks it. After a listed
difference that leaves the brokers in different states (a KIP-360 bump gives one broker a new
epoch and the other a new producer id) the rest of the sequence is not sent: what follows
would differ because of it. A difference already found in this run (``Run.known``) ends a
sequence the same way, so a long run goes on to find others.

Share groups go on past their first ShareFetch: seed 004 writes share state into the
partition itself, so once kipper's log ends run ahead of Kafka's (looked at after every step
that can write it) a difference in what the log's length decides (offsets, watermarks,
records, sizes, and any answer of the APIs that read the log by offset) is that entry's and
ends the sequence; everything else a share group answers is still compared.
"""

from __future__ import annotations

import itertools
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from tests.conformance.compare import Allowed, Difference, classify, closed, diff, error_codes
from tests.conformance.fuzz import bodies
from tests.conformance.fuzz.side import USER_CONN, Side, user_credential
from tests.conformance.fuzz.values import pick
from tests.conformance.harness import Exchange, Run as HarnessRun
from tests.conformance.scenarios import kit
from tests.support.reference import Reference

# listed differences after which both brokers still hold the same state: the rest of the
# sequence is compared (every other listed difference ends it)
SAME_STATE_AFTER = frozenset({
    "api-versions-ranges", "share-state-apis", "init-producer-id-window-tag",
    "min-insync-replicas-cluster-default", "group-initial-rebalance-delay-default",
    "share-min-record-lock-duration-default", "listener-configs-read-at-start",
    "share-auto-offset-reset-topic-config", "share-auto-offset-reset-topic-config-create",
    "group-assignment-off-the-heartbeat", "group-assignment-arrives-later", "share-group-state-topic",
    "quorum-without-metadata-log", "quorum-without-metadata-log-offsets", "quorum-voter-endpoints",
})
# seed 004 writes share-partition state into the partition itself (KAFKA_DIFFERENCES.md
# share-state-in-the-partition): after these, kipper's log end offsets may run ahead of Kafka's
SHARE_STATE_WRITERS = frozenset({"ShareFetch", "ShareAcknowledge", "AlterShareGroupOffsets", "DeleteShareGroupOffsets",
                                 "ShareGroupHeartbeat"})  # (an assignment initializes share partitions)
SHARE_STATE = "share-state-in-the-partition"
# a member epoch drawn relative to the one a broker gave ("the member's epoch - 1") names
# different epochs on the two once they gave different ones (the listed difference): the two
# requests differ, so their answers are not compared
EPOCHS_APART = "group-assignment-off-the-heartbeat"
EPOCH_FIELDS = ("member_epoch", "generation_id_or_member_epoch")
# once they have: the APIs whose answers the log's length decides, and the fields it decides elsewhere
LOG_READERS = frozenset({"Produce", "Fetch", "ListOffsets", "DeleteRecords", "OffsetForLeaderEpoch",
                         "DescribeLogDirs", "DescribeProducers"})
LOG_SHAPED = re.compile(r"offset|watermark|records|size|timestamp|(^|\.)lag$")  # (lag: the log end less a start)
READ_ONLY = re.compile(r"^(Describe|List|Metadata$|ApiVersions$|OffsetFetch$|FindCoordinator$|ConsumerGroupDescribe$|"
                       r"ShareGroupDescribe$)")
SHARE_FIRST_WAIT_MS = 3000
GRANTED = {2: "t", 3: "g", 5: "x"}  # a resource type the setup may allow the user: the prefix of the sequence's names
# no step waits longer for an answer than this (the longest wait drawn is the first ShareFetch's
# 3 s): Kafka never answers a few requests it fails inside (a Produce of null records), and each
# such step would otherwise cost the scenarios' 30 s
READ_TIMEOUT_S = 10.0


@dataclass
class Stats:
    sequences: int = 0
    steps: int = 0
    compared: int = 0
    identical: int = 0
    listed: dict = field(default_factory=dict)  # allowed entry -> differences it covered
    unlisted: int = 0  # differences no entry covers (a finding's, and known ones met again)
    known_again: int = 0
    ended_after_listed: int = 0
    past_share_state: int = 0  # steps compared after kipper's share state lengthened its log


@dataclass
class Failure:
    token: str
    steps: list
    differences: list[Difference]


@dataclass
class Run:
    """What one generator run shares across its sequences: the brokers, the allowed list,
    what kipper advertises, the figures, and the differences already found."""

    kafka: Reference
    kipper: Reference
    allowed: list[Allowed]
    apis: list[tuple]
    deadline: float = float("inf")
    stats: Stats = field(default_factory=Stats)
    known: set = field(default_factory=set)
    last_failure: Failure | None = None
    tokens: itertools.count = field(default_factory=lambda: token_counter())
    messages: bool = False  # ``--messages``: error messages compared word for word, not only null, "" or text

    def token(self) -> str:
        return f"f{next(self.tokens) % 1_000_000:06d}"


def token_counter(worker: int = 0, workers: int = 1) -> itertools.count:
    """Where a run's sequence tokens start: from the OS, not random (Hypothesis seeds random), so
    runs against the same brokers do not share names, and each of ``workers`` in its own block of
    the million, so that workers sharing the brokers never meet each other's topics and groups
    (the twelfth run's workers did, and saw what another's sequence had left)."""
    span = 1_000_000 // workers
    return itertools.count(worker * span + int.from_bytes(os.urandom(3)) % (span // 2))


_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fuzz-side")


class Pair:
    """Both brokers' sides of one sequence."""

    def __init__(self, run: Run, token: str):
        self.run, self.token = run, token
        self.kafka = Side(HarnessRun(run.kafka, token, read_timeout=READ_TIMEOUT_S), run.messages)
        self.kipper = Side(HarnessRun(run.kipper, token, read_timeout=READ_TIMEOUT_S), run.messages)
        self.diverged = False  # kipper's log ends ran ahead of Kafka's (share state written)

    def step(self, step: dict) -> list[Difference]:
        a, b = (_POOL.submit(_safely, side, step) for side in (self.kafka, self.kipper))
        ours, theirs = a.result(), b.result()
        differences = self.compare(step, ours, theirs)
        if not self.diverged and step["api"] in SHARE_STATE_WRITERS:
            a, b = (_POOL.submit(_log_ends, side) for side in (self.kafka, self.kipper))
            self.diverged = a.result() != b.result()
        return differences

    def compare(self, step: dict, kafka: list[Exchange], kipper: list[Exchange]) -> list[Difference]:
        name = f"fuzz/{step['api']}"
        out = []
        for i in range(max(len(kafka), len(kipper))):
            x = kafka[i] if i < len(kafka) else kipper[i]
            ka = self.kafka.resolver.norm.response(kafka[i].response) if i < len(kafka) else "<absent>"
            kb = self.kipper.resolver.norm.response(kipper[i].response) if i < len(kipper) else "<absent>"
            codes, theirs = error_codes(ka), error_codes(kb)
            out += [Difference(name, x.label, x.api, x.version, path, va, vb, kafka_codes=codes, kipper_codes=theirs,
                               kafka_closed=closed(ka), asked=x.request)
                    for path, va, vb in diff(ka, kb)]
        classify(out, self.run.allowed)
        if any(_epochs_apart(ka.request, kb.request) for ka, kb in zip(kafka, kipper)):
            for d in out:
                d.allowed = d.allowed or EPOCHS_APART
        if self.diverged:
            for d in out:
                if not d.allowed and (d.api in LOG_READERS or LOG_SHAPED.search(d.path)):
                    d.allowed = SHARE_STATE
        stats = self.run.stats
        stats.compared += 1
        stats.past_share_state += self.diverged
        stats.identical += not out
        for d in out:
            if d.allowed:
                stats.listed[d.allowed] = stats.listed.get(d.allowed, 0) + 1
            else:
                stats.unlisted += 1
        return out

    def close(self, cleanup: bool = True) -> None:
        for side in (self.kafka, self.kipper):
            if cleanup:
                _POOL.submit(_cleanup, side).result()
            side.run.close()


def _epochs_apart(kafka: dict, kipper: dict) -> bool:
    """Whether the two sides' requests name different member epochs (resolved from a symbol)."""
    return isinstance(kafka, dict) and isinstance(kipper, dict) and any(
        kafka.get(f) != kipper.get(f) for f in EPOCH_FIELDS)


def _safely(side: Side, step: dict) -> list[Exchange]:
    try:
        return side.step(step)
    except Exception as exc:  # noqa: BLE001 - a step that breaks on one broker is a difference
        side.run.drop(step.get("conn", "main"))
        return [Exchange(step.get("label") or step["api"], step["api"], step["version"], None,
                         {"<error>": f"{type(exc).__name__}: {exc}"})]


def _log_ends(side: Side) -> dict:
    try:
        return side.log_ends()
    except Exception as exc:  # noqa: BLE001 - a broker that cannot say: the logs are not known alike
        return {"<error>": repr(exc)}


def _cleanup(side: Side) -> None:
    """Members leave and the sequence's groups, users and their ACLs go (unrecorded): kipper
    counts share groups against group.share.max.groups, and a long run makes thousands."""
    token = side.run.token
    groups = [f"{token}-g{i}" for i in range(3)]
    try:
        for g in groups:
            members = set(side.resolver.members.get(g, [])) | {f"{token}-m0", f"{token}-m1"}
            for m in members:
                side.run.call(kit.SHARE_GROUP_HEARTBEAT, 1, {"group_id": g, "member_id": m, "member_epoch": -1,
                                                              "rack_id": None, "subscribed_topic_names": None},
                              record=False, conn="cleanup")
                side.run.call(kit.CONSUMER_GROUP_HEARTBEAT, 0, {
                    "group_id": g, "member_id": m, "member_epoch": -1, "instance_id": None, "rack_id": None,
                    "rebalance_timeout_ms": -1, "subscribed_topic_names": None, "server_assignor": None,
                    "topic_partitions": None}, record=False, conn="cleanup")
        side.run.call(kit.DELETE_GROUPS, kit.top(kit.DELETE_GROUPS), {"groups_names": groups}, record=False,
                      conn="cleanup")
        side.run.drop(USER_CONN)  # the user's ACLs and credential go: a long run makes thousands
        side.run.call(kit.DELETE_ACLS, kit.top(kit.DELETE_ACLS), {"filters": [{
            "resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
            "principal_filter": f"User:{token}-u{i}", "host_filter": None, "operation": 1, "permission_type": 1}
            for i in range(2)]}, record=False, conn="cleanup")
        side.run.call(kit.ALTER_SCRAM, 0, {"upsertions": [], "deletions": [
            {"name": f"{token}-u{i}", "mechanism": 1} for i in range(2)]}, record=False, conn="cleanup")
    except Exception:  # noqa: BLE001 - cleanup is best effort; the broker may be gone
        pass


def signature(d: Difference, token: str) -> tuple:
    """What makes two differences the same finding: the API, the field's path without its
    names and numbers, and both values (error codes exactly, other numbers by sign)."""
    def summary(value):
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            if d.path.endswith("_code") or d.path.endswith("error"):
                return value
            return "0" if value == 0 else "<0" if value < 0 else ">0"
        if isinstance(value, str):
            return re.sub(r"\d+", "N", value.replace(token, "<T>"))
        return type(value).__name__
    path = re.sub(r"\d+", "N", re.sub(r"=[^.]*", "=*", d.path))
    return (d.api, path, summary(d.kafka), summary(d.kipper))


class DifferenceFound(AssertionError):
    pass


def found_again(run: Run, token: str, steps: list, unlisted: list[Difference]) -> str:
    """Unlisted differences in a sequence: if every one was found before in this run, why the
    sequence ends there (counted); else the sequence fails with them (``DifferenceFound``)."""
    if {signature(d, token) for d in unlisted} <= run.known:
        run.stats.known_again += 1
        return "a difference found before"
    run.last_failure = Failure(token, list(steps), unlisted)
    raise DifferenceFound(describe(unlisted))


def counted(run: Run, found: list) -> list:
    """One step compared, in the run's figures (the tool and client generators'); ``found`` back."""
    stats = run.stats
    stats.steps += 1
    stats.compared += 1
    stats.identical += not found
    stats.unlisted += len(found)
    return found


class Outcomes(RuleBasedStateMachine):
    """A sequence of steps whose outcomes a generator compares one at a time (the tool and the
    client generators; ``run`` is set on each subclass): a step's new differences fail it
    (``found_again``), and one that says ``ends`` (why) is its last. ``compare`` and
    ``cleanup`` are the generator's."""

    run: Run

    def __init__(self):
        super().__init__()
        self.token = self.run.token()
        self.steps: list[dict] = []
        self.ended: str | None = None
        self.run.stats.sequences += 1

    def compare(self, step: dict) -> list[Difference]:
        raise NotImplementedError

    def cleanup(self) -> None:
        """What the sequence made goes, on both brokers."""

    def send(self, step: dict) -> None:
        if self.ended:
            return
        self.steps.append(step)
        found = self.compare(step)
        if found:
            self.ended = found_again(self.run, self.token, self.steps, found)
        elif step.get("ends"):
            self.ended = step["ends"]

    def teardown(self):
        self.cleanup()


def machine(run: Run) -> type[RuleBasedStateMachine]:
    """The state machine class for this run's brokers and what kipper advertises."""
    everything = run.apis

    class Sequences(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.token = run.token()
            self.pair = Pair(run, self.token)
            self.steps: list[dict] = []
            self.ended: str | None = None
            self.share_fetched: set = set()
            self.share_joined: set = set()
            run.stats.sequences += 1
            self.grouped = False

        @initialize(partitions=pick(1, 3, 2), grants=pick((), (2,), (2, 3), (2, 3, 5)))
        def setup(self, partitions, grants):
            """Topic t0, share group g2 reading from the earliest offset, the sequence's own
            SASL user <T>-u0 (the "user" connection's), allowed everything on the sequence's
            topics, groups and transactional ids as ``grants`` says (resource types), and
            whatever else the ACLs drawn later say."""
            self.send({"api": "CreateTopics", "version": kit.top(kit.CREATE_TOPICS), "body": {
                "topics": [{"name": "<T>-t0", "num_partitions": partitions, "replication_factor": 1,
                            "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False}})
            self.send({"api": "IncrementalAlterConfigs", "version": kit.top(kit.INCREMENTAL_ALTER_CONFIGS), "body": {
                "resources": [{"resource_type": 32, "resource_name": "<T>-g2", "configs": [
                    {"name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"}]}],
                "validate_only": False}})
            self.send({"api": "AlterUserScramCredentials", "version": 0, "body": {
                "deletions": [], "upsertions": [user_credential()]}})
            if grants:
                self.send({"api": "CreateAcls", "version": kit.top(kit.CREATE_ACLS), "body": {"creations": [
                    {"resource_type": t, "resource_name": f"<T>-{GRANTED[t]}", "resource_pattern_type": 4,
                     "principal": "User:<T>-u0", "host": "*", "operation": 2, "permission_type": 3}
                    for t in grants]}})

        @rule(step=bodies.steps(everything))
        def any_api(self, step):
            self.send(step)

        @rule(step=bodies.steps(bodies.in_area(everything, "topics")))
        def topics(self, step):
            self.send(step)

        @rule(step=bodies.steps(bodies.in_area(everything, "producers")))
        def producers(self, step):
            self.send(step)

        @rule(step=bodies.steps(bodies.in_area(everything, "groups")))
        def groups(self, step):
            self.send(step)

        @rule(step=bodies.steps(bodies.in_area(everything, "shares")))
        def shares(self, step):
            self.send(step)

        @rule(step=bodies.steps(bodies.in_area(everything, "admin")))
        def admin(self, step):
            self.send(step)

        def send(self, step: dict) -> None:
            if self.ended:
                return
            step = self.first_share_fetch_waits(step)
            self.steps.append(step)
            self.grouped |= step["api"] in ("ShareGroupHeartbeat", "ConsumerGroupHeartbeat")
            run.stats.steps += 1
            differences = self.pair.step(step)
            unlisted = [d for d in differences if not d.allowed]
            if unlisted:
                self.ended = found_again(run, self.token, self.steps, unlisted)
                return
            changed = {d.allowed for d in differences} - SAME_STATE_AFTER
            # a read-only step changes nothing, unless Kafka closed that connection (listed): the
            # two brokers' connections differ from then on (Kafka's is made again, and logs in again)
            if changed and (not READ_ONLY.match(step["api"]) or any(d.kafka_closed for d in differences)):
                run.stats.ended_after_listed += 1
                self.ended = f"after {sorted(changed)[0]}"

        def first_share_fetch_waits(self, step: dict) -> dict:
            """A share partition's first ShareFetch by a member of its group waits for records:
            Kafka loads its state on first use and answers empty meanwhile."""
            if step["api"] == "ShareGroupHeartbeat" and step["body"].get("member_epoch") == 0:
                self.share_joined.add(step["body"].get("group_id"))
            if step["api"] != "ShareFetch" or step["body"].get("group_id") not in self.share_joined:
                return step
            body = step["body"]
            parts = {(repr(t.get("topic_id")), p.get("partition_index")) for t in body.get("topics") or []
                     for p in t.get("partitions") or []}
            fresh = {(body.get("group_id"), tp) for tp in parts} - self.share_fetched
            if fresh:
                self.share_fetched |= fresh
                body = dict(body, max_wait_ms=max(body.get("max_wait_ms", 0), SHARE_FIRST_WAIT_MS), min_bytes=1)
                step = dict(step, body=body)
            return step

        def teardown(self):
            self.pair.close(cleanup=self.grouped)

    return Sequences


def describe(differences: list[Difference], limit: int = 12) -> str:
    return "differences from Kafka that allowed_differences.toml does not list:\n" + "\n".join(
        f"  [{d.label}] {d.api} v{d.version} {d.path}: kafka={d.kafka!r} kipper={d.kipper!r}"
        for d in differences[:limit])

