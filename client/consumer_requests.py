"""Typed builders for what a consumer sends: ListOffsets, Fetch, FindCoordinator,
OffsetCommit/OffsetFetch, ConsumerGroupHeartbeat and ShareGroupHeartbeat, over a
BlockingConnection.

As in kipper.client.admin: the version comes from the connection's negotiation
(``version=`` pins one), the body uses Kafka's field names for that version,
and the parsed response is returned with per-partition errors left in it.
Partitions are (topic, partition) pairs.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from kipper.client.admin import by_topic, send
from kipper.client.blocking import BlockingConnection
from kipper.protocol import records
from kipper.protocol.errors import KafkaError
from kipper.protocol.messages.consumer_group_heartbeat import CONSUMER_GROUP_HEARTBEAT
from kipper.protocol.messages.fetch import FETCH
from kipper.protocol.messages.find_coordinator import FIND_COORDINATOR
from kipper.protocol.messages.list_offsets import LIST_OFFSETS
from kipper.protocol.messages.offset_commit import OFFSET_COMMIT
from kipper.protocol.messages.offset_fetch import OFFSET_FETCH
from kipper.protocol.messages.share_group_heartbeat import SHARE_GROUP_HEARTBEAT

# IsolationLevel and ListOffsetsRequest's special timestamps, as Kafka numbers them
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
EARLIEST_TIMESTAMP, LATEST_TIMESTAMP = -2, -1
# FindCoordinatorRequest.CoordinatorType
GROUP_COORDINATOR, TRANSACTION_COORDINATOR = 0, 1

# Fetch v13+ names topics by id; these requests name them.
FETCH_MAX_VERSION = 12
# ListOffsets v8+ only add timestamp kinds (KIP-405, KIP-1005, KIP-1023) and a
# timeout (KIP-1075) that these callers do not use; v7 is what they always sent.
LIST_OFFSETS_MAX_VERSION = 7
# FindCoordinator v5 adds TRANSACTION_ABORTABLE (KIP-890) and v6 share-partition
# keys (KIP-932): nothing a group lookup needs; v4 (KIP-699) is what was always sent.
FIND_COORDINATOR_MAX_VERSION = 4

__all__ = [
    "EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "READ_COMMITTED", "READ_UNCOMMITTED",
    "consumer_group_heartbeat", "fetch", "find_coordinator", "list_offsets", "offset_commit",
    "offset_fetch", "share_group_heartbeat",
]


def list_offsets(conn: BlockingConnection, timestamps: Mapping[tuple[str, int], int], *,
                 isolation_level: int = READ_UNCOMMITTED, version: int | None = None):
    """The offset of each (topic, partition) at its timestamp:
    EARLIEST_TIMESTAMP, LATEST_TIMESTAMP or milliseconds since the epoch."""
    return send(conn, LIST_OFFSETS, {"replica_id": -1, "isolation_level": isolation_level, "topics": [
        {"name": topic, "partitions": [{"partition_index": p, "timestamp": ts} for p, ts in parts]}
        for topic, parts in by_topic(timestamps.items()).items()]}, version, LIST_OFFSETS_MAX_VERSION)


def fetch(conn: BlockingConnection, offsets: Mapping[tuple[str, int], int], *, max_wait_ms: int = 0,
          min_bytes: int = 0, max_bytes: int = 1 << 26, partition_max_bytes: int = 1 << 24,
          isolation_level: int = READ_UNCOMMITTED, version: int | None = None, rack_id: str = ""):
    """A sessionless Fetch from each (topic, partition) at its offset. The
    defaults answer at once with whatever is there, up to 16 MiB a partition; ``rack_id``: the
    consumer's rack (v11+), for a leader that points consumers to a replica in their rack."""
    return send(conn, FETCH, {
        "replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes,
        "isolation_level": isolation_level, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [
            {"partition": p, "fetch_offset": offset, "log_start_offset": -1,
             "partition_max_bytes": partition_max_bytes} for p, offset in parts]}
            for topic, parts in by_topic(offsets.items()).items()],
        "forgotten_topics_data": [], "rack_id": rack_id}, version, FETCH_MAX_VERSION)


def fetch_records(conn: BlockingConnection, topic: str, positions: dict[int, int], *, max_wait_ms: int,
                  max_bytes: int) -> list[tuple[int, records.Record]]:
    """One Fetch of ``topic`` from ``positions`` (partition -> next offset): the
    (partition, record) pairs it returned, control records left out, and ``positions``
    moved past every batch read. Partitions no longer in ``positions`` (revoked while
    the request was out) are ignored."""
    body = fetch(conn, {(topic, p): off for p, off in positions.items()}, max_wait_ms=max_wait_ms,
                 min_bytes=1, max_bytes=max_bytes, partition_max_bytes=max_bytes)
    out = []
    for t in body.responses:
        for p in t.partitions:
            if p.partition_index not in positions:
                continue
            if p.error_code:
                raise KafkaError(p.error_code, f"Fetch {topic}-{p.partition_index}")
            pos = positions[p.partition_index]
            for batch in records.decode_all(p.records or b""):
                if not batch.header.is_control:
                    out.extend((p.partition_index, r) for r in batch.records if r.offset >= pos)
                pos = max(pos, batch.header.last_offset + 1)
            positions[p.partition_index] = pos
    return out


