"""broker/metrics_dump.py: stamping, the writer thread, rotation, and a loop
that never waits for (or touches) the disk."""

from __future__ import annotations

import json
import threading

import pytest

import kipper.broker.metrics_dump as md
from kipper.broker.metrics import Metrics
from kipper.broker.metrics_dump import MetricsDumper, normalize_quotas, normalize_share


def lines_in(directory) -> list[dict]:
    out = []
    for path in sorted(directory.glob("metrics-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1])):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


def make(tmp_path, **kwargs) -> tuple[Metrics, MetricsDumper]:
    m = Metrics()
    clock = iter(range(1_000, 10_000_000, 1)).__next__
    mono = iter(x / 2 for x in range(0, 10_000_000)).__next__  # 500 ms per interval
    d = MetricsDumper(m, 7, tmp_path, max_bytes=kwargs.pop("max_bytes", 1 << 20),
                      max_files=kwargs.pop("max_files", 10), clock=clock, monotonic=mono, **kwargs)
    return m, d


def test_each_tick_appends_one_stamped_line_with_the_interval_counts(tmp_path):
    m, d = make(tmp_path)
    d.start()
    m.record_in("orders", 0, 1000, 10)
    m.observe_request("Produce", 300)
    d.tick()
    m.record_in("orders", 0, 500, 5)
    d.tick()
    d.close()
    first, second, last = lines_in(tmp_path)
    assert first["schema"] == md.SCHEMA_VERSION and first["broker_id"] == 7
    assert first["interval_ms"] == 500 and second["ts_ms"] > first["ts_ms"]
    assert first["partitions"][0]["records_in"] == 10 and second["partitions"][0]["records_in"] == 5
    assert first["apis"]["Produce"]["count"] == 1 and "Produce" not in second["apis"]
    assert last["partitions"] == [] and last["totals"]["records_in"] == 15  # the flush on close
    assert first["dump"] == {"dropped": 0}


def test_files_rotate_by_size_and_only_the_newest_are_kept(tmp_path):
    m, d = make(tmp_path, max_bytes=4096, max_files=3)
    d.start()
    for i in range(60):
        m.record_in(f"topic-{i}", 0, 100, 1)
        d.tick()
    d.close()
    files = sorted(tmp_path.glob("metrics-7-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    assert len(files) == 3
    assert all(p.stat().st_size <= 4096 for p in files)
    rows = lines_in(tmp_path)
    ts = [r["ts_ms"] for r in rows]
    assert ts == sorted(ts) and rows[-1]["totals"]["records_in"] == 60  # the newest survived
    assert len(rows) < 61  # the oldest files were deleted


def test_a_new_run_starts_a_new_file_after_the_existing_ones(tmp_path):
    (tmp_path / "metrics-7-4.jsonl").write_text('{"old":1}\n')
    (tmp_path / "metrics-8-9.jsonl").write_text('{"other broker":1}\n')
    m, d = make(tmp_path)
    d.start()
    d.tick()
    d.close()
    assert (tmp_path / "metrics-7-4.jsonl").read_text() == '{"old":1}\n'
    assert len((tmp_path / "metrics-7-5.jsonl").read_text().splitlines()) == 2
    assert (tmp_path / "metrics-8-9.jsonl").exists()


def test_the_loop_side_never_waits_for_a_stalled_writer_and_counts_what_it_drops(tmp_path):
    m, d = make(tmp_path, queue_lines=5)
    gate = threading.Event()
    real_write = d.writer._write

    def stalled(line):
        gate.wait(30)
        real_write(line)
    d.writer._write = stalled
    d.start()
    for _ in range(20):   # the writer holds one line and the queue five: the rest are dropped
        d.tick()          # returns although the writer is stuck (it would hang otherwise)
    assert d.dropped >= 14 and not list(tmp_path.glob("*.jsonl"))
    gate.set()
    d.close()
    rows = lines_in(tmp_path)
    assert len(rows) == 20 - d.dropped + 1
    assert rows[-1]["dump"]["dropped"] == d.dropped


def test_only_the_writer_thread_opens_files(tmp_path, monkeypatch):
    openers = []
    real_open = open

    def spy(*args, **kwargs):
        openers.append(threading.current_thread().name)
        return real_open(*args, **kwargs)
    monkeypatch.setattr(md, "open", spy, raising=False)
    m, d = make(tmp_path, max_bytes=4096)
    d.start()
    for i in range(30):
        m.record_in(f"t{i}", 0, 10, 1)
        d.tick()
    d.close()
    assert len(openers) >= 2 and set(openers) == {"kipper-metrics-dump"}


def test_an_unwritable_directory_is_logged_and_the_loop_side_keeps_going(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    m = Metrics()
    d = MetricsDumper(m, 1, blocker / "dumps", max_bytes=4096, max_files=2)
    d.start()
    d.tick()
    d.close()
    assert d.writer.failed and not (blocker / "dumps").exists()


def test_providers_are_included_and_quota_users_take_the_documented_shape(tmp_path):
    m, d = make(tmp_path)
    m.providers["quotas"] = lambda: {"users": {"alice": {
        "quota": 10.0, "ProducerIds": {"rate": 2.5, "tokens": 7.0, "throttle-time": 12.0},
        "admitted": 3, "filters": 1}}}
    m.providers["share"] = lambda: {"partitions": [{"group": "g", "topic": "t", "partition": 0,
                                                    "in_flight": 4}]}
    line = d.snapshot()
    assert line["quotas"]["users"] == [{"user": "alice", "quota": 10.0, "producer_id_rate": 2.5,
                                        "tokens": 7.0, "throttle_time_ms": 12.0, "admitted": 3,
                                        "filters": 1}]
    assert line["share"]["partitions"][0]["in_flight"] == 4


@pytest.mark.parametrize("value", [None, 3, {"users": None}, {}])
def test_malformed_provider_sections_become_empty_rows(value):
    assert normalize_quotas(value)["users"] == []
    assert normalize_share(value)["partitions"] == []


def test_the_derived_share_provider_counts_states_and_delivery_counts():
    from kipper.broker.config import load
    from kipper.broker.share.states import REJECT
    from kipper.broker.composition import build_broker
    from tests.unit.test_share_partition import LOCK, data, engine

    state = build_broker(load(overrides={"listeners": "PLAINTEXT://127.0.0.1:0"}))
    sp, log = engine(), data(10)
    sp.acquire("a", 0, log, max_records=10)      # 0-9 acquired, delivery count 1
    sp.expire(LOCK)                                # ... their locks run out: available again
    sp.acquire("a", LOCK, log, max_records=4)     # 0-3 acquired, delivery count 2
    sp.acknowledge("a", [(2, 3, [REJECT])], LOCK)  # 2-3 archived
    state.share.store.loaded[("g", "t", 0)] = sp
    row = state.share.partitions_snapshot()["partitions"][0]
    assert (row["acquired"], row["archived"], row["available"]) == (2, 2, 6)
    assert row["delivery_counts"] == {"2": 4, "1": 6}
    assert row["lock_expiries"] == 10
