"""The allowed differences are one list in two places: allowed_differences.toml (read by the
suite) and docs/KAFKA_DIFFERENCES.md (read by people). Each row of the doc is rendered from
its entry, word for word: the API, the field, the values it pins, the scenarios it is limited
to, the reason and the scenarios it covers. Each entry names the scenarios where its
difference shows (``covers``), and each of them exists: test_conformance.py checks, when the
suite runs against Kafka, that they show it and that no other scenario does. Runs without
Kafka. ``python -m tests.conformance.test_differences_doc`` rewrites the doc's rows."""

from __future__ import annotations

import fnmatch
import re
import sys
from pathlib import Path

from tests.conformance.compare import Allowed, Difference, classify, coverage_problems, load_allowed
from tests.conformance.scenarios import load_all

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "KAFKA_DIFFERENCES.md"
ROW = re.compile(r"^\| `([a-z0-9-]+)` \|.*$", flags=re.M)
HEADER = "| id | API | field / scenario | why | seen in |\n|---|---|---|---|---|"
OLD_HEADER = re.compile(r"^\| id \| API \| field / scenario \| why \|( seen in \|)?\n\|(---\|)+$", flags=re.M)
JAVA = "java-ecosystem/"


def render(a: Allowed) -> str:
    field = ", ".join(f"`{p}`" for p in ([a.path] if isinstance(a.path, str) else a.path))
    if a.versions:
        field += f" v{a.versions}"
    if a.has_kafka:
        field += f", Kafka `{a.kafka!r}`"
    if a.has_kipper:
        field += f", kipper `{a.kipper!r}`"
    if a.kafka_answer_has is not None:
        field += f", where Kafka's answer has error {a.kafka_answer_has}"
    if a.kafka_closed:
        field += ", where Kafka closed the connection"
    if a.kipper_answer_has is not None:
        field += f", where kipper's answer has error {a.kipper_answer_has}"
    if a.numbers_only:
        field += ", texts that differ only in their numbers"
    if a.texts_name:
        field += f", texts that both name `{a.texts_name}`"
    if a.asked:
        field += ", asked " + ", ".join(f"`{k}={v}`" for k, v in a.asked.items())
    globs = [a.scenario] if isinstance(a.scenario, str) else a.scenario
    if globs != ["*"]:
        field += " in " + ", ".join(f"`{g}`" for g in globs)
    reason = a.reason + (f" (seed {a.seed})" if a.seed else "") + (f" (issue {a.issue})" if a.issue else "")
    seen = ", ".join(f"`{c}`" for c in a.covers) + (" (on some runs: timing)" if a.sometimes else "")
    api = a.api if isinstance(a.api, str) else ", ".join(a.api)
    return f"| `{a.id}` | {api} | {field} | {reason} | {seen} |"


def rendered(text: str) -> str:
    """The doc with each row rendered from its entry and each table's header with the columns."""
    entries = {a.id: a for a in load_allowed()}
    text = OLD_HEADER.sub(HEADER, text)
    return ROW.sub(lambda m: render(entries[m.group(1)]) if m.group(1) in entries else m.group(0), text)


def test_the_doc_and_the_machine_readable_list_name_the_same_differences():
    listed = {a.id for a in load_allowed()}
    documented = set(ROW.findall(DOC.read_text()))
    assert documented == listed


def test_every_row_of_the_doc_is_its_entry_word_for_word():
    text = DOC.read_text()
    stale = [f"  {line}\n  should be:\n  {want}" for line, want in zip(text.splitlines(), rendered(text).splitlines())
             if line != want]
    assert not stale, ("docs/KAFKA_DIFFERENCES.md differs from allowed_differences.toml (write the reason in the "
                       "toml, then run python -m tests.conformance.test_differences_doc):\n" + "\n".join(stale))


def test_every_deliberate_difference_names_its_seed_and_every_pending_one_its_issue():
    for a in load_allowed():
        if a.kind == "deliberate":
            assert a.seed, a.id
        if a.kind in ("pending", "open"):
            assert a.issue, a.id


