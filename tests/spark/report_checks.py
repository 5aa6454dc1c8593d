"""What every report.html must look like: counts as integers, times as UTC
datetimes, no raw epoch milliseconds, nothing loaded from the network."""

from __future__ import annotations

import re

EPOCH_MS = re.compile(r"\b1[5-9]\d{11}\b|\b1[5-9]\d,\d{3},\d{3},\d{3},\d{3}\b")
COUNT_UNITS = ("records", "lines", "requests", "entries", "ids", "transactions", "bumps", "batches", "answers",
               "bytes", "brokers", "files", "share-partitions")


def summary_cells(html: str) -> list[tuple[str, str, str, str]]:
    """(section, metric, value, unit) rows of the page's summary table."""
    body = html.split("<summary>All figures", 1)[1]
    return re.findall(r"<tr><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td></tr>",
                      body)


def check_report(html: str) -> None:
    assert not EPOCH_MS.search(html), EPOCH_MS.search(html).group(0)
    cells = summary_cells(html)
    counts = [c for c in cells if c[3] in COUNT_UNITS]
    assert len(counts) > 10
    for section, metric, value, unit in counts:
        assert re.fullmatch(r"-|\d{1,3}(,\d{3})*", value), (section, metric, value)
    times = [v for _, m, v, u in cells if u == "UTC"]
    assert times and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", t) for t in times)
    assert re.search(r"<td class=\"x\">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC to ", html)  # the headline's range
    assert "http://" not in html and "https://" not in html  # nothing fetched from the network
