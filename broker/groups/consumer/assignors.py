"""Server-side assignors of consumer groups (KIP-848): ``uniform`` and ``range``.

An assignor maps members to target partitions. It gets each member's subscribed
topic ids (existing topics only), the partition count of every subscribed topic
and the previous target, and returns a complete new target: every partition of a
subscribed topic goes to exactly one member subscribed to its topic.

- ``uniform`` (Kafka's default) spreads partitions so that member loads differ by
  at most one where subscriptions allow it, and keeps partitions where they were
  (sticky), so a join or a leave moves as few partitions as possible.
- ``range`` gives each subscriber of a topic a contiguous range of its partitions,
  members in member-id order, so co-partitioned topics line up.
"""

from __future__ import annotations

import uuid
from typing import Callable

TopicPartition = tuple[uuid.UUID, int]
Assignment = dict[uuid.UUID, frozenset[int]]

UNIFORM, RANGE = "uniform", "range"


def _as_assignment(pairs) -> Assignment:
    out: dict[uuid.UUID, set[int]] = {}
    for tid, p in pairs:
        out.setdefault(tid, set()).add(p)
    return {tid: frozenset(ps) for tid, ps in out.items()}


def _topic_order(topics: dict[uuid.UUID, int]) -> list[uuid.UUID]:
    return sorted(topics, key=str)


def _kept(members, topics, previous) -> dict[str, list[TopicPartition]]:
    """What each member may keep of the previous target: still subscribed, still
    existing, and not kept by another member."""
    taken: set[TopicPartition] = set()
    kept: dict[str, list[TopicPartition]] = {}
    for m in sorted(members):
        mine = []
        for tid, parts in sorted(previous.get(m, {}).items(), key=lambda kv: str(kv[0])):
            if tid not in members[m] or tid not in topics:
                continue
            for p in sorted(parts):
                if p < topics[tid] and (tid, p) not in taken:
                    taken.add((tid, p))
                    mine.append((tid, p))
        kept[m] = mine
    return kept


def uniform(members: dict[str, frozenset[uuid.UUID]], topics: dict[uuid.UUID, int],
            previous: dict[str, Assignment]) -> dict[str, Assignment]:
    if not members:
        return {}
    subscriptions = set(members.values())
    if len(subscriptions) == 1:
        return _uniform_homogeneous(members, topics, previous)
    return _uniform_general(members, topics, previous)


def _uniform_homogeneous(members, topics, previous) -> dict[str, Assignment]:
    subscribed = next(iter(members.values()))
    every = [(tid, p) for tid in _topic_order(topics) if tid in subscribed
             for p in range(topics[tid])]
    kept = _kept(members, topics, previous)
    base, extra = divmod(len(every), len(members))
    # members that already hold the most get the extra slots: fewer moves
    order = sorted(members, key=lambda m: (-len(kept[m]), m))
    quota = {m: base + (1 if i < extra else 0) for i, m in enumerate(order)}
    owned: dict[str, list[TopicPartition]] = {}
    for m in order:
        owned[m] = kept[m][:quota[m]]
    taken = {tp for tps in owned.values() for tp in tps}
    pool = [tp for tp in every if tp not in taken]
    pool.reverse()
    for m in order:
        while len(owned[m]) < quota[m]:
            owned[m].append(pool.pop())
    return {m: _as_assignment(owned[m]) for m in members}


def _uniform_general(members, topics, previous) -> dict[str, Assignment]:
    """Different subscriptions: keep what is valid, hand the rest to the least
    loaded subscriber, then move partitions from a member to a subscriber with at
    least two fewer until no such move is left (each move lowers the sum of
    squared loads, so this ends)."""
    order = sorted(members)
    subscribers = {tid: [m for m in order if tid in members[m]] for tid in topics}
    owned = {m: set(tps) for m, tps in _kept(members, topics, previous).items()}
    taken = {tp for tps in owned.values() for tp in tps}
    for tid in _topic_order(topics):
        subs = subscribers[tid]
        if not subs:
            continue
        for p in range(topics[tid]):
            if (tid, p) not in taken:
                target = min(subs, key=lambda m: (len(owned[m]), m))
                owned[target].add((tid, p))
    moved = True
    while moved:
        moved = False
        for m in sorted(order, key=lambda x: (-len(owned[x]), x)):
            for tp in sorted(owned[m], key=lambda t: (str(t[0]), t[1]), reverse=True):
                lighter = [x for x in subscribers[tp[0]] if len(owned[x]) < len(owned[m]) - 1]
                if lighter:
                    target = min(lighter, key=lambda x: (len(owned[x]), x))
                    owned[m].discard(tp)
                    owned[target].add(tp)
                    moved = True
                    break
            if moved:
                break
    return {m: _as_assignment(owned[m]) for m in order}


def range_assignor(members: dict[str, frozenset[uuid.UUID]], topics: dict[uuid.UUID, int],
                   previous: dict[str, Assignment]) -> dict[str, Assignment]:
    out: dict[str, list[TopicPartition]] = {m: [] for m in members}
    for tid in _topic_order(topics):
        subs = sorted(m for m in members if tid in members[m])
        if not subs:
            continue
        base, extra = divmod(topics[tid], len(subs))
        start = 0
        for i, m in enumerate(subs):
            count = base + (1 if i < extra else 0)
            out[m].extend((tid, p) for p in range(start, start + count))
            start += count
    return {m: _as_assignment(tps) for m, tps in out.items()}


Assignor = Callable[[dict, dict, dict], dict]
ASSIGNORS: dict[str, Assignor] = {UNIFORM: uniform, RANGE: range_assignor}
