"""The audit's table for people and the problems that make it exit with status 1
(spark_jobs/audit.py builds the JSON both read)."""

from __future__ import annotations

PROBLEM_LABELS = (("duplicates", "duplicated"), ("missing", "acknowledged but missing"),
                  ("misordered", "out of their producer's order"),
                  ("aborted_seen", "read from aborted transactions"))


def problems(report: dict) -> list[str]:
    t = report["totals"]
    out = [f"{t[key]:,} record(s) {label}" for key, label in PROBLEM_LABELS if t[key]]
    for p in report["producers"]:
        if p["missing"] and p["missing_examples"]:
            out.append(f"producer {p['uid']:#x} ({p['role']}) misses {p['missing']:,}, "
                       f"first counters {', '.join(map(str, p['missing_examples']))}")
            break
    return out


def table(report: dict) -> str:
    t = report["totals"]
    cols = ("records", "distinct", "duplicates", "misordered", "aborted_seen")
    head = ("topic-partition", "records", "distinct", "dup", "misordered", "aborted seen")
    rows = [(f"{p['topic']}-{p['partition']}", *(f"{p[c]:,}" for c in cols)) for p in report["partitions"]]
    rows.append(("total", *(f"{t[c]:,}" for c in cols)))
    width = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [f"audit: {len(report['topics'])} topic(s), {len(report['partitions'])} partition(s), read_committed, "
             f"against the {report['against']}"]
    fmt = [str.ljust] + [str.rjust] * (len(head) - 1)
    for r in [head, *rows]:
        lines.append("  ".join(f(v, w) for f, v, w in zip(fmt, r, width)))
    for row in report["per_topic"]:
        lines.append(f"{row['topic']}: {row['acked']:,} acknowledged by {row['producers']} producer(s), "
                     f"{row['missing']:,} missing")
    extra = [f"{t[k]:,} {label}" for k, label in (("unmarked", "without a loadgen identity"),
                                                  ("unexpected", "never sent by a known producer"),
                                                  ("stored_unacknowledged", "stored though not acknowledged "
                                                                            "(failed or pending at the end)"))
             if t[k]]
    if extra:
        lines.append("also read: " + "; ".join(extra))
    verdict = ("clean: every acknowledged record read exactly once, in its producer's order"
               if report["verdict"] == "clean" else "FAILED: " + "; ".join(problems(report)))
    lines.append(f"verdict: {verdict}")
    return "\n".join(lines)
