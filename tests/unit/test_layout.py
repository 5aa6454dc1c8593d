"""The shape of the code base: layers point down, no import cycles, small files.

Read from the sources with ``ast`` (nothing is imported): every import
statement, at module level or inside a function, is an edge of the module
graph. ``kipper.protocol`` is the bottom layer; ``kipper.client`` and
``kipper.spark_jobs`` never reach the broker; nothing installed imports the
tests. Inside the broker, every package (or top-level module) stands on a
floor (``FLOORS``) and imports only from its own floor or the ones below,
without a cycle between packages; nothing in the broker imports the command
(kipper/); and the broker keeps no string-keyed hooks.
"""

from __future__ import annotations

import ast
import functools
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


@functools.lru_cache(maxsize=1)
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


# Mappings that are looked up by a string key on purpose: Kafka's property names.
CONFIG_MAPPINGS = frozenset({"config", "view", "live", "static"})


def _class_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _string_keyed_hooks(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a dict that belongs to another object is read or written by a literal string
    key (``session.extras["sasl"] = ...``, ``ctx.session.state.get("acl")``), or a dict of
    collaborators is spread into a call (``Broker(**engines)``): state and collaborators
    are then found by spelling a name right, which no reader, linter or type checker sees.
    An object's own dicts (``self.x["k"]``) and config lookups by property name are fine."""
    found = []
    for node in ast.walk(tree):
        target = key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            target, key = node.value, node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "setdefault", "pop") and node.args
              and isinstance(node.args[0], ast.Constant)):
            target, key = node.func.value, node.args[0].value
        elif isinstance(node, ast.Call) and _class_name(node.func)[:1].isupper():
            # a constructor given a dict's entries as its collaborators (a log event's
            # ``**counts`` is not one)
            found += [(node.lineno, f"**{ast.unparse(k.value)}") for k in node.keywords
                      if k.arg is None]
        if (isinstance(key, str) and isinstance(target, ast.Attribute)
                and not (isinstance(target.value, ast.Name) and target.value.id == "self")
                and target.attr not in CONFIG_MAPPINGS):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_broker_has_no_string_keyed_hooks():
    """Engines get their collaborators through constructors (broker/composition.py), and a
    session's state is fields of the session (broker/context.py)."""
    found = sorted(f"{p.relative_to(ROOT)}:{line}: {text}" for p in _sources(["broker"])
                   for line, text in _string_keyed_hooks(ast.parse(p.read_text(encoding="utf-8"))))
    assert found == []


def test_a_string_keyed_hook_would_be_found():
    code = ("session.extras['sasl'] = auth\nx = ctx.session.hooks.get('acl')\nBroker(**engines)\n"
            "self.totals['requests'] += 1\nconfig['log.dirs']\nctx.engines.config['node.id']\n")
    assert [text for _, text in _string_keyed_hooks(ast.parse(code))] == [
        "session.extras['sasl']", "ctx.session.hooks.get('acl')", "**engines"]


# --- the broker's floors ------------------------------------------------------------------------

# Lowest first. A package (or a top-level module of broker/) imports only from its own
# floor or the floors below, and the packages of one floor import each other without a
# cycle. A new package must be given a floor here.
FLOORS = (
    # what every floor reads: config (kipper's and Kafka's names), logging set-up, counters, wake-ups, the state-machine helper
    {"config", "config_checks", "config_values", "features", "kafka_broker_configs", "logging_setup", "metrics",
     "notify", "outbox", "transitions", "config_cluster"},
    # bytes on disk or in memory: segments, indexes, the in-memory log, log.dirs, metadata
    {"storage"},
    # idempotent-producer state, which each partition owns (as Kafka's UnifiedLog owns its
    # ProducerStateManager)
    {"producer_state"},
    # partitions (the one write path), topics, topic configs, the transaction index
    {"log"},
    # the engines over partitions
    {"txn", "groups", "share", "quota", "acl", "security", "cleaner", "dynamic_configs", "broker_loggers",
     "schema_registry", "telemetry", "quorum", "cluster"},
    # the composition root: every engine built once, one frozen Engines
    {"composition"},
    # handlers: (request, context) -> response
    {"handlers", "context"},
    # the shell: event loop, connections, dispatch, recovery at start, exporters
    {"dispatcher", "connection", "region_writer", "server", "metrics_dump", "prometheus", "faults",
     "http_listener", "registry_http", "client_metrics_export", "peers", "lifecycle", "fetcher", "txn_markers",
     "txn_verifier"},
    # the command
    {"main", "__main__"},
)


def _unit(module: str) -> str | None:
    """The broker package (or top-level module) a module belongs to; None outside it."""
    parts = module.split(".")
    if parts[:2] != ["kipper", "broker"]:
        return None
    return parts[2] if len(parts) > 2 else "__init__"


