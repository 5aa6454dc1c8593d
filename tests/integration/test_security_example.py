"""docs/SECURITY.md's "SASL with ACLs, end to end" example, run as written: its shell
steps with the real ``kipper`` command (the broker as a real process), its properties
files, and its confluent-kafka clients; only the port is a free one instead of 9092."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import requires
from tests.support.broker import free_port

requires.module("confluent_kafka", "interop")

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Example: SASL with ACLs, end to end"


def blocks() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "SECURITY.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    section = text[start:text.index("\n## ", start + len(SECTION))]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


def commands(script: str) -> list[str]:
    return [c for c in script.replace("\\\n", " ").splitlines() if c.strip()]


def test_the_documented_example_runs(tmp_path):
    found = blocks()
    assert [kind for kind, _ in found] == ["sh", "properties", "properties", "sh", "python"]
    (users, server, admin, steps, clients) = (body for _, body in found)
    port = free_port()
    here = lambda text: text.replace("127.0.0.1:9092", f"127.0.0.1:{port}")  # noqa: E731
    kipper = [sys.executable, "-m", "kipper"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    work = tmp_path
    for line in commands(users):
        argv = shlex.split(line)
        if argv[0] == "mkdir":
            work = tmp_path / argv[1]
            work.mkdir()
            continue
        if argv[0] == "cd":
            continue
        assert argv[0] == "kipper"
        subprocess.run(kipper + argv[1:], cwd=work, env=env, check=True, capture_output=True)
    (work / "server.properties").write_text(here(server))
    (work / "admin.properties").write_text(admin)
    broker = None
    try:
        for line in commands(here(steps)):
            argv = shlex.split(line)
            if argv[-1] == "&":
                log = open(work / "broker.log", "wb")
                broker = subprocess.Popen(kipper + argv[1:-1], cwd=work, env=env, stdout=log, stderr=log)
                _wait_for(port, broker)
                continue
            done = subprocess.run(kipper + argv[1:], cwd=work, env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
        out = subprocess.run([sys.executable, "-c", here(clients)], cwd=work, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines() == ["[b'order 0', b'order 1', b'order 2']", "TOPIC_AUTHORIZATION_FAILED"]
    finally:
        if broker is not None:
            broker.terminate()
            broker.wait(20)


def _wait_for(port: int, proc: subprocess.Popen) -> None:
    import socket

    deadline = time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the broker exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail("the broker did not start")
