"""The report's plots (matplotlib, PNG). Each takes the small pandas frames of the
analysis and returns the file name, or None when it has nothing to draw: the
report then says so in one line instead of showing empty axes. Time runs along
x in UTC; every axis says what it counts and in which unit; every plot has a
legend."""

from __future__ import annotations

from pathlib import Path

FIG_W = 12.0


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _times(df):
    import pandas as pd

    return pd.to_datetime(df["t_ms"], unit="ms", utc=True).dt.tz_localize(None)


def _time_axis(ax, ticks: int = 5) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(minticks=2, maxticks=ticks)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, show_offset=True))
    ax.set_xlabel("time (UTC)")
    ax.grid(alpha=0.3)


def _save(fig, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    _plt().close(fig)
    return path.name


def _has(df, *cols) -> bool:
    return df is not None and not df.empty and any(c in df and df[c].fillna(0).ne(0).any() for c in cols)


def throughput(df, out: Path) -> str | None:
    if df.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(FIG_W, 3.4))
    t = _times(df)
    ax.plot(t, df["records_in_per_s"], label="records in (produced)")
    ax.plot(t, df["records_out_per_s"], label="records out (fetched, share-acquired)")
    ax.set_ylabel("records/s")
    ax.set_title("Throughput, all brokers")
    _time_axis(ax, 9)
    ax.legend(fontsize=8)
    return _save(fig, out / "throughput.png")


def latency(df, table, out: Path) -> str | None:
    if df.empty or table.empty:
        return None
    plt = _plt()
    top = list(table.sort_values("requests", ascending=False)["api"][:6])
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(FIG_W, 3.8))
    for api in top:
        d = df[df["api"] == api]
        ax.plot(_times(d), d["p99_us"] / 1000, label=f"{api} p99")
    ax.set_yscale("log")
    ax.set_ylabel("latency (ms), highest p99 per bucket")
    ax.set_title("Request latency p99 over time")
    _time_axis(ax)
    ax.legend(fontsize=7)
    t = table.sort_values("requests", ascending=False)
    x = range(len(t))
    bx.bar([i - 0.27 for i in x], t["p50_us"] / 1000, width=0.27, label="p50")
    bx.bar(list(x), t["p99_us"] / 1000, width=0.27, label="p99")
    bx.bar([i + 0.27 for i in x], t["max_us"] / 1000, width=0.27, label="max")
    bx.set_xticks(list(x))
    bx.set_xticklabels(t["api"], rotation=45, ha="right", fontsize=7)
    bx.set_yscale("log")
    bx.set_xlabel("API")
    bx.set_ylabel("latency (ms)")
    bx.set_title("Latency per API, whole input")
    bx.legend(fontsize=7)
    return _save(fig, out / "latency.png")


def producer_state(df, out: Path) -> str | None:
    """Seed 000: entries (one per producer and partition) and the bytes each costs."""
    if not _has(df, "entries"):
        return None
    plt = _plt()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(FIG_W, 3.4))
    t = _times(df)
    ax.plot(t, df["entries"], label="producer-state entries")
    if _has(df, "producer_ids_allocated"):
        ax.plot(t, df["producer_ids_allocated"], label="producer ids allocated (cumulative)", linestyle="--")
    if _has(df, "duplicates"):
        ax.plot(t, df["duplicates"], label="duplicates answered (cumulative)", linestyle=":")
    ax.set_ylabel("count")
    ax.set_title("Producer state: entries (one per producer and partition)")
    _time_axis(ax)
    ax.legend(fontsize=7)
    per_entry = df["bytes"] / df["entries"].where(df["entries"] > 0)
    bx.plot(t, per_entry, color="tab:purple", label="bytes per entry")
    bx.set_ylim(bottom=0)
    bx.set_ylabel("bytes per entry (B)")
    bx.set_title("Memory per entry: one batch kept per producer")
    _time_axis(bx)
    bx.legend(fontsize=7)
    return _save(fig, out / "producer_state.png")


