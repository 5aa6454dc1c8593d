"""Print the broker configuration reference (markdown) from broker.config.KEYS.

    python scripts/gen_config_reference.py                  # print it
    python scripts/gen_config_reference.py --write-readme   # refresh README.md

README.md carries this table between the markers
<!-- config-reference:start --> and <!-- config-reference:end -->;
tests/unit/test_docs.py fails when the two drift apart.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kipper.broker.config import KEYS, defaults_text  # noqa: E402

SECTIONS = {"server": "Server", "log": "Logs and topics", "producer": "Idempotent producers",
            "storage": "Durable storage", "group": "Consumer groups", "share": "Share groups",
            "quota": "Quotas",
            "security": "Security", "metrics": "Metrics", "transactions": "Transactions",
            "schema_registry": "Schema Registry", "cluster": "A cluster (docs/CLUSTER.md)"}


def _range(key) -> str:
    rng = getattr(key.parse, "range", None)
    if rng:
        lo, hi = rng
        parts = []
        if lo is not None:
            parts.append(f">= {lo}")
        if hi is not None and hi < 2**31 - 1:
            parts.append(f"<= {hi}")
        return ", ".join(parts)
    choices = getattr(key.parse, "choices", None)
    if choices:
        return " / ".join(choices)
    return ""


def render() -> str:
    lines = []
    by_section: dict[str, list] = {}
    for key in KEYS.values():
        by_section.setdefault(key.section, []).append(key)
    for section, keys in by_section.items():
        lines.append(f"**{SECTIONS.get(section, section.title())}**")
        lines.append("")
        lines.append("| key | default | allowed | meaning |")
        lines.append("|---|---|---|---|")
        for key in keys:
            default = defaults_text(key.name).replace("|", "\\|") or '""'
            lines.append(f"| `{key.name}` | `{default}` | {_range(key)} | {key.doc} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


START, END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"


def update_readme(path: str) -> None:
    text = open(path, encoding="utf-8").read()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{head}{START}\n{render()}{END}{tail}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-readme"]:
        update_readme(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md"))
    else:
        sys.stdout.write(render())
