"""One broker's half of a generated sequence: a step's symbols resolved for this broker, the
request sent with the conformance harness's ``Run`` (recorded, so the normaliser and the
comparison see it as any scenario's), and the waits that keep timing out of the answers.

Timing, and how it is kept out (the generator must not report noise):
- what a broker does a moment after it answers is waited for with unrecorded requests, as
  the scenarios do: a new topic's leaders (CreateTopics, CreatePartitions, Metadata's
  auto-creation, which Kafka 4.4 answers UNKNOWN_TOPIC_OR_PARTITION), a deleted topic's
  going, a transaction's markers (EndTxn, and an InitProducerId that aborted one), a
  KIP-848 or share member's first assignment, ACLs
  created or deleted (Kafka's authorizer applies them from the metadata log a moment later), a
  topic's or group's configs altered, SCRAM credentials altered (read from the same log);
- an answer that says "not yet" (CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS,
  COORDINATOR_NOT_AVAILABLE) is retried for up to 10 s, as every client does, and only the
  last answer is compared;
- a share partition's first ShareFetch waits up to 3 s for records (machine.py sets it in the
  step): Kafka loads the partition's state on first use and answers empty meanwhile;
- throttle times, the broker's clock and ids are the normaliser's (normalise.py); values
  drawn never include durations short enough to expire within a sequence (values.py).
"""

from __future__ import annotations

import copy
import hashlib
import re
import time

from kipper.protocol.errors import KafkaError
from tests.conformance.fuzz.symbols import Resolver
from tests.conformance.harness import Exchange, Run, api as api_named
from tests.conformance.plain import plain
from tests.conformance.scenarios import kit

NOT_YET = {51, 14, 15}  # CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE
RETRY_FOR = 10.0
SETTLE_FOR = 10.0
CONFIGS_WITHIN = 3.0  # a value a broker shows otherwise than it was set (it normalises) costs this
AUTO_CREATED_WITHIN = 3.0  # a topic Kafka did not auto-create after all (an invalid name) costs this
ASSIGNMENT_WITHIN = 5.0  # Kafka's assignor runs off the heartbeat path, within a second here
# the "user" connection: SASL/SCRAM-SHA-256 as the sequence's own user <T>-u0 (not a super user),
# whose credential the sequence's first steps make (``user_credential``), so that the ACLs the
# generator draws for User:<T>-u0 decide what each request may do
USER_CONN, USER_PASSWORD, USER_SALT, USER_ITERATIONS = "user", "fuzz-user-secret", b"kipper-fuzz-salt", 4096


def user_credential() -> dict:
    """AlterUserScramCredentials' upsertion of <T>-u0's SCRAM-SHA-256 credential."""
    salted = hashlib.pbkdf2_hmac("sha256", USER_PASSWORD.encode(), USER_SALT, USER_ITERATIONS)
    return {"name": "<T>-u0", "mechanism": 1, "iterations": USER_ITERATIONS,
            "salt": {"<hex>": USER_SALT.hex()}, "salted_password": {"<hex>": salted.hex()}}


