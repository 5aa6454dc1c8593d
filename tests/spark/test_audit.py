"""spark_jobs/audit.py can fail: records written with raw Produce requests (a duplicate,
a gap, two records out of order) are each reported and the audit exits 1; and a durable
broker SIGKILLed and restarted during a loadgen run keeps the audit's verdict clean for
every acknowledged record."""

from __future__ import annotations

import json
import threading
import time

import pytest

from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import list_offsets
from kipper.client.producer_requests import produce
from kipper.protocol import records
from kipper.spark_jobs.ledger import IDENTITY, MAGIC, synthetic, uid
from tests.spark.conftest import output_lines, spark_submit
from tests.support.broker import BrokerProcess
from tests.support.topics import create_topics

# the first test also waits for the shared Spark fixtures (a loadgen run with its audit, a JVM);
# on a busy 2-core machine that alone can pass the suite's 300 s
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def marked(u: int, counter: int) -> bytes:
    return IDENTITY.pack(MAGIC, u, counter) + b"payload"


def raw_produce(bootstrap: str, topic: str, partition: int, values: list[bytes]) -> None:
    """One plain (non-idempotent) batch: the broker stores exactly what it is given."""
    with connect_any(bootstrap) as conn:
        body = produce(conn, {(topic, partition): records.build_batch([(None, v, 0) for v in values])})
        assert body.responses[0].partition_responses[0].error_code == 0


def test_a_duplicate_a_gap_and_a_misordered_pair_fail_the_audit(tmp_path):
    first, second = uid(0, 0), uid(1, 0)
    with BrokerProcess() as broker:
        create_topics(broker.bootstrap, "audit-bad", partitions=2)
        # partition 0: counters 0..19 of the first producer without 7, and 3 a second time
        raw_produce(broker.bootstrap, "audit-bad", 0, [marked(first, c) for c in range(20) if c != 7])
        raw_produce(broker.bootstrap, "audit-bad", 0, [marked(first, 3)])
        # partition 1: the second producer's 0..9 with 5 stored before 4
        raw_produce(broker.bootstrap, "audit-bad", 1, [marked(second, c) for c in (0, 1, 2, 3, 5, 4, 6, 7, 8, 9)])
        result = tmp_path / "loadgen.json"
        result.write_text(json.dumps({"topics": ["audit-bad"], "producers": [
            synthetic(first, "steady", ["audit-bad"], 20), synthetic(second, "steady", ["audit-bad"], 10)]}))
        proc = spark_submit("audit.py", "--bootstrap-server", broker.bootstrap, "--result", str(result),
                            "--output", str(tmp_path / "audit.json"), "--master", "local[2]", timeout=240)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "audit.json").read_text())
    t = report["totals"]
    assert (t["records"], t["distinct"], t["duplicates"], t["missing"], t["misordered"]) == (30, 29, 1, 1, 1)
    rows = {p["partition"]: p for p in report["partitions"]}
    assert rows[0]["duplicates"] == 1 and rows[0]["misordered"] == 0
    assert rows[1]["misordered"] == 1 and rows[1]["duplicates"] == 0
    (short,) = [p for p in report["producers"] if p["missing"]]
    assert short["uid"] == first and short["missing_examples"] == [7]
    assert report["verdict"] == "FAILED"
    lines = output_lines(proc)
    assert "verdict: FAILED: 1 record(s) duplicated; 1 record(s) acknowledged but missing; 1 record(s) out of " \
           "their producer's order" in "\n".join(lines)
    assert any(x.startswith("audit: 1 record(s) duplicated") and "first counters 7" in x for x in lines), lines


CRASH_WORKLOAD = """\
name: crash
topics: 1
partitionsPerTopic: 3
messageSize: 100
producersPerTopic: 2
producerRate: 3000
testDurationMinutes: 0.25
keyDistributor: KEY_ROUND_ROBIN
"""


def _end_offsets(bootstrap: str, topic_prefix: str) -> int:
    from kipper.client.admin import metadata

    with connect_any(bootstrap, timeout=2.0) as conn:
        names = [t.name for t in metadata(conn).topics if t.name.startswith(topic_prefix)]
        if not names:
            return 0
        body = list_offsets(conn, {(n, p): -1 for n in names for p in range(3)})
        return sum(p.offset for t in body.topics for p in t.partitions if not p.error_code)


def test_a_broker_killed_and_restarted_during_a_durable_run_loses_and_repeats_no_acknowledged_record(tmp_path):
    workload = tmp_path / "crash.yaml"
    workload.write_text(CRASH_WORKLOAD)
    broker = BrokerProcess({"log.dirs": str(tmp_path / "data")}).start()
    killed = {}

    def crash():
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:  # a third of the way through the load: kill -9, then start again
            try:
                if _end_offsets(broker.bootstrap, "loadgen-") >= 12_000:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        killed["at"] = _end_offsets(broker.bootstrap, "loadgen-")
        broker.kill()
        time.sleep(1.0)
        broker.start()
        killed["restarted"] = True

    crasher = threading.Thread(target=crash, daemon=True)
    crasher.start()
    try:
        proc = spark_submit("loadgen.py", "--bootstrap-server", broker.bootstrap, "--workload", str(workload),
                            "--master", "local[2]", "--output", str(tmp_path / "r.json"), timeout=300)
        crasher.join(10)
    finally:
        broker.stop()
    assert killed.get("restarted"), proc.stdout + proc.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    audit = result["audit"]
    assert audit["verdict"] == "clean", proc.stdout + proc.stderr
    t = audit["totals"]
    assert t["duplicates"] == t["missing"] == t["misordered"] == 0 and t["acked"] == result["acked"]
    assert result["acked"] > killed["at"] and t["distinct"] >= result["acked"]
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the producers retried through the restart
