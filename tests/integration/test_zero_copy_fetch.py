"""A durable broker answers Fetch with sendfile (issue 41): records read back through a
real socket are the records produced, and the metrics dump counts the bytes the kernel sent
from the segment files (``totals.bytes_out_sendfile``) as the whole of what Fetch sent."""

from __future__ import annotations

import json

from kipper.client.producer import Producer
from tests.support.broker import BrokerProcess
from tests.support.readback import read_topic


def _last_totals(directory) -> dict:
    lines = []
    for path in sorted(directory.glob("metrics-*.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines()]
    return lines[-1]["totals"]


def test_records_read_from_segment_files_go_out_with_sendfile_and_are_the_records_produced(tmp_path):
    dumps = tmp_path / "dumps"
    broker = BrokerProcess({"log.dirs": str(tmp_path / "data"), "metrics.dump.dir": str(dumps),
                            "metrics.dump.interval.ms": "100", "log.segment.bytes": "1048576"}).start()
    values = [b"%06d" % i + b"x" * 200 for i in range(20_000)]  # about 4 MB: several segments
    try:
        p = Producer({"bootstrap.servers": broker.bootstrap})
        for v in values:
            p.send("zc", v)
        assert p.flush(30) == 0
        p.close()
        got = [r.value for r in read_topic(broker.bootstrap, "zc")[0]]
        assert broker.stop() == 0  # the last dump line is written at the stop
    finally:
        broker.stop()
    assert got == values
    totals = _last_totals(dumps)
    assert totals["bytes_out"] > 4_000_000
    assert totals["bytes_out_sendfile"] == totals["bytes_out"]
