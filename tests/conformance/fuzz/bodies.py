"""Request bodies drawn from kipper's declarations of each API (protocol/messages, which mirror
Kafka's JSON schemas), for every API a running kipper advertises at every version it supports.

The declarations are walked as ``protocol.schema.build_struct`` walks them: fields outside
the version are left out, nulls only where the version allows them, tagged fields only in
flexible versions. Values come from values.py by field name, else by type. Nothing here
knows one API from another, but for the few that would change what other tests see (a
broker's configs, the default client quotas, others' ACLs): those are kept to this
sequence's resources or asked with validate_only (``make_safe``).
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

from kipper.protocol.messages import APIS
from kipper.protocol.schema import Field
from tests.conformance.fuzz import values as v

# APIs whose requests change the whole broker or cluster (features, replicas, KRaft): not
# sent. A new API that kipper advertises is drawn like any other unless it is named here.
UNSAFE = frozenset({
    "UpdateFeatures", "AlterReplicaLogDirs", "UnregisterBroker",
    "ControlledShutdown", "AlterPartition", "BrokerRegistration", "BrokerHeartbeat", "Vote", "BeginQuorumEpoch",
    "EndQuorumEpoch", "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter", "Envelope", "AllocateProducerIds",
    "LeaderAndIsr", "StopReplica", "UpdateMetadata", "FetchSnapshot", "InitializeShareGroupState",
    "ReadShareGroupState", "WriteShareGroupState", "DeleteShareGroupState", "ReadShareGroupStateSummary",
})
# on a connection of their own, closed after the step: a handshake changes what the
# connection expects next
SASL = frozenset({"SaslHandshake", "SaslAuthenticate"})

# areas that get a rule of their own, so that related APIs meet in one sequence more often
AREAS = {
    "topics": re.compile(r"Topic|^Produce$|^Fetch$|ListOffsets|Metadata|Records|Partitions"),
    "producers": re.compile(r"Producer|Txn|Transaction|^Produce$|^Fetch$"),
    "groups": re.compile(r"^(?!Share).*Group|^Offset|Coordinator|^Consumer|Heartbeat"),
    "shares": re.compile(r"Share|^Produce$"),
    "admin": re.compile(r"Config|Acl|Quota|Scram|Cluster|LogDir|Feature|Quorum|Elect|Describe"),
}


def advertised(api_keys: list[dict]) -> list[tuple]:
    """(api, lowest, highest) for what kipper's ApiVersions answer lists and kipper declares."""
    out = []
    for entry in api_keys:
        api = APIS.get(entry["api_key"])
        if api is None or api.name in UNSAFE:
            continue
        lo, hi = max(entry["min_version"], api.valid_range.lo), min(entry["max_version"], api.valid_range.hi)
        if lo <= hi:
            out.append((api, lo, hi))
    return sorted(out, key=lambda a: a[0].key)


def in_area(apis: list[tuple], area: str | None) -> list[tuple]:
    if area is None:
        return apis
    return [a for a in apis if AREAS[area].search(a[0].name)] or apis


def field_strategy(f: Field, version: int, flexible: bool, path: tuple[str, ...]):
    nullable = version in f.nullable
    if f.flexible is not None:
        flexible = version in f.flexible
    t = f.type
    here = (*path, f.name)
    structured = (t.startswith("[]") and f.fields) or t == "{}"
    if not structured:
        chosen = v.for_field(here, t)
        if chosen is not None:  # and null where the version allows it (a transactional id: idempotence)
            return v.nullable(chosen, nullable)
    if t.startswith("[]"):
        inner = t[2:]
        element = struct_strategy(f.fields, version, flexible, here) if f.fields else (
            v.FIELDS.get(f.name + "_element") or v.BY_TYPE.get(inner, v.BY_TYPE["string"]))
        return v.lists(element, nullable=nullable)
    if t == "{}":
        return v.nullable(struct_strategy(f.fields, version, flexible, here), nullable)
    return v.nullable(v.BY_TYPE.get(t, v.BY_TYPE["string"]), nullable)


def struct_strategy(fields, version: int, flexible: bool, path: tuple[str, ...] = ()):
    members = {}
    for f in fields:
        if version not in f.versions:
            continue
        strategy = field_strategy(f, version, flexible, path)
        if flexible and f.tag is not None and version in f.tagged:
            # a tagged field is left out (its default) more often than not
            strategy = v.pick(0, 0, 1).flatmap(lambda i, s=strategy: s if i else st.just("<default>"))
        members[f.name] = strategy
    return st.fixed_dictionaries(members).map(lambda d: {k: x for k, x in d.items() if x != "<default>"})


_STRATEGIES: dict = {}


def body(api, version: int):
    """The strategy for a request body of ``api`` at ``version`` (built once)."""
    key = (api.key, version)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = struct_strategy(api.request, version, api.is_flexible(version))
    return _STRATEGIES[key]


