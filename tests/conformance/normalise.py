"""What two correct brokers may answer differently, made equal before comparing.

Ids a broker makes up (cluster id, topic ids, member ids, producer ids, fetch session ids)
become names in order of first appearance within the scenario (``producer_id#2``; a topic id
after the topic it first came with, ``topic_id(c0001-t)``), so a mix-up of two ids still
shows. Addresses, throttle times, the
broker's clock and the text of error messages become markers. Lists whose order Kafka does
not define are sorted. Resources of other scenarios (both brokers serve the whole session)
are dropped from listings.
"""

from __future__ import annotations

import re
import time
from typing import Any

# field name -> id family, mapped by first appearance
MAPPED = {
    "topic_id": "topic_id", "producer_id": "producer_id", "member_id": "member_id",
    "leader": "member_id", "session_id": "session_id", "incarnation_id": "incarnation_id",
    "active_producer_id": "producer_id", "assigned_broker_ids": None,
    "client_instance_id": "client_instance_id", "subscription_id": "subscription_id",
    "replica_directory_id": "directory_id",
}
MAPPED_SKIP = {-1, 0, "", None, "00000000-0000-0000-0000-000000000000", "AAAAAAAAAAAAAAAAAAAAAA"}
CONSTANT = {"cluster_id": "<cluster>", "host": "<host>", "port": "<port>", "throttle_time_ms": 0,
            "log_dir": "<dir>", "total_bytes": "<bytes>", "usable_bytes": "<bytes>", "client_host": "<client host>", "member_host": "<client host>"}
# (a record error's message too: Kafka's for a timestamp out of range quotes its own clock)
MESSAGES = {"error_message", "error_msg", "status_message", "batch_index_error_message"}
NEEDS_PERMISSION = re.compile(r"^Request Request\(.*\) needs (\w+) permission\.$", re.S)
CLOCK = {"log_append_time_ms", "transaction_start_time_ms", "last_timestamp_ms",
         "last_fetch_timestamp", "last_caught_up_timestamp"}
# a batch's time as the client gave it, or a broker's clock when a marker set it last
# (DescribeProducers) or wrote the record ListOffsets found: only the clock's is normalised,
# as a time within a day of now
CLOCK_OR_CLIENT = {"last_timestamp", "timestamp"}
DAY_MS = 86_400_000
# Kafka's finalized-features epoch is the offset of its metadata log, which grows as the
# controller writes (heartbeats included): whether there is one is compared, not its value
METADATA_OFFSETS = {"finalized_features_epoch"}
# lists whose order is the broker's own (hash maps in Kafka): sorted by these keys
SORT_KEYS = {
    "groups": ("group_id",), "topics": ("name", "topic", "topic_id"), "results": ("resource_name", "name", "group_id", "user"), "mechanisms": (),
    "configs": ("name",), "synonyms": ("name", "source"), "api_keys": ("api_key",),
    "transaction_states": ("transactional_id",), "resources": ("resource_type", "resource_name"),
    "acls": ("principal", "host", "operation", "permission_type"), "members": ("member_id", "group_instance_id"),
    "partitions": ("partition_index", "partition"), "partition_responses": ("index",), "brokers": ("node_id", "broker_id"),
    "supported_features": ("name",), "finalized_features": ("name",), "entries": ("entity",),
    "matching_acls": ("principal", "host", "operation", "resource_type", "resource_name", "pattern_type"),
    "filter_results": (),
    "credential_infos": ("mechanism",), "producers": ("producer_id",), "coordinators": ("key",),
    "creation_responses": (), "leader_epochs": (),
    # (a name twice: DeleteTopics v6 answers a topic by id and by name and id in either order on
    # Kafka from one run to the next, the sixth generator run found: told apart by their errors;
    # its refusals of one request, "both", "neither" and "duplicate", in any order: by their texts)
    "responses": ("name", "resource_name", "resource_type", "error_code", "error_message"),
    "entity": ("entity_type",), "values": ("key",),
    "results_by_topic_v3_and_below": ("name",),
    # streams groups: task lists by subtopology (Kafka's answers take a hash map's order), topic configs
    "active_tasks": ("subtopology_id",), "standby_tasks": ("subtopology_id",), "warmup_tasks": ("subtopology_id",),
    "topic_configs": ("key",),
    "requested_metrics": (),  # a Java HashSet's order on Kafka
    "markers": ("producer_id",),  # WriteTxnMarkers: a hash map by producer id on Kafka (the eleventh run)
    "subscribed_topic_names": (),  # a member's subscription: a Java set's order on Kafka (the eleventh run)
    "results_by_partition": ("partition_index",),  # AddPartitionsToTxn v4+: a hash map's order on Kafka
    "results_by_transaction": ("transactional_id",),  # AddPartitionsToTxn v4+: in the order they complete
    "topic_results": ("name",),  # AddPartitionsToTxn v4+: a hash map's order on Kafka (the tenth run, flaky)
    "replica_election_results": ("topic",), "partition_result": ("partition_id",),
    # DescribeProducers: a hash map by producer id on Kafka, and the ids are each broker's own (run 31)
    "active_producers": ("producer_id",),
}
# a scenario's token (c0042) or a generated sequence's (f123456, tests/conformance/fuzz; k123456
# the tool generator's, p123456 the client generator's)
TOKEN = re.compile(r"^(c\d{4}|[fkp]\d{6})-")


