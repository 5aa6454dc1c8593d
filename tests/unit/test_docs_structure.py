"""Docs that describe the structure stay true: docs/ARCHITECTURE.md names every module of
broker/, client/, protocol/ and kipper/ (docs/SPARK.md every one of spark_jobs/), and every
module path they name exists."""

from __future__ import annotations

import re
from collections import Counter

from tests.support.broker import ROOT

ROOTS = {"broker": "ARCHITECTURE.md", "client": "ARCHITECTURE.md", "protocol": "ARCHITECTURE.md",
         "kipper": "ARCHITECTURE.md", "spark_jobs": "SPARK.md"}
PATTERNS = ("protocol/messages/",)  # `messages/<api>.py`: one module per API
TOKEN = re.compile(r"`([\w./<>-]+\.py)`")


def _modules() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for root in ROOTS for p in (ROOT / root).rglob("*.py")
                  if p.name != "__init__.py" and "__pycache__" not in p.parts)


def _named(doc: str) -> set[str]:
    return set(TOKEN.findall((ROOT / "docs" / doc).read_text(encoding="utf-8")))


def _names_for(path: str) -> set[str]:
    """How a doc may name a module: its path, its path below the source root, or (when no
    other module has it) its file name."""
    parts = path.split("/")
    return {path, "/".join(parts[1:]), *("/".join(parts[i:]) for i in range(1, len(parts)))}


def test_every_module_is_named_in_its_doc():
    modules = _modules()
    counts = Counter((ROOTS[m.split("/", 1)[0]], m.rsplit("/", 1)[1]) for m in modules if not m.startswith(PATTERNS))
    missing = []
    for m in modules:
        if m.startswith(PATTERNS):
            continue
        names = _names_for(m)
        if counts[ROOTS[m.split("/", 1)[0]], m.rsplit("/", 1)[1]] > 1:
            names.discard(m.rsplit("/", 1)[1])  # a name two modules share says nothing
        named = _named(ROOTS[m.split("/", 1)[0]])
        if not names & named and not any(n.endswith("/" + m.split("/", 1)[1]) for n in named):
            missing.append(m)
    assert missing == [], f"modules no doc names (docs/ARCHITECTURE.md, or docs/SPARK.md for spark_jobs): {missing}"


def test_every_module_path_a_doc_names_exists():
    modules = {str(p.relative_to(ROOT)) for root in ROOTS for p in (ROOT / root).rglob("*.py")}
    tails = {t for m in modules for t in _names_for(m)}
    for doc in set(ROOTS.values()):
        for name in _named(doc):
            if "/" in name and "<" not in name and not name.startswith(("tests/", "benchmarks/", "scripts/")):
                assert name in tails or any(m.endswith(name) for m in modules), f"docs/{doc} names {name}: no such module"
