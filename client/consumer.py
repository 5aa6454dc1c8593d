"""A small partition-assigning consumer for tools and tests.

No group membership: it reads the partitions it is given (all of a topic's
by default) from the earliest or latest offset, with plain Fetch requests.
Control batches are skipped, as every Kafka consumer does.
"""

from __future__ import annotations

from kipper.client.blocking import connect_any
from kipper.protocol import records
from kipper.protocol.errors import KafkaError

EARLIEST, LATEST = -2, -1


class Consumer:
    def __init__(self, bootstrap: str, topic: str, *, partitions: list[int] | None = None,
                 start: int = EARLIEST, client_id: str = "kipper-consumer"):
        self.topic = topic
        self.conn = connect_any(bootstrap, client_id=client_id)
        meta = self.conn.request(3, {"topics": [{"name": topic, "topic_id": None}],
                                     "allow_auto_topic_creation": False}, max_version=12)
        t = meta.topics[0]
        if t.error_code:
            raise KafkaError(t.error_code, f"topic {topic}")
        available = sorted(p.partition_index for p in t.partitions)
        self.partitions = partitions if partitions is not None else available
        missing = set(self.partitions) - set(available)
        if missing:
            raise ValueError(f"topic {topic} has no partition(s) {sorted(missing)}")
        self.positions = {p: self._list_offset(p, start) for p in self.partitions}

    def _list_offset(self, partition: int, timestamp: int) -> int:
        body = self.conn.request(2, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": self.topic, "partitions": [{"partition_index": partition, "timestamp": timestamp}]}]},
            max_version=7)
        p = body.topics[0].partitions[0]
        if p.error_code:
            raise KafkaError(p.error_code, f"ListOffsets {self.topic}-{partition}")
        return p.offset

    def poll(self, timeout_ms: int = 500, max_bytes: int = 1 << 20) -> list[tuple[int, records.Record]]:
        """Records from every assigned partition: (partition, record) pairs."""
        body = self.conn.request(1, {
            "replica_id": -1, "max_wait_ms": timeout_ms, "min_bytes": 1, "max_bytes": max_bytes,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": self.topic, "partitions": [
                {"partition": p, "fetch_offset": off, "log_start_offset": -1,
                 "partition_max_bytes": max_bytes} for p, off in self.positions.items()]}],
            "forgotten_topics_data": [], "rack_id": ""}, max_version=12)
        out = []
        for t in body.responses:
            for p in t.partitions:
                if p.error_code:
                    raise KafkaError(p.error_code, f"Fetch {self.topic}-{p.partition_index}")
                pos = self.positions[p.partition_index]
                for batch in records.decode_all(p.records or b""):
                    if not batch.header.is_control:
                        out.extend((p.partition_index, r) for r in batch.records if r.offset >= pos)
                    pos = max(pos, batch.header.last_offset + 1)
                self.positions[p.partition_index] = pos
        return out

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