# the golden frames' captured names (tests/golden): not tokens, but made by the golden scenarios,
# which run in order beside the rest, so a listing of the whole broker can meet them on one side
GOLDEN_NAME = re.compile(r"^golden-")


# what only Kafka has, declared (share-group-state-topic: seed 004 keeps share-group state in
# the partitions): left out of every listing, as another scenario's names are
ONLY_KAFKAS = frozenset({"__share_group_state"})
# names a scenario must give without its token (create-topics/errors: a name like an internal
# topic's): another scenario's, in listings, which can meet it on one broker and not yet the other
FIXED_NAMES = frozenset({"__kipper_conformance"})


class Normaliser:
    def __init__(self, token: str, golden_foreign: bool = False):
        self.token = token
        self.golden_foreign = golden_foreign  # another scenario's names in listings include golden-*
        self.ids: dict[str, dict[Any, str]] = {}
        self.keep_messages = False  # the exchange at hand compares its messages word for word

    def ident(self, family: str, value: Any) -> Any:
        if value in MAPPED_SKIP:
            return value
        table = self.ids.setdefault(family, {})
        if value not in table:
            table[value] = f"{family}#{len(table) + 1}"
        return table[value]

    def response(self, obj: Any, key: str = "") -> Any:
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                out[k] = self.field(k, v, obj)
            return out
        if isinstance(obj, list):
            items = [self.response(v, key) for v in _by_name(key, [v for v in obj if not self._foreign(v)])]
            return _sorted(key, items)
        return obj

    def _foreign_cursor(self, parent: dict) -> bool:
        name = parent.get("topic_name")
        return isinstance(name, str) and (name.startswith("__") or (
            TOKEN.match(name) is not None and not name.startswith(self.token + "-")))

    def field(self, k: str, v: Any, parent: dict) -> Any:
        if k in CONSTANT and v is not None and not isinstance(v, (list, dict)):
            return CONSTANT[k]
        if k in MESSAGES and not self.keep_messages:  # the text is the broker's own; whether there is any (null, "") is Kafka's
            return "<message>" if v else v
        if k in MESSAGES and isinstance(v, str) and v.startswith("Request Request("):
            # Kafka's words for a cluster operation refused print its Request object (its
            # connection's ids, object hashes): only what surrounds it is compared
            return NEEDS_PERMISSION.sub(r"Request <the request> needs \1 permission.", v)
        if k in CLOCK and isinstance(v, int) and v > 0:
            return "<time>"
        if k == "topic_name" and "partition_index" in parent and isinstance(v, str) and v.startswith("__"):
            return "<an internal topic>"  # a cursor naming the whole broker's next topic: Kafka has more internal ones
        if k == "partition_index" and self._foreign_cursor(parent):
            return "<another scenario's>"  # (where the whole broker's listing was cut in another's topic)
        if k in CLOCK_OR_CLIENT and isinstance(v, int) and abs(v - time.time() * 1000) < DAY_MS:
            return "<time>"  # (a transaction marker's: the broker's clock)
        if isinstance(v, str) and TOKEN.match(v) and not v.startswith(self.token + "-"):
            return "<another scenario's>"  # (a cursor naming the next topic of the whole broker)
        if k in METADATA_OFFSETS and isinstance(v, int) and v >= 0:
            return "<metadata offset>"
        if k == "records" and isinstance(v, list):
            return [self.batch(batch) for batch in v]
        family = MAPPED.get(k)
        if family == "topic_id" and isinstance(v, str) and v not in MAPPED_SKIP:
            name = parent.get("name") or parent.get("topic") or parent.get("topic_name")
            table = self.ids.setdefault(family, {})
            if v not in table and isinstance(name, str) and name:
                # named after the topic it first came with: listings in each broker's own order
                # (Metadata of every topic) then name the same ids alike; an id that later comes
                # with another topic still shows
                table[v] = f"topic_id({name})"
        if family and isinstance(v, (int, str)):
            return self.ident(family, v)
        if family and isinstance(v, list) and all(isinstance(x, (int, str)) for x in v):
            return [self.ident(family, x) for x in v]
        return self.response(v, k)

    def batch(self, batch: Any) -> Any:
        if not isinstance(batch, dict):
            return batch
        if "<partial batch>" in batch:
            return {"<partial batch>": _partial(batch["<partial batch>"])}
        out = dict(batch)
        out["producer_id"] = self.ident("producer_id", out.get("producer_id"))
        broker_clock = out.get("control") or out.get("timestamp_type") == 1
        if broker_clock:  # markers and LogAppendTime carry the broker's clock
            out["base_timestamp"] = out["max_timestamp"] = "<time>"
            out["records"] = [dict(r, timestamp="<time>") for r in out["records"]]
        return out

    def _foreign(self, item: Any) -> bool:
        """An element of a listing that another scenario created."""
        if not isinstance(item, dict):
            return False
        for k in ("name", "group_id", "transactional_id", "topic", "resource_name", "user"):
            v = item.get(k)
            if isinstance(v, str) and (TOKEN.match(v) and not v.startswith(self.token + "-")
                                       or self.golden_foreign and GOLDEN_NAME.match(v) or v in ONLY_KAFKAS
                                       or v in FIXED_NAMES):
                return True
        principal = item.get("principal")  # an ACL of another's user ("User:f123456-u0")
        if isinstance(principal, str) and self._foreign({"user": principal.partition(":")[2]}):
            return True
        acls = item.get("acls")  # a resource whose every ACL is another's (of a name with no token: "1")
        if isinstance(acls, list) and acls and all(self._foreign(a) for a in acls):
            return True
        entity = item.get("entity")  # a client-quota entry
        return isinstance(entity, list) and any(self._foreign(
            {"name": e.get("entity_name")}) for e in entity if isinstance(e, dict))


