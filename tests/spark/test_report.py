"""report.html from analysis figures, without Spark: what an empty section says,
and how counts, times and the loadgen comparison are printed."""

from __future__ import annotations

import pandas as pd

from kipper.spark_jobs import report
from tests.spark.report_checks import check_report, summary_cells

T0 = 1_795_497_454_622  # 2026-11-24 05:17:34.622 UTC


def analysis(**more) -> dict:
    empty = pd.DataFrame()
    a = {
        "input": {"lines": 120, "corrupt": 0, "files": 1, "brokers": [1], "t0_ms": T0, "t1_ms": T0 + 59_500,
                  "step_s": 1.0},
        "totals": {"records_in": 12_000, "bytes_in": 2_400_000, "records_out": 0, "bytes_out": 0,
                   "wall_s": 60.0, "peak_in_per_s": 400.0},
        "brokers": {1: {"records_in": 12_000, "bytes_in": 2_400_000}},
        "topics": pd.DataFrame([{"topic": "t", "partitions": 3, "records_in": 12_000, "bytes_in": 2_400_000,
                                 "records_out": 0, "bytes_out": 0}]),
        "api_latency": pd.DataFrame([{"api": "Produce", "requests": 600, "mean_us": 150.5, "p50_us": 112,
                                      "p90_us": 200, "p99_us": 416, "p999_us": 900, "max_us": 1_200}]),
        "users": empty, "producer_state": {1: {"entries_first": 0, "entries_last": 0, "entries_peak": None,
                                               "bytes_last": 0}},
        "transactions": {1: {"commits": 0, "aborts": 0, "fenced": 0, "timed_out": 0, "epoch_bumps": 0,
                             "idempotent_epoch_bumps": 0, "producer_state_fencings": 0, "transactional_ids": 0}},
        "delivery": empty, "expiries": empty,
        "series": {"throughput": pd.DataFrame({"t_ms": [T0, T0 + 1000], "records_in_per_s": [200.0, 400.0],
                                               "records_out_per_s": [0.0, 0.0]}),
                   "latency": empty, "producer_state": empty, "quotas": empty, "transactions": empty,
                   "share": empty},
        "loadgen": None, "run_topics_in": None, "seconds": 1.5,
    }
    a.update(more)
    return a


def test_a_seed_section_without_data_says_so_in_one_line_and_draws_nothing(tmp_path):
    out = report.write(tmp_path, analysis())
    html = (tmp_path / "report.html").read_text()
    for line in ("No data: no idempotent producer wrote to these brokers.",
                 "No data: no user had a producer_ids_rate quota while these dumps were written.",
                 "No data: no transaction and no epoch bump in these dumps.",
                 "No data: no share group read from these brokers."):
        assert html.count(line) == 1
    assert set(out["plots"]) == {"throughput"}
    assert not any((tmp_path / f).exists() for f in ("producer_state.png", "quotas.png", "transactions.png",
                                                     "share.png"))
    check_report(html)


def test_the_headline_has_the_utc_range_duration_rates_and_units(tmp_path):
    report.write(tmp_path, analysis())
    html = (tmp_path / "report.html").read_text()
    headline = html.split('<table class="t headline">', 1)[1].split("</table>", 1)[0]
    assert "2026-11-24 05:17:34 UTC to 05:18:34 UTC" in headline
    for figure, value, unit in (("duration", "60", "s"), ("records in", "12,000 (2.40 MB)", "records"),
                                ("mean rate in", "200", "records/s"), ("peak rate in", "400 (in 1-s buckets)",
                                                                       "records/s")):
        assert f"<td class=\"x\">{figure}</td><td class=\"x\">{value}</td><td class=\"x\">{unit}</td>" in headline
    assert "not known: no loadgen result given" in headline


def test_the_loadgen_result_sits_next_to_the_brokers_figures(tmp_path):
    lg = {"workload": "seeds", "master": "spark://h:7077", "acked": 12_000, "sent": 12_050, "failed": 50,
          "unacknowledged": 0, "stored_records": 12_000, "topics": ["t"],
          "latency": {"p50_ms": 5.12, "p99_ms": 18.432, "max_ms": 127.859}}
    report.write(tmp_path, analysis(loadgen=lg, run_topics_in=12_000))
    html = (tmp_path / "report.html").read_text()
    assert "yes: 12,000 acked by the load generator, 12,000 stored (read back), 12,000 in the dumps" in html
    assert "<td class=\"x\">latency p99</td><td class=\"x\">18.43</td><td class=\"x\">0.42</td>" in html
    rows = {(s, m): (v, u) for s, m, v, u in summary_cells(html)}
    assert rows[("loadgen", "acked")] == ("12,000", "records")
    report.write(tmp_path, analysis(loadgen={**lg, "stored_records": 11_999}, run_topics_in=12_000))
    assert "NO: 12,000 acked" in (tmp_path / "report.html").read_text()


def test_formatting_of_counts_rates_and_times():
    assert report.integer(1234567.0) == "1,234,567" and report.integer(None) == "-"
    assert report.number(2.0) == "2" and report.number(2.25, 2) == "2.25"
    assert report.utc(T0) == "2026-11-24 05:17:34 UTC" and report.iso_utc(T0) == "2026-11-24T05:17:34.622Z"
    assert report.duration(45.4) == "45" and report.duration(263) == "263 (4 min 23 s)"


def series(n: int = 5, **cols) -> pd.DataFrame:
    return pd.DataFrame({"t_ms": [T0 + 1000 * i for i in range(n)], **{k: [v] * n for k, v in cols.items()}})


def test_every_plot_has_a_legend_and_labelled_axes(tmp_path, monkeypatch):
    from kipper.spark_jobs import plots

    seen = []

    def check(fig, path):
        for ax in fig.axes:
            twin = [o for o in fig.axes if o is not ax and o.bbox.bounds == ax.bbox.bounds]
            assert ax.get_ylabel(), (path.name, ax.get_title())
            assert ax.get_xlabel() or twin, (path.name, ax.get_title())
            assert ax.get_legend() is not None or any(o.get_legend() is not None for o in twin), path.name
        seen.append(path.name)
        return path.name

    monkeypatch.setattr(plots, "_save", check)
    full = {
        "throughput": series(records_in_per_s=5.0, records_out_per_s=1.0),
        "latency": pd.concat([series(api="Produce", p50_us=100, p99_us=400, max_us=900)]),
        "producer_state": series(entries=4, bytes=180, duplicates=0, producer_ids_allocated=9),
        "quotas": series(user="ANONYMOUS", admitted=8, throttled=3, producer_id_rate=2.5, quota=2.0),
        "transactions": series(commits=3, aborts=1, fenced=1, epoch_bumps=2, idempotent_epoch_bumps=0,
                               producer_state_fencings=0),
        "share": series(in_flight=20, acquired=5, archived=1, lock_expiries=2),
    }
    delivery = pd.DataFrame([{"group": "g", "delivery_count": 1, "records_peak": 90},
                             {"group": "g", "delivery_count": 2, "records_peak": 4}])
    report.write(tmp_path, analysis(series=full, delivery=delivery))
    assert seen == ["throughput.png", "latency.png", "producer_state.png", "quotas.png", "transactions.png",
                    "share.png"]
    # half the data: one plot each, still labelled, never empty axes
    seen.clear()
    half = {**full, "transactions": series(commits=3, aborts=1, fenced=0, epoch_bumps=0, idempotent_epoch_bumps=0,
                                           producer_state_fencings=0), "share": pd.DataFrame()}
    report.write(tmp_path, analysis(series=half, delivery=delivery))
    assert "transactions.png" in seen and "share.png" in seen
