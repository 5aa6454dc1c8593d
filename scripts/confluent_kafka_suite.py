"""confluent-kafka-python's own integration tests, fetched at run time and run against kipper.

    python scripts/confluent_kafka_suite.py fetch     # the tests of the installed client's tag
    python scripts/confluent_kafka_suite.py run       # a kipper broker with its registry, and the tests

``fetch`` clones tag ``v<installed confluent-kafka version>`` of the client's repository
(``KIPPER_CONFLUENT_KAFKA_PYTHON_GIT``, default GitHub; a local clone works too) and keeps its
``tests/`` and ``pyproject.toml`` in ``${KIPPER_CACHE:-~/.cache/kipper}/confluent-kafka-python-<tag>/``;
``KIPPER_CONFLUENT_KAFKA_PYTHON_TAG`` picks another tag. Nothing of it is committed. Where the
installed version's tag cannot be fetched (no network to the repository), the newest suite
already in the cache is used and the run says so.

``run`` starts ``kipper broker`` with ``schema.registry.listeners`` on free loopback ports and
runs the Schema Registry suites (``tests/integration/schema_registry``: the API client, Avro,
JSON Schema and Protobuf serializers, sync and async) and the share consumer's
deserialization tests, with ``BROKERS`` and ``SR_URL`` pointed at it, through the
``confluent_suite_shim`` plugin (scripts/confluent_suite_shim.py says what it adapts).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = "https://github.com/confluentinc/confluent-kafka-python.git"
SUITES = ("tests/integration/schema_registry",
          "tests/integration/share_consumer/test_share_consumer_deserialization.py")


def cache_root() -> Path:
    return Path(os.environ.get("KIPPER_CACHE") or Path.home() / ".cache" / "kipper").expanduser()


def installed_tag() -> str:
    return os.environ.get("KIPPER_CONFLUENT_KAFKA_PYTHON_TAG") or f"v{metadata.version('confluent-kafka')}"


def suite_dir(tag: str) -> Path:
    return cache_root() / f"confluent-kafka-python-{tag}"


def cached_tags() -> list[str]:
    found = [p.name.removeprefix("confluent-kafka-python-") for p in cache_root().glob("confluent-kafka-python-v*")
             if (p / ".complete").exists()]
    return sorted(found, key=lambda t: [int(x) if x.isdigit() else x for x in re.split(r"[.\-]", t[1:])])


def fetch(tag: str) -> Path:
    """The suite of ``tag`` in the cache, cloned first when absent. Raises RuntimeError."""
    target = suite_dir(tag)
    if (target / ".complete").exists():
        return target
    remote = os.environ.get("KIPPER_CONFLUENT_KAFKA_PYTHON_GIT") or REPOSITORY
    with tempfile.TemporaryDirectory(prefix="confluent-kafka-python-") as tmp:
        clone = Path(tmp) / "repo"
        done = subprocess.run(["git", "clone", "--quiet", "--depth", "1", "--branch", tag, remote, str(clone)],
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"cannot fetch {tag} of {remote}: {done.stderr.strip()}")
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        shutil.copytree(clone / "tests", target / "tests")
        shutil.copy2(clone / "pyproject.toml", target / "pyproject.toml")
    (target / ".complete").write_text(f"{tag} from {remote}\n")
    return target


def available() -> tuple[Path, str]:
    """(suite directory, a note when it is not the installed version's own)."""
    tag = installed_tag()
    try:
        return fetch(tag), ""
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        older = [t for t in cached_tags() if t != tag]
        if not older:
            raise RuntimeError(f"{exc}; and no suite is cached in {cache_root()}") from None
        return suite_dir(older[-1]), (f"{tag} (the installed client's) could not be fetched ({exc}); "
                                      f"running the cached {older[-1]}")


def run_suite(suite: Path, brokers: str, sr_url: str, extra: list[str], timeout: float = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ, BROKERS=brokers, SR_URL=sr_url, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "scripts"), os.environ.get("PYTHONPATH")])))
    cmd = [sys.executable, "-m", "pytest", "-p", "confluent_suite_shim", "-p", "no:cacheprovider",
           "-p", "no:kipper", "-q", "-rfEs", "--timeout", "120", *SUITES, *extra]
    return subprocess.run(cmd, cwd=suite, env=env, capture_output=True, text=True, timeout=timeout)


def run_against_kipper(suite: Path, extra: list[str]) -> subprocess.CompletedProcess:
    """A ``kipper broker`` with its registry on free loopback ports, the suite against it."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.support.broker import BrokerProcess, free_port

    sr_port = free_port()
    broker = BrokerProcess({"schema.registry.listeners": f"http://127.0.0.1:{sr_port}"}).start()
    try:
        return run_suite(suite, broker.bootstrap, f"http://127.0.0.1:{sr_port}", extra)
    finally:
        broker.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("fetch", "run"))
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments for run (after --)")
    args = parser.parse_args(argv)
    try:
        suite, note = available()
    except RuntimeError as exc:
        print(f"confluent-kafka-python's tests: {exc}", file=sys.stderr)
        return 1
    if note:
        print(note, file=sys.stderr)
    if args.command == "fetch":
        print(suite)
        return 0
    done = run_against_kipper(suite, args.pytest_args)
    print(done.stdout[-20000:])
    print(done.stderr[-5000:], file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
