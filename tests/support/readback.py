"""Read a whole topic back with the project's own blocking connection, so a
test's verdict does not depend on the client under test."""

from __future__ import annotations

import time

from kipper.client.blocking import BlockingConnection, parse_bootstrap
from kipper.protocol import records


def read_topic(bootstrap: str, topic: str) -> dict[int, list[records.Record]]:
    host, port = parse_bootstrap(bootstrap)[0]
    out: dict[int, list[records.Record]] = {}
    with BlockingConnection(host, port) as conn:
        meta = conn.request(3, {"topics": [{"name": topic}], "allow_auto_topic_creation": False},
                            max_version=9)
        partitions = sorted(p.partition_index for p in meta.topics[0].partitions)
        for partition in partitions:
            offset = 0
            got: list[records.Record] = []
            while True:
                resp = conn.request(1, {
                    "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 26,
                    "isolation_level": 0, "session_id": 0, "session_epoch": -1,
                    "topics": [{"topic": topic, "partitions": [{
                        "partition": partition, "fetch_offset": offset, "log_start_offset": -1,
                        "partition_max_bytes": 1 << 24}]}],
                    "forgotten_topics_data": [], "rack_id": ""}, max_version=12)
                p = resp.responses[0].partitions[0]
                assert p.error_code == 0, f"fetch error {p.error_code}"
                batches = records.decode_all(p.records or b"")
                new = [r for b in batches if not b.header.is_control
                       for r in b.records if r.offset >= offset]
                if batches:
                    offset = max(offset, batches[-1].header.last_offset + 1)
                got.extend(new)
                if offset >= p.high_watermark or not batches:
                    break
            out[partition] = got
    return out


def wait_until_stable(bootstrap: str, topic: str, partitions: int, timeout: float = 10.0) -> None:
    """Until the broker has ended every open transaction on ``topic``: the
    read_committed end (LSO) equals the read_uncommitted one, for each partition."""
    host, port = bootstrap.rsplit(":", 1)
    with BlockingConnection(host, int(port)) as conn:
        deadline = time.time() + timeout
        while time.time() < deadline:
            ends = [[p.offset for p in conn.request(2, {
                "replica_id": -1, "isolation_level": level, "topics": [{"name": topic, "partitions": [
                    {"partition_index": p, "timestamp": -1} for p in range(partitions)]}]},
                max_version=7).topics[0].partitions] for level in (0, 1)]
            if ends[0] == ends[1]:
                return
            time.sleep(0.05)
    raise AssertionError(f"a transaction on {topic} is still open after {timeout}s")
