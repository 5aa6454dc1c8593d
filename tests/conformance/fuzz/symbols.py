"""Symbols resolved on one broker: a step says "the producer id this broker gave <T>-x0" or
"the next sequence of this request's producer on its partition"; ``Resolver`` turns that into
the value for this broker from what it learnt of the broker's earlier answers (``learn``).

Symbols (values.py draws them): ``<T>`` in a string is the sequence's token;
``producer_id#2`` (and the other id families of tests/conformance/normalise.py) the id the
normaliser named so; ``{"<pid>": txn}``, ``{"<epoch>": d}``, ``{"<member>": k}``,
``{"<generation>": d}``, ``{"<member_epoch>": d}``, ``{"<seq>": d|"dup"}``,
``{"<share_epoch>": d}``, ``{"<fetch_session>": 0}``, ``{"<fetch_epoch>": d}``,
``{"<topic_id>": name}``: the broker's own value (plus d) in the request's context (its
group, member, producer, topic and partition); ``{"<long>": n}``, ``{"<hex>": h}``,
``{"<subscription>": topics}``, ``{"<assignment>": [topic, partitions]}``, ``{"<batch>": spec}``:
values built alike on both. A symbol the broker never gave a value for becomes one it does
not know (an unknown producer id, a member id never issued).
"""

from __future__ import annotations

import re
import uuid

from kipper.protocol.schema import Field
from tests.conformance.fuzz import batches
from tests.conformance.normalise import Normaliser
from tests.conformance.scenarios import kit

PLACEHOLDER = re.compile(r"^(producer_id|member_id|topic_id|session_id|incarnation_id|client_instance_id)#(\d+)$")
UNKNOWN_ID = 999_999_999_000  # + n: a producer id no broker issued
# symbols whose value depends on the request's other fields: resolved after them
LATE = ("<member>", "<epoch>", "<generation>", "<member_epoch>", "<seq>", "<share_epoch>", "<fetch_epoch>", "<batch>")
INT_RANGES = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}


