"""Instructions per Produce request, counted by valgrind's callgrind: the one figure that other
work on a shared machine cannot move. This checkout and a baseline, side by side.

For each mode, a child process (the candidate's own ``.venv``) builds a whole broker with
``server.open_engines`` and dispatches N requests; callgrind counts the instructions of two
runs, of ``--small`` and ``--large`` requests, and their difference over the difference in N
is the cost of one request (start-up and imports cancel out).

- ``dispatch``: single-record Produce v9 through ``Dispatcher.dispatch``;
- ``idempotent``: single-record batches of one idempotent producer, each the next sequence;
- ``connection``: the same frames 64 at a time through ``KafkaConnection.buffer_updated``;
- ``idle200``: the same with 200 other connections open, each answered once (issue 41: what
  an idle connection costs the others' requests);
- ``batches``: one 1,000-record batch (~110 KB), per request.

    python -m benchmarks.produce_instructions [--baseline ../kipper-before] [--modes dispatch batches]

Needs ``valgrind`` (``apt-get install valgrind``). A run of all four modes on two checkouts takes
about ten minutes: callgrind runs the interpreter some fifty times slower.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = ("dispatch", "idempotent", "connection", "idle200", "batches")

CHILD = r'''
import sys
root, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, root)
from kipper.broker import config as cfg
from kipper.broker.connection import KafkaConnection
from kipper.broker.context import Session
from kipper.protocol import records
from kipper.protocol.header import encode_request
from kipper.protocol.messages.produce import PRODUCE
from tests.support.transport import RecordingTransport

settings = cfg.load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0", "log.level": "WARNING"})
try:
    from kipper.broker.dispatcher import Dispatcher
    from kipper.broker.server import open_engines
    engines = open_engines(settings)
    dispatcher = Dispatcher.of(engines)
    dispatch = lambda f, s: dispatcher.dispatch([f], 0, s)
except ImportError:  # a checkout from before issue 27 (681ccb1): Broker built the dispatcher
    from kipper.broker.composition import build_broker
    engines = build_broker(settings)
    dispatcher = engines.dispatcher
    dispatch = dispatcher.dispatch
engines.topics.create("t", 1)
session = Session("PLAINTEXT", "peer")
value = b"x" * 100


def frame(batch):
    return encode_request(PRODUCE, 9, 1, "bench", {"transactional_id": None, "acks": 1, "timeout_ms": 30000,
                          "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}]})


if mode == "dispatch":
    f = memoryview(frame(records.build_batch([(None, value, 0)])))[4:]
    for _ in range(n):
        dispatch(f, session)
elif mode == "idempotent":
    frames = [memoryview(frame(records.build_batch([(None, value, 0)], producer_id=7, producer_epoch=0,
                                                   base_sequence=i)))[4:] for i in range(n)]
    for f in frames:
        dispatch(f, session)
elif mode in ("connection", "idle200"):
    registry = set()
    if mode == "idle200":
        from kipper.protocol.header import encode_request as _enc
        from kipper.protocol.messages.api_versions import API_VERSIONS
        hello = _enc(API_VERSIONS, 3, 1, "idle", {"client_software_name": "idle", "client_software_version": "1"})
        for _ in range(200):
            idle = KafkaConnection(dispatcher, lambda t, peer: Session("PLAINTEXT", peer), registry,
                                   max_frame=100 << 20)
            idle.connection_made(RecordingTransport())
            room = idle.get_buffer(len(hello))
            room[:len(hello)] = hello
            del room
            idle.buffer_updated(len(hello))
    conn = KafkaConnection(dispatcher, lambda t, peer: Session("PLAINTEXT", peer), registry, max_frame=100 << 20)
    conn.connection_made(RecordingTransport())
    burst = frame(records.build_batch([(None, value, 0)])) * 64
    for _ in range(n // 64):
        room = conn.get_buffer(len(burst))
        room[:len(burst)] = burst
        del room
        conn.buffer_updated(len(burst))
else:
    big = memoryview(frame(records.build_batch([(None, value, 0)] * 1000)))[4:]
    for _ in range(n):
        dispatch(big, session)
'''


def instructions(root: Path, mode: str, n: int, scratch: Path) -> int:
    """Instructions callgrind counts for ``n`` requests of ``mode`` through ``root``'s broker."""
    script, out = scratch / "child.py", scratch / f"{root.name}.{mode}.{n}.cg"
    script.write_text(CHILD)
    python = root / ".venv" / "bin" / "python"
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(python), str(script),
                           str(root), mode, str(n)], capture_output=True, text=True, cwd=scratch)
    if done.returncode:
        raise SystemExit(f"{root.name} {mode}: the child failed:\n{done.stderr[-2000:]}")
    for line in out.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {out}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout with its own .venv")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--small", type=int, default=1280)
    parser.add_argument("--large", type=int, default=6400)
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    roots = ([args.baseline.resolve()] if args.baseline else []) + [ROOT]
    print("| mode | " + " | ".join(r.name for r in roots) + (" | this/baseline |" if args.baseline else " |"))
    print("|---" * (len(roots) + 1 + bool(args.baseline)) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes:
            per = [(instructions(r, mode, args.large, Path(tmp)) - instructions(r, mode, args.small, Path(tmp)))
                   // (args.large - args.small) for r in roots]
            ratio = f" {per[1] / per[0]:.2f}x |" if args.baseline else ""
            print(f"| {mode} | " + " | ".join(f"{p:,}" for p in per) + " |" + ratio, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