def steps(apis: list[tuple]):
    """One step: an API kipper advertises, a version it supports, a body and a connection."""
    def for_api(entry):
        api, lo, hi = entry
        return st.integers(lo, hi).flatmap(lambda version: st.tuples(
            st.just(api), st.just(version), body(api, version), v.pick("main", "main", "other", "user")))
    return st.sampled_from(apis).flatmap(for_api).map(lambda t: without_declared(make_safe({
        "api": t[0].name, "version": t[1], "body": t[2], "conn": "sasl" if t[0].name in SASL else t[3]})))


def without_declared(step: dict) -> dict:
    """A shape whose difference is declared and which no generated sequence may meet again:
    AddPartitionsToTxn v4+ naming one transactional id twice (one-transactional-id-twice in
    allowed_differences.toml; brokers never do) keeps its first entry of each id; a
    WriteTxnMarkers marker that names no partition after one that does is left out (Kafka
    answers such a request early, without the earlier marker's result, or never:
    kafka-closes-the-connection; coordinators never send one); CreateTopics gives no topic
    share.auto.offset.reset (share-auto-offset-reset-topic-config: Kafka knows no such topic
    config and refuses the topic, kipper creates it)."""
    body = step["body"]
    if step["api"] == "AddPartitionsToTxn" and body.get("transactions"):
        seen = set()
        body["transactions"] = [t for t in body["transactions"] if repr(t.get("transactional_id")) not in seen
                                and not seen.add(repr(t.get("transactional_id")))]
    if step["api"] == "CreateTopics":  # share.auto.offset.reset is a topic config by seed 004 only
        for t in body.get("topics") or []:
            t["configs"] = [c for c in t.get("configs") or [] if c.get("name") != "share.auto.offset.reset"]
    if step["api"] == "WriteTxnMarkers" and body.get("markers"):
        writes = [any(t.get("partition_indexes") for t in m.get("topics") or []) for m in body["markers"]]
        body["markers"] = [m for i, m in enumerate(body["markers"]) if writes[i] or not any(writes[:i])]
    return step


_BROKER_RESOURCES = (4, 8, 16)  # BROKER, BROKER_LOGGER, CLIENT_METRICS
# what a broker's whole listing is asked as: every config of it is each reference's own deployment
# (listeners, roles, directories, the JAAS of its SASL listener), compared by the scenarios of
# admin_edges.py name by name; these are configs both brokers describe from their defaults
_BROKER_KEYS = ["min.insync.replicas", "unclean.leader.election.enable", "log.retention.hours", "compression.type",
                "message.max.bytes", "default.replication.factor", "no.such.config"]
# and a broker's loggers: Kafka's log4j loggers are its own (kipper has root alone)
_LOGGER_KEYS = ["root", "no.such.logger"]


def _ours(name) -> bool:
    return isinstance(name, str) and name.startswith("<T>")


def make_safe(step: dict) -> dict:
    """Requests that would change what the session's other tests see are kept to this
    sequence's own resources, or asked with validate_only: a broker's configs, client quotas
    of a default or shared entity, ACLs that name a principal or resource of others. A
    broker's configs are described by name (_BROKER_KEYS), not as the whole listing."""
    api, body = step["api"], step["body"]
    if api in ("AlterConfigs", "IncrementalAlterConfigs"):
        if any(r.get("resource_type") in _BROKER_RESOURCES or not _ours(r.get("resource_name"))
               for r in body.get("resources") or []):
            body["validate_only"] = True
    elif api == "DescribeConfigs":
        for r in body.get("resources") or []:
            if r.get("resource_type") == 4 and not r.get("configuration_keys"):  # (none or [] is all)
                r["configuration_keys"] = list(_BROKER_KEYS)
            elif r.get("resource_type") == 8 and not r.get("configuration_keys"):  # (each broker's own loggers)
                r["configuration_keys"] = list(_LOGGER_KEYS)
    elif api == "AlterClientQuotas":
        if any(not _ours(e.get("entity_name")) for entry in body.get("entries") or [] for e in entry.get("entity") or []):
            body["validate_only"] = True
    elif api == "CreateAcls":
        for c in body.get("creations") or []:
            if not _ours(c.get("resource_name")):  # on our own resources any principal will do
                c["principal"] = "User:<T>-u0"
    elif api == "DeleteAcls":
        for f in body.get("filters") or []:
            if not _ours((f.get("principal_filter") or "")[5:]):  # a MATCH filter finds others' wildcards
                f["principal_filter"] = "User:<T>-u0"
    elif api == "AlterUserScramCredentials":
        for group in ("deletions", "upsertions"):
            for u in body.get(group) or []:
                if not _ours(u.get("name")):
                    u["name"] = "<T>-u9"
    return step
