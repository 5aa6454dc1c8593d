"""The analysis report: summary.csv, the plots (spark_jobs/plots.py) and one
self-contained report.html (inline CSS, images next to it, nothing fetched).

The page opens with a headline table (the run's UTC time range, duration,
brokers, records in and out, mean and peak rates, acked against stored), then
the client's view next to the broker's when a loadgen result is given, then
throughput, latency and one section per seed, each with a plot and one
sentence on what to look for. Counts print as integers, times as UTC
datetimes, and every table column names its unit. A section without data says
so in one line.
"""

from __future__ import annotations

import csv
import html
import math
from datetime import datetime, timezone
from pathlib import Path

from kipper.spark_jobs import plots

# --- formatting --------------------------------------------------------------------------------


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def integer(v) -> str:
    return "-" if _missing(v) else f"{int(round(v)):,}"


def number(v, decimals: int = 1) -> str:
    """A rate or a mean: no decimals when it is whole, else ``decimals``."""
    if _missing(v):
        return "-"
    v = float(v)
    return f"{v:,.0f}" if v == int(v) else f"{v:,.{decimals}f}"


def ms(us) -> str:
    """Microseconds shown in milliseconds."""
    return "-" if _missing(us) else f"{us / 1000:,.2f}"


def megabytes(b) -> str:
    return "-" if _missing(b) else f"{b / 1e6:,.2f}"


