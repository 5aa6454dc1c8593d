"""What a Python client returned, as plain data two brokers' outcomes can be compared by: the
public attributes of its result objects, its errors as the client names them (with their
texts, word for word), and what is each broker's own masked (ids, addresses, clocks)."""

from __future__ import annotations

import enum
import inspect
import json
import re
import time
import uuid

# attributes whose values each broker gives its own way (ids, addresses, clocks)
OWN = frozenset({"topic_id", "cluster_id", "host", "port", "producer_id", "member_id", "client_host",
                 "uuid", "finalized_epoch", "throttle_time_ms", "producer_epoch", "transaction_start_time_ms"})
# each broker's deployment, whatever its value: a log directory's path and its disk's bytes (an
# in-memory kipper has no disk: -1)
DEPLOYMENT = frozenset({"log_dir", "total_bytes", "usable_bytes"})
CLOCKED = frozenset({"timestamp"})  # a record's time, the sequence's own or, when near now, the clock's
DAY_MS = 86_400_000
ADDRESS = re.compile(r"(127\.0\.0\.1|localhost):\d+")
NODE_NAME = re.compile(r"(?<=/)(\d+|bootstrap)(?=:|\b)")
UUIDISH = re.compile(r"\b[A-Za-z0-9_-]{22}\b(?=[^A-Za-z0-9_-]|$)")
REQUEST_OBJECT = re.compile(r"Request Request\(.*", re.S)  # (to the end: a client may cut it anywhere)
LIMIT = 40  # items of a list kept: a listing of the whole broker is cut to the sequence's own first


def text(value: str) -> str:
    """An error's text as both brokers' can be compared: addresses masked, and the Request
    object Kafka's refusals print (its connection, its session's hash: what a client cuts of
    it differs too) as the protocol comparison has it."""
    return ADDRESS.sub("<address>", REQUEST_OBJECT.sub("Request <the request>", str(value)))


def plain(value, depth: int = 0):
    """``value`` as JSON-able data (depth-limited: result objects point at each other)."""
    if depth > 8:
        return "<deep>"
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return text(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, uuid.UUID) or type(value).__name__ == "Uuid":
        return "<uuid>"
    if isinstance(value, BaseException):
        return failure(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple: by its names
        value = dict(zip(value._fields, value))
    if isinstance(value, dict):
        return dict(sorted((key(k), _field(k, v, depth)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [plain(v, depth + 1) for v in value]
        if isinstance(value, (set, frozenset)):
            items.sort(key=repr)
        return items[:LIMIT]
    kafka_error = _kafka_error(value)
    if kafka_error is not None:
        return kafka_error
    fields = {}
    for name in _attributes(value):
        try:
            attr = getattr(value, name)
        except Exception as exc:  # noqa: BLE001 - a property that raises is what it raised
            attr = exc
        if callable(attr) and not isinstance(attr, (enum.Enum, type)):
            continue
        fields[name] = _field(name, attr, depth)
    return {"type": type(value).__name__, **fields} if fields else type(value).__name__


def _field(name, value, depth: int):
    """An attribute or key's value: masked when it is each broker's own (whether there is one),
    its deployment's, or the clock's; else plain."""
    if name in OWN:
        return "<own>" if value not in (None, -1, "", 0) else value
    if name in DEPLOYMENT:
        return "<deployment>"
    if name in CLOCKED and isinstance(value, int) and abs(value - time.time() * 1000) < DAY_MS:
        return "<clock>"
    return plain(value, depth + 1)


def _attributes(value) -> list[str]:
    """Its public data: instance attributes, slots, properties and a C type's getters."""
    names = set(getattr(value, "__dict__", {}) or {})
    for cls in type(value).__mro__:
        if cls is object:
            continue
        names.update(n for n, v in vars(cls).items() if inspect.isdatadescriptor(v))
    return sorted(n for n in names if not n.startswith("_"))


def key(value) -> str:
    """A result's key as its reader names it: a partition as topic[partition], a config
    resource as TYPE:name, anything else as its plain form."""
    if hasattr(value, "topic") and hasattr(value, "partition") and not callable(value.topic):
        return f"{text(value.topic)}[{value.partition}]"
    kind = getattr(value, "restype", None) or getattr(value, "resource_type", None)
    if kind is not None and hasattr(value, "name") and isinstance(value.name, str):
        return f"{plain(kind)}:{text(value.name)}"
    found = plain(value)
    return found if isinstance(found, str) else json.dumps(found, sort_keys=True)


def _kafka_error(value):
    """confluent-kafka's KafkaError: its name and text (its code is the name's)."""
    if type(value).__name__ != "KafkaError" or not hasattr(value, "name"):
        return None
    return {"error": value.name(), "text": text(value.str())}


def failure(exc: BaseException) -> dict:
    """An exception as the user sees it: its class, a Kafka error's name, its text."""
    if exc.args and _kafka_error(exc.args[0]) is not None:
        return {"raised": type(exc).__name__, **_kafka_error(exc.args[0])}
    return {"raised": type(exc).__name__, "text": text(str(exc))}