def find_coordinator(conn: BlockingConnection, key: str, *, key_type: int = GROUP_COORDINATOR,
                     version: int | None = None):
    """The coordinator of one key: node_id, host and port, whichever version
    answered. An error is raised as a KafkaError."""
    def body(v: int) -> dict:
        return {"key_type": key_type, "coordinator_keys": [key]} if v >= 4 else {"key": key, "key_type": key_type}

    resp = send(conn, FIND_COORDINATOR, body, version, FIND_COORDINATOR_MAX_VERSION)
    coordinator = resp.coordinators[0] if "coordinators" in resp else resp
    if coordinator.error_code:
        raise KafkaError(coordinator.error_code, "FindCoordinator failed")
    return coordinator


def offset_commit(conn: BlockingConnection, group_id: str, offsets: Mapping[tuple[str, int], int], *,
                  generation_id_or_member_epoch: int = -1, member_id: str = "",
                  group_instance_id: str | None = None, version: int | None = None):
    """Commit offsets; generation -1 and no member commit for a group that
    has no members (as Kafka's admin client does)."""
    return send(conn, OFFSET_COMMIT, {
        "group_id": group_id, "generation_id_or_member_epoch": generation_id_or_member_epoch,
        "member_id": member_id, "group_instance_id": group_instance_id,
        "topics": [{"name": topic, "partitions": [
            {"partition_index": p, "committed_offset": o, "committed_metadata": None} for p, o in parts]}
            for topic, parts in by_topic(offsets.items()).items()]}, version)


def offset_fetch(conn: BlockingConnection, group_id: str, partitions: Mapping[str, Iterable[int]] | None = None,
                 *, require_stable: bool = False, member_id: str | None = None, member_epoch: int = -1,
                 version: int | None = None):
    """Committed offsets of one group, for ``partitions`` ({topic: [partition]})
    or all of them (None). Up to v7 the answer is in ``topics``, from v8 in
    ``groups[0].topics``."""
    topics = None if partitions is None else [
        {"name": t, "partition_indexes": list(ps)} for t, ps in partitions.items()]

    def body(v: int) -> dict:
        if v >= 8:  # v8 batches groups (KIP-709); v9 names the KIP-848 member
            return {"groups": [{"group_id": group_id, "member_id": member_id, "member_epoch": member_epoch,
                                "topics": topics}], "require_stable": require_stable}
        return {"group_id": group_id, "topics": topics, "require_stable": require_stable}

    return send(conn, OFFSET_FETCH, body, version)


def share_group_heartbeat(conn: BlockingConnection, group_id: str, member_id: str, member_epoch: int, *,
                          subscribed_topic_names: Iterable[str] | None = None, rack_id: str | None = None,
                          version: int | None = None):
    """Join (epoch 0), stay in (the current epoch) or leave (-1) a share
    group (KIP-932). Topic names go only with a changed subscription."""
    topics = None if subscribed_topic_names is None else list(subscribed_topic_names)
    return send(conn, SHARE_GROUP_HEARTBEAT, {
        "group_id": group_id, "member_id": member_id, "member_epoch": member_epoch,
        "rack_id": rack_id, "subscribed_topic_names": topics}, version)


def consumer_group_heartbeat(conn: BlockingConnection, group_id: str, member_id: str, member_epoch: int, *,
                             subscribed_topic_names: Iterable[str] | None = None,
                             rebalance_timeout_ms: int = -1,
                             owned: Mapping | None = None, version: int | None = None):
    """Join (epoch 0), stay in (the current epoch) or leave (-1) a KIP-848 consumer
    group. ``owned`` ({topic id: [partition]}) reports what the member holds."""
    topics = None if subscribed_topic_names is None else list(subscribed_topic_names)
    return send(conn, CONSUMER_GROUP_HEARTBEAT, {
        "group_id": group_id, "member_id": member_id, "member_epoch": member_epoch,
        "instance_id": None, "rack_id": None, "rebalance_timeout_ms": rebalance_timeout_ms,
        "subscribed_topic_names": topics, "subscribed_topic_regex": None, "server_assignor": None,
        "topic_partitions": None if owned is None else [
            {"topic_id": tid, "partitions": sorted(ps)} for tid, ps in owned.items()]}, version)
