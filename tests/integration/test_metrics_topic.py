"""metrics.dump.topic: each metrics dump line is also a record of a topic (key node.id,
the line as JSON value), appended through the partition's write path; the same lines as
the dump files, the last interval included, kept across a restart of a durable broker,
and not counted as Produce traffic."""

from __future__ import annotations

import json

from kipper.client.producer import Producer
from tests.support.broker import BrokerProcess
from tests.support.readback import read_topic

TOPIC = "_kipper-metrics"


def file_lines(directory) -> list[dict]:
    out = []
    for path in sorted(directory.glob("metrics-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1])):
        out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


def test_every_dump_line_is_a_record_of_the_metrics_topic_across_a_restart(tmp_path):
    dumps = tmp_path / "dumps"
    broker = BrokerProcess({"metrics.dump.dir": str(dumps), "metrics.dump.topic": TOPIC,
                            "metrics.dump.interval.ms": "200", "log.dirs": str(tmp_path / "data"),
                            "node.id": "3"}).start()
    try:
        p = Producer({"bootstrap.servers": broker.bootstrap})
        for i in range(500):
            p.send("orders", b"v%d" % i)
        assert p.flush(10) == 0
        p.close()
        assert broker.stop() == 0
        broker.start()  # the durable log kept the topic; a restart appends to it
        assert broker.stop() == 0
        broker.start()
        records = read_topic(broker.bootstrap, TOPIC)[0]
    finally:
        broker.stop()
    published = [json.loads(r.value) for r in records]
    assert {r.key for r in records} == {b"3"}
    # the files of both runs and the topic hold the same lines, in order, the final intervals too
    assert published == file_lines(dumps)[:len(published)] and len(published) >= len(file_lines(dumps)) - 1
    assert sum(1 for line in published if line["interval_ms"] and line.get("totals")) == len(published)
    # broker-written lines are not Produce traffic: records_in counts the 500 records only
    first_run = [line for line in published if line["totals"]["records_in"]]
    assert first_run and max(line["totals"]["records_in"] for line in published) == 500
    assert TOPIC not in {p["topic"] for line in published for p in line["partitions"]}
