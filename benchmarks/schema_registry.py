"""The Schema Registry: what it costs a broker, and how fast it answers (docs/PERFORMANCE.md).

- start and idle memory: ``kipper broker`` without the registry, with its listener set, and
  with it after one schema of each type (the libraries then loaded), alternated run by run;
  Popen to the first accepted Kafka connection, RSS after 1 s idle;
- the pytest fixture's added start time: ``EmbeddedBroker().start()`` with and without
  ``schema.registry.listeners``, alternated, once kipper is imported;
- throughput: registrations of distinct Avro, JSON Schema and Protobuf schemas, lookups
  (``POST /subjects/{s}``) and reads by id (``GET /schemas/ids/{id}``), each over one kept-alive
  HTTP connection and over four at once; requests per second and p50/p99 latency.

    flock /tmp/kipper-bench.lock .venv/bin/python -m benchmarks.schema_registry [--runs 7] [--requests 2000] \
        [--baseline /path/to/a/checkout/before/the/registry]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import threading
import time
from pathlib import Path

from benchmarks.machine import rss_kib
from benchmarks.start_time import kipper_cmd, time_to_accept
from tests.support.broker import BrokerProcess, free_port

V1 = "application/vnd.schemaregistry.v1+json"


def avro(i: int) -> dict:
    return {"schema": json.dumps({"type": "record", "name": f"R{i}", "namespace": "bench",
                                  "fields": [{"name": "id", "type": "long"}, {"name": f"f{i}", "type": "string"}]})}


def json_schema(i: int) -> dict:
    return {"schemaType": "JSON", "schema": json.dumps(
        {"type": "object", "properties": {"id": {"type": "integer"}, f"f{i}": {"type": "string"}}})}


def protobuf(i: int) -> dict:
    return {"schemaType": "PROTOBUF",
            "schema": f'syntax = "proto3";\npackage bench;\nmessage M{i} {{ int64 id = 1; string f{i} = 2; }}\n'}


class Http:
    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, method: str, path: str, body=None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=data, headers={"Content-Type": V1, "Accept": V1})
        response = self.conn.getresponse()
        payload = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {payload[:200]!r}")
        return json.loads(payload)


def timed(port: int, jobs: list[tuple[str, str, dict | None]], clients: int) -> tuple[float, list[float]]:
    """(requests per second, latencies in ms) of ``jobs`` spread over ``clients`` connections."""
    latencies: list[float] = []
    lock = threading.Lock()

    def work(part):
        http_ = Http(port)
        mine = []
        for method, path, body in part:
            t = time.perf_counter()
            http_.call(method, path, body)
            mine.append((time.perf_counter() - t) * 1000)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=work, args=(jobs[i::clients],)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(jobs) / (time.perf_counter() - started), latencies


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def throughput(requests: int) -> None:
    sr_port = free_port()
    broker = BrokerProcess({"schema.registry.listeners": f"http://127.0.0.1:{sr_port}"}).start()
    try:
        warm = Http(sr_port)
        for make in (avro, json_schema, protobuf):  # libraries imported, caches warm
            warm.call("POST", "/subjects/warm-up/versions", make(10**9))
            warm.call("DELETE", "/subjects/warm-up")
            warm.call("DELETE", "/subjects/warm-up?permanent=true")
        print(f"\nthroughput, one `kipper broker` (requests per second; latency ms p50 / p99)")
        print(f"  {'operation':<34} {'clients':>7} {'req/s':>8} {'p50':>7} {'p99':>7}")
        base = 0
        for name, make, n in (("register Avro (distinct)", avro, requests),
                              ("register JSON Schema (distinct)", json_schema, requests // 2),
                              ("register Protobuf (distinct)", protobuf, requests // 10)):
            for clients in (1, 4):
                jobs = [("POST", f"/subjects/bench-{(base + i) % 50}-value/versions", make(base + i))
                        for i in range(n)]
                base += n
                warm.call("PUT", "/config", {"compatibility": "NONE"})
                rate, lat = timed(sr_port, jobs, clients)
                print(f"  {name:<34} {clients:>7} {rate:8.0f} {p(lat, .5):7.2f} {p(lat, .99):7.2f}")
        registered = Http(sr_port).call("GET", "/subjects/bench-7-value/versions/latest")
        lookup = {"schema": registered["schema"], "schemaType": registered.get("schemaType", "AVRO")}
        for name, jobs in (("look up (POST /subjects/{s})", [("POST", "/subjects/bench-7-value", lookup)] * requests),
                           ("schema by id (GET /schemas/ids/{id})",
                            [("GET", f"/schemas/ids/{4 + i % base}", None) for i in range(requests)])):  # 1-3: warm-up
            for clients in (1, 4):
                rate, lat = timed(sr_port, jobs, clients)
                print(f"  {name:<34} {clients:>7} {rate:8.0f} {p(lat, .5):7.2f} {p(lat, .99):7.2f}")
    finally:
        broker.stop()


def start_and_memory(runs: int, baseline: str | None) -> None:
    def with_registry(port: int, sr_port: int) -> list[str]:
        return kipper_cmd(port) + ["--override", f"schema.registry.listeners=http://127.0.0.1:{sr_port}"]

    results: dict[str, list] = {}
    for _ in range(runs):
        if baseline:  # the checkout before the registry, its own venv, from its own directory
            port = free_port()
            python = str(Path(baseline) / ".venv" / "bin" / "python")
            os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # read its bytecode, write nothing into it
            try:
                results.setdefault("baseline checkout (before), no registry", []).append(
                    time_to_accept(kipper_cmd(port, python), port, cwd=Path(baseline)))
            finally:
                del os.environ["PYTHONDONTWRITEBYTECODE"]
        port = free_port()
        results.setdefault("no registry", []).append(time_to_accept(kipper_cmd(port), port))
        port, sr_port = free_port(), free_port()
        results.setdefault("registry listening", []).append(time_to_accept(with_registry(port, sr_port), port))
    loaded = []
    for _ in range(max(3, runs // 2)):
        port, sr_port = free_port(), free_port()
        broker = BrokerProcess({"schema.registry.listeners": f"http://127.0.0.1:{sr_port}"}, port=port).start()
        try:
            client = Http(sr_port)
            for i, make in enumerate((avro, json_schema, protobuf)):
                client.call("POST", f"/subjects/s{i}/versions", make(i))
            time.sleep(1)
            loaded.append(rss_kib(broker.proc.pid))
        finally:
            broker.stop()
    print(f"`kipper broker`: Popen to the first accepted connection and RSS after 1 s idle, {runs} runs alternated")
    print(f"  {'broker':<40} {'median s':>9} {'max s':>7} {'idle RSS MiB':>13}")
    for name, rows in results.items():
        secs = [r[0] for r in rows]
        print(f"  {name:<40} {statistics.median(secs):9.3f} {max(secs):7.3f} "
              f"{statistics.median(r[1] for r in rows) / 1024:13.1f}")
    print(f"  {'registry after an Avro, JSON, Protobuf schema':<40} {'':>9} {'':>7} "
          f"{statistics.median(loaded) / 1024:13.1f}")


def fixture_start(runs: int) -> None:
    from kipper.testing import EmbeddedBroker

    EmbeddedBroker().start().stop()  # imports, and the process mode's zygote, out of the timing
    times: dict[str, list[float]] = {"without the registry": [], "with schema.registry.listeners": []}
    for _ in range(runs):
        for name, overrides in (("without the registry", {}),
                                ("with schema.registry.listeners", {"schema.registry.listeners": "http://127.0.0.1:0"})):
            t = time.perf_counter()
            broker = EmbeddedBroker(overrides).start()
            times[name].append((time.perf_counter() - t) * 1000)
            broker.stop()
    print(f"\nEmbeddedBroker().start() ({broker.mode} mode), ms, {runs} runs alternated")
    for name, values in times.items():
        print(f"  {name:<32} median {statistics.median(values):7.1f}  max {max(values):7.1f}")
    added = statistics.median(times["with schema.registry.listeners"]) - statistics.median(times["without the registry"])
    print(f"  added by the registry: {added:+.1f} ms (median against median)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--baseline", metavar="CHECKOUT", help="a kipper checkout without the registry (with its .venv), "
                                                           "timed alongside: the cost to a broker that does not use it")
    args = ap.parse_args()
    print("load average at the start: %.1f %.1f %.1f" % os.getloadavg())
    start_and_memory(args.runs, args.baseline)
    fixture_start(args.runs)
    throughput(args.requests)
    print("load average at the end: %.1f %.1f %.1f" % os.getloadavg())


if __name__ == "__main__":
    main()
