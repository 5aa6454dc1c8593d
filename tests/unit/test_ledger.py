"""spark_jobs/ledger.py and the audit's table: record identities, a producer's ledger as
ranges of counters by outcome, and what makes an audit fail (no Spark needed)."""

from __future__ import annotations

from kipper.spark_jobs.audit_report import problems, table
from kipper.spark_jobs.ledger import ABORTED, ACKED, FAILED, GROW, Ledger, count, identity, ranges, uid


def test_a_value_carries_its_producer_and_counter_in_front_of_the_payload():
    led = Ledger(uid(3, 7), "steady", ["orders"])
    value = led.value(led.next(), b"payload")
    assert identity(value) == (3 << 32 | 7, 0) and value.endswith(b"payload") and len(value) == 27
    assert identity(b"not a loadgen record at all") is None and identity(b"kpr1") is None


def test_the_ledger_reports_each_outcome_as_ranges_of_counters():
    led = Ledger(uid(0, 1), "transactional", ["t"])
    for _ in range(GROW + 10):  # past the first allocation
        led.next()
    led.settle(0, 99, ACKED)
    led.settle(100, 149, ABORTED)
    led.status[150] = FAILED
    led.settle(151, GROW + 5, ACKED)
    out = led.result()
    assert out["sent"] == GROW + 10
    assert out["acked"] == [[0, 99], [151, GROW + 5]] and out["aborted"] == [[100, 149]]
    assert out["failed"] == [[150, 150]] and out["unacknowledged"] == [[GROW + 6, GROW + 9]]
    assert count(out["acked"]) + count(out["aborted"]) + count(out["failed"]) + count(out["unacknowledged"]) \
        == out["sent"]


def test_ranges_of_an_alternating_status():
    assert ranges(bytes([1, 0, 1, 1, 0]), 1) == [[0, 0], [2, 3]] and ranges(b"", 1) == []


def _report(**totals) -> dict:
    base = dict.fromkeys(("records", "distinct", "duplicates", "misordered", "aborted_seen", "unmarked",
                          "unexpected", "stored_unacknowledged", "acked", "missing"), 0)
    base.update(totals)
    row = {"topic": "t", "partition": 0, **{k: v for k, v in base.items() if k not in ("acked", "missing")}}
    return {"topics": ["t"], "against": "loadgen ledgers", "verdict": "clean" if not problems_of(base) else "FAILED",
            "totals": base, "partitions": [row],
            "per_topic": [{"topic": "t", "acked": base["acked"], "missing": base["missing"], "producers": 1}],
            "producers": [{"uid": 5, "role": "steady", "missing": base["missing"], "missing_examples": [4]}]}


def problems_of(t: dict) -> bool:
    return any(t[k] for k in ("duplicates", "missing", "misordered", "aborted_seen"))


def test_an_audit_fails_on_duplicates_missing_misordered_and_aborted_records_only():
    assert problems(_report(records=10, distinct=10, acked=10)) == []
    assert problems(_report(records=10, distinct=10, acked=10, unmarked=3, stored_unacknowledged=2)) == []
    found = problems(_report(records=11, distinct=10, duplicates=1, acked=11, missing=1, misordered=2,
                             aborted_seen=1))
    assert found[:4] == ["1 record(s) duplicated", "1 record(s) acknowledged but missing",
                         "2 record(s) out of their producer's order", "1 record(s) read from aborted transactions"]
    assert found[4] == "producer 0x5 (steady) misses 1, first counters 4"
    text = table(_report(records=11, distinct=10, duplicates=1, acked=11, missing=1))
    assert text.splitlines()[-1].startswith("verdict: FAILED: 1 record(s) duplicated")
    assert "t: 11 acknowledged by 1 producer(s), 1 missing" in text
