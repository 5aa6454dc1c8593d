"""Optional suites cannot vanish from CI: tests/support/requires.py skips a
module whose extra (or Java) is missing, except under CI=true, where the run
fails. Each case runs pytest in a subprocess on a small generated suite."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISSING = "kipper_no_such_module"

NEEDS_MISSING_MODULE = f"""
from tests.support import requires

requires.module("{MISSING}", "interop")


def test_never_runs():
    raise AssertionError("the module should have been skipped or failed")
"""

NEEDS_JAVA = """
from tests.support import requires

requires.java()


def test_never_runs():
    raise AssertionError("the module should have been skipped or failed")
"""


def run_pytest(directory: Path, *, ci: str | None, path: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "JAVA_HOME", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(ROOT)
    if ci is not None:
        env["CI"] = ci
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(directory)],
                          cwd=directory, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def suite_with_missing_module(tmp_path):
    (tmp_path / "test_needs_extra.py").write_text(NEEDS_MISSING_MODULE)
    (tmp_path / "test_plain.py").write_text("def test_runs():\n    pass\n")
    return tmp_path


@pytest.mark.parametrize("ci", ["true", "TRUE", "1"])
def test_a_missing_extra_fails_the_run_under_ci(suite_with_missing_module, ci):
    result = run_pytest(suite_with_missing_module, ci=ci)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert f"{MISSING} cannot be imported" in out and "CI is set" in out, out
    assert "skipped" not in out, out


@pytest.mark.parametrize("ci", [None, "", "false"])
def test_a_missing_extra_skips_the_module_outside_ci(suite_with_missing_module, ci):
    result = run_pytest(suite_with_missing_module, ci=ci)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "1 passed, 1 skipped" in out and f"{MISSING} cannot be imported" in out, out


def test_a_conftest_requirement_fails_the_run_under_ci_and_skips_the_directory_otherwise(tmp_path):
    # tests/spark/conftest.py states its requirements this way, for the whole directory
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(f'from tests.support import requires\n\nrequires.module("{MISSING}", "spark")\n')
    (suite / "test_needs_spark.py").write_text("def test_never_runs():\n    raise AssertionError\n")
    (tmp_path / "test_plain.py").write_text("def test_runs():\n    pass\n")

    failed = run_pytest(tmp_path, ci="true")
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0 and f"{MISSING} cannot be imported" in out and "CI is set" in out, out

    skipped = run_pytest(tmp_path, ci=None)
    assert skipped.returncode == 0 and "1 passed, 1 skipped" in skipped.stdout, skipped.stdout


def test_missing_java_fails_under_ci_and_skips_otherwise(tmp_path):
    (tmp_path / "test_needs_java.py").write_text(NEEDS_JAVA)
    (tmp_path / "test_plain.py").write_text("def test_runs():\n    pass\n")
    no_java = str(tmp_path / "empty-bin")  # a PATH without java; JAVA_HOME is unset too

    failed = run_pytest(tmp_path, ci="true", path=no_java)
    out = failed.stdout + failed.stderr
    assert failed.returncode != 0 and "Spark needs Java" in out and "CI is set" in out, out

    skipped = run_pytest(tmp_path, ci=None, path=no_java)
    assert skipped.returncode == 0 and "1 passed, 1 skipped" in skipped.stdout, skipped.stdout
    assert "Spark needs Java" in skipped.stdout


def _direct_skips(path: Path) -> list[str]:
    """pytest.importorskip(...) and pytest.skip(..., allow_module_level=True) calls."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = node.func.attr
        module_level = any(k.arg == "allow_module_level" for k in node.keywords)
        if name == "importorskip" or (name == "skip" and module_level):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_test_modules_state_their_requirements_through_tests_support_requires():
    helper = ROOT / "tests" / "support" / "requires.py"
    offenders = [hit for path in sorted((ROOT / "tests").rglob("*.py")) if path != helper
                 for hit in _direct_skips(path)]
    assert offenders == [], "use tests.support.requires so CI=true turns a missing dependency into a failure"


def test_make_test_hands_out_modules_and_the_long_suites_as_units_of_work():
    # tests/support/scheduling.py: two xdist workers; a Spark cluster or Apache Kafka starts once per run
    from tests.support.scheduling import work_unit

    assert work_unit("tests/spark/test_audit.py::test_x") == work_unit("tests/spark/test_cluster.py::t[a]") == "spark"
    assert work_unit("tests/conformance/test_conformance.py::t[x/y]") == "kafka-reference"
    assert work_unit("tests/java_ecosystem/test_streams.py::t") == "kafka-reference"
    assert work_unit("tests/unit/test_config.py::TestX::test_y") == "tests/unit/test_config.py"
