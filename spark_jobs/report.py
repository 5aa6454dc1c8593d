"""The analysis report: summary.csv, PNG plots (matplotlib) and report.html.

Takes small pandas frames computed by analyze_metrics and writes files; a
section without data (no quota users, no share groups) gets a short note
instead of an empty plot.
"""

from __future__ import annotations

import csv
import html
from pathlib import Path


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    _plt().close(fig)
    return path.name


def plot_throughput(df, out: Path) -> str | None:
    if df.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.plot(df["t_s"], df["records_in_per_s"], label="records in/s")
    ax.plot(df["t_s"], df["records_out_per_s"], label="records out/s")
    ax.set_xlabel("seconds since the first dump line")
    ax.set_ylabel("records/s")
    ax.set_title("Throughput (all brokers)")
    ax.grid(alpha=0.3)
    ax.legend()
    return _save(fig, out / "throughput.png")


def plot_latency(df, table, out: Path) -> str | None:
    if df.empty:
        return None
    plt = _plt()
    top = list(table.sort_values("requests", ascending=False)["api"][:6])
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 3.8))
    for api in top:
        d = df[df["api"] == api]
        ax.plot(d["t_s"], d["p99_us"] / 1000, label=f"{api} p99")
    ax.set_yscale("log")
    ax.set_xlabel("seconds")
    ax.set_ylabel("ms (max per bucket)")
    ax.set_title("Request latency p99 over time")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    t = table.sort_values("requests", ascending=False)
    x = range(len(t))
    bx.bar([i - 0.27 for i in x], t["p50_us"] / 1000, width=0.27, label="p50")
    bx.bar(list(x), t["p99_us"] / 1000, width=0.27, label="p99")
    bx.bar([i + 0.27 for i in x], t["max_us"] / 1000, width=0.27, label="max")
    bx.set_xticks(list(x))
    bx.set_xticklabels(t["api"], rotation=45, ha="right", fontsize=7)
    bx.set_yscale("log")
    bx.set_ylabel("ms")
    bx.set_title("Latency percentiles per API (whole input)")
    bx.legend(fontsize=7)
    return _save(fig, out / "latency.png")


def plot_producer_state(df, out: Path) -> str | None:
    if df.empty or df["entries"].isna().all():
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 3.4))
    ax.plot(df["t_s"], df["entries"], label="entries")
    ax.set_xlabel("seconds")
    ax.set_ylabel("producer-state entries")
    ax2 = ax.twinx()
    ax2.plot(df["t_s"], df["bytes"] / 1024, color="tab:orange", label="KiB")
    ax2.set_ylabel("KiB")
    ax.set_title("Producer-state growth")
    ax.grid(alpha=0.3)
    return _save(fig, out / "producer_state.png")


def plot_quotas(df, out: Path) -> str | None:
    if df.empty:
        return None
    plt = _plt()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 3.4))
    for user, d in df.groupby("user"):
        ax.plot(d["t_s"], d["producer_id_rate"], label=str(user))
        bx.plot(d["t_s"], d["throttle_time_ms"], label=str(user))
    ax.set_title("Producer-id rate per user")
    ax.set_ylabel("producer ids/s")
    bx.set_title("Throttle time per user")
    bx.set_ylabel("ms")
    for a in (ax, bx):
        a.set_xlabel("seconds")
        a.grid(alpha=0.3)
        a.legend(fontsize=7)
    return _save(fig, out / "quotas.png")


def plot_share(df, delivery, out: Path) -> str | None:
    if df.empty and delivery.empty:
        return None
    plt = _plt()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 3.4))
    if not df.empty:
        for col in ("in_flight", "acquired", "archived"):
            ax.plot(df["t_s"], df[col], label=col)
        if df["lock_expiries"].notna().any():
            ax.plot(df["t_s"], df["lock_expiries"], label="lock expiries (cumulative)")
    ax.set_title("Share partitions (all groups)")
    ax.set_xlabel("seconds")
    ax.set_ylabel("records")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    if not delivery.empty:
        d = delivery.groupby("delivery_count")["records_peak"].sum()
        bx.bar(d.index.astype(str), d.values)
    bx.set_title("Delivery counts (records at the peak)")
    bx.set_xlabel("delivery count")
    return _save(fig, out / "share.png")


def write_summary(rows, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["section", "metric", "value"])
        for row in rows:
            w.writerow(row)


def _table(df, floatfmt="{:,.1f}") -> str:
    if df is None or df.empty:
        return "<p class=note>no data in the input</p>"
    return df.to_html(index=False, border=0, classes="t", float_format=floatfmt.format, na_rep="-")


def write(out: Path, *, summary, api_latency, topics, users, delivery, expiries, series, step_s) -> dict:
    import pandas as pd

    write_summary(summary, out / "summary.csv")
    plots = {
        "Throughput": plot_throughput(series["throughput"], out),
        "Request latency": plot_latency(series["latency"], api_latency, out),
        "Producer state": plot_producer_state(series["producer_state"], out),
        "Producer-id quotas": plot_quotas(series["quotas"], out),
        "Share groups": plot_share(series["share"], delivery, out),
    }
    summ = pd.DataFrame(summary, columns=["section", "metric", "value"])
    sections = [
        ("Summary", _table(summ, "{:,.3f}"), None),
        ("Throughput", _table(topics), plots["Throughput"]),
        ("Request latency", _table(api_latency), plots["Request latency"]),
        ("Producer state", "", plots["Producer state"]),
        ("Producer-id quotas", _table(users, "{:,.3f}"), plots["Producer-id quotas"]),
        ("Share groups", _table(expiries) + _table(delivery), plots["Share groups"]),
    ]
    parts = ["<!doctype html><html><head><meta charset=utf-8><title>kipper metrics report</title>",
             "<style>body{font-family:sans-serif;margin:2em;max-width:1250px}"
             "table.t{border-collapse:collapse;font-size:13px;margin:.5em 0}"
             "table.t td,table.t th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:right}"
             "table.t td:first-child,table.t th:first-child{text-align:left}.note{color:#777}"
             "img{max-width:100%}</style></head><body>",
             "<h1>kipper metrics report</h1>",
             f"<p>Plots use {step_s:g}-second buckets. Tables are in <code>tables/</code> (Parquet); "
             "the summary is also in <code>summary.csv</code>.</p>"]
    for title, body, img in sections:
        parts.append(f"<h2>{html.escape(title)}</h2>")
        if img:
            parts.append(f'<img src="{html.escape(img)}" alt="{html.escape(title)}">')
        elif title != "Summary":
            parts.append("<p class=note>no plot: no data for it in the input</p>")
        parts.append(body)
    parts.append("</body></html>")
    (out / "report.html").write_text("\n".join(parts), encoding="utf-8")
    return {"summary": summary, "plots": {k: v for k, v in plots.items() if v}}
