"""scripts/ensure-java.sh, which `make test` runs: Java (a JDK) and Maven are installed only
where no password is asked for; elsewhere the run goes on and says which suites are skipped
(or, under CI=true, that they will fail). Driven with fake commands on PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ensure-java.sh"


def fake(bindir: Path, name: str, body: str) -> None:
    path = bindir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def run(bindir: Path, **env) -> subprocess.CompletedProcess:
    for tool in ("tr", "printf"):
        if not (bindir / tool).exists():
            os.symlink(shutil.which(tool), bindir / tool)
    return subprocess.run(["/bin/sh", str(SCRIPT)], env={"PATH": str(bindir), **env},
                          capture_output=True, text=True, timeout=30)


def test_without_apt_get_it_says_the_spark_tests_are_skipped_and_succeeds(tmp_path):
    fake(tmp_path, "id", "echo 501")
    done = run(tmp_path)
    assert done.returncode == 0
    assert "the Spark tests will be skipped" in done.stdout


def test_under_ci_it_says_the_spark_tests_will_fail(tmp_path):
    fake(tmp_path, "id", "echo 501")
    done = run(tmp_path, CI="true")
    assert done.returncode == 0 and "will FAIL" in done.stdout


def test_a_user_without_password_less_sudo_is_never_prompted(tmp_path):
    calls = tmp_path / "calls"
    fake(tmp_path, "id", "echo 1000")
    fake(tmp_path, "sudo", f'echo "sudo $*" >> {calls}; [ "$1" = -n ] && exit 1; exit 0')
    fake(tmp_path, "apt-get", f'echo "apt-get $*" >> {calls}')
    done = run(tmp_path)
    assert done.returncode == 0 and "skipped" in done.stdout
    assert calls.read_text().splitlines() == ["sudo -n true"]  # asked non-interactively, once


def test_root_with_apt_get_installs_java(tmp_path):
    calls = tmp_path / "calls"
    fake(tmp_path, "id", "echo 0")
    fake(tmp_path, "apt-get", f'echo "apt-get $*" >> {calls}')
    done = run(tmp_path)
    assert done.returncode == 0 and "installing Java" in done.stdout
    assert calls.read_text().splitlines() == ["apt-get update -qq",
                                              "apt-get install -y -qq openjdk-17-jdk-headless maven"]


def test_a_runtime_without_javac_gets_the_jdk(tmp_path):
    # tests/java_ecosystem compiles our Java programs: a JRE alone is not enough (issue 30)
    calls = tmp_path / "calls"
    fake(tmp_path, "id", "echo 0")
    fake(tmp_path, "java", "exit 0")
    fake(tmp_path, "mvn", "exit 0")
    fake(tmp_path, "apt-get", f'echo "apt-get $*" >> {calls}')
    done = run(tmp_path)
    assert done.returncode == 0
    assert calls.read_text().splitlines()[-1] == "apt-get install -y -qq openjdk-17-jdk-headless"


def test_java_javac_and_maven_already_on_path_do_nothing(tmp_path):
    for tool in ("java", "javac", "mvn"):
        fake(tmp_path, tool, "exit 0")
    done = run(tmp_path)
    assert done.returncode == 0 and done.stdout == ""