def _package_graph() -> dict[str, set[str]]:
    """broker package -> the broker packages it imports (the package's __init__ aside)."""
    graph: dict[str, set[str]] = {}
    for name, targets in _graph().items():
        unit = _unit(name)
        if unit is None or unit == "__init__":
            continue
        graph.setdefault(unit, set())
        graph[unit].update(t for t in map(_unit, targets) if t not in (None, "__init__", unit))
    return graph


def _floor_offences(graph: dict[str, set[str]], floors=FLOORS) -> list[str]:
    floor = {unit: i for i, units in enumerate(floors) for unit in units}
    return sorted(f"{a} (floor {floor[a]}) imports {b} (floor {floor[b]})"
                  for a, targets in graph.items() for b in targets
                  if a in floor and b in floor and floor[b] > floor[a])


def test_every_broker_package_stands_on_a_floor():
    placed = set().union(*FLOORS)
    assert sorted(set(_package_graph()) - placed) == []
    assert sorted(placed - set(_package_graph())) == []  # no floor names a package that is gone


def test_broker_packages_import_only_from_their_floor_or_below():
    assert _floor_offences(_package_graph()) == []


def test_broker_packages_import_each_other_without_a_cycle():
    assert _cycles(_package_graph()) == []


def test_an_upward_import_would_be_found():
    floors = ({"storage"}, {"log"}, {"txn"})
    assert _floor_offences({"storage": {"log"}, "log": {"storage"}, "txn": {"log"}}, floors) == [
        "storage (floor 0) imports log (floor 1)"]


def test_nothing_in_the_broker_imports_the_command():
    """``python -m kipper.broker`` runs without kipper/ (the command sits above the broker)."""
    command = {_module_name(p) for p in _sources(["kipper"])} - {"kipper"}  # (the root of all)
    assert _offenders("kipper.broker", tuple(command)) == []


def _handlers_in(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("handle_")]


def test_produce_has_one_handler():
    """Every Produce takes one route: a request alone is a run of one (broker/dispatcher.py)."""
    assert _handlers_in(ROOT / "broker" / "handlers" / "produce.py") == ["handle_produce"]


def test_the_composition_root_only_builds():
    """broker/composition.py builds engines and hands each its collaborators: it makes no
    Dispatcher (the shell does, broker/server.py) and sets no attribute by name."""
    tree = ast.parse((ROOT / "broker" / "composition.py").read_text(encoding="utf-8"))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} | \
            {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert sorted(names & {"Dispatcher", "setattr", "__setattr__"}) == []


def _engine_chains(tree: ast.AST) -> list[tuple[int, str]]:
    """Attribute chains that go three steps into the engines (``ctx.engines.txn.coordinator.
    add_offsets``), from ``ctx`` or from a name bound to ``ctx.engines`` or one of its engines."""
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        depth_of = {}  # a name -> how many steps into the engines it already is
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                steps = _steps(node.value, depth_of)
                if steps is not None:
                    depth_of[node.targets[0].id] = steps
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and (_steps(node, depth_of) or 0) > 3:
                found.append((node.lineno, ast.unparse(node)))
    return sorted(set(found))


def _steps(expr: ast.expr, depth_of: dict) -> int | None:
    """How many attribute steps past ``engines`` ``expr`` is (``ctx.engines.txn`` -> 1)."""
    chain = []
    while isinstance(expr, ast.Attribute):
        chain.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    chain.reverse()
    if expr.id == "ctx" and chain[:1] in (["engines"], ["broker"]):  # (broker: its name before issue 27)
        return len(chain)
    if expr.id in depth_of:
        return depth_of[expr.id] + len(chain)
    return None


def test_handlers_ask_one_engine_one_question():
    """A handler calls a method of an engine (``ctx.engines.txn.add_offsets``); it does not
    walk through an engine into its parts (``ctx.engines.txn.coordinator.add_offsets``)."""
    found = sorted(f"{p.relative_to(ROOT)}:{line}: {text}" for p in _sources(["broker/handlers"])
                   for line, text in _engine_chains(ast.parse(p.read_text(encoding="utf-8"))))
    assert found == []


def test_a_walk_through_an_engine_would_be_found():
    code = ("def h(req, ctx):\n    ctx.engines.txn.coordinator.add_offsets(1)\n"
            "    share = ctx.engines.share\n    share.coordinator.describe(1)\n"
            "    ctx.engines.txn.add_offsets(1)\n    engines = ctx.engines\n    engines.topics.get('t')\n")
    assert [text for _, text in _engine_chains(ast.parse(code))] == [
        "ctx.engines.txn.coordinator.add_offsets", "share.coordinator.describe"]
