"""The console table stream_metrics prints at each trigger: the windows that changed."""

from __future__ import annotations

SEED_COLUMNS = (  # (header, column, format)
    ("lines", "lines", "{:,}"), ("000 entries", "entries", "{:,}"), ("000 bytes", "bytes", "{:,}"),
    ("001 in-flight", "in_flight", "{:,}"), ("001 rec/req", None, "{:,.1f}"),
    ("003 commits", "commits", "{:,}"), ("aborts", "aborts", "{:,}"), ("fenced", "fenced", "{:,}"),
    ("epoch bumps", "epoch_bumps", "{:,}"), ("004 redelivered", "redelivered", "{:,}"),
    ("lock exp", "lock_expiries", "{:,}"), ("archived", "archived", "{:,}"),
)
QUOTA_COLUMNS = (("samples", "samples", "{:,}"), ("admitted", "admitted", "{:,}"),
                 ("throttled", "throttled", "{:,}"), ("ids/s peak", "producer_id_rate_max", "{:,.1f}"),
                 ("quota", "quota", "{:g}"))


def _cell(row, column, fmt) -> str:
    if column is None:  # records per Produce request of the loadgen's producers
        value = row["records_sent"] / row["requests"] if row["requests"] else None
    else:
        value = row[column]
    return "-" if value is None else fmt.format(value)


def render(name: str, batch_id: int, rows) -> str:
    first = ("window (UTC)", "source") if name == "seeds" else ("window (UTC)", "user (002)")
    columns = SEED_COLUMNS if name == "seeds" else QUOTA_COLUMNS
    head = [*first, *(h for h, _, _ in columns)]
    body = [[r["window_start"].strftime("%H:%M:%S") + "-" + r["window_end"].strftime("%H:%M:%S"),
             str(r["source"] if name == "seeds" else r["user"]),
             *(_cell(r, c, f) for _, c, f in columns)] for r in rows]
    width = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    title = "seeds" if name == "seeds" else "producer-id quota per user"
    out = [f"-- batch {batch_id}: {title}, {len(rows)} window(s) changed"]
    for x in [head, *body]:
        out.append("  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(x, width))))
    return "\n".join(out)
