"""A small partition-assigning consumer for tools and tests.

No group membership: it reads the partitions it is given (all of a topic's
by default) from the earliest or latest offset, with plain Fetch requests.
Control batches are skipped, as every Kafka consumer does.
"""

from __future__ import annotations

from kipper.client.admin import metadata
from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, fetch_records, list_offsets
from kipper.protocol import records
from kipper.protocol.errors import KafkaError

EARLIEST, LATEST = EARLIEST_TIMESTAMP, LATEST_TIMESTAMP


class Consumer:
    def __init__(self, bootstrap: str, topic: str, *, partitions: list[int] | None = None,
                 start: int = EARLIEST, client_id: str = "kipper-consumer"):
        self.topic = topic
        self.conn = connect_any(bootstrap, client_id=client_id)
        t = metadata(self.conn, [topic]).topics[0]
        if t.error_code:
            raise KafkaError(t.error_code, f"topic {topic}")
        available = sorted(p.partition_index for p in t.partitions)
        self.partitions = partitions if partitions is not None else available
        missing = set(self.partitions) - set(available)
        if missing:
            raise ValueError(f"topic {topic} has no partition(s) {sorted(missing)}")
        self.positions = {p: self._list_offset(p, start) for p in self.partitions}

    def _list_offset(self, partition: int, timestamp: int) -> int:
        p = list_offsets(self.conn, {(self.topic, partition): timestamp}).topics[0].partitions[0]
        if p.error_code:
            raise KafkaError(p.error_code, f"ListOffsets {self.topic}-{partition}")
        return p.offset

    def poll(self, timeout_ms: int = 500, max_bytes: int = 1 << 20) -> list[tuple[int, records.Record]]:
        """Records from every assigned partition: (partition, record) pairs."""
        return fetch_records(self.conn, self.topic, self.positions, max_wait_ms=timeout_ms, max_bytes=max_bytes)

    def seek(self, partition: int, offset: int) -> None:
        """Read ``partition`` from ``offset`` on."""
        self.positions[partition] = offset

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
