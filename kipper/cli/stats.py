"""``kipper stats``: the broker's metrics as text tables, for people.

Reads the newest lines of the broker's metrics dumps (``metrics.dump.dir``,
schema in docs/METRICS.md), merges the last ``--window`` intervals (counts
summed, latency histograms merged) and prints requests, partitions,
connections, producer state, quotas and share partitions. ``--watch`` redraws.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

_FILE = re.compile(r"^metrics-(\d+)-(\d+)\.jsonl$")
_TAIL_CHUNK = 1 << 16


def add_parser(sub) -> None:
    p = sub.add_parser("stats", help="show a broker's metrics (from its metrics dumps)",
                       description="Render the newest metrics-dump lines of a broker as text tables. "
                                   "The broker must run with metrics.dump.dir set.")
    p.add_argument("--dump-dir", required=True, metavar="DIR", help="the broker's metrics.dump.dir")
    p.add_argument("--broker-id", type=int, help="only this broker (default: every broker in DIR)")
    p.add_argument("--window", type=int, default=1, metavar="N",
                   help="merge the last N intervals (default 1)")
    p.add_argument("--watch", type=float, metavar="SECONDS", help="redraw every SECONDS")
    p.add_argument("--count", type=int, default=0, metavar="K",
                   help="with --watch: stop after K screens (default: until Ctrl-C)")
    p.add_argument("--top", type=int, default=20, help="partitions shown (default 20)")
    p.add_argument("--json", action="store_true", help="print the merged view as JSON")
    p.set_defaults(func=run)


# --- reading the dumps ------------------------------------------------------------------------

def dump_files(directory: str | Path) -> dict[int, list[Path]]:
    """broker id -> its dump files, oldest first."""
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"{directory} is not a directory")
    out: dict[int, list[tuple[int, Path]]] = {}
    for entry in os.scandir(d):
        m = _FILE.match(entry.name)
        if m:
            out.setdefault(int(m.group(1)), []).append((int(m.group(2)), Path(entry.path)))
    return {b: [p for _, p in sorted(files)] for b, files in sorted(out.items())}


def _tail_lines(path: Path, n: int) -> list[bytes]:
    """The last n complete lines of a file, read from its end."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        end = f.tell()
        data = b""
        pos = end
        while pos > 0 and data.count(b"\n") <= n:
            step = min(_TAIL_CHUNK, pos)
            pos -= step
            f.seek(pos)
            data = f.read(step) + data
    lines = data.split(b"\n")
    if not data.endswith(b"\n"):
        lines = lines[:-1]  # a line still being written
    lines = [line for line in lines if line.strip()]
    if pos > 0:
        lines = lines[1:]  # may be cut at the front
    return lines[-n:]


def latest_lines(files: list[Path], n: int) -> list[dict]:
    """The newest n dump lines across a broker's (rotated) files, oldest first."""
    out: list[dict] = []
    for path in reversed(files):
        need = n - len(out)
        if need <= 0:
            break
        try:
            raw = _tail_lines(path, need)
        except FileNotFoundError:  # rotated away meanwhile
            continue
        out = [json.loads(line) for line in raw] + out
    return out[-n:]


# --- merging intervals -------------------------------------------------------------------------

def percentile(buckets: list[list[int]], q: float, max_us: int) -> int:
    """Upper bound of the bucket holding the q-quantile ([bound, count] pairs; -1: above the last)."""
    total = sum(n for _, n in buckets)
    if not total:
        return 0
    seen = 0
    for bound, n in sorted(buckets, key=lambda b: (b[0] < 0, b[0])):
        seen += n
        if seen >= q * total and n:
            return max_us if bound < 0 else min(bound, max_us) if max_us else bound
    return max_us