class Side:
    def __init__(self, run: Run, messages: bool = False):
        self.run = run
        self.resolver = Resolver(run.token)
        # every answer's error messages compared word for word (the comparison's normaliser
        # keeps them; the transcript says so for a scenario replaying the sequence)
        self.messages = self.resolver.norm.keep_messages = messages
        self.user = f"{run.token}-u0"
        run.passwords[self.user] = USER_PASSWORD

    def step(self, step: dict) -> list[Exchange]:
        """Send one step; the recorded exchanges it made (normally one)."""
        api = api_named(step["api"])
        version, conn, label = step["version"], step.get("conn", "main"), step.get("label") or step["api"]
        body = self.resolver.body(api, version, copy.deepcopy(step["body"]))
        start = len(self.run.transcript)
        if conn == USER_CONN and USER_CONN not in self.run.conns:
            try:
                self.run.conn(USER_CONN, user=self.user)
            except KafkaError as exc:  # the user's SASL authentication refused: that is the answer compared
                self.run.transcript.append(Exchange(label, api.name, version, plain(body),
                                                    {"<authentication>": {"error_code": int(exc.code)}}))
                return self.run.transcript[start:]
        if api.name == "Produce" and body.get("acks") == 0:
            self.run.send(api, version, body, conn=conn, label=label)  # no answer comes
            self.run.call(kit.API_VERSIONS, 3, {"client_software_name": "conformance", "client_software_version": "1"},
                          conn=conn, label="after acks=0, is the connection still open")
            response = None
        else:
            response = self._call(api, version, body, conn, label)
            self.resolver.learn(api.name, body, response)
            settle = AFTER.get(api.name)
            if settle is not None and isinstance(response, dict):
                settle(self, api, version, body, response)
        if conn == "sasl":
            self.run.drop("sasl")
        return [x for x in self.run.transcript[start:] if x.recorded]

    def _call(self, api, version: int, body: dict, conn: str, label: str):
        deadline = time.monotonic() + RETRY_FOR
        while True:
            response = self.run.call(api, version, body, conn=conn, label=label, messages=self.messages)
            if api.name == "Produce" or not (_codes(response) & NOT_YET) or time.monotonic() > deadline:
                return response
            self.run.transcript[-1].recorded = False  # a "not yet": only the last answer counts
            time.sleep(0.2)

    def log_ends(self) -> dict:
        """(topic, partition) -> log end offset of the sequence's topics (unrecorded)."""
        names = [f"{self.run.token}-t{i}" for i in range(3)]
        answer = self.run.call(kit.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": n, "partitions": [{"partition_index": p, "current_leader_epoch": -1, "timestamp": -1}
                                       for p in range(3)]} for n in names]}, record=False)
        if not isinstance(answer, dict):
            return {}
        return {(t["name"], p["partition_index"]): p.get("offset") for t in answer.get("topics") or []
                for p in t.get("partitions") or [] if p.get("error_code") == 0}

    def quiet(self, api, body: dict, version: int | None = None):
        """An unrecorded request (a wait); what it answers is learnt all the same."""
        response = self.run.call(api, kit.top(api) if version is None else version, body, record=False)
        self.resolver.learn(api.name, body, response, recorded=False)
        return response


def _codes(obj) -> set[int]:
    out = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "error_code" and isinstance(v, int):
                out.add(v)
            else:
                out |= _codes(v)
    elif isinstance(obj, list):
        for v in obj:
            out |= _codes(v)
    return out


# --- waits after a step (unrecorded) ------------------------------------------------------------

def _topics_created(side: Side, api, version: int, body: dict, response: dict) -> None:
    if body.get("validate_only"):
        return
    wanted = {t.get("name"): t.get("num_partitions", -1) for t in body.get("topics") or []}
    for t in response.get("topics") or []:
        if t.get("error_code") == 0 and t.get("name") in wanted:
            n = t.get("num_partitions") or wanted[t["name"]]
            kit.wait_for_leaders(side.run, t["name"], n if n and n > 0 else 3)


def _partitions_created(side: Side, api, version: int, body: dict, response: dict) -> None:
    if body.get("validate_only"):
        return
    counts = {t.get("name"): t.get("count", 0) for t in body.get("topics") or []}
    for r in response.get("results") or []:
        if r.get("error_code") == 0 and counts.get(r.get("name"), 0) > 0:
            kit.wait_for_leaders(side.run, r["name"], counts[r["name"]])


