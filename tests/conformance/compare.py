"""Field-by-field comparison of two normalised responses, and the list of differences that
are allowed (tests/conformance/allowed_differences.toml, mirrored by docs/KAFKA_DIFFERENCES.md).

A difference is (scenario, API, version, path, Kafka's value, kipper's value). The path
names fields with dots and array elements by index: ``topics.0.partitions.1.error_code``.
An allowed entry matches a difference when its ``api``, ``path`` and ``scenario`` globs (and
``versions``, ``kafka``, ``kipper``, ``asked``, ``numbers_only``, ``texts_name`` when given) all match; ``api`` and ``scenario`` may be lists of globs.
``covers`` names the scenarios (or globs of them) where the difference shows: the suite checks
that each shows it and that it shows nowhere else (test_conformance.py, test_differences_doc.py).
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ALLOWED_FILE = Path(__file__).with_name("allowed_differences.toml")
NUMBERS = re.compile(r"-?\d+")
# deliberate: a seed asks for it; version: an API version or API kipper does not implement;
# limitation: what one broker of this design does differently by nature or by the reference's
# own setup; pending: another issue owns the fix (named in issue =); open: a kipper bug this
# suite found and no branch has fixed yet -- listed so that it is seen, to be fixed and removed
KINDS = ("deliberate", "version", "limitation", "pending", "open")


@dataclass
class Difference:
    scenario: str
    label: str
    api: str
    version: int
    path: str
    kafka: Any
    kipper: Any
    allowed: str | None = None
    kafka_codes: frozenset = frozenset()  # every error code in Kafka's whole answer
    kipper_codes: frozenset = frozenset()  # and in kipper's
    kafka_closed: bool = False  # Kafka closed the connection instead of answering
    asked: Any = None  # the request's body, as sent to both

    def as_dict(self) -> dict:
        return {"scenario": self.scenario, "request": self.label, "api": self.api, "version": self.version,
                "path": self.path, "kafka": _short(self.kafka), "kipper": _short(self.kipper),
                "allowed_by": self.allowed}


@dataclass
class Allowed:
    id: str
    kind: str
    reason: str
    api: str | list[str] = "*"
    path: str | list[str] = "*"  # one glob, or several (any of them)
    scenario: str | list[str] = "*"
    covers: list[str] = field(default_factory=list)
    sometimes: bool = False  # timing: shown on some runs only, so not required to show
    # only where Kafka's answer carries this error code somewhere (-1: Kafka failed inside)
    kafka_answer_has: int | None = None
    kipper_answer_has: int | None = None
    kafka_closed: bool | None = None  # only where Kafka closed the connection (it failed reading)
    asked: dict | None = None  # only where the request's top-level fields have these values ("null": None)
    versions: str | None = None
    kafka: Any = None
    kipper: Any = None
    seed: str | None = None
    issue: int | None = None
    numbers_only: bool = False  # only two texts that differ in the numbers they carry alone
    texts_name: str | None = None  # only two texts that both name this (a config, say)
    has_kafka: bool = False
    has_kipper: bool = False
    used: int = field(default=0)
    seen: dict = field(default_factory=dict)  # scenario -> one difference it covered there

    def matches(self, d: Difference) -> bool:
        apis = [self.api] if isinstance(self.api, str) else self.api
        paths = [self.path] if isinstance(self.path, str) else self.path
        if not any(fnmatch.fnmatchcase(d.api, a) for a in apis) or not any(
                fnmatch.fnmatchcase(d.path, p) for p in paths):
            return False
        globs = [self.scenario] if isinstance(self.scenario, str) else self.scenario
        if not any(fnmatch.fnmatchcase(d.scenario, g) for g in globs):
            return False
        if self.versions is not None:
            lo, _, hi = self.versions.partition("-")
            if not int(lo) <= d.version <= int(hi or lo):
                return False
        if self.kafka_answer_has is not None and self.kafka_answer_has not in d.kafka_codes:
            return False
        if self.kipper_answer_has is not None and self.kipper_answer_has not in d.kipper_codes:
            return False
        if self.kafka_closed is not None and self.kafka_closed != d.kafka_closed:
            return False
        if self.asked is not None and not _asked(self.asked, d.asked):
            return False
        if self.numbers_only and not (isinstance(d.kafka, str) and isinstance(d.kipper, str)
                                      and NUMBERS.sub("N", d.kafka) == NUMBERS.sub("N", d.kipper)):
            return False
        if self.texts_name is not None and not (isinstance(d.kafka, str) and isinstance(d.kipper, str)
                                                and self.texts_name in d.kafka and self.texts_name in d.kipper):
            return False
        if self.has_kafka and d.kafka != self.kafka:
            return False
        if self.has_kipper and d.kipper != self.kipper:
            return False
        return True


def _asked(wanted: dict, body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    return all(k in body and body[k] == (None if v == "null" else v) for k, v in wanted.items())


def load_allowed(path: Path = ALLOWED_FILE) -> list[Allowed]:
    data = tomllib.loads(path.read_text())
    out = []
    for entry in data.get("difference", []):
        entry = dict(entry)
        has_kafka, has_kipper = "kafka" in entry, "kipper" in entry
        for k in ("kafka", "kipper"):
            if entry.get(k) == "null":
                entry[k] = None
        allowed = Allowed(**entry, has_kafka=has_kafka, has_kipper=has_kipper)
        if allowed.kind not in KINDS:
            raise ValueError(f"{allowed.id}: kind {allowed.kind!r} is not one of {KINDS}")
        if allowed.kind in ("pending", "open") and not allowed.issue:
            raise ValueError(f"{allowed.id}: a pending difference names the issue that owns it")
        out.append(allowed)
    ids = [a.id for a in out]
    if len(ids) != len(set(ids)):
        raise ValueError("allowed_differences.toml has duplicate ids")
    return out


def diff(kafka: Any, kipper: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(kafka, dict) and kipper == [] or kafka == [] and isinstance(kipper, dict):
        kafka, kipper = kafka or {}, kipper or {}  # a keyed listing against an empty one: entry by entry
    if isinstance(kafka, dict) and isinstance(kipper, dict):
        out = []
        for k in list(kafka) + [k for k in kipper if k not in kafka]:
            out += diff(kafka.get(k, "<absent>"), kipper.get(k, "<absent>"), f"{path}.{k}" if path else k)
        return out
    if isinstance(kafka, list) and isinstance(kipper, list):
        if len(kafka) != len(kipper):
            # say which elements are missing where both are lists of keyed structs
            return [(f"{path}.<length>" if path else "<length>", kafka, kipper)]
        out = []
        for i, (a, b) in enumerate(zip(kafka, kipper)):
            out += diff(a, b, f"{path}.{i}" if path else str(i))
        return out
    if kafka == kipper and type(kafka) is type(kipper):
        return []
    return [(path or "<response>", kafka, kipper)]


def classify(differences: list[Difference], allowed: list[Allowed]) -> None:
    """``differences`` of one exchange. A text follows its code: an error_message beside an
    error_code whose difference an entry allows is allowed by that entry too (the two
    brokers refuse differently, so they say different things)."""
    for d in differences:
        for a in allowed:
            if a.matches(d):
                d.allowed = a.id
                a.used += 1
                a.seen.setdefault(d.scenario, d)
                break
    codes = {(d.label, d.path): d.allowed for d in differences if d.allowed and _is(d.path, "error_code")}
    for d in differences:
        if not d.allowed and _is(d.path, "error_message"):
            d.allowed = codes.get((d.label, d.path[:-len("error_message")] + "error_code"))


def _is(path: str, leaf: str) -> bool:
    return path == leaf or path.endswith("." + leaf)


def closed(answer: Any) -> bool:
    return isinstance(answer, dict) and "<connection>" in answer


def error_codes(answer: Any) -> frozenset:
    """Every error code anywhere in an answer (for ``kafka_answer_has``)."""
    out = set()
    stack = [answer]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            for k, v in x.items():
                if k.endswith("error_code") and isinstance(v, int):
                    out.add(v)
                else:
                    stack.append(v)
        elif isinstance(x, list):
            stack.extend(x)
    return frozenset(out)


def coverage_problems(allowed: list[Allowed], ran: set[str]) -> list[str]:
    """What this session's scenarios (``ran``) say against the entries' ``covers``: a named
    scenario (or glob) that ran without showing the difference, or a scenario that showed
    it without being named. The generator's sequences (fuzz/...) and Kafka's tools
    (java-ecosystem/..., which check their own entries) are not counted here."""
    problems = []
    for a in allowed:
        named = [c for c in a.covers if not c.startswith("java-ecosystem/")]
        seen = {s: d for s, d in a.seen.items() if not s.startswith("fuzz/")}
        for c in named:
            here = {s for s in ran if fnmatch.fnmatchcase(s, c)}
            if here and not a.sometimes and not any(fnmatch.fnmatchcase(s, c) for s in seen):
                problems.append(f"{a.id}: covers {c}, which ran and showed no difference it allows")
        for s, d in sorted(seen.items()):
            if not any(fnmatch.fnmatchcase(s, c) for c in named):
                problems.append(f"{a.id}: allowed a difference in {s}, which its covers do not name "
                                f"({d.api} {d.path}: kafka={_short(d.kafka, 80)!r} kipper={_short(d.kipper, 80)!r})")
    return problems


def _short(v: Any, limit: int = 600) -> Any:
    text = repr(v)
    return v if len(text) <= limit else text[:limit] + "..."
