"""The suite's JSON report: conformance-report.json under pytest's base temp directory, or
the path in KIPPER_CONFORMANCE_REPORT. Counts per run and per API, every difference found
(with the allowed entry that covers it), and the allowed entries nothing matched."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

from tests.conformance.compare import Allowed, Difference


class Report:
    def __init__(self, allowed: list[Allowed]):
        self.allowed = allowed
        self.scenarios = 0
        self.requests = 0
        self.identical = 0
        self.per_api: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.differences: list[Difference] = []
        self.versions: dict[str, str] = {}

    def add(self, exchanges: list[tuple[str, int, list[Difference]]]) -> None:
        """One scenario: for each compared request, its API, version and differences."""
        self.scenarios += 1
        for api, _version, diffs in exchanges:
            stats = self.per_api[api]
            self.requests += 1
            stats["requests"] += 1
            if not diffs:
                self.identical += 1
                stats["identical"] += 1
            else:
                stats["with_listed_differences" if all(d.allowed for d in diffs) else "with_unlisted_differences"] += 1
            for d in diffs:
                stats["listed" if d.allowed else "unlisted"] += 1
            self.differences += diffs

    def as_dict(self) -> dict:
        listed = [d for d in self.differences if d.allowed]
        unlisted = [d for d in self.differences if not d.allowed]
        return {
            "versions": self.versions,
            "scenarios": self.scenarios,
            "requests_compared": self.requests,
            "identical": self.identical,
            "listed_differences": len(listed),
            "unlisted_differences": len(unlisted),
            "per_api": {api: dict(stats) for api, stats in sorted(self.per_api.items())},
            "allowed_entries": {a.id: {"kind": a.kind, "matched": a.used, "seen_in": sorted(a.seen)}
                                for a in self.allowed},
            "unused_allowed_entries": [a.id for a in self.allowed if not a.used],
            "unlisted": [d.as_dict() for d in unlisted],
            "listed": [d.as_dict() for d in listed],
        }

    def write(self, base_temp: Path) -> Path:
        path = Path(os.environ.get("KIPPER_CONFORMANCE_REPORT") or base_temp / "conformance-report.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.as_dict(), indent=1, default=repr))
        return path
