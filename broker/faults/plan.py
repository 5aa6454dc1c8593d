"""The fault plan: which requests get which fault, and how many requests of each API and
version arrived. A plain object the shell consults per request (broker/faults/dispatch.py)
and a test changes through kipper.testing's control; nothing in it does I/O or waits.

A fault takes the next ``count`` requests of its API (after letting ``skip`` through) that
name its topic and partitions, when it has them; ``count=None`` takes every one until the
plan is cleared. Faults of one API are tried in the order they were added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from kipper.protocol import error_answers
from kipper.protocol.errors import ErrorCode
from kipper.protocol.messages import APIS

ACTIONS = ("error", "delay", "drop", "close")


@dataclass
class Fault:
    """``error``: answered with ``code`` (the request is not handled; on an API that only
    reads, the entries it names carry the code in the real answer). ``delay``: handled,
    answered ``seconds`` later (None: never). ``drop``: handled, the answer lost and the
    connection closed. ``close``: the connection closed, the request not handled."""

    api_key: int
    action: str
    code: int = 0
    count: int | None = 1
    skip: int = 0
    topic: str | None = None
    partitions: tuple[int, ...] | None = None
    seconds: float | None = None
    versions: tuple[int, int] | None = None
    taken: int = field(default=0)

    @classmethod
    def from_dict(cls, spec: dict) -> "Fault":
        """A fault as the control channel and ``kipper.testing`` describe it, checked."""
        spec = dict(spec)
        api = spec.pop("api")
        api_key = _api_key(api)
        action = spec.pop("action")
        if action not in ACTIONS:
            raise ValueError(f"unknown fault action {action!r}: one of {', '.join(ACTIONS)}")
        code = spec.pop("code", 0)
        if action == "error":
            try:
                code = int(ErrorCode[code] if isinstance(code, str) else ErrorCode(code))
            except (KeyError, ValueError):
                raise ValueError(f"unknown error code {code!r} (Kafka's names: NOT_LEADER_OR_FOLLOWER, ...)") from None
            if code == 0:
                raise ValueError("an error fault needs an error code other than NONE")
        partitions = spec.pop("partitions", None)
        versions = spec.pop("versions", None)
        fault = cls(api_key, action, code,
                    partitions=None if partitions is None else tuple(int(p) for p in partitions),
                    versions=None if versions is None else (int(versions[0]), int(versions[1])),
                    **{k: spec.pop(k) for k in ("count", "skip", "topic", "seconds") if k in spec})
        if spec:
            raise ValueError(f"unknown fault field(s): {', '.join(sorted(spec))}")
        if fault.count is not None and fault.count < 1:
            raise ValueError("count must be at least 1 (or None: every request)")
        if fault.partitions is not None and fault.topic is None:
            raise ValueError("partitions need a topic")
        api = APIS[api_key]
        if action == "error" and not error_answers.carries_code(api, api.max_version):
            raise ValueError(f"{api.name} answers cannot carry an injected error code")
        return fault

    def applies(self, version: int) -> bool:
        return self.versions is None or self.versions[0] <= version <= self.versions[1]

    def names(self, entries: Iterable[tuple], name_of: Callable) -> bool:
        """Does a request naming ``entries`` ((topic, partition) pairs) name this fault's?"""
        if self.topic is None:
            return True
        wanted = self.partitions
        return any(name_of(t) == self.topic and (wanted is None or p is None or p in wanted)
                   for t, p in entries)


def _api_key(api) -> int:
    if isinstance(api, int):
        if api not in APIS:
            raise ValueError(f"unknown API key {api}")
        return api
    for key, known in APIS.items():
        if known.name == api:
            return key
    raise ValueError(f"unknown API {api!r} (Kafka's names: Produce, Fetch, ListOffsets, ...)")


class FaultPlan:
    def __init__(self):
        self.by_api: dict[int, list[Fault]] = {}
        self.counts: dict[tuple[int, int], int] = {}

    def add(self, fault: Fault) -> None:
        self.by_api.setdefault(fault.api_key, []).append(fault)

    def clear(self) -> None:
        """No faults; the counts start again."""
        self.by_api.clear()
        self.counts.clear()

    def seen(self, api_key: int, version: int, n: int = 1) -> None:
        key = (api_key, version)
        self.counts[key] = self.counts.get(key, 0) + n

    def take(self, api_key: int, version: int, entries: Callable[[], list], name_of: Callable) -> Fault | None:
        """The fault this request gets, if any, counted as taken. ``entries()`` lists what
        the request names (decoded only if a fault has a topic)."""
        faults = self.by_api.get(api_key)
        if not faults:
            return None
        named = None
        for fault in faults:
            if not fault.applies(version):
                continue
            if fault.topic is not None:
                named = entries() if named is None else named
                if not fault.names(named, name_of):
                    continue
            if fault.skip:
                fault.skip -= 1
                return None
            fault.taken += 1
            if fault.count is not None and fault.taken >= fault.count:
                faults.remove(fault)
                if not faults:
                    del self.by_api[api_key]
            return fault
        return None

    def report(self) -> dict:
        """Requests seen per API name and version, and the faults still waiting."""
        seen: dict[str, dict[int, int]] = {}
        for (key, version), n in sorted(self.counts.items()):
            seen.setdefault(APIS[key].name if key in APIS else str(key), {})[version] = n
        waiting = [{"api": APIS[f.api_key].name, "action": f.action, "taken": f.taken,
                    "left": None if f.count is None else f.count - f.taken}
                   for faults in self.by_api.values() for f in faults]
        return {"requests": seen, "faults": waiting}
