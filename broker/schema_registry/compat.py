"""Compatibility levels over a subject's versions (Confluent's CompatibilityChecker).

BACKWARD: the new schema reads what the latest version wrote; FORWARD: the latest reads what
the new one writes; FULL: both. The _TRANSITIVE forms check every live version, newest first,
and stop at the first that fails; NONE checks nothing. A version of another schema type is
incompatible. Messages name the reader and writer as Confluent's do ("new"/"old") and end with
the old version and schema it was checked against.
"""

from __future__ import annotations

from kipper.broker.schema_registry.errors import COMPATIBILITY_LEVELS

DEFAULT_LEVEL = "BACKWARD"  # Confluent's schema.compatibility.level default
MAX_SCHEMA_IN_MESSAGE = 10 * 1024


def valid_level(level) -> bool:
    return isinstance(level, str) and level.upper() in COMPATIBILITY_LEVELS


def check(level: str, new, previous: list, parse, *, lenient: bool = False) -> list[str]:
    """``previous``: the subject's live versions (with a ``version``), oldest first, parsed by
    ``parse`` only when the level needs them. Returns the reasons ``new`` is not
    compatible; empty when it is."""
    level = level.upper()
    if level == "NONE" or not previous:
        return []
    transitive = level.endswith("_TRANSITIVE")
    direction = level.removesuffix("_TRANSITIVE")
    candidates = list(reversed(previous)) if transitive else [previous[-1]]
    for value in candidates:
        errors = _pair(direction, new, parse(value), value.version, lenient)
        if errors:
            return errors
    return []


def _pair(direction: str, new, old, version: int, lenient: bool) -> list[str]:
    if new.schema_type != old.schema_type:
        return ["Incompatible because of different schema type"]
    out: list[str] = []
    if direction in ("FORWARD", "FULL"):  # the old schema reads what the new one writes
        found = _named(_errors(old, new, lenient), reader="old", writer="new")
        out += found + (_tail(old, version) if found and direction == "FORWARD" else [])
    if direction in ("BACKWARD", "FULL"):  # the new schema reads what the old one wrote
        found = _named(_errors(new, old, lenient), reader="new", writer="old")
        out += found + (_tail(old, version) if found else [])
    return out


def _errors(reader, writer, lenient: bool) -> list[str]:
    if lenient and reader.schema_type == "JSON":
        return reader.backward_errors(writer, lenient=True)
    return reader.backward_errors(writer)


def _named(messages: list[str], reader: str, writer: str) -> list[str]:
    return [m.replace("<reader>", reader).replace("<writer>", writer) for m in messages]


def _tail(old, version: int) -> list[str]:
    text = old.canonical
    shown = text if len(text) <= MAX_SCHEMA_IN_MESSAGE else f"<truncated> {text[:MAX_SCHEMA_IN_MESSAGE]}..."
    return [f"{{oldSchemaVersion: {version}}}", f"{{oldSchema: '{shown}'}}"]
