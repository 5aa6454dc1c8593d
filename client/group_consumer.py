"""A small consumer-group member for tools: KIP-848 (ConsumerGroupHeartbeat),
so the broker assigns the partitions and no client-side assignor is needed.

It reads one topic: heartbeats when the interval says so, takes the partitions
the broker assigns, starts each at the group's committed offset (else at
``start``), commits what it has consumed before giving a partition up and when
it closes, then leaves the group. Same ``poll`` shape as ``Consumer``.
"""

from __future__ import annotations

import time
import uuid

from kipper.client.admin import metadata
from kipper.client.blocking import connect_any
from kipper.client.consumer_requests import (
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, consumer_group_heartbeat, fetch_records, list_offsets, offset_commit,
    offset_fetch,
)
from kipper.protocol import records
from kipper.protocol.errors import ErrorCode, KafkaError

EARLIEST, LATEST = EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
LEAVE_EPOCH = -1
REBALANCE_TIMEOUT_MS = 30000


class GroupConsumer:
    def __init__(self, bootstrap: str, topic: str, group: str, *, start: int = LATEST,
                 client_id: str = "kipper-consumer"):
        self.topic, self.group, self.start = topic, group, start
        self.conn = connect_any(bootstrap, client_id=client_id)
        t = metadata(self.conn, [topic]).topics[0]
        if t.error_code:
            raise KafkaError(t.error_code, f"topic {topic}")
        self.topic_id = t.topic_id
        self.member_id = uuid.uuid4().hex  # KIP-1082: the member names itself
        self.epoch = 0
        self.positions: dict[int, int] = {}
        self.interval_s = 0.0
        self.next_heartbeat = 0.0
        self._heartbeat(join=True)

    # --- membership ------------------------------------------------------------------------

    def _heartbeat(self, join: bool = False) -> None:
        owned = None if join else {self.topic_id: list(self.positions)}
        body = consumer_group_heartbeat(
            self.conn, self.group, self.member_id, self.epoch,
            subscribed_topic_names=[self.topic] if join else None,
            rebalance_timeout_ms=REBALANCE_TIMEOUT_MS if join else -1, owned=owned if not join else {})
        if body.error_code in (ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID):
            self.commit()
            self.positions, self.epoch = {}, 0  # fenced: give everything up, join again
            return self._heartbeat(join=True)
        if body.error_code:
            raise KafkaError(body.error_code, f"group {self.group}: {body.error_message or ''}")
        self.epoch = body.member_epoch
        self.interval_s = body.heartbeat_interval_ms / 1000
        self.next_heartbeat = time.monotonic() + self.interval_s
        if body.assignment is not None:
            mine = set()
            for tp in body.assignment.topic_partitions:
                if tp.topic_id == self.topic_id:
                    mine |= set(tp.partitions)
            self._assign(mine)

    def _assign(self, partitions: set[int]) -> None:
        gone = set(self.positions) - partitions
        if gone:
            self.commit(gone)
            for p in gone:
                del self.positions[p]
        new = sorted(partitions - set(self.positions))
        if new:
            self.positions.update(self._starting_offsets(new))
            self.next_heartbeat = 0.0  # tell the coordinator what is owned now

    def _starting_offsets(self, partitions: list[int]) -> dict[int, int]:
        body = offset_fetch(self.conn, self.group, {self.topic: partitions},
                            member_id=self.member_id, member_epoch=self.epoch)
        topics = body.groups[0].topics if "groups" in body else body.topics
        found = {p.partition_index: p.committed_offset for t in topics for p in t.partitions
                 if p.committed_offset >= 0}
        missing = [p for p in partitions if p not in found]
        if missing:
            resp = list_offsets(self.conn, {(self.topic, p): self.start for p in missing})
            found.update({p.partition_index: p.offset for p in resp.topics[0].partitions})
        return found

    # --- records ------------------------------------------------------------------------------

    def poll(self, timeout_ms: int = 500, max_bytes: int = 1 << 20) -> list[tuple[int, records.Record]]:
        if time.monotonic() >= self.next_heartbeat:
            self._heartbeat()
        if not self.positions:
            time.sleep(min(timeout_ms / 1000, max(self.next_heartbeat - time.monotonic(), 0.01)))
            return []
        wait = int(min(timeout_ms, max(self.next_heartbeat - time.monotonic(), 0) * 1000))
        return fetch_records(self.conn, self.topic, self.positions, max_wait_ms=wait, max_bytes=max_bytes)

    def seek(self, partition: int, offset: int) -> None:
        if partition in self.positions:
            self.positions[partition] = offset

    def commit(self, partitions=None) -> None:
        wanted = {(self.topic, p): o for p, o in self.positions.items()
                  if partitions is None or p in partitions}
        if wanted:
            offset_commit(self.conn, self.group, wanted, generation_id_or_member_epoch=self.epoch,
                          member_id=self.member_id)

    def close(self) -> None:
        try:
            self.commit()
            consumer_group_heartbeat(self.conn, self.group, self.member_id, LEAVE_EPOCH)
        except (KafkaError, OSError):
            pass
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