def quotas(df, out: Path) -> str | None:
    """Seed 002: per user, ids admitted and requests throttled; the rate against the quota."""
    if df is None or df.empty:
        return None
    plt = _plt()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(FIG_W, 3.4))
    for user, d in df.groupby("user"):
        t = _times(d)
        line, = ax.plot(t, d["admitted"], label=f"{user}: ids admitted")
        ax.plot(t, d["throttled"], color=line.get_color(), linestyle="--", label=f"{user}: requests throttled")
        rate, = bx.plot(t, d["producer_id_rate"], label=f"{user}: new ids/s")
        if d["quota"].notna().any():
            bx.plot(t, d["quota"], color=rate.get_color(), linestyle=":", label=f"{user}: producer_ids_rate")
    ax.set_ylabel("count (cumulative)")
    ax.set_title("Producer ids admitted and throttled, per user")
    bx.set_ylabel("producer ids/s")
    bx.set_title("New producer ids per second against the quota")
    for a in (ax, bx):
        _time_axis(a)
        a.legend(fontsize=7)
    return _save(fig, out / "quotas.png")


def transactions(df, out: Path) -> str | None:
    """Seed 003: commits and aborts, and the fencings and epoch bumps, cumulative."""
    labels = {"commits": "transactions committed", "aborts": "transactions aborted",
              "fenced": "open transactions fenced", "epoch_bumps": "epoch bumps, transactional ids",
              "idempotent_epoch_bumps": "epoch bumps, idempotent producers",
              "producer_state_fencings": "batches refused as fenced (producer state)"}
    ends = [c for c in ("commits", "aborts") if _has(df, c)]
    bumps = [c for c in ("fenced", "epoch_bumps", "idempotent_epoch_bumps", "producer_state_fencings") if _has(df, c)]
    if not ends and not bumps:
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, 2 if ends and bumps else 1, figsize=(FIG_W if ends and bumps else FIG_W / 2, 3.4))
    axes = list(axes) if ends and bumps else [axes]
    t = _times(df)
    if ends:
        ax = axes.pop(0)
        for col in ends:
            ax.plot(t, df[col], label=labels[col])
        ax.set_ylabel("transactions (cumulative)")
        ax.set_title("Transactions")
        _time_axis(ax)
        ax.legend(fontsize=7)
    if bumps:
        bx = axes.pop(0)
        for col in bumps:
            bx.step(t, df[col], where="post", label=labels[col])
        bx.set_ylabel("count (cumulative)")
        bx.set_title("Epoch bumps and fencing (KIP-360)")
        _time_axis(bx)
        bx.legend(fontsize=7)
    return _save(fig, out / "transactions.png")


def share(df, delivery, out: Path) -> str | None:
    """Seed 004: the share-partitions' windows over time, and records by delivery count."""
    windows = df is not None and not df.empty
    counts = delivery is not None and not delivery.empty
    if not windows and not counts:
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, 2 if windows and counts else 1,
                             figsize=(FIG_W if windows and counts else FIG_W / 2, 4.0))
    axes = list(axes) if windows and counts else [axes]
    if windows:
        ax = axes.pop(0)
        t = _times(df)
        for col, label in (("in_flight", "in flight (SPSO to SPEO)"), ("acquired", "acquired (locked)"),
                           ("archived", "archived in the window")):
            ax.plot(t, df[col], label=label)
        ax.set_ylabel("records")
        ax2 = ax.twinx()
        ax2.plot(t, df["lock_expiries"], color="tab:red", linestyle="--", label="lock expiries (cumulative)")
        ax2.set_ylabel("lock expiries (records)")
        handles = ax.get_legend_handles_labels()
        more = ax2.get_legend_handles_labels()
        ax.legend(handles[0] + more[0], handles[1] + more[1], fontsize=7, ncol=2, loc="upper center",
                  bbox_to_anchor=(0.5, -0.25))  # below the axes: the lines fill the plot
        ax.set_title("Share-partitions, all groups")
        _time_axis(ax)
    if counts:
        bx = axes.pop(0)
        d = delivery.groupby("delivery_count")["records_peak"].sum().sort_index()
        bx.bar(d.index.astype(str), d.values, color=["tab:blue" if c == 1 else "tab:orange" for c in d.index],
               label="records in the windows at the peak")
        bx.set_yscale("log")
        bx.legend(fontsize=7)
        bx.set_xlabel("delivery count (above 1: delivered again)")
        bx.set_ylabel("records (log scale)")
        bx.set_title("Records by delivery count")
        bx.grid(alpha=0.3, axis="y")
    return _save(fig, out / "share.png")
