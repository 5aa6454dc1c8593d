"""The report's "Audit" section and its summary rows, from the audit's JSON
(spark_jobs/audit.py; given with --audit, or inside a --loadgen result)."""

from __future__ import annotations

import html

from kipper.spark_jobs.report import integer, note, table

FIGURES = ("records", "distinct", "duplicates", "missing", "misordered", "aborted_seen")


def summary_rows(audit: dict | None) -> list[tuple[str, str, object, str]]:
    if not audit:
        return []
    t = audit["totals"]
    return [("audit", "verdict", audit["verdict"], ""), ("audit", "acked", int(t["acked"]), "records"),
            *(("audit", k, int(t[k]), "records") for k in FIGURES)]


def section(audit: dict | None) -> str:
    if not audit:
        return note("No audit given: the loadgen's result carries one (or run spark_jobs/audit.py and pass "
                    "--audit audit.json).")
    t = audit["totals"]
    verdict = ("every acknowledged record was read exactly once, in its producer's order"
               if audit["verdict"] == "clean" else
               "FAILED: " + ", ".join(f"{integer(t[k])} {k.replace('_', ' ')}" for k in FIGURES[2:] if t[k]))
    head = (f"<p class=look>Read back with Spark's Kafka connector (read_committed) against the "
            f"{html.escape(audit['against'])}: {integer(t['records'])} records read, {integer(t['acked'])} "
            f"acknowledged; {html.escape(verdict)}.</p>")
    cols = [("topic", "topic", None), ("partition", "partition", None),
            *((k.replace("_", " "), k, integer) for k in FIGURES if k != "missing")]
    topics = [("topic", "topic", None), ("acknowledged", "acked", integer), ("missing", "missing", integer),
              ("producers", "producers", integer)]
    return head + table(audit["partitions"], cols) + table(audit["per_topic"], topics)
