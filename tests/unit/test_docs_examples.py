"""The worked examples in docs/TESTING.md are tests of the suite, word for word: each code
block marked ``<!-- test: path::name -->`` is the source of that test function."""

from __future__ import annotations

import ast
import re

from tests.support.broker import ROOT

MARKED = re.compile(r"<!-- test: (?P<path>[^:]+)::(?P<name>\w+) -->\n```python\n(?P<code>.*?)\n```", re.S)


def _function_source(path: str, name: str) -> str:
    source = (ROOT / path).read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return ast.get_source_segment(source, node)
    raise AssertionError(f"{path} has no test {name}")


def test_every_marked_example_is_its_test_word_for_word():
    text = (ROOT / "docs" / "TESTING.md").read_text(encoding="utf-8")
    examples = list(MARKED.finditer(text))
    assert len(examples) == 3
    for m in examples:
        assert m["code"] == _function_source(m["path"], m["name"]), f"docs/TESTING.md's {m['name']} drifted"
