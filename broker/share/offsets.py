"""The share-group offset APIs over the share state (KIP-932's admin APIs, Kafka 4.x).

A share group's offsets are its share-partitions' start offsets (SPSO). Describe reads them,
and the lag (KIP-1226: high watermark - SPSO - records acknowledged or archived past it), from
memory or from the log, loading nothing. Alter starts share-partitions again at an offset, one
SHARE_CHECKPOINT each; Delete drops a topic's share state. The GroupCoordinator has checked the
group first (a share group, without members, for Alter and Delete). Answers are Kafka's,
measured against a Kafka 4.4 broker: a share-partition without state has start offset -1 and lag
-1, a topic that does not exist has the zero topic id.
"""

from __future__ import annotations

from uuid import UUID

from kipper.broker.share.log_view import share_record_offsets
from kipper.protocol.errors import ErrorCode

ZERO_UUID = UUID(int=0)
UNINITIALIZED = -1
NOT_HOSTED = "This server does not host this topic-partition."  # Kafka's UNKNOWN_TOPIC_OR_PARTITION
NO_OFFSETS = "There is no offset information to delete."


def _row(partition: int, start: int = UNINITIALIZED, lag: int = UNINITIALIZED,
         code: ErrorCode = ErrorCode.NONE, message: str | None = None) -> dict:
    return {"partition_index": partition, "start_offset": start, "leader_epoch": 0, "lag": lag,
            "error_code": int(code), "error_message": message}


def refused_row(partition: int, code: ErrorCode, message: str) -> dict:
    return _row(partition, code=code, message=message)


def _described(share, group_id: str, topic, partition: int) -> dict:
    if partition >= len(topic.partitions):  # as Kafka: a partition of no state, not an error
        return _row(partition)
    if partition < 0:
        return _row(partition, code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message=NOT_HOSTED)
    found = share.store.summary(group_id, topic, partition)
    if found is None:
        return _row(partition)
    spso, done = found
    plog = topic.partitions[partition]
    hwm = plog.high_watermark
    lag = hwm - spso - done - share_record_offsets(plog, max(spso, plog.log_start_offset), hwm)
    return _row(partition, spso, lag)


def describe(share, topics, group_id: str, wanted) -> list[dict]:
    """DescribeShareGroupOffsets for one group: ``wanted`` is [(topic, [partition])], or
    None for every share-partition the group has state for."""
    if wanted is None:
        by_topic: dict[str, list[int]] = {}
        for name, partition in share.store.partitions_of(group_id):
            by_topic.setdefault(name, []).append(partition)
        wanted = [(name, parts) for name, parts in by_topic.items() if topics.get(name) is not None]
    known, unknown = [], []
    for name, partitions in wanted:
        topic = topics.get(name)
        if topic is None:
            unknown.append({"topic_name": name, "topic_id": ZERO_UUID,
                            "partitions": [_row(p) for p in partitions]})
            continue
        known.append({"topic_name": name, "topic_id": topic.topic_id,
                      "partitions": [_described(share, group_id, topic, p) for p in partitions]})
    return known + unknown


def alter(share, group_id: str, wanted, now: int) -> list[dict]:
    """AlterShareGroupOffsets of existing topics: ``wanted`` is [(topic, [(partition,
    start offset)])]. Any offset is stored as given, as Kafka does (-1: start again at
    share.auto.offset.reset); a partition the topic does not have is
    UNKNOWN_TOPIC_OR_PARTITION."""
    out = []
    for topic, partitions in wanted:
        rows = []
        for partition, start in partitions:
            if not 0 <= partition < len(topic.partitions):
                rows.append({"partition_index": partition,
                             "error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
                             "error_message": NOT_HOSTED})
                continue
            share.store.reset(group_id, topic.name, partition, start, now)
            rows.append({"partition_index": partition, "error_code": 0, "error_message": None})
        out.append({"topic_name": topic.name, "topic_id": topic.topic_id, "partitions": rows})
    if wanted:
        share.coordinator.offsets_altered(group_id)
    return out


def delete(share, topics, group_id: str, names) -> list[dict]:
    """DeleteShareGroupOffsets: each topic's share state goes; a topic that does not exist,
    or has none, is UNKNOWN_TOPIC_OR_PARTITION (Kafka's two messages), after the others. A
    topic named twice is deleted and answered once; a refusal, each time it is named."""
    failed, done, deleted = [], [], set()
    for name in names:
        if name in deleted:
            continue
        topic = topics.get(name)
        if topic is None:
            failed.append(_topic_row(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED))
        elif not share.store.delete(group_id, name):
            failed.append(_topic_row(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_OFFSETS))
        else:
            deleted.add(name)
            done.append(_topic_row(name, topic.topic_id, ErrorCode.NONE, None))
    if done:
        share.coordinator.bump_epoch(group_id)
    return done + failed


def _topic_row(name: str, topic_id, code: ErrorCode, message: str | None) -> dict:
    return {"topic_name": name, "topic_id": topic_id, "error_code": int(code), "error_message": message}
