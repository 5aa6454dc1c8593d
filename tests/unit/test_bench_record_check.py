"""benchmarks/record_check.py keeps measuring what it says: every codec, every installed
form of the parser, on batches the parser accepts."""

from __future__ import annotations

from benchmarks import record_check as bench
from kipper.protocol import record_check


def test_a_small_run_reports_every_codec_and_form():
    out = bench.measure(n_records=50, size=100, rounds=1, min_records=100)
    assert list(out) == ["none", "gzip", "snappy", "lz4", "zstd"]
    for codec, figures in out.items():
        expected = {"batch_bytes", "crc", *record_check.SCANS} | ({"decompress"} if codec != "none" else set())
        assert set(figures) == expected
        assert all(v > 0 for v in figures.values())
    assert out["none"]["batch_bytes"] > out["zstd"]["batch_bytes"]  # the values compress
    assert "| none |" in bench.table(out)


def test_values_are_the_size_asked_for():
    assert {len(v) for v in bench.values(500, 100)} == {100}
