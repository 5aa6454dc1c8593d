"""franz-go (github.com/twmb/franz-go), a Go Kafka client, run with its own integration tests
against a broker (issue 38): ``go`` fetches the module into its module cache (outside the
repository, through the Go module proxy) and ``go test`` runs one of its tests with KGO_SEEDS
pointing at the broker. Nothing of franz-go is part of this repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.support import requires

VERSION = "v1.22.3"  # the franz-go release these tests were written against
MODULE = "github.com/twmb/franz-go"


def go_binary() -> str:
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if go is None:
        requires.unavailable("franz-go's tests need Go (the go command) on PATH")
    return go


def module_dir() -> Path:
    """franz-go's source at VERSION, downloaded into Go's module cache the first time."""
    go = go_binary()
    done = subprocess.run([go, "mod", "download", "-json", f"{MODULE}@{VERSION}"], capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).parent)
    info = json.loads(done.stdout or "{}")
    if done.returncode != 0 or "Dir" not in info:
        requires.unavailable(f"franz-go {VERSION} could not be fetched: {info.get('Error') or done.stderr[-500:]}")
    return Path(info["Dir"])


def run_test(seeds: str, pattern: str, *, records: int = 50_000, timeout: float = 900,
             extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``go test -run PATTERN ./pkg/kgo`` of franz-go against ``seeds`` (one node: replication 1)."""
    env = dict(os.environ, KGO_SEEDS=seeds, KGO_TEST_RF="1", KGO_TEST_RECORDS=str(records),
               GOFLAGS="-mod=mod", **(extra_env or {}))
    return subprocess.run([go_binary(), "test", "-count=1", "-timeout", f"{int(timeout)}s", "-run", pattern,
                           "./pkg/kgo"], cwd=module_dir(), env=env, capture_output=True, text=True,
                          timeout=timeout + 300)


PROGRAMS = Path(__file__).resolve().parents[1] / "go"


def built_program(name: str) -> Path:
    """One of our Go programs (tests/go/NAME, using franz-go), built into a cache outside the
    repository the first time (again when its source changes)."""
    import hashlib

    from scripts.kafka_fetch import cache_root

    source = PROGRAMS / name
    digest = hashlib.sha256()
    for path in sorted(source.iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    out = cache_root() / "go-programs" / f"{name}-{digest.hexdigest()[:16]}"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([go_binary(), "build", "-o", str(out) + ".tmp", "."], cwd=source,
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            requires.unavailable(f"tests/go/{name} could not be built: {done.stderr[-1000:]}")
        os.replace(str(out) + ".tmp", out)
    return out