def merge(lines: list[dict]) -> dict:
    """One view of several consecutive intervals of one broker."""
    last = lines[-1]
    seconds = sum(line.get("interval_ms", 0) for line in lines) / 1000 or 1e-9
    apis: dict[str, dict] = {}
    for line in lines:
        for name, h in (line.get("apis") or {}).items():
            a = apis.setdefault(name, {"count": 0, "sum_us": 0, "max_us": 0, "buckets": {}})
            a["count"] += h.get("count", 0)
            a["sum_us"] += h.get("sum_us", 0)
            a["max_us"] = max(a["max_us"], h.get("max_us", 0))
            for bound, n in h.get("buckets", ()):
                a["buckets"][bound] = a["buckets"].get(bound, 0) + n
    for a in apis.values():
        buckets = [[b, n] for b, n in a.pop("buckets").items()]
        a.update(rate=a["count"] / seconds, mean_us=a["sum_us"] / a["count"] if a["count"] else 0,
                 p50_us=percentile(buckets, 0.5, a["max_us"]), p99_us=percentile(buckets, 0.99, a["max_us"]))
    parts: dict[tuple[str, int], dict] = {}
    for line in lines:
        for p in line.get("partitions") or ():
            c = parts.setdefault((p["topic"], p["partition"]),
                                 {"bytes_in": 0, "records_in": 0, "bytes_out": 0, "records_out": 0})
            for k in c:
                c[k] += p.get(k, 0)
    return {"broker_id": last.get("broker_id"), "ts_ms": last.get("ts_ms"), "seconds": seconds,
            "intervals": len(lines), "apis": dict(sorted(apis.items())),
            "partitions": [{"topic": t, "partition": p, **c} for (t, p), c in sorted(parts.items())],
            "connections": last.get("connections") or {}, "totals": last.get("totals") or {},
            "producer_state": last.get("producer_state") or {},
            "quotas": last.get("quotas") or {}, "share": last.get("share") or {},
            "share_groups": last.get("share_groups") or {},
            "cleaner": last.get("cleaner") or {},
            "dropped": (last.get("dump") or {}).get("dropped", 0)}


# --- rendering ----------------------------------------------------------------------------------

def _table(headers: list[str], rows: list[list], out: list[str]) -> None:
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths)))
    out.append(fmt(headers))
    out.extend(fmt(r) for r in cells)


def _ms(us) -> str:
    return f"{us / 1000:.2f}"


def _num(v) -> str:
    if v is None:
        return "-"
    return f"{v:,.1f}" if isinstance(v, float) else f"{v:,}"


