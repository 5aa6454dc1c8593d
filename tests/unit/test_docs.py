"""Documentation that can drift from the code is checked against it."""

from __future__ import annotations

from pathlib import Path

from kipper.broker.config import KEYS
from scripts.gen_config_reference import END, START, render

ROOT = Path(__file__).resolve().parents[2]


def test_readme_configuration_reference_matches_broker_config():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split(START, 1)[1].split(END, 1)[0]
    assert table.strip() == render().strip(), (
        "README's configuration reference is stale: run "
        "`python scripts/gen_config_reference.py --write-readme`")


def test_every_broker_key_is_documented_in_readme():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [k for k in KEYS if f"`{k}`" not in text]
    assert not missing


def test_readme_shows_the_two_setup_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make run" in text and "make test" in text


def test_readme_counts_the_conformance_scenarios_there_are():
    import re

    from tests.conformance.scenarios import load_all

    scenarios = load_all()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"sends the same requests \(([\d,]+) scenarios:", text)
    assert said is not None and int(said.group(1).replace(",", "")) == len(scenarios), (
        f"README says {said and said.group(1)} conformance scenarios; tests/conformance has {len(scenarios)}")
