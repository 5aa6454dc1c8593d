"""What else the machine was doing while a benchmark pass ran.

The development machine has two cores shared with other engineers' test suites, so a
figure without the load it was measured under means little. ``LoadProbe`` samples
/proc at the start and the end of a pass: the load averages, the machine's busy CPU
(from /proc/stat, steal included), the CPU the benchmark's own processes used, and
what is left, which other processes used, with the busiest of them by name.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1


def _stat_fields(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def process_cpu_seconds(pid: int, *, children: bool = False) -> float:
    """user + system CPU of a process (and of its waited-for children)."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / _TICKS


def process_times(pid: int) -> tuple[float, float, int]:
    """(user CPU-s, system CPU-s, minor page faults) of a process so far."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0, 0.0, 0
    return int(fields[11]) / _TICKS, int(fields[12]) / _TICKS, int(fields[7])


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _busy_and_steal() -> tuple[float, float]:
    """Machine-wide busy and steal CPU seconds since boot."""
    parts = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in parts[:8])
    return (user + nice + system + irq + softirq + steal) / _TICKS, steal / _TICKS


def _processes() -> dict[int, tuple[str, int, float]]:
    """pid -> (name, parent pid, CPU seconds) of every process still there."""
    out = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        out[int(entry.name)] = (name, int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS)
    return out


def _ours(procs: dict, root: int) -> set[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


class LoadProbe:
    """``start()`` before a pass, ``stop()`` after it; ``result`` is a JSON-ready dict."""

    def __init__(self, root_pid: int | None = None):
        self.root = root_pid or os.getpid()
        self.result: dict = {}

    def start(self) -> "LoadProbe":
        self._t0 = time.monotonic()
        self._load0 = os.getloadavg()
        self._busy0, self._steal0 = _busy_and_steal()
        self._procs0 = _processes()
        self._self0 = process_cpu_seconds(self.root, children=True)
        return self

    def stop(self) -> dict:
        elapsed = time.monotonic() - self._t0
        busy1, steal1 = _busy_and_steal()
        procs1 = _processes()
        ours = _ours(procs1, self.root) | _ours(self._procs0, self.root)
        # our CPU: the runner with its reaped children, and the live processes below it
        mine = process_cpu_seconds(self.root, children=True) - self._self0
        others: dict[str, float] = {}
        for pid, (name, _, cpu) in procs1.items():
            before = self._procs0.get(pid)
            delta = cpu - (before[2] if before is not None and before[0] == name else 0.0)
            if pid == self.root:
                continue
            if pid in ours:
                mine += delta
            elif delta > 0:
                others[name] = others.get(name, 0.0) + delta
        busy = busy1 - self._busy0
        other_cpu = max(busy - mine, 0.0)
        top = sorted(others.items(), key=lambda kv: -kv[1])[:3]
        self.result = {
            "seconds": round(elapsed, 2),
            "loadavg_start": [round(x, 2) for x in self._load0],
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "machine_busy_pct": round(100 * busy / (elapsed * NCPU), 1) if elapsed else 0.0,
            "steal_pct": round(100 * (steal1 - self._steal0) / (elapsed * NCPU), 1) if elapsed else 0.0,
            "benchmark_cpu_pct": round(100 * mine / (elapsed * NCPU), 1) if elapsed else 0.0,
            "other_cpu_pct": round(100 * other_cpu / (elapsed * NCPU), 1) if elapsed else 0.0,
            "busiest_others": [[name, round(cpu, 2)] for name, cpu in top],
        }
        return self.result


def describe(load: dict) -> str:
    """One line for a table: load average and the share of the cores others used."""
    if not load:
        return "-"
    top = ", ".join(f"{n} {c:.1f}s" for n, c in load.get("busiest_others", [])[:2])
    return (f"load {load['loadavg_start'][0]:.1f}, others {load['other_cpu_pct']:.0f}% of "
            f"{NCPU} cores" + (f" ({top})" if top else ""))