class Resolver:
    """What one broker answered so far in a sequence, and the symbols of a step made values."""

    def __init__(self, token: str):
        self.token = token
        # ids by first appearance, as the comparison names them; the golden scenarios' topics are
        # never a sequence's (make test's references hold them: CI met golden-aiokafka's sizes)
        self.norm = Normaliser(token, golden_foreign=True)
        self.pids: dict[str, int] = {}      # transactional id -> producer id
        self.epochs: dict[int, int] = {}    # producer id -> its latest epoch
        self.members: dict[str, list] = {}  # group -> member ids given, latest last
        self.generations: dict[str, int] = {}
        self.member_epochs: dict[tuple, int] = {}
        self.sequences: dict[tuple, tuple] = {}  # (producer, topic, partition) -> (next, last base)
        self.share_epochs: dict[tuple, int] = {}
        self.fetch_session: tuple[int, int] = (0, 0)  # (id, next epoch)
        self.topic_ids: dict[str, str] = {}
        self.produced: list[tuple] = []  # (topic, partition, producer, base sequence, count) of the request

    # --- resolving -------------------------------------------------------------------------

    def body(self, api, version: int, body: dict) -> dict:
        self.produced = []
        return self._struct(body, api.request, version, {})

    def _struct(self, obj, fields, version: int, ctx: dict):
        if not isinstance(obj, dict):
            return obj
        declared = {f.name: f for f in fields if version in f.versions}
        ctx = dict(ctx)
        out = {}
        late = []
        for name, value in obj.items():
            f = declared.get(name)
            if f is None:
                continue
            if isinstance(value, dict) and next(iter(value), None) in LATE or f.fields:
                late.append(name)
                continue
            out[name] = self._value(value, f, version, ctx)
            self._context(ctx, name, out[name])
        for name in sorted(late, key=lambda n: n != "member_id"):  # a member before its epoch
            out[name] = self._value(obj[name], declared[name], version, ctx)
            self._context(ctx, name, out[name])
        return out

    @staticmethod
    def _context(ctx: dict, name: str, value) -> None:
        if name in ("group_id", "transactional_id", "member_id", "v3_and_below_transactional_id"):
            ctx[name.replace("v3_and_below_", "")] = value
        elif name in ("producer_id", "v3_and_below_producer_id"):
            ctx["producer_id"] = value
        elif name in ("name", "topic", "topic_name") and isinstance(value, str):
            ctx["topic"] = value
        elif name in ("index", "partition_index", "partition") and isinstance(value, int):
            ctx["partition"] = value

    def _value(self, value, f: Field, version: int, ctx: dict):
        if f.fields:
            if isinstance(value, list):
                return [self._struct(x, f.fields, version, ctx) for x in value]
            return self._struct(value, f.fields, version, ctx)
        if isinstance(value, list):
            return [self._scalar(x, f.type[2:], ctx) for x in value]
        return self._scalar(value, f.type, ctx)

    def _scalar(self, value, type_: str, ctx: dict):
        if isinstance(value, dict) and len(value) == 1:
            (kind, arg), = value.items()
            value = self._symbol(kind, arg, ctx, type_)
        elif isinstance(value, str):
            m = PLACEHOLDER.match(value)
            value = self._id(m.group(1), int(m.group(2)), type_) if m else value.replace("<T>", self.token)
        if type_ == "uuid" and isinstance(value, str):
            try:
                value = uuid.UUID(value)
            except ValueError:  # "<T>-..." : this sequence's own id (a client instance's)
                value = uuid.uuid5(uuid.NAMESPACE_OID, value)
        if type_ in INT_RANGES and isinstance(value, int):
            bits = INT_RANGES[type_]
            value = max(-(1 << bits), min((1 << bits) - 1, value))
        return value

    def _id(self, family: str, n: int, type_: str):
        for raw, name in self.norm.ids.get(family, {}).items():
            if name == f"{family}#{n}":
                return raw
        if type_ in INT_RANGES:
            return UNKNOWN_ID + n
        if type_ == "uuid":
            return uuid.uuid5(uuid.NAMESPACE_OID, f"{self.token}-unknown-{family}-{n}")  # (no other sequence's)
        return f"{self.token}-unknown-{family}-{n}"

    def _symbol(self, kind: str, arg, ctx: dict, type_: str):
        def text(s: str) -> str:
            return s.replace("<T>", self.token)
        group, member, pid = ctx.get("group_id"), ctx.get("member_id"), ctx.get("producer_id")
        if kind == "<hex>":
            return bytes.fromhex(arg)
        if kind == "<long>":
            return (self.token + "-" + "x" * arg)[:arg]
        if kind == "<topic_id>":
            name = text(arg)
            return self.topic_ids.get(name) or str(uuid.uuid5(uuid.NAMESPACE_OID, "unknown-topic-" + arg))
        if kind == "<pid>":
            return self.pids.get(text(arg), UNKNOWN_ID)
        if kind == "<epoch>":
            return self.epochs.get(pid, 0) + arg
        if kind == "<member>":
            given = self.members.get(group, [])
            return given[-1 - arg] if len(given) > arg else ("" if arg == 0 else f"{self.token}-unknown-member")
        if kind == "<generation>":
            return self.generations.get(group, 0) + arg
        if kind == "<member_epoch>":
            return self.member_epochs.get((group, member), 0) + arg
        if kind == "<share_epoch>":
            return self.share_epochs.get((group, member), 0) + arg
        if kind == "<fetch_session>":
            return self.fetch_session[0]
        if kind == "<fetch_epoch>":
            return self.fetch_session[1] + arg
        if kind == "<subscription>":
            return kit.subscription([text(t) for t in arg])
        if kind == "<assignment>":
            return kit.assignment({text(arg[0]): list(arg[1])})
        if kind == "<batch>":
            return self._batch(arg, ctx)
        raise ValueError(f"unknown symbol {kind}")

    def _batch(self, spec: dict, ctx: dict) -> bytes:
        pid = self._scalar(spec["pid"], "int64", ctx)
        inner = dict(ctx, producer_id=pid)
        epoch = self._scalar(spec["epoch"], "int16", inner)
        seq = spec["seq"]
        if isinstance(seq, dict):
            nxt, last = self.sequences.get((pid, ctx.get("topic"), ctx.get("partition")), (0, 0))
            seq = last if seq["<seq>"] == "dup" else max(0, nxt + seq["<seq>"])
        if pid != -1 and not spec.get("mutation"):
            self.produced.append((ctx.get("topic"), ctx.get("partition"), pid, seq, spec["n"]))
        return batches.build(spec, pid, epoch, seq)

    # --- learning ----------------------------------------------------------------------------

    def learn(self, api_name: str, request: dict, response, recorded: bool = True) -> None:
        """What this broker's answer to ``request`` (resolved) gives later steps. Only
        recorded answers name ids (as the comparison of a scenario's transcript does)."""
        if not isinstance(response, dict):
            return
        if recorded:
            self.norm.response(response)
        ok = response.get("error_code", 0) == 0
        group = request.get("group_id")
        for d in _dicts(response):
            if isinstance(d.get("producer_id"), int) and isinstance(d.get("producer_epoch"), int) \
                    and d.get("error_code", 0) == 0 and d["producer_id"] >= 0:
                self.epochs[d["producer_id"]] = d["producer_epoch"]
            name = d.get("name") or d.get("topic") or d.get("topic_name")
            if isinstance(name, str) and isinstance(d.get("topic_id"), str) and d["topic_id"] != str(kit.NO_TOPIC_ID):
                self.topic_ids[name] = d["topic_id"]
        if request.get("transactional_id") and ok and isinstance(response.get("producer_id"), int):
            self.pids[request["transactional_id"]] = response["producer_id"]
        member = response.get("member_id") or request.get("member_id")
        if isinstance(group, str):
            if response.get("member_id"):
                given = self.members.setdefault(group, [])
                if response["member_id"] not in given:
                    given.append(response["member_id"])
            if ok and isinstance(response.get("generation_id"), int) and response["generation_id"] >= 0:
                self.generations[group] = response["generation_id"]
            if ok and isinstance(response.get("member_epoch"), int):
                self.member_epochs[(group, member)] = response["member_epoch"]
            epoch = request.get("share_session_epoch")
            if ok and isinstance(epoch, int):
                self.share_epochs[(group, request.get("member_id"))] = epoch + 1 if epoch >= 0 else 0
        if "session_epoch" in request and ok and response.get("session_id"):
            epoch = request["session_epoch"]
            self.fetch_session = (response["session_id"], epoch + 1 if epoch > 0 else 1)
        if api_name == "Produce":
            self._learn_sequences(response)

    def _learn_sequences(self, response: dict) -> None:
        codes = {}
        for t in response.get("responses") or []:
            for p in t.get("partition_responses") or []:
                codes[(t.get("name"), p.get("index"))] = p.get("error_code")
        for topic, partition, pid, seq, n in self.produced:
            if codes.get((topic, partition)) == 0:
                self.sequences[(pid, topic, partition)] = (batches.next_sequence(seq, n), seq)


def _dicts(obj):
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _dicts(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _dicts(v)
