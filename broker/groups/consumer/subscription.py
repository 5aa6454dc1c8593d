"""Subscriptions of consumer-group members: topic names and a regular expression.

Kafka compiles SubscribedTopicRegex with RE2/J and a topic matches when the whole
name matches. Here the pattern is compiled by Python's ``re`` and must match the
whole name (``fullmatch``); constructs RE2 does not have (look-around,
backreferences, conditionals, atomic groups, possessive quantifiers) are refused
as INVALID_REGULAR_EXPRESSION, so a pattern Kafka refuses is refused here too.
Internal topics never match a pattern.
"""

from __future__ import annotations

import re
import uuid
from functools import lru_cache

try:  # the parser's home moved in 3.11; it is only used to reject non-RE2 syntax
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_parse as _sre_parse  # type: ignore[no-redef]

_NOT_RE2 = {"ASSERT": "look-around", "ASSERT_NOT": "look-around", "GROUPREF": "a backreference",
            "GROUPREF_EXISTS": "a conditional", "ATOMIC_GROUP": "an atomic group",
            "POSSESSIVE_REPEAT": "a possessive quantifier"}


def _walk(parsed):
    for op, arg in parsed:
        yield str(op)
        items = arg if isinstance(arg, (list, tuple)) else (arg,)
        for item in items:
            if isinstance(item, _sre_parse.SubPattern):
                yield from _walk(item)
            elif isinstance(item, (list, tuple)):
                for sub in item:
                    if isinstance(sub, _sre_parse.SubPattern):
                        yield from _walk(sub)


def regex_problem(pattern: str) -> str | None:
    """None if ``pattern`` is a usable subscription regex, else why not."""
    try:
        parsed = _sre_parse.parse(pattern)
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:
        return f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: {exc}."
    for op in _walk(parsed):
        if op in _NOT_RE2:
            return (f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: "
                    f"it uses {_NOT_RE2[op]}, which RE2 does not support.")
    return None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def subscribed_topics(names, regex: str | None, topics) -> dict[str, object]:
    """name -> Topic of every existing topic a subscription covers; a regex covers the internal
    topics it matches too, as Kafka's coordinator resolves it (franz-go's
    Test848RegexBrokerResolves has __consumer_offsets assigned)."""
    out = {}
    for name in names:
        topic = topics.get(name)
        if topic is not None:
            out[name] = topic
    if regex:
        compiled = _compiled(regex)
        for topic in topics.all():
            if topic.name not in out and compiled.fullmatch(topic.name):
                out[topic.name] = topic
    return out


def subscribed_ids(member, topics) -> frozenset[uuid.UUID]:
    return frozenset(t.topic_id for t in subscribed_topics(
        member.subscribed_names, member.subscribed_regex, topics).values())


def subscription_metadata(members, topics) -> tuple:
    """(name, topic id, partition count) of every topic some member subscribes to;
    when it changes the group epoch is bumped (KIP-848: metadata changes rebalance)."""
    seen: dict[str, object] = {}
    for member in members:
        seen.update(subscribed_topics(member.subscribed_names, member.subscribed_regex, topics))
    return tuple(sorted((name, t.topic_id, len(t.partitions)) for name, t in seen.items()))
