"""Answers that carry an error code, built from any API's declaration: the test broker's
fault injection (broker/faults/) answers "the next N Produce requests get
NOT_LEADER_OR_FOLLOWER on partition 3" for any API without a hand-written answer each.

Kafka writes one ``getErrorResponse`` per request class. Here the declarations say the
same thing: a response array of topics (a struct array with a topic key: name, topic,
topic_id) answers the request's array of topics, a partitions array (index,
partition_index, partition) the request's partitions, an array keyed by group id,
coordinator key or transactional id the request's list of them. ``error_answer`` builds
an answer whose entries carry the code, ``named`` lists the (topic, partition) entries of
a request, ``without`` leaves some of them out, and ``merge`` puts error entries into a
real answer in place of the same entries.
"""

from __future__ import annotations

import copy
from typing import Callable, Iterable

from kipper.protocol.schema import _default_for

TOPIC_KEYS = ("name", "topic", "topic_name", "topic_id")
PARTITION_KEYS = ("index", "partition_index", "partition", "partition_id")
OTHER_KEYS = ("group_id", "transactional_id", "key", "member_id", "resource_name", "producer_id")
KEYS = TOPIC_KEYS + PARTITION_KEYS + OTHER_KEYS

Pick = Callable[[object, object], bool]  # (topic key, partition or None) -> picked?


def _at(fields, version: int) -> list:
    return [f for f in fields if version in f.versions]


def _kind(f, version: int, in_topic: bool) -> str | None:
    """What an array lists: "topics", "partitions", or the key of its entries (a group
    id...); None when it lists nothing a request names. Inside a topic, only partitions."""
    kind = None
    if f.type == "[]":
        names = {g.name for g in _at(f.fields, version)}
        if names & set(TOPIC_KEYS):
            kind = "topics"
        elif names & set(PARTITION_KEYS):
            kind = "partitions"
        else:
            kind = next((k for k in OTHER_KEYS if k in names), None)
    elif f.type == "[]int32" and "partition" in f.name:
        kind = "partitions"
    elif f.type in ("[]string", "[]uuid") and "topic" in f.name:
        kind = "topics"
    elif f.type == "[]string":
        kind = {"coordinator_keys": "key"}.get(f.name) or (
            "group_id" if "group" in f.name else "transactional_id" if "transactional" in f.name else None)
    if in_topic and kind != "partitions":
        return None
    return kind


def _key_of(f, version: int, entry) -> object:
    """The key of a request or response entry: a topic name (or id), a partition, a group."""
    if f.type != "[]":
        return entry
    names = {g.name for g in _at(f.fields, version)}
    return next((entry[k] for k in KEYS if k in names and k in entry), None)


def _pairs(req_fields, resp_fields, version: int, in_topic: bool) -> list:
    """(request array, response array, kind) that answer each other at one level."""
    req = [(f, _kind(f, version, in_topic)) for f in _at(req_fields, version)]
    out = []
    for rf in _at(resp_fields, version):
        kind = _kind(rf, version, in_topic) if rf.type == "[]" else None
        if kind is None:
            continue
        same = [f for f, k in req if k == kind and f.name == rf.name] or [f for f, k in req if k == kind]
        if same:
            out.append((same[0], rf, kind))
    if not in_topic:  # an answer per request entry, in order (CreateAcls' creations)
        used = {id(f) for f, _, _ in out}
        plain = [f for f, _ in req if f.type == "[]" and id(f) not in used]
        answers = [rf for rf in _at(resp_fields, version) if rf.type == "[]" and _kind(rf, version, False) is None
                   and any(g.name == "error_code" for g in rf.fields)]
        if len(plain) == 1 and len(answers) == 1:
            out.append((plain[0], answers[0], "each"))
    return out


def _partitions_of(f, version: int):
    if f.type != "[]":
        return None
    return next((g for g in _at(f.fields, version) if _kind(g, version, True) == "partitions"), None)


def _picked(f, version: int, entry, key, pick: Pick, kind: str, topic) -> bool:
    if kind == "partitions":
        return pick(topic, key)
    if kind != "topics":
        return pick(None, None)
    inner = _partitions_of(f, version)
    if inner is None:
        return pick(key, None)
    return any(pick(key, _key_of(inner, version, p)) for p in (entry.get(inner.name) or []))


def _fill(req_fields, request, resp_fields, body, version, code, pick, topic) -> None:
    _set_codes(body, code)
    for req_field, resp_field, kind in _pairs(req_fields, resp_fields, version, topic is not None):
        out = []
        for entry in request.get(req_field.name) or []:
            key = _key_of(req_field, version, entry)
            if _picked(req_field, version, entry, key, pick, kind, topic):
                out.append(_entry(resp_field, version, req_field, entry, key, kind, code, pick, topic))
        body[resp_field.name] = out


def _entry(resp_field, version, req_field, req_entry, key, kind, code, pick, topic) -> dict:
    """One response entry answering the request entry ``req_entry`` with ``code``."""
    body = _defaults(resp_field.fields, version)
    group = {"topics": TOPIC_KEYS, "partitions": PARTITION_KEYS}.get(kind, (kind,))
    if req_field.type == "[]":
        for k in KEYS:
            if k in body and k in req_entry:
                body[k] = req_entry[k]
        if kind == "partitions":  # Fetch's "partition" answered as "partition_index"
            for k in group:
                if k in body:
                    body[k] = key
        _fill(req_field.fields, req_entry, resp_field.fields, body, version, code, pick,
              key if kind == "topics" else topic)
    else:  # a list of keys: each goes in its entry's key field (an id only where it is one)
        ids = req_field.type == "[]uuid"
        k = next((k for k in group if k in body and (k == "topic_id") == ids), None)
        if k is not None:
            body[k] = req_entry
        _set_codes(body, code)
    return body


