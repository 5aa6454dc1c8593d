"""The client generator's state machine: sequences of calls of the Python clients our users
write with (confluent-kafka, kafka-python, aiokafka), each call made against Kafka and against
kipper at once and what the client returned compared: results, the errors it raised and their
texts word for word, as a Python user sees them.

It reuses the protocol generator's rounds, findings and shrinking
(tests/conformance/fuzz/explore.py): a difference's "API" is the client and call, its request
the step, its path where the two outcomes differ. A call that changes nothing is made again for
up to ``SETTLE_S`` while the outcomes differ (Kafka applies configs, ACLs and credentials from
its metadata log a moment after it answers); after one that may change topics, both brokers'
metadata of the sequence's topics is waited for until it agrees."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from tests.conformance.client_fuzz import calls, steps
from tests.conformance.client_fuzz.plain import failure
from tests.conformance.compare import Difference, diff
from tests.conformance.fuzz.machine import Outcomes, Run, counted
from tests.java_ecosystem.tool_fuzz.settle import (DELETE, DELETE_GROUPS, INCREMENTAL_ALTER_CONFIGS, cleanup,
                                                    topics_agree)
from tests.java_ecosystem.tool_fuzz.settle import connection as broker_connection

SETTLE_S = 5.0
GROUP = 32  # (a config resource type)
POOL = ThreadPoolExecutor(2, thread_name_prefix="client-fuzz")


@dataclass
class ClientRun(Run):
    """A generator run over the Python clients: the protocol generator's ``Run`` and counts."""

    calls: dict = field(default_factory=dict)  # client call -> how many were made (summary.json)
    masked: dict = field(default_factory=dict)  # listed entry -> outcomes it masked

    def token(self) -> str:
        return f"p{next(self.tokens) % 1_000_000:06d}"


# a broker's configs compared: those both reference brokers are given alike (the rest are
# each one's own start-up: listeners, log directories, the controller's quorum, thread counts)
# and the authorizer's, which Kafka describes as configs it does not know
BROKER_COMPARED = frozenset(steps.BROKER_CONFIGS) - {"num.io.threads"} | {
    "default.replication.factor", "delete.topic.enable", "log.retention.minutes", "connections.max.idle.ms",
    "log.cleaner.io.max.bytes.per.second", "broker.rack", "fetch.max.bytes", "broker.id",
    "queued.max.requests", "auto.create.topics.enable", "log.segment.bytes", "compression.type",
    "super.users", "allow.everyone.if.no.acl.found", "group.max.size", "num.partitions"}


def listed(run: ClientRun, value, resource: str = ""):
    """``value`` with the listed differences a client shows masked where it shows them
    (docs/KAFKA_DIFFERENCES.md names each), counted: min.insync.replicas, a cluster default on
    Kafka; share.auto.offset.reset, a topic config on kipper (seed 004); and a broker's
    configs cut to ``BROKER_COMPARED``; wherever configs come back (a describe, and a topic's
    creation). ``resource``: the kind of the configs below (a key ``TOPIC:<name>``, ``topic``
    or ``topics`` above them names it)."""
    if isinstance(value, list):
        return [listed(run, v, resource) for v in value]
    if not isinstance(value, dict):
        return value
    entries = [v for v in value.values() if isinstance(v, dict) and "value" in v]
    if entries and len(entries) == len(value):  # a resource's configs, by name
        out = {}
        for name, entry in value.items():
            if resource == "BROKER" and name not in BROKER_COMPARED:
                continue
            if name == "share.auto.offset.reset" and resource == "TOPIC":
                _masked(run, "share-auto-offset-reset-topic-config")
                continue
            out[name] = _masked(run, "min-insync-replicas-cluster-default") if (
                name == "min.insync.replicas" and entry["value"] == "1") else entry
        return out
    return {k: listed(run, v, "TOPIC" if k in ("topic", "topics") or k.startswith("TOPIC:") else
                      "BROKER" if k == "broker" or k.startswith("BROKER:") else resource) for k, v in value.items()}