def _auto_created(side: Side, api, version: int, body: dict, response: dict) -> None:
    """Kafka 4.4 answers a topic it is auto-creating UNKNOWN_TOPIC_OR_PARTITION (older brokers:
    LEADER_NOT_AVAILABLE) and makes it a moment later; Metadata v0-v3 always auto-create."""
    if version > 3 and not body.get("allow_auto_topic_creation"):
        return
    for t in response.get("topics") or []:
        name = t.get("name")
        if t.get("error_code") not in (3, 5) or not name:
            continue
        made = side.run.poll(lambda n=name: kit.metadata(side.run, [n], record=False),
                             lambda m: (m.get("topics") or [{}])[0].get("error_code") != 3, timeout=AUTO_CREATED_WITHIN)
        if (made.get("topics") or [{}])[0].get("error_code") != 3:
            kit.wait_for_leaders(side.run, name, 3)


def _topics_deleted(side: Side, api, version: int, body: dict, response: dict) -> None:
    for r in response.get("responses") or []:
        name = r.get("name")
        if r.get("error_code") == 0 and name:
            side.run.poll(lambda n=name: kit.metadata(side.run, [n], record=False),
                          lambda m: (m.get("topics") or [{}])[0].get("error_code") == 3, timeout=SETTLE_FOR)


def _transaction_completed(side: Side, api, version: int, body: dict, response: dict) -> None:
    txn = body.get("transactional_id")
    if response.get("error_code") != 0 or not txn:
        return
    side.run.poll(lambda: side.quiet(kit.DESCRIBE_TRANSACTIONS, {"transactional_ids": [txn]}),
                  lambda r: ((r.get("transaction_states") or [{}])[0].get("transaction_state") or "")
                  not in ("PrepareCommit", "PrepareAbort", "PrepareEpochFence"), timeout=SETTLE_FOR)


def _member_assigned(side: Side, api, version: int, body: dict, response: dict) -> None:
    known = set(side.resolver.topic_ids)
    subscribed = set(body.get("subscribed_topic_names") or ()) & known
    regex = body.get("subscribed_topic_regex")  # (Kafka resolves a regex off the heartbeat path, too)
    if regex and not subscribed:
        subscribed = {t for t in known if _matches(regex, t)}
    if body.get("member_epoch") != 0 or response.get("error_code") != 0 or not subscribed:
        return  # no assignment can come (this broker named none of the topics in an answer)
    again = dict(body, member_id=response.get("member_id") or body.get("member_id"))
    for k, blank in (("subscribed_topic_names", None), ("topic_partitions", None), ("rebalance_timeout_ms", -1),
                     ("server_assignor", None), ("subscribed_topic_regex", None)):
        if k in again:
            again[k] = blank

    def beat():
        again["member_epoch"] = side.resolver.member_epochs.get((body.get("group_id"), again["member_id"]), 0)
        return side.quiet(api, again, version)
    side.run.poll(beat, lambda r: r.get("error_code") != 0 or bool((r.get("assignment") or {}).get("topic_partitions")),
                  timeout=ASSIGNMENT_WITHIN, interval=0.3)


def _binding(resource: dict, acl: dict) -> tuple:
    return (resource.get("resource_type"), resource.get("resource_name"), resource.get("pattern_type"),
            acl.get("principal"), acl.get("host"), acl.get("operation"), acl.get("permission_type"))


def _acls_seen(side: Side, wanted: set[tuple], present: bool) -> None:
    """Poll until every binding of ``wanted`` is (or, after a deletion, is no longer) described."""
    everything = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
                  "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}

    def settled(r) -> bool:
        if not isinstance(r, dict) or r.get("error_code"):
            return True  # (ACLs off, or refused: nothing to wait for)
        seen = {_binding(res, a) for res in r.get("resources") or [] for a in res.get("acls") or []}
        return wanted <= seen if present else not (wanted & seen)
    side.run.poll(lambda: side.quiet(kit.DESCRIBE_ACLS, everything, 3), settled, timeout=SETTLE_FOR)


def _acls_created(side: Side, api, version: int, body: dict, response: dict) -> None:
    wanted = {_binding({**c, "pattern_type": c.get("resource_pattern_type", 3)}, c)
              for c, r in zip(body.get("creations") or [], response.get("results") or []) if r.get("error_code") == 0}
    if wanted:
        _acls_seen(side, wanted, present=True)