def render(view: dict, top: int = 20) -> str:
    ts = datetime.fromtimestamp((view["ts_ms"] or 0) / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    out = [f"broker {view['broker_id']}  {ts}  last {view['intervals']} interval(s), {view['seconds']:.1f} s"]
    out.append("")
    if view["apis"]:
        _table(["api", "requests", "req/s", "mean ms", "p50 ms", "p99 ms", "max ms"],
               [[name, _num(a["count"]), f"{a['rate']:,.1f}", _ms(a["mean_us"]), _ms(a["p50_us"]),
                 _ms(a["p99_us"]), _ms(a["max_us"])] for name, a in view["apis"].items()], out)
    else:
        out.append("no requests in this window")
    out.append("")
    s = view["seconds"]
    parts = sorted(view["partitions"], key=lambda p: -(p["bytes_in"] + p["bytes_out"]))
    if parts:
        rows = [[f"{p['topic']}-{p['partition']}", f"{p['records_in'] / s:,.1f}", f"{p['bytes_in'] / s / 1e6:.2f}",
                 f"{p['records_out'] / s:,.1f}", f"{p['bytes_out'] / s / 1e6:.2f}"] for p in parts[:top]]
        tot = {k: sum(p[k] for p in parts) for k in ("records_in", "bytes_in", "records_out", "bytes_out")}
        rows.append([f"all ({len(parts)})", f"{tot['records_in'] / s:,.1f}", f"{tot['bytes_in'] / s / 1e6:.2f}",
                     f"{tot['records_out'] / s:,.1f}", f"{tot['bytes_out'] / s / 1e6:.2f}"])
        _table(["partition", "records in/s", "MB in/s", "records out/s", "MB out/s"], rows, out)
        out.append("")
    c, t = view["connections"], view["totals"]
    out.append(f"connections: open {_num(c.get('open'))}, accepted {_num(c.get('accepted'))}, "
               f"closed {_num(c.get('closed'))}")
    out.append(f"totals: requests {_num(t.get('requests'))}, records in {_num(t.get('records_in'))}, "
               f"bytes in {_num(t.get('bytes_in'))}, records out {_num(t.get('records_out'))}, "
               f"bytes out {_num(t.get('bytes_out'))}")
    ps = view["producer_state"]
    if ps:
        out.append(f"producer state ({ps.get('mode', '?')}): entries {_num(ps.get('entries'))}, "
                   f"bytes {_num(ps.get('bytes'))}, duplicates {_num(ps.get('duplicates'))}, "
                   f"out of order {_num(ps.get('out_of_order'))}, fencings {_num(ps.get('fencings'))}, "
                   f"expired {_num(ps.get('expired'))}")
    users = view["quotas"].get("users") or []
    if users:
        out.append("")
        _table(["user", "quota pid/s", "pid/s", "tokens", "throttle ms"],
               [[u.get("user"), _num(u.get("quota")), _num(u.get("producer_id_rate")), _num(u.get("tokens")),
                 _num(u.get("throttle_time_ms"))] for u in users], out)
    shares = view["share"].get("partitions") or []
    if shares:
        out.append("")
        _table(["share partition", "in-flight", "records/cap", "acquired", "archived", "lock expiries",
                "delivery counts"],
               [[f"{r.get('group')}/{r.get('topic')}-{r.get('partition')}", _num(r.get("in_flight")),
                 f"{_num(r.get('in_flight_records'))}/{_num(r.get('max_record_locks'))}",
                 _num(r.get("acquired")), _num(r.get("archived")), _num(r.get("lock_expiries")),
                 " ".join(f"{k}:{v}" for k, v in sorted((r.get("delivery_counts") or {}).items(),
                                                         key=lambda kv: int(kv[0])))]
                for r in shares[:top]], out)
    sg = view["share_groups"]
    if sg:
        out.append("share groups: " + ", ".join(f"{k.replace('_', ' ')} {_num(v)}" for k, v in sg.items()))
    cl = view["cleaner"]
    if cl:
        out.append(f"log cleaner: runs {_num(cl.get('runs'))}, bytes read {_num(cl.get('bytes_read'))}, "
                   f"written {_num(cl.get('bytes_written'))}, records removed {_num(cl.get('records_removed'))}")
        dirty = cl.get("partitions") or []
        if dirty:
            _table(["compacted partition", "dirty ratio"],
                   [[f"{r.get('topic')}-{r.get('partition')}", f"{r.get('dirty_ratio', 0):.3f}"]
                    for r in dirty[:top]], out)
    if view["dropped"]:
        out.append(f"warning: the broker dropped {view['dropped']} dump line(s) (writer behind)")
    return "\n".join(out)


def views(directory: str, broker_id: int | None, window: int) -> list[dict]:
    files = dump_files(directory)
    if broker_id is not None:
        files = {broker_id: files.get(broker_id, [])}
    out = []
    for b, paths in files.items():
        lines = latest_lines(paths, window)
        if lines:
            out.append(merge(lines))
    if not out:
        who = f"broker {broker_id}" if broker_id is not None else "any broker"
        raise ValueError(f"no metrics dump of {who} in {directory} "
                         "(does the broker run with metrics.dump.dir set to it?)")
    return out


def run(args: argparse.Namespace) -> int:
    if args.window < 1:
        raise ValueError("--window must be at least 1")
    shown = 0
    while True:
        vs = views(args.dump_dir, args.broker_id, args.window)
        if args.json:
            text = json.dumps(vs if len(vs) > 1 else vs[0], indent=2)
        else:
            text = "\n\n".join(render(v, args.top) for v in vs)
        if args.watch and sys.stdout.isatty():
            sys.stdout.write("\x1b[H\x1b[2J")
        print(text, flush=True)
        shown += 1
        if not args.watch or (args.count and shown >= args.count):
            return 0
        time.sleep(args.watch)
        if not sys.stdout.isatty():
            print()