def _partial(hexed: str) -> str:
    """The first bytes of a batch cut at max_bytes, its CRC masked where it covers the broker's
    clock (a marker's or a LogAppendTime batch's timestamps) or where the cut hides which it is."""
    crc, attributes = slice(34, 42), slice(42, 46)  # (hex digits: bytes 17-20 and 21-22)
    if len(hexed) <= crc.start:
        return hexed
    if len(hexed) >= attributes.stop and not int(hexed[attributes], 16) & 0x28:
        return hexed
    return hexed[:crc.start] + "<crc>" + hexed[crc.stop:]


def _by_name(key: str, items: list) -> list:
    """A listing in undefined order put in the order of the field that names its elements,
    before its ids are mapped: ids are named by first appearance, which must not depend on
    the order a broker lists things in (the internal topics in Metadata)."""
    fields = SORT_KEYS.get(key)
    if not fields or not items or not all(isinstance(i, dict) for i in items):
        return items
    for f in fields:
        if f in MAPPED:
            continue  # an id: its raw order says nothing
        values = [i.get(f) for i in items]
        if all(isinstance(v, (int, str)) for v in values) and len(set(values)) == len(values):
            return [i for _, i in sorted(zip(values, items), key=lambda p: repr(p[0]))]
    # no one field names each (a name null in some, or given twice): all the fields together, as
    # _sorted does (a stable sort: what they cannot tell apart keeps its order)
    named = [f for f in fields if f not in MAPPED]
    return sorted(items, key=lambda i: tuple(repr(i.get(f)) for f in named)) if named else items


def _sorted(key: str, items: list) -> list | dict:
    """A listing keyed by a field that names its elements becomes a dict ("name=x": item),
    so a missing or extra element is one difference, not a shifted list; other listings
    in undefined order are sorted."""
    fields = SORT_KEYS.get(key)
    if fields is not None and items and all(isinstance(i, str) for i in items):
        return sorted(items)
    if not fields or not items or not all(isinstance(i, dict) for i in items):
        return items
    for f in fields:
        values = [i.get(f) for i in items]
        if all(isinstance(v, (int, str)) for v in values) and len(set(values)) == len(values):
            return {f"{f}={v}": i for v, i in sorted(zip(values, items), key=lambda p: repr(p[0]))}
    return sorted(items, key=lambda i: tuple(repr(i.get(f)) for f in fields))


def normalise(transcript, token: str, golden_foreign: bool = False) -> list:
    """``golden_foreign``: the golden scenarios' topics are another scenario's (every scenario
    but the golden ones)."""
    norm = Normaliser(token, golden_foreign)
    out = []
    for x in transcript:
        norm.keep_messages = getattr(x, "messages", False)
        out.append(norm.response(x.response))
    return out
