"""The allowed differences are one list in two places: allowed_differences.toml (read by the
suite) and docs/KAFKA_DIFFERENCES.md (read by people). They must name the same entries.
Runs without Kafka."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conformance.compare import load_allowed

DOC = Path(__file__).resolve().parents[2] / "docs" / "KAFKA_DIFFERENCES.md"


def test_the_doc_and_the_machine_readable_list_name_the_same_differences():
    listed = {a.id for a in load_allowed()}
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", DOC.read_text(), flags=re.M))
    assert documented == listed


def test_every_deliberate_difference_names_its_seed_and_every_pending_one_its_issue():
    for a in load_allowed():
        if a.kind == "deliberate":
            assert a.seed, a.id
        if a.kind in ("pending", "open"):
            assert a.issue, a.id
