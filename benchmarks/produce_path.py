"""The broker's CPU per Produce without sockets: this checkout and a baseline, side by side.

Each candidate runs in its own process (the baseline with its checkout's ``.venv``), builds a
whole broker with ``build_broker`` and feeds it real request frames:

- ``dispatch``: single-record Produce v9 frames through ``Dispatcher.dispatch`` (header,
  parse, handler, append, response), microseconds of CPU per request;
- ``idempotent``: single-record batches of one idempotent producer, each the next
  sequence (producer-state validation and commit, the producer-id quota's check);
- ``connection``: the plain frames 64 at a time through ``KafkaConnection.buffer_updated``
  (decoder; the frames repeating a head the connection kept answered as one run by
  ``Dispatcher.dispatch``; one write per burst to a transport that only counts);
- ``batches``: 9,000-record idempotent batches (about 1 MB), CPU-s per million records, and
  how much of it is the one copy of each batch into the log (timed alone on the same batches).

What the socket, uvloop and the kernel add is measured by ``side_by_side --passes requests
ingest1``; this isolates the Python path, so a change to it shows up here without the noise
of a client sharing the two cores.

    python -m benchmarks.produce_path [--baseline ../kipper-before] [--requests 200000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5


def _broker():
    from kipper.broker import config as cfg
    from kipper.broker.composition import build_broker
    from kipper.broker.context import Session

    state = build_broker(cfg.load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0", "log.level": "WARNING"}))
    state.topics.create("t", 1)
    return state, Session("PLAINTEXT", "peer")


def _produce_frame(batch: bytes) -> bytes:
    from kipper.protocol.header import encode_request
    from kipper.protocol.messages.produce import PRODUCE

    return encode_request(PRODUCE, 9, 1, "bench", {
        "transactional_id": None, "acks": 1, "timeout_ms": 30000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}]})


def _best_cpu(work, rounds: int = ROUNDS) -> float:
    """The least CPU time of ``rounds`` runs of ``work`` (the others lost time to neighbours)."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def measure(requests: int, n_batches: int = 60) -> dict:
    import gc

    from kipper.broker.connection import KafkaConnection
    from kipper.broker.context import Session
    from kipper.protocol import batch as b
    from kipper.protocol import records

    from tests.support.transport import RecordingTransport

    state, session = _broker()
    frame = _produce_frame(records.build_batch([(None, os.urandom(100))]))
    body = memoryview(frame)[4:]
    dispatch = state.dispatcher.dispatch
    gc.freeze()
    per_round = requests // ROUNDS
    one = [body]

    def dispatch_round():
        for _ in range(per_round):
            dispatch(one, 0, session)

    out = {"dispatch_us": _best_cpu(dispatch_round) / per_round * 1e6}

    idempotent = [memoryview(_produce_frame(records.build_batch(
        [(None, os.urandom(100))], producer_id=5, producer_epoch=0, base_sequence=i)))[4:]
        for i in range(per_round * ROUNDS)]
    rounds = iter(range(ROUNDS))

    def idempotent_round():  # each round continues the sequence where the last one stopped
        k = next(rounds)
        for f in idempotent[k * per_round:(k + 1) * per_round]:
            dispatch([f], 0, session)

    out["idempotent_us"] = _best_cpu(idempotent_round) / per_round * 1e6
    idempotent.clear()

    conn = KafkaConnection(state.dispatcher, lambda transport, peer: Session("PLAINTEXT", peer), set(),
                           max_frame=100 << 20)
    conn.connection_made(RecordingTransport())  # keeps the answers: a few thousand frames
    burst = frame * 64

    def connection_round():
        for _ in range(per_round // 64):
            room = conn.get_buffer(len(burst))
            room[:len(burst)] = burst
            del room
            conn.buffer_updated(len(burst))

    out["connection_us"] = _best_cpu(connection_round) / (per_round // 64 * 64) * 1e6

    # large idempotent batches: the cost per record, and the part that is the stored copy
    n_records = 9000
    value = os.urandom(100)
    built = [records.build_batch([(None, value)] * n_records, producer_id=7, producer_epoch=0,
                                 base_sequence=i * n_records) for i in range(n_batches)]
    frames = [memoryview(_produce_frame(batch))[4:] for batch in built]
    started = time.process_time()
    for f in frames:
        dispatch([f], 0, session)
    whole = time.process_time() - started
    started = time.process_time()  # the same copies again, into fresh memory as the log's were
    kept = [b.with_base_offset(memoryview(batch), 0, len(batch), 0) for batch in built]
    copy = time.process_time() - started
    del kept
    total = n_records * n_batches / 1e6
    out["batches_cpu_s_per_million"] = whole / total
    out["batches_copy_cpu_s_per_million"] = copy / total
    out["records_stored"] = state.topics.get("t").partitions[0].log_end_offset  # every one answered
    return out


def _python_of(root: Path | None) -> str:
    if root is None:
        return sys.executable
    own = root / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def _run(root: Path | None, requests: int) -> dict:
    # each checkout measures itself with its own copy of this script: the broker's API may
    # differ between them (the measured work does not)
    script = (root or ROOT) / "benchmarks" / "produce_path.py"
    proc = subprocess.run([_python_of(root), str(script), "--child", "--requests",
                           str(requests)], cwd=root or ROOT, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, help="another checkout (with its own .venv) to run next to this one")
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        # run as a script with a checkout's own interpreter: kipper comes from that checkout's
        # install, tests.support (the recording transport) from the same checkout, looked up last
        sys.path.append(str(ROOT))
        print(json.dumps(measure(args.requests)))
        return
    rows = [("this", _run(None, args.requests))]
    if args.baseline is not None:
        rows.insert(0, ("baseline", _run(args.baseline, args.requests)))
    for name, r in rows:
        print(f"{name}: records stored: {r.pop('records_stored', '?')}")
    labels = {"dispatch_us": "single-record Produce, dispatch only, us CPU",
              "idempotent_us": "idempotent single-record Produce, dispatch only, us CPU",
              "connection_us": "single-record Produce, 64 per read, us CPU",
              "batches_cpu_s_per_million": "9,000-record idempotent batches, CPU-s per 1M records",
              "batches_copy_cpu_s_per_million": "... of which the stored copy alone"}
    print(f"| measure | {' | '.join(name for name, _ in rows)} |" + (" this/baseline |" if len(rows) > 1 else ""))
    print("|---|" + "---|" * (len(rows) + (len(rows) > 1)))
    for key, label in labels.items():
        values = [r[key] for _, r in rows]
        ratio = f" {values[-1] / values[0]:.2f}x |" if len(rows) > 1 else ""
        print(f"| {label} | " + " | ".join(f"{v:.3f}" for v in values) + " |" + ratio)


if __name__ == "__main__":
    main()