def _acls_deleted(side: Side, api, version: int, body: dict, response: dict) -> None:
    gone = {_binding(m, m) for f in response.get("filter_results") or [] for m in f.get("matching_acls") or []
            if m.get("error_code") == 0}
    if gone:
        _acls_seen(side, gone, present=False)


def _credentials_altered(side: Side, api, version: int, body: dict, response: dict) -> None:
    """Poll until DescribeUserScramCredentials shows each credential a successful alteration
    upserted, and no longer shows each it deleted (Kafka's broker reads them from the metadata log)."""
    done = {r.get("user") for r in response.get("results") or [] if r.get("error_code") == 0}
    wanted = {(u["name"], u.get("mechanism"), u.get("iterations")): True
              for u in body.get("upsertions") or [] if u.get("name") in done}
    wanted.update({(d["name"], d.get("mechanism"), None): False for d in body.get("deletions") or []
                   if d.get("name") in done})
    if not wanted:
        return
    users = sorted({name for name, _, _ in wanted})

    def settled(r) -> bool:
        if not isinstance(r, dict) or r.get("error_code"):
            return True
        shown = {(x.get("user"), c.get("mechanism")): c.get("iterations") for x in r.get("results") or []
                 for c in x.get("credential_infos") or []}
        return all(((name, mech) in shown and (it is None or shown[name, mech] == it)) == present
                   for (name, mech, it), present in wanted.items())
    side.run.poll(lambda: side.quiet(kit.DESCRIBE_SCRAM, {"users": [{"name": n} for n in users]}, 0),
                  settled, timeout=SETTLE_FOR)


SETTLED_CONFIGS = {2, 32}  # a topic's and a group's: Kafka's broker reads them from the metadata log


def _configs_altered(side: Side, api, version: int, body: dict, response: dict) -> None:
    """Poll until DescribeConfigs shows each value a successful alteration set on a topic or a group."""
    if body.get("validate_only"):
        return
    done = {(r.get("resource_type"), r.get("resource_name")) for r in response.get("responses") or []
            if r.get("error_code") == 0}
    for resource in body.get("resources") or []:
        key = (resource.get("resource_type"), resource.get("resource_name"))
        wanted = {c["name"]: c.get("value") for c in resource.get("configs") or []
                  if c.get("config_operation", 0) == 0 and c.get("value") is not None}
        if key[0] not in SETTLED_CONFIGS or key not in done or not wanted:
            continue

        def settled(r, wanted=wanted) -> bool:
            results = (r or {}).get("results") if isinstance(r, dict) else None
            if not results or results[0].get("error_code"):
                return True  # (gone meanwhile: nothing to wait for)
            shown = {c.get("name"): c.get("value") for c in results[0].get("configs") or []}
            return all(shown.get(n, v) in (v, None) for n, v in wanted.items())
        describe = {"resources": [{"resource_type": key[0], "resource_name": key[1],
                                   "configuration_keys": sorted(wanted)}],
                    "include_synonyms": False, "include_documentation": False}
        side.run.poll(lambda d=describe: side.quiet(kit.DESCRIBE_CONFIGS, d, 4), settled, timeout=CONFIGS_WITHIN)


def _matches(regex: str, topic: str) -> bool:
    try:
        return re.fullmatch(regex, topic) is not None
    except re.error:  # (a regex Kafka refuses: no member, no assignment)
        return False


AFTER = {
    "CreateTopics": _topics_created, "CreatePartitions": _partitions_created, "Metadata": _auto_created,
    "DeleteTopics": _topics_deleted, "EndTxn": _transaction_completed, "InitProducerId": _transaction_completed,
    "ConsumerGroupHeartbeat": _member_assigned, "ShareGroupHeartbeat": _member_assigned,
    "CreateAcls": _acls_created, "DeleteAcls": _acls_deleted,
    "AlterConfigs": _configs_altered, "IncrementalAlterConfigs": _configs_altered,
    "AlterUserScramCredentials": _credentials_altered,
}