def _set_codes(body: dict, code: int) -> None:
    for name in body:
        if name.endswith("error_code"):  # (AddPartitionsToTxn's partition_error_code)
            body[name] = code
    if "error_message" in body:
        body["error_message"] = None


def _defaults(fields, version: int) -> dict:
    return {f.name: _defaults(f.fields, version) if f.type == "{}" else _default_for(f, version in f.nullable)
            for f in _at(fields, version)}


def error_answer(api, version: int, request, code: int, pick: Pick = lambda t, p: True) -> dict:
    """An answer to ``request`` whose top level and entries picked by ``pick`` carry
    ``code``; entries not picked are left out."""
    body = _defaults(api.response, version)
    _fill(api.request, request, api.response, body, version, code, pick, None)
    return body


def carries_code(api, version: int) -> bool:
    """Does an error answer of this API at this version carry the code somewhere, for a
    request naming one of each thing (CreateTopics' topic, Produce's partition)?"""
    def found(value) -> bool:
        if isinstance(value, dict):
            return _PROBE in value.values() or any(found(v) for v in value.values())
        return isinstance(value, list) and any(found(v) for v in value)
    return found(error_answer(api, version, one_of_each(api.request, version), _PROBE))


_PROBE = 0x7ABC


def one_of_each(fields, version: int) -> dict:
    """A request with one entry in every array: a topic "t", partition 0, key "k"."""
    out = {}
    for f in _at(fields, version):
        if f.type in ("[]", "{}"):
            inner = one_of_each(f.fields, version)
            out[f.name] = [inner] if f.type == "[]" else inner
        elif f.type.startswith("[]"):
            out[f.name] = {"[]string": ["k"], "[]int32": [0], "[]uuid": [_ID]}.get(f.type, [])
        elif f.type == "uuid":
            out[f.name] = _ID
        elif f.type == "string":
            out[f.name] = "t" if f.name in TOPIC_KEYS else "k"
        else:
            out[f.name] = _default_for(f, version in f.nullable)
    return out


_ID = __import__("uuid").UUID(int=1)


def named(api, version: int, request) -> list[tuple[object, object]]:
    """The (topic, partition) entries a request names, partition None for a topic it
    names as a whole: what a fault's topic and partitions are matched against."""
    out: list = []
    for req_field, _, kind in _pairs(api.request, api.response, version, False):
        if kind != "topics":
            continue
        inner = _partitions_of(req_field, version)
        for entry in request.get(req_field.name) or []:
            topic = _key_of(req_field, version, entry)
            parts = entry.get(inner.name) if inner is not None else None
            if parts:
                out += [(topic, _key_of(inner, version, p)) for p in parts]
            else:
                out.append((topic, None))
    return out


def without(api, version: int, request, pick: Pick):
    """A copy of ``request`` without the topic entries ``pick`` picks (a topic whose
    partitions are all picked goes too), or None when nothing is left to handle."""
    rest = copy.deepcopy(dict(request))
    left = False
    for req_field, _, kind in _pairs(api.request, api.response, version, False):
        if kind != "topics":
            continue
        inner = _partitions_of(req_field, version)
        kept = []
        for entry in rest.get(req_field.name) or []:
            topic = _key_of(req_field, version, entry)
            if inner is None or not entry.get(inner.name):
                if not pick(topic, None):
                    kept.append(entry)
                continue
            entry[inner.name] = [p for p in entry[inner.name]
                                 if not pick(topic, _key_of(inner, version, p))]
            if entry[inner.name]:
                kept.append(entry)
        rest[req_field.name] = kept
        left = left or bool(kept)
    return rest if left else None


def merge(api, version: int, answer: dict, errors: dict) -> dict:
    """``answer`` with ``errors``' entries in place of its entries for the same keys (and
    added where it has none); a top-level error code in ``errors`` wins."""
    if errors.get("error_code"):
        _set_codes(answer, errors["error_code"])
    _merge(api.response, answer, errors, version, False)
    return answer


def _merge(fields, answer, errors, version, in_topic: bool) -> None:
    for f in _at(fields, version):
        kind = _kind(f, version, in_topic) if f.type == "[]" else None
        theirs = errors.get(f.name) if kind is not None else None
        if not theirs:
            continue
        ours = answer.setdefault(f.name, [])
        where = {_key_of(f, version, e): i for i, e in enumerate(ours)}
        for entry in theirs:
            i = where.get(_key_of(f, version, entry))
            if i is None:
                ours.append(entry)
            elif kind == "topics" and (inner := _partitions_of_response(f, version)) is not None \
                    and entry.get(inner.name):  # some partitions: merged one by one
                _merge(f.fields, ours[i], entry, version, True)
            else:
                ours[i] = entry


def _partitions_of_response(f, version: int):
    return next((g for g in _at(f.fields, version)
                 if g.type == "[]" and _kind(g, version, True) == "partitions"), None)


def picks(topic: object | None, partitions: Iterable[int] | None,
          name_of: Callable[[object], object] = lambda key: key) -> Pick:
    """The entries a fault names: every one, one topic's (``name_of`` turns a topic id into
    its name), or some partitions of it."""
    wanted = None if partitions is None else frozenset(partitions)

    def pick(t, p) -> bool:
        if topic is not None and name_of(t) != topic:
            return False
        return wanted is None or p is None or p in wanted
    return pick
