"""Producer-id quota (seed 002, KIP-936): what a rogue user costs the broker,
with and without the quota, and what the quota costs everyone else. One run.

    .venv/bin/python -m benchmarks.pid_quota [--ids 100000] [--rate 100]

1. Memory: a rogue user (SASL/SCRAM) churns ``--ids`` new producer ids, one
   idempotent batch each, pipelined, against a broker without and then with
   ``producer_ids_rate`` set (window 10 s x 2 samples). Reported: broker RSS
   growth, producer-state entries and bytes, bloom-filter bytes (from the
   broker's final log line), and the bound burst + rate x elapsed.
2. Produce path, in process (dispatcher + handler + log, no network): a good
   producer's records/s with the user under a quota (every request goes
   through the admitted-id check), versus no quota configured (the default:
   the check returns at once). Alternating runs, best of each.
3. Latency: the good user's p99 Produce latency (acks=all, 10-record batches,
   one request at a time) alone and while the rogue churns, quota on.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

from kipper.broker import config as cfg
from kipper.broker.composition import build_broker
from kipper.broker.context import Session
from kipper.broker.security.credentials import CredentialStore
from kipper.client.admin import ClientQuotaAlteration, NewTopic, alter_client_quotas, create_topics
from kipper.client.connect import connect
from kipper.client.producer_requests import init_producer_id, produce
from kipper.protocol import records
from kipper.protocol.framing import FrameDecoder
from kipper.protocol.header import encode_request
from kipper.protocol.messages import APIS
from tests.support.broker import BrokerProcess, free_port

PRODUCE = APIS[0]
SAMPLES, WINDOW_S = 2, 10
USERS = {"rogue": "rogue-secret", "good": "good-secret", "admin": "admin-secret"}


def _settings(user):
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": user, "sasl.password": USERS[user]}


def _produce_body(topic, pid, seq, payload):
    batch = records.build_batch(payload, producer_id=pid, producer_epoch=0, base_sequence=seq)
    return {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": batch}]}]}


class Broker:
    def __init__(self, workdir: Path, rate: float | None):
        store_dir = workdir / "config"
        store = CredentialStore(str(store_dir))
        for user, password in USERS.items():
            store.add_user(user, password, ("SCRAM-SHA-256",))
        self.sasl_port = free_port()
        port = free_port()
        self.proc = BrokerProcess({
            "config.dir": str(store_dir), "log.format": "json", "log.level": "INFO",
            "producer.id.quota.window.num": str(SAMPLES),
            "producer.id.quota.window.size.seconds": str(WINDOW_S)},
            port=port, listeners=f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}")
        self.proc.start()
        self.bootstrap = f"127.0.0.1:{self.sasl_port}"
        with connect(self.bootstrap, _settings("admin")) as conn:
            for topic in ("rogue", "good"):
                create_topics(conn, [NewTopic(topic, 1, 1)], timeout_ms=5000)
            if rate is not None:
                alter_client_quotas(conn, [ClientQuotaAlteration({"user": None}, {"producer_ids_rate": rate})])

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self) -> dict:
        self.proc.proc.send_signal(2)
        self.proc.proc.wait(30)
        for line in self.proc.log_text().splitlines():
            if '"broker_stopped"' in line:
                return json.loads(line)
        raise RuntimeError("no broker_stopped line:\n" + self.proc.log_text()[-2000:])


def _churn_one(bootstrap: str, pids: range, chunk: int, out: list) -> None:
    ok = throttled = 0
    with connect(bootstrap, _settings("rogue")) as conn:
        sock: socket.socket = conn.sock
        decoder = FrameDecoder(1 << 26)
        payload = [(None, b"r" * 20)]
        for start in range(0, len(pids), chunk):
            frames = [encode_request(PRODUCE, 9, pid & 0x7FFFFFFF, "rogue", _produce_body("rogue", pid, 0, payload))
                      for pid in pids[start:start + chunk]]
            sock.sendall(b"".join(frames))
            got = []
            while len(got) < len(frames):
                data = sock.recv(1 << 20)
                if not data:
                    raise ConnectionError("broker closed the rogue's connection")
                got.extend(decoder.feed(data))
            for frame in got:
                # response header v1 (flexible): correlation id, tagged fields; then the body
                code = PRODUCE.response_schema(9).parse(frame, 5).responses[0].partition_responses[0].error_code
                ok += code == 0
                throttled += code == 89
    out.append((ok, throttled))


def churn(bootstrap: str, n_ids: int, first_pid: int = 1_000_000, connections: int = 32,
          chunk: int = 200) -> tuple[int, int, float]:
    """The rogue: ``n_ids`` new producer ids, one batch each, pipelined over
    ``connections`` connections (as many producers would). Returns (ok, throttled, seconds)."""
    out: list = []
    per = -(-n_ids // connections)
    threads = [threading.Thread(target=_churn_one, args=(
        bootstrap, range(first_pid + i * per, first_pid + min(n_ids, (i + 1) * per)), chunk, out))
        for i in range(connections)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if len(out) != connections:
        raise RuntimeError("a rogue connection failed")
    return sum(o for o, _ in out), sum(t for _, t in out), time.monotonic() - started


def memory_run(rate, n_ids) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        broker = Broker(Path(tmp), rate)
        before = broker.rss_kib()
        ok, throttled, elapsed = churn(broker.bootstrap, n_ids)
        after = broker.rss_kib()
        final = broker.stop()
    return {"rate": rate, "ok": ok, "throttled": throttled, "elapsed": elapsed, "rss_growth_kib": after - before,
            "entries": final["producer_state"]["entries"], "state_bytes": final["producer_state"]["bytes"],
            "bloom_bytes": final["producer_id_quota"]["bloom_bytes"]}


# --- the produce path in process ---------------------------------------------------------------

def _produce_path(quota_on: bool, n_requests: int, producers: int = 8, per_batch: int = 100):
    state = build_broker(cfg.load(overrides={"log.level": "WARNING"}))
    state.topics.create("bench", 1)
    if quota_on:
        state.quotas.manager.set_quotas({}, 1000.0)  # every user under a quota
    dispatcher = state.dispatcher
    session = Session("SASL_PLAINTEXT", "bench", "SASL_PLAINTEXT", principal="User:good")
    payload = [(None, b"x" * 100)] * per_batch
    seqs = [0] * producers
    frames = []
    for i in range(n_requests):
        p = i % producers
        frames.append(encode_request(PRODUCE, 9, i, "bench", _produce_body("bench", 5000 + p, seqs[p], payload))[4:])
        seqs[p] += per_batch
    return dispatcher, session, frames


def produce_path_rates(rounds: int = 15, n_requests: int = 4000, per_batch: int = 100) -> tuple[float, float]:
    """Best records/s of each mode over alternating rounds (other load on the
    machine only ever slows a round down)."""
    best = {False: 0.0, True: 0.0}
    for _ in range(rounds):
        for on in (False, True):
            dispatcher, session, frames = _produce_path(on, n_requests, per_batch=per_batch)
            gc.collect()
            gc.disable()
            started = time.perf_counter()
            for frame in frames:
                dispatcher.dispatch([frame], 0, session)
            elapsed = time.perf_counter() - started
            gc.enable()
            best[on] = max(best[on], n_requests * per_batch / elapsed)
    return best[False], best[True]


# --- the good user's latency -------------------------------------------------------------------

def good_latencies(bootstrap: str, n: int) -> list[float]:
    out = []
    with connect(bootstrap, _settings("good")) as conn:
        pid = init_producer_id(conn).producer_id
        payload = [(None, b"g" * 100)] * 10
        for seq in range(0, n * 10, 10):
            t = time.perf_counter()
            batch = records.build_batch(payload, producer_id=pid, producer_epoch=0, base_sequence=seq)
            resp = produce(conn, {("good", 0): batch}, timeout_ms=5000)
            out.append(time.perf_counter() - t)
            assert resp.responses[0].partition_responses[0].error_code == 0
            assert resp.throttle_time_ms == 0
    return out


def _rogue_forever(bootstrap, stop):
    first = 10_000_000
    while not stop.is_set():
        churn(bootstrap, 2000, first, connections=4)
        first += 2000


def p99(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=100)[98] * 1000


def latency_run(rate, n) -> tuple[float, float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        broker = Broker(Path(tmp), rate)
        try:
            solo = good_latencies(broker.bootstrap, n)
            stop = multiprocessing.Event()
            rogue = multiprocessing.Process(target=_rogue_forever, args=(broker.bootstrap, stop))
            rogue.start()
            time.sleep(1.0)
            loaded = good_latencies(broker.bootstrap, n)
            stop.set()
            rogue.join(60)
        finally:
            broker.stop()
    return p99(solo), p99(loaded), statistics.median(solo) * 1000, statistics.median(loaded) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", type=int, default=100_000)
    ap.add_argument("--rate", type=float, default=100.0)
    ap.add_argument("--latency-requests", type=int, default=3000)
    args = ap.parse_args()

    print(f"1. rogue churns {args.ids:,} new producer ids (quota: producer_ids_rate={args.rate:g}, "
          f"window {SAMPLES} x {WINDOW_S} s, burst {args.rate * SAMPLES * WINDOW_S:,.0f})")
    print(f"{'quota':>8} {'admitted':>9} {'throttled':>9} {'secs':>6} {'RSS growth':>11} "
          f"{'state entries':>13} {'state bytes':>12} {'bloom bytes':>11} {'bound':>8}")
    for rate in (None, args.rate):
        r = memory_run(rate, args.ids)
        bound = "-" if rate is None else f"{rate * SAMPLES * WINDOW_S + rate * r['elapsed']:,.0f}"
        print(f"{'off' if rate is None else f'{rate:g}/s':>8} {r['ok']:>9,} {r['throttled']:>9,} "
              f"{r['elapsed']:>6.1f} {r['rss_growth_kib'] / 1024:>9.1f} MiB {r['entries']:>13,} "
              f"{r['state_bytes']:>12,} {r['bloom_bytes']:>11,} {bound:>8}")

    off, on = produce_path_rates()
    print(f"2. produce path in process, 8 producers, 100-record batches: quota manager off {off:,.0f} rec/s, "
          f"on {on:,.0f} rec/s, on/off = {on / off:.3f} ({(1 - on / off) * 100:.1f}% slower)")

    for rate in (args.rate, None):
        s99, l99, s50, l50 = latency_run(rate, args.latency_requests)
        print(f"3. good user's Produce latency, quota {'on' if rate else 'off'}: solo p50 {s50:.2f} ms "
              f"p99 {s99:.2f} ms; with the rogue churning p50 {l50:.2f} ms p99 {l99:.2f} ms "
              f"({l99 / s99:.2f}x solo p99)")


if __name__ == "__main__":
    main()
