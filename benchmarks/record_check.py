"""The record parser's cost per record: the compiled form and the Python one, every codec.

    .venv/bin/python -m benchmarks.record_check [--records 1000] [--size 100] [--rounds 5]

Batches of ``--records`` records with JSON-like values of ``--size`` bytes (they compress
about as application data does), built once per codec. Per codec, nanoseconds of CPU per
record (process time, the best of ``--rounds`` rounds, the forms alternating within
each round so that the machine's load falls on all of them):

- ``crc``: the CRC-32C of the batch, which the append path pays already (for scale);
- ``decompress``: the codec's decompression alone, as the check does it (into a reused
  scratch area, ``compression.read_decompressed``);
- ``c`` / ``python``: ``record_check.check_batch`` with that form, decompression included.

What it adds to a broker's ingest is measured by ``benchmarks.side_by_side`` (the ingest
passes); this isolates the parser.
"""

from __future__ import annotations

import argparse
import time

import crc32c

from kipper.protocol import batch as b
from kipper.protocol import compression, record_check
from kipper.protocol import records as rec


def values(n: int, size: int) -> list[bytes]:
    out = []
    for i in range(n):
        text = f'{{"id":{i},"user":"user-{i % 97}","ts":{1_700_000_000_000 + i * 7},"tags":["a","b"],"pad":"'
        out.append((text + "x" * size)[:size - 2].encode() + b'"}')
    return out


def _cpu_ns(fn, repeat: int) -> float:
    start = time.process_time_ns()
    for _ in range(repeat):
        fn()
    return (time.process_time_ns() - start) / repeat


def measure(n_records: int = 1000, size: int = 100, rounds: int = 5, min_records: int = 200_000) -> dict:
    """{codec name: {figure: ns per record}} (figures: crc, decompress, and each form)."""
    vals = values(n_records, size)
    out = {}
    for codec in (compression.NONE, compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD):
        data = rec.build_batch([(None, v) for v in vals], compression_type=codec)
        header = b.read_header(data)
        view = memoryview(data)
        section = view[b.HEADER_SIZE:]
        figures = {"crc": lambda: crc32c.crc32c(view[b.CRC_START:])}
        if codec:
            figures["decompress"] = lambda: compression.read_decompressed(codec, section, len)
        for name, scan in record_check.SCANS.items():
            assert record_check.check_batch(view, 0, len(data), header, scan=scan) is None
            figures[name] = lambda scan=scan: record_check.check_batch(view, 0, len(data), header, scan=scan)
        best = {name: float("inf") for name in figures}
        for _ in range(rounds):
            for name, fn in figures.items():
                # the Python form is ~100x slower: fewer repeats keep a round short
                repeat = max(1, min_records // n_records // (50 if name == "python" else 1))
                best[name] = min(best[name], _cpu_ns(fn, repeat) / n_records)
        out[compression.NAMES[codec]] = {"batch_bytes": len(data), **best}
    return out


def table(results: dict) -> str:
    forms = [name for name in ("c", "python") if name in next(iter(results.values()))]
    head = ["codec", "batch bytes", "crc ns", "decompress ns", *[f"{f} ns" for f in forms]]
    if len(forms) == 2:
        head.append("python / c")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for codec, r in results.items():
        row = [codec, str(r["batch_bytes"]), f"{r['crc']:.1f}",
               f"{r['decompress']:.1f}" if "decompress" in r else "-", *[f"{r[f]:.1f}" for f in forms]]
        if len(forms) == 2:
            row.append(f"{r['python'] / r['c']:.0f}x")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1000, help="records per batch")
    parser.add_argument("--size", type=int, default=100, help="value bytes per record")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results = measure(args.records, args.size, args.rounds)
    print(f"record_check, ns of CPU per record ({args.records} records of {args.size} B per batch, "
          f"best of {args.rounds}; default form: {record_check.SCAN_NAME})")
    print(table(results))


if __name__ == "__main__":
    main()