def test_every_entry_names_the_scenarios_it_covers_and_they_exist():
    names = [s.name for s in load_all()]
    problems = []
    for a in load_allowed():
        if not a.covers:
            problems.append(f"{a.id}: names no scenario where it shows (covers = [...])")
        for c in a.covers:
            if c.startswith(JAVA):
                problems += _java_test_problems(a, c[len(JAVA):])
            elif not any(fnmatch.fnmatchcase(n, c) for n in names):
                problems.append(f"{a.id}: covers {c}, which names no scenario")
    assert not problems, "\n".join(problems)


def _java_test_problems(a: Allowed, name: str) -> list[str]:
    """tests/java_ecosystem/<file>::<test> exists and checks the entry (names its id)."""
    file, _, test = name.partition("::")
    path = ROOT / "tests" / "java_ecosystem" / file
    if not path.exists() or f"def {test}(" not in path.read_text():
        return [f"{a.id}: covers {JAVA}{name}, which is no test of tests/java_ecosystem"]
    if a.id not in path.read_text():
        return [f"{a.id}: covers {JAVA}{name}, whose file does not check it (name the id there)"]
    return []


def test_the_coverage_check_finds_an_entry_that_covers_nothing_or_shows_elsewhere():
    entry = Allowed("e", "open", "r", api="Produce", covers=["a/one", "b/*"], issue=36)
    seen = Difference("a/one", "produce", "Produce", 9, "error_code", 0, 46, "e")
    classify([seen], [entry])
    assert coverage_problems([entry], {"a/one", "b/two"}) == [
        "e: covers b/*, which ran and showed no difference it allows"]
    classify([Difference("c/three", "produce", "Produce", 9, "error_code", 0, 46)], [entry])
    assert "e: allowed a difference in c/three, which its covers do not name" in " ".join(
        coverage_problems([entry], {"a/one"}))
    classify([Difference("fuzz/Produce", "Produce", "Produce", 9, "error_code", 0, 46)], [entry])
    entry.sometimes = True  # timing: b/* need not show it; c/three still may not
    assert [p[:40] for p in coverage_problems([entry], {"a/one", "b/two"})] == [
        "e: allowed a difference in c/three, whic"]


def test_an_entry_that_names_what_was_asked_allows_only_those_requests():
    entry = load_allowed_entry("idempotent-init-producer-id-bump")
    idempotent = {"transactional_id": None, "producer_id": 7, "producer_epoch": 0}
    transactional = dict(idempotent, transactional_id="tx")
    assert entry.matches(Difference("fuzz/InitProducerId", "i", "InitProducerId", 5, "producer_epoch", 0, 1,
                                    asked=idempotent))
    assert not entry.matches(Difference("fuzz/InitProducerId", "i", "InitProducerId", 5, "producer_epoch", 0, 1,
                                        asked=transactional))
    assert not entry.matches(Difference("fuzz/InitProducerId", "i", "InitProducerId", 5, "producer_epoch", 0, 1))


def load_allowed_entry(name: str) -> Allowed:
    return next(a for a in load_allowed() if a.id == name)


if __name__ == "__main__":
    DOC.write_text(rendered(DOC.read_text()))
    sys.exit(0)


def test_a_text_beside_an_allowed_code_is_allowed_with_it_and_no_other_text():
    entry = load_allowed_entry("share-heartbeat-lost-group")
    code = Difference("fuzz/ShareGroupHeartbeat", "h", "ShareGroupHeartbeat", 1, "error_code", 69, 25)
    text = Difference("fuzz/ShareGroupHeartbeat", "h", "ShareGroupHeartbeat", 1, "error_message",
                      "Share group g not found.", "Member m is not a member of group g.")
    classify([code, text], [entry])
    assert text.allowed == "share-heartbeat-lost-group"
    alone = Difference("fuzz/ShareGroupHeartbeat", "h", "ShareGroupHeartbeat", 1, "error_message", "a", "b")
    other = Difference("fuzz/ShareGroupHeartbeat", "h", "ShareGroupHeartbeat", 1, "results.0.error_message", "a", "b")
    classify([alone, other, Difference("fuzz/ShareGroupHeartbeat", "h", "ShareGroupHeartbeat", 1,
                                       "error_code", 69, 25)], [entry])
    assert alone.allowed == "share-heartbeat-lost-group" and other.allowed is None