def utc(ts_ms, seconds: bool = True) -> str:
    if _missing(ts_ms):
        return "-"
    t = datetime.fromtimestamp(ts_ms / 1000, tz=timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M") + " UTC"


def iso_utc(ts_ms) -> str:
    return datetime.fromtimestamp(ts_ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def duration(seconds) -> str:
    """Whole seconds, and minutes or hours beside them once there are many."""
    s = int(round(seconds or 0))
    if s < 120:
        return f"{s}"
    return f"{s:,} ({s // 60} min {s % 60} s)" if s < 7200 else f"{s:,} ({s // 3600} h {s % 3600 // 60} min)"


def table(rows: list[dict], columns: list[tuple[str, str, object]], cls: str = "t") -> str:
    """``columns``: (header with its unit, key, formatter) per column."""
    if not rows:
        return ""
    # numbers (a formatter) align right, text to the left
    align = ["" if f else ' class="x"' for _, _, f in columns]
    out = [f'<table class="{cls}"><tr>' + "".join(f"<th{a}>{html.escape(h)}</th>"
                                                    for (h, _, _), a in zip(columns, align)) + "</tr>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td{a}>{html.escape(f(row.get(k)) if f else str(row.get(k)))}</td>"
                                    for (_, k, f), a in zip(columns, align)) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def note(text: str) -> str:
    return f"<p class=note>{html.escape(text)}</p>"


def _records(df) -> list[dict]:
    return [] if df is None or df.empty else df.to_dict("records")


# --- summary.csv ------------------------------------------------------------------------------

def summary_rows(a: dict) -> list[tuple[str, str, object, str]]:
    """(section, metric, value, unit): counts as integers, times as ISO-8601 UTC."""
    i, t = a["input"], a["totals"]
    span_s = (i["t1_ms"] - i["t0_ms"]) / 1000
    mean = t["records_in"] / t["wall_s"] if t["wall_s"] else 0
    rows = [
        ("input", "lines", i["lines"], "lines"), ("input", "corrupt_lines", i["corrupt"], "lines"),
        ("input", "files", i["files"], "files"), ("input", "brokers", len(i["brokers"]), "brokers"),
        ("input", "first_line", iso_utc(i["t0_ms"]), "UTC"), ("input", "last_line", iso_utc(i["t1_ms"]), "UTC"),
        ("input", "span_s", round(span_s, 1), "s"),
        ("throughput", "records_in", t["records_in"], "records"), ("throughput", "bytes_in", t["bytes_in"], "bytes"),
        ("throughput", "records_out", t["records_out"], "records"),
        ("throughput", "bytes_out", t["bytes_out"], "bytes"),
        ("throughput", "records_in_per_s_mean", int(round(mean)), "records/s"),
        ("throughput", "records_in_per_s_peak", int(round(t["peak_in_per_s"])), "records/s"),
    ]
    for b, r in sorted(a["brokers"].items()):
        rows += [(f"broker {b}", "counter_records_in", int(r["records_in"] or 0), "records"),
                 (f"broker {b}", "counter_bytes_in", int(r["bytes_in"] or 0), "bytes")]
    for r in _records(a["api_latency"]):
        rows += [(f"api {r['api']}", "requests", int(r["requests"]), "requests"),
                 (f"api {r['api']}", "p50_us", int(r["p50_us"]), "µs"),
                 (f"api {r['api']}", "p99_us", int(r["p99_us"]), "µs"),
                 (f"api {r['api']}", "max_us", int(r["max_us"]), "µs")]
    for b, r in sorted(a["producer_state"].items()):
        sec = f"producer_state broker {b}"
        rows += [(sec, k, int(r.get(k) or 0), u) for k, u in (
            ("entries_first", "entries"), ("entries_last", "entries"), ("entries_peak", "entries"),
            ("bytes_last", "bytes"), ("duplicates", "batches"), ("duplicate_sequence_errors", "answers"),
            ("out_of_order", "answers"), ("fencings", "answers"), ("expired", "entries"),
            ("producer_ids_allocated", "ids"))]
    for r in _records(a["users"]):
        sec = f"user {r['user']}"
        rows += [(sec, "quota", _num(r["quota"]), "ids/s"),
                 (sec, "producer_id_rate_mean", _num(r["producer_id_rate_mean"]), "ids/s"),
                 (sec, "producer_id_rate_max", _num(r["producer_id_rate_max"]), "ids/s"),
                 (sec, "throttle_time_ms_mean", _num(r["throttle_time_ms_mean"]), "ms"),
                 (sec, "throttle_time_ms_max", _num(r["throttle_time_ms_max"]), "ms"),
                 (sec, "admitted", int(r["admitted"] or 0), "ids"),
                 (sec, "throttled", int(r["throttled"] or 0), "requests")]
    for b, r in sorted(a["transactions"].items()):
        sec = f"transactions broker {b}"
        rows += [(sec, k, int(r.get(k) or 0), u) for k, u in (
            ("commits", "transactions"), ("aborts", "transactions"), ("fenced", "transactions"),
            ("timed_out", "transactions"), ("epoch_bumps", "bumps"), ("idempotent_epoch_bumps", "bumps"),
            ("producer_state_fencings", "answers"), ("transactional_ids", "ids"))]
    expiries = a["expiries"]
    if expiries is not None and len(expiries):
        rows += [("share", "lock_expiries", int(expiries["lock_expiries"].fillna(0).sum()), "records"),
                 ("share", "partitions", len(expiries), "share-partitions")]
    for r in _records(a["delivery"]):
        rows.append((f"share group {r['group']}", f"delivery_count_{int(r['delivery_count'])}_peak",
                     int(r["records_peak"]), "records"))
    lg = a.get("loadgen")
    if lg:
        rows += [("loadgen", "acked", int(lg["acked"]), "records"),
                 ("loadgen", "stored", _int_or_none(lg["stored_records"]), "records"),
                 ("loadgen", "run_topics_records_in", a["run_topics_in"], "records"),
                 ("loadgen", "latency_p50_ms", lg["latency"]["p50_ms"], "ms"),
                 ("loadgen", "latency_p99_ms", lg["latency"]["p99_ms"], "ms")]
    rows.append(("analysis", "seconds", a["seconds"], "s"))
    return rows


def _num(v):
    if _missing(v):
        return None
    v = float(v)
    return int(v) if v == int(v) else round(v, 3)


def _int_or_none(v):
    return None if v is None else int(v)


def write_summary(rows, path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["section", "metric", "value", "unit"])
        for row in rows:
            w.writerow(["" if v is None else v for v in row])


# --- the sections -------------------------------------------------------------------------------

def headline(a: dict) -> str:
    i, t = a["input"], a["totals"]
    span_s = (i["t1_ms"] - i["t0_ms"]) / 1000
    start, end = utc(i["t0_ms"]), utc(i["t1_ms"])
    if start[:10] == end[:10]:
        end = end[11:]
    mean = t["records_in"] / t["wall_s"] if t["wall_s"] else 0
    rows = [
        {"what": "run (UTC)", "value": f"{start} to {end}", "unit": "UTC"},
        {"what": "duration", "value": duration(span_s), "unit": "s"},
        {"what": "brokers", "value": f"{len(i['brokers'])} (node {', '.join(map(str, i['brokers']))})",
         "unit": "brokers"},
        {"what": "records in", "value": f"{integer(t['records_in'])} ({megabytes(t['bytes_in'])} MB)",
         "unit": "records"},
        {"what": "records out", "value": f"{integer(t['records_out'])} ({megabytes(t['bytes_out'])} MB)",
         "unit": "records"},
        {"what": "mean rate in", "value": integer(mean), "unit": "records/s"},
        {"what": "peak rate in", "value": f"{integer(t['peak_in_per_s'])} (in {number(i['step_s'])}-s buckets)",
         "unit": "records/s"},
        {"what": "acked = stored", "value": acked_vs_stored(a), "unit": "records"},
    ]
    return table(rows, [("figure", "what", None), ("value", "value", None), ("unit", "unit", None)], "t headline")


def acked_vs_stored(a: dict) -> str:
    lg = a.get("loadgen")
    if not lg:
        return "not known: no loadgen result given (--loadgen result.json)"
    stored = lg.get("stored_records")
    ok = stored is not None and stored == lg["acked"] and a["run_topics_in"] in (None, lg["acked"])
    return (f"{'yes' if ok else 'NO'}: {integer(lg['acked'])} acked by the load generator, "
            f"{integer(stored)} stored (read back), {integer(a['run_topics_in'])} in the dumps for the run's topics")


def client_vs_broker(a: dict) -> str:
    lg = a.get("loadgen")
    if not lg:
        return note("No loadgen result given: run analyze_metrics.py with --loadgen result.json to set the "
                    "load generator's figures next to the broker's.")
    produce = a["api_latency"]
    produce = produce[produce["api"] == "Produce"].to_dict("records") if len(produce) else []
    p = produce[0] if produce else {}
    lat = lg["latency"]
    rows = [
        {"what": "records", "client": f"{integer(lg['acked'])} acked of {integer(lg['sent'])} sent",
         "broker": f"{integer(lg.get('stored_records'))} stored (read back); {integer(a['run_topics_in'])} "
                   "records in for the run's topics (dumps)", "unit": "records"},
        {"what": "failed, unacknowledged", "client": f"{integer(lg['failed'])}, {integer(lg['unacknowledged'])}",
         "broker": "-", "unit": "records"},
        {"what": "latency p50", "client": number(lat["p50_ms"], 2), "broker": ms(p.get("p50_us")), "unit": "ms"},
        {"what": "latency p99", "client": number(lat["p99_ms"], 2), "broker": ms(p.get("p99_us")), "unit": "ms"},
        {"what": "latency max", "client": number(lat["max_ms"], 2), "broker": ms(p.get("max_us")), "unit": "ms"},
    ]
    return (table(rows, [("figure", "what", None), (f"load generator ({lg.get('workload', '?')}, "
                                                  f"{lg.get('master', '?')})", "client", None),
                         ("broker (Produce requests)", "broker", None), ("unit", "unit", None)])
            + note("The client's latency runs from send() to the acknowledgement: batching (linger.ms), the "
                   "network, retries and any quota throttling included. The broker's is the time a Produce "
                   "request spent inside the broker, over the whole input."))


def _throughput(a: dict) -> str:
    rows = _records(a["topics"])
    return table(rows, [("topic", "topic", None), ("partitions", "partitions", integer),
                        ("records in (records)", "records_in", integer), ("bytes in (MB)", "bytes_in", megabytes),
                        ("records out (records)", "records_out", integer),
                        ("bytes out (MB)", "bytes_out", megabytes)])


def _latency(a: dict) -> str:
    return table(_records(a["api_latency"]), [
        ("API", "api", None), ("requests (requests)", "requests", integer), ("mean (ms)", "mean_us", ms),
        ("p50 (ms)", "p50_us", ms), ("p90 (ms)", "p90_us", ms), ("p99 (ms)", "p99_us", ms),
        ("p99.9 (ms)", "p999_us", ms), ("max (ms)", "max_us", ms)])


def _seed000(a: dict) -> str:
    rows = []
    for b, r in sorted(a["producer_state"].items()):
        if r["entries_peak"] is None:
            continue
        per = r["bytes_last"] / r["entries_last"] if r["entries_last"] else None
        rows.append({**r, "broker": b, "per_entry": per})
    return table(rows, [
        ("broker", "broker", None), ("entries at the end (entries)", "entries_last", integer),
        ("peak (entries)", "entries_peak", integer), ("memory at the end (bytes)", "bytes_last", integer),
        ("per entry (bytes)", "per_entry", number), ("producer ids allocated (ids)", "producer_ids_allocated", integer),
        ("duplicates answered (batches)", "duplicates", integer),
        ("DUPLICATE_SEQUENCE_NUMBER (answers)", "duplicate_sequence_errors", integer),
        ("out of order (answers)", "out_of_order", integer), ("expired (entries)", "expired", integer)])


def _seed002(a: dict) -> str:
    return table(_records(a["users"]), [
        ("user", "user", None), ("producer_ids_rate (ids/s)", "quota", number),
        ("ids admitted (ids)", "admitted", integer), ("requests throttled (requests)", "throttled", integer),
        ("peak new ids (ids/s)", "producer_id_rate_max", number),
        ("mean throttle time (ms)", "throttle_time_ms_mean", number),
        ("fewest tokens (tokens)", "tokens_min", lambda v: number(v, 2))])


def _seed003(a: dict) -> str:
    rows = [{**r, "broker": b} for b, r in sorted(a["transactions"].items())]
    return table(rows, [
        ("broker", "broker", None), ("committed (transactions)", "commits", integer),
        ("aborted (transactions)", "aborts", integer), ("fenced (transactions)", "fenced", integer),
        ("timed out (transactions)", "timed_out", integer),
        ("epoch bumps, transactional (bumps)", "epoch_bumps", integer),
        ("epoch bumps, idempotent (bumps)", "idempotent_epoch_bumps", integer),
        ("refused as fenced (batches)", "producer_state_fencings", integer),
        ("transactional ids (ids)", "transactional_ids", integer)])


def _seed004(a: dict) -> str:
    expiries = table(_records(a["expiries"]), [
        ("share group", "group", None), ("topic", "topic", None), ("partition", "partition", integer),
        ("lock expiries (records)", "lock_expiries", integer), ("in flight, peak (records)", "in_flight_peak", integer),
        ("archived in the window, peak (records)", "archived_peak", integer)])
    delivery = table(_records(a["delivery"]), [
        ("share group", "group", None), ("delivery count", "delivery_count", integer),
        ("records at the peak (records)", "records_peak", integer)])
    return expiries + delivery


def _has_counts(d: dict, keys) -> bool:
    return any(any(r.get(k) for k in keys) for r in d.values())


SEEDS = [
    # (title, plot file key, what to look for, no-data line)
    ("Seed 000: producer state, one batch per producer", "producer_state",
     "What to look for: entries grow with the producers and the partitions they write, while the bytes per "
     "entry stay flat (the broker keeps only the latest batch of each producer); duplicates answered count "
     "retried batches recognised without a second append.",
     "No data: no idempotent producer wrote to these brokers."),
    ("Seed 002: producer-id quota per user (KIP-936)", "quotas",
     "What to look for: a user that starts producer ids faster than its producer_ids_rate gets requests "
     "throttled (dashed) while its admitted ids grow no faster than the quota allows; producers admitted "
     "earlier keep writing.",
     "No data: no user had a producer_ids_rate quota while these dumps were written."),
    ("Seed 003: transactions and epoch bumps (KIP-360)", "transactions",
     "What to look for: commits and aborts climb as transactions end; a second instance of a "
     "transactional.id shows as a step in fenced transactions and epoch bumps.",
     "No data: no transaction and no epoch bump in these dumps."),
    ("Seed 004: share groups (KIP-932)", "share",
     "What to look for: records with a delivery count above 1 were delivered again (released, or their lock "
     "expired); archived records were rejected or reached the delivery-count limit; lock expiries climb while "
     "a consumer holds records past the lock duration.",
     "No data: no share group read from these brokers."),
]


# --- the audit (spark_jobs/audit.py; --audit, or inside a --loadgen result) ---------------------
AUDIT_FIGURES = ("records", "distinct", "duplicates", "missing", "misordered", "aborted_seen")


def audit_summary_rows(audit: dict | None) -> list[tuple[str, str, object, str]]:
    if not audit:
        return []
    t = audit["totals"]
    return [("audit", "verdict", audit["verdict"], ""), ("audit", "acked", int(t["acked"]), "records"),
            *(("audit", k, int(t[k]), "records") for k in AUDIT_FIGURES)]


def audit_section(audit: dict | None) -> str:
    if not audit:
        return note("No audit given: the loadgen's result carries one (or run spark_jobs/audit.py and pass "
                    "--audit audit.json).")
    t = audit["totals"]
    verdict = ("every acknowledged record was read exactly once, in its producer's order"
               if audit["verdict"] == "clean" else
               "FAILED: " + ", ".join(f"{integer(t[k])} {k.replace('_', ' ')}" for k in AUDIT_FIGURES[2:] if t[k]))
    head = (f"<p class=look>Read back with Spark's Kafka connector (read_committed) against the "
            f"{html.escape(audit['against'])}: {integer(t['records'])} records read, {integer(t['acked'])} "
            f"acknowledged; {html.escape(verdict)}.</p>")
    cols = [("topic", "topic", None), ("partition", "partition", None),
            *((k.replace("_", " "), k, integer) for k in AUDIT_FIGURES if k != "missing")]
    topics = [("topic", "topic", None), ("acknowledged", "acked", integer), ("missing", "missing", integer),
              ("producers", "producers", integer)]
    return head + table(audit["partitions"], cols) + table(audit["per_topic"], topics)


def write(out: Path, a: dict) -> dict:
    summary = summary_rows(a) + audit_summary_rows(a.get("audit"))
    write_summary(summary, out / "summary.csv")
    s = a["series"]
    files = {
        "throughput": plots.throughput(s["throughput"], out),
        "latency": plots.latency(s["latency"], a["api_latency"], out),
        "producer_state": plots.producer_state(s["producer_state"], out),
        "quotas": plots.quotas(s["quotas"], out),
        "transactions": plots.transactions(s["transactions"], out),
        "share": plots.share(s["share"], a["delivery"], out),
    }
    has_data = {
        "producer_state": any(r.get("entries_peak") for r in a["producer_state"].values()),
        "quotas": a["users"] is not None and len(a["users"]) > 0,
        "transactions": _has_counts(a["transactions"], ("commits", "aborts", "fenced", "epoch_bumps",
                                                         "idempotent_epoch_bumps")),
        "share": a["expiries"] is not None and len(a["expiries"]) > 0,
    }
    tables = {"producer_state": _seed000, "quotas": _seed002, "transactions": _seed003, "share": _seed004}
    i = a["input"]
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>kipper metrics report</title>",
        "<style>body{font-family:sans-serif;margin:2em;max-width:1250px;color:#222}"
        "table.t{border-collapse:collapse;font-size:13px;margin:.5em 0}"
        "table.t td,table.t th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
        "table.t th{background:#f4f4f4}"
        "table.t .x{text-align:left}table.headline td:nth-child(3){color:#666}"
        ".note{color:#666}.look{margin:.3em 0 .6em}img{max-width:100%}details{margin-top:2em}</style>"
        "</head><body>",
        "<h1>kipper metrics report</h1>",
        note(f"{integer(i['lines'])} dump lines from {integer(i['files'])} input(s)"
             + (f", {integer(i['corrupt'])} unreadable" if i["corrupt"] else "")
             + f"; plots use {number(i['step_s'])}-second buckets; analysed in {number(a['seconds'], 1)} s. "
             "Tables are also in tables/ (Parquet) and the figures in summary.csv."),
        headline(a),
        "<h2>Load generator and broker</h2>", client_vs_broker(a),
        "<h2>Audit</h2>", audit_section(a.get("audit")),
        "<h2>Throughput</h2>",
        _img(files["throughput"], "throughput") if files["throughput"] else note("No data: nothing was produced."),
        _throughput(a),
        "<h2>Request latency</h2>",
        _img(files["latency"], "latency") if files["latency"] else note("No data: no request was answered."),
        _latency(a),
    ]
    for title, key, look, empty in SEEDS:
        parts.append(f"<h2>{html.escape(title)}</h2>")
        if not has_data[key]:
            parts.append(note(empty))
            continue
        parts.append(f"<p class=look>{html.escape(look)}</p>")
        parts.append(_img(files[key], title) if files[key] else note("No data over time to plot."))
        parts.append(tables[key](a))
    parts.append("<details><summary>All figures (summary.csv)</summary>")
    parts.append(table([{"section": sec, "metric": m, "value": _cell(v), "unit": u} for sec, m, v, u in summary],
                       [("section", "section", None), ("metric", "metric", None), ("value", "value", None),
                        ("unit", "unit", None)]))
    parts.append("</details></body></html>")
    (out / "report.html").write_text("\n".join(parts), encoding="utf-8")
    return {"summary": summary, "plots": {k: v for k, v in files.items() if v}}


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    return number(v, 3)


def _img(name: str, alt: str) -> str:
    return f'<img src="{html.escape(name)}" alt="{html.escape(alt)}">'
