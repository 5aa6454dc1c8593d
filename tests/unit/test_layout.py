"""The shape of the code base: layers point down, no import cycles, small files.

Read from the sources with ``ast`` (nothing is imported): every import
statement, at module level or inside a function, is an edge of the module
graph. ``kipper.protocol`` is the bottom layer; ``kipper.client`` and
``kipper.spark_jobs`` never reach the broker; nothing installed imports the
tests; the broker keeps no string-keyed hooks.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# source folder -> the package it installs as (pyproject.toml's package-dir)
INSTALLED = {"kipper": "kipper", "broker": "kipper.broker", "client": "kipper.client",
             "protocol": "kipper.protocol", "spark_jobs": "kipper.spark_jobs"}
MAX_LINES = 500


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = list(rel.with_suffix("").parts)
    parts[0] = INSTALLED.get(parts[0], parts[0])
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources(folders) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py"))


def _imports(path: Path, modules: set[str] | frozenset = frozenset()) -> set[str]:
    """What ``path`` imports; ``from a import b`` is an edge to the module a.b when
    there is one (its package's __init__ is not counted), else to a."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in modules else node.module)
    return out


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in _sources(INSTALLED)}
    graph = {}
    for name, path in modules.items():
        graph[name] = {m for m in _imports(path, set(modules)) if m in modules and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_import_graph_has_no_cycle():
    assert _cycles(_graph()) == []


def test_a_cycle_would_be_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _offenders(layer: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{name} imports {target}"
                  for name, targets in _graph().items() if _within(name, layer)
                  for target in targets if any(_within(target, f) for f in forbidden))


def test_protocol_is_the_bottom_layer():
    assert _offenders("kipper.protocol", ("kipper.broker", "kipper.client", "kipper.spark_jobs",
                                          "kipper.cli")) == []


def test_the_client_and_the_spark_jobs_never_reach_the_broker():
    assert _offenders("kipper.client", ("kipper.broker", "kipper.cli", "kipper.spark_jobs")) == []
    assert _offenders("kipper.spark_jobs", ("kipper.broker", "kipper.cli")) == []


def test_nothing_installed_imports_the_tests_or_the_scripts():
    bad = sorted(f"{p.relative_to(ROOT)} imports {m}" for p in _sources(INSTALLED)
                 for m in _imports(p) if m.split(".")[0] in ("tests", "benchmarks", "scripts"))
    assert bad == []


def test_no_bare_top_level_names_are_imported():
    """broker, client, protocol and spark_jobs only exist as kipper.*; a bare import
    would load a second copy of a module from the source tree."""
    bare = sorted(f"{p.relative_to(ROOT)} imports {m}"
                  for p in _sources([*INSTALLED, "tests", "benchmarks", "scripts"])
                  for m in _imports(p) if m.split(".")[0] in ("broker", "client", "protocol",
                                                              "spark_jobs", "tools"))
    assert bare == []


def test_no_source_file_is_over_500_lines():
    long = sorted(f"{p.relative_to(ROOT)}: {n} lines"
                  for p in _sources([*INSTALLED, "tests", "benchmarks", "scripts"])
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES)
    assert long == []


def test_the_broker_has_no_string_keyed_hooks():
    """Engines get their collaborators through constructors (broker/composition.py)."""
    found = sorted(str(p.relative_to(ROOT)) for p in _sources(["broker"])
                   if "extensions" in p.read_text(encoding="utf-8"))
    assert found == []
