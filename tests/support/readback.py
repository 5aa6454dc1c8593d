"""Read a whole topic back with the project's own blocking connection, so a
test's verdict does not depend on the client under test."""

from __future__ import annotations

import time

from kipper.client.admin import metadata
from kipper.client.blocking import BlockingConnection, parse_bootstrap
from kipper.client.consumer_requests import LATEST_TIMESTAMP, READ_COMMITTED, READ_UNCOMMITTED, fetch, list_offsets
from kipper.protocol import records


def read_topic(bootstrap: str, topic: str, start: int = 0) -> dict[int, list[records.Record]]:
    """Every partition's records from offset ``start`` (a log start DeleteRecords moved)."""
    host, port = parse_bootstrap(bootstrap)[0]
    out: dict[int, list[records.Record]] = {}
    with BlockingConnection(host, port) as conn:
        meta = metadata(conn, [topic])
        partitions = sorted(p.partition_index for p in meta.topics[0].partitions)
        for partition in partitions:
            offset = start
            got: list[records.Record] = []
            while True:
                resp = fetch(conn, {(topic, partition): offset})
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


def read_committed(bootstrap: str, topic: str) -> dict[int, list[records.Record]]:
    """What a read_committed consumer reads of ``topic``, as Kafka's consumer reads it: the
    batches below the last stable offset, less those of the aborted transactions the broker
    lists (a producer's batches from the listed first offset up to its ABORT marker)."""
    host, port = parse_bootstrap(bootstrap)[0]
    out: dict[int, list[records.Record]] = {}
    with BlockingConnection(host, port) as conn:
        partitions = sorted(p.partition_index for p in metadata(conn, [topic]).topics[0].partitions)
        for partition in partitions:
            offset, got, aborting = 0, [], set()
            while True:
                p = fetch(conn, {(topic, partition): offset}, isolation_level=READ_COMMITTED).responses[0].partitions[0]
                assert p.error_code == 0, f"fetch error {p.error_code}"
                starts = sorted((a.first_offset, a.producer_id) for a in p.aborted_transactions or ())
                batches = records.decode_all(p.records or b"")
                for batch in batches:
                    h = batch.header
                    while starts and starts[0][0] <= h.last_offset:
                        aborting.add(starts.pop(0)[1])
                    if h.is_control:
                        if records.control_type(batch.records[0].key) == records.ABORT:
                            aborting.discard(h.producer_id)
                    elif not (h.is_transactional and h.producer_id in aborting):
                        got.extend(r for r in batch.records if r.offset >= offset)
                if batches:
                    offset = max(offset, batches[-1].header.last_offset + 1)
                if offset >= p.last_stable_offset or not batches:
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
            ends = [[p.offset for p in list_offsets(
                conn, {(topic, p): LATEST_TIMESTAMP for p in range(partitions)}, isolation_level=level,
            ).topics[0].partitions] for level in (READ_UNCOMMITTED, READ_COMMITTED)]
            if ends[0] == ends[1]:
                return
            time.sleep(0.05)
    raise AssertionError(f"a transaction on {topic} is still open after {timeout}s")