def _masked(run: ClientRun, entry: str) -> str:
    run.masked[entry] = run.masked.get(entry, 0) + 1
    return f"<listed: {entry}>"


def outcome(run: ClientRun, ref, step: dict, token: str):
    """What the step's client returned on one broker (or raised), as plain data."""
    try:
        found = calls.call(ref, steps.resolved(step, token), token)
    except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001 - what the call raised is its outcome
        return failure(exc)
    return listed(run, found)


def differences(step: dict, kafka, kipper) -> list[Difference]:
    name = f"{step['client']}.{step['op']}"
    request = json.dumps(step, sort_keys=True)
    return [Difference("clients", request, name, -1, path, a, b) for path, a, b in diff(kafka, kipper)]


def run_step(run: ClientRun, step: dict, token: str, verbose: bool = False):
    deadline = time.monotonic() + (SETTLE_S if step.get("reads") else 0)
    while True:
        pending = [POOL.submit(outcome, run, ref, step, token) for ref in (run.kafka, run.kipper)]
        kafka, kipper = (p.result() for p in pending)
        found = differences(step, kafka, kipper)
        if not found or time.monotonic() >= deadline:
            break
        time.sleep(0.3)
    if not step.get("reads"):
        topics_agree(run, token)
    name = f"{step['client']}.{step['op']}"
    run.calls[name] = run.calls.get(name, 0) + 1
    counted(run, found)
    return (found, (kafka, kipper)) if verbose else found


def share_group_deleted(run: ClientRun, token: str) -> None:
    """The sequence's share group goes (kipper counts share groups against
    group.share.max.groups), and its config (DeleteGroups leaves it on Kafka, and a listing of
    every config resource would meet it); best effort."""
    for ref in (run.kafka, run.kipper):
        try:
            conn = broker_connection(ref.bootstrap)
        except OSError:
            continue
        try:
            conn.request(DELETE_GROUPS, {"groups_names": [f"{token}-s0"]}, version=2)
            conn.request(INCREMENTAL_ALTER_CONFIGS, {"validate_only": False, "resources": [{
                "resource_type": GROUP, "resource_name": f"{token}-s0", "configs": [
                    {"name": "share.auto.offset.reset", "config_operation": DELETE, "value": None}]}]}, version=1)
        except Exception:  # noqa: BLE001 - cleanup is best effort
            pass
        finally:
            conn.close()


def machine(run: ClientRun, shares: bool = True) -> type[RuleBasedStateMachine]:
    """The state machine class for this run's brokers; ``shares=False`` leaves the share
    consumer out (the bounded round of make test, on a Kafka the whole session shares)."""

    class Calls(Outcomes):
        @initialize(partitions=st.sampled_from([1, 3]))
        def setup(self, partitions):
            """Topic t0 with a few keyed records, and the sequence's user <T>-u0 (its SCRAM
            credential, waited for: Kafka applies it a moment after it answers)."""
            for step in steps.setup(partitions):
                self.send(step)

        @rule(step=steps.topics())
        def topics(self, step):
            self.send(step)

        @rule(step=steps.configs())
        def configs(self, step):
            self.send(step)

        @rule(step=steps.data())
        def data(self, step):
            self.send(step)

        @rule(step=steps.groups())
        def groups(self, step):
            self.send(step)

        @rule(step=steps.acls())
        def acls(self, step):
            self.send(step)

        @precondition(lambda self: shares)
        @rule(step=steps.shares())
        def share_consumer(self, step):
            self.send(step)

        def compare(self, step: dict) -> list[Difference]:
            return run_step(run, step, self.token)

        def cleanup(self) -> None:
            cleanup(run, self.token)
            share_group_deleted(run, self.token)

    Calls.run = run
    return Calls
