"""benchmarks/produce_path.py keeps measuring what it says: a small run through a whole
broker appends every record it sends and reports each figure."""

from __future__ import annotations

from benchmarks import produce_path


def test_a_small_run_stores_every_record_and_reports_every_figure():
    out = produce_path.measure(requests=640, n_batches=2)
    rounds = produce_path.ROUNDS
    per_round = 640 // rounds
    connection = per_round // 64 * 64 * rounds
    assert out.pop("records_stored") == per_round * rounds * 2 + connection + 2 * 9000
    assert set(out) == {"dispatch_us", "idempotent_us", "connection_us", "batches_cpu_s_per_million",
                        "batches_copy_cpu_s_per_million"}
    assert all(v > 0 for v in out.values())


def test_the_command_runs_each_candidate_in_its_own_process_and_prints_the_table():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(produce_path.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "benchmarks.produce_path", "--requests", "640"], cwd=root,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "| single-record Produce, dispatch only, us CPU |" in out.stdout
    assert f"this: records stored: {640 * 2 + 640 // 5 // 64 * 64 * 5 + 60 * 9000}" in out.stdout
