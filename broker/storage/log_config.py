"""The settings a partition's log acts on, from its topic's configs over the broker's keys.

``LogConfig`` is what the storage uses (segments, index, flush) and what the
log cleaner uses (cleanup policy, tombstone and compaction lags, dirty ratio).
``log_config`` resolves a topic's values the way Kafka's LogConfig does: the
topic's own config if set, else the broker's ``log.*`` default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from kipper.broker.config_values import java_float

NO_LIMIT = (1 << 63) - 1


@dataclass
class LogConfig:
    segment_bytes: int = 1 << 30  # segment.bytes / log.segment.bytes
    segment_ms: int = 7 * 24 * 3600 * 1000  # segment.ms / log.roll.ms
    index_interval_bytes: int = 4096  # index.interval.bytes / log.index.interval.bytes
    flush_messages: int = NO_LIMIT  # flush.messages / log.flush.interval.messages
    flush_ms: int = NO_LIMIT  # flush.ms / log.flush.interval.ms
    compact: bool = False  # cleanup.policy holds "compact"
    delete: bool = True  # cleanup.policy holds "delete" (retention applies)
    delete_retention_ms: int = 86_400_000  # delete.retention.ms / log.cleaner.delete.retention.ms
    min_cleanable_dirty_ratio: float = 0.5  # min.cleanable.dirty.ratio / log.cleaner.min.cleanable.ratio
    min_compaction_lag_ms: int = 0  # min.compaction.lag.ms / log.cleaner.min.compaction.lag.ms
    max_compaction_lag_ms: int = NO_LIMIT  # max.compaction.lag.ms / log.cleaner.max.compaction.lag.ms


def _get(broker, key: str, default):
    try:
        return broker[key]
    except KeyError:
        return default


def log_config(topic_configs: dict[str, str], broker) -> LogConfig:
    """The LogConfig of a topic: its own configs over the broker's defaults."""
    roll_ms = broker["log.roll.ms"] if broker["log.roll.ms"] >= 0 else broker["log.roll.hours"] * 3_600_000
    flush_ms = broker["log.flush.interval.ms"]

    def get(name: str, default, kind=int):
        value = topic_configs.get(name)
        return kind(value) if value is not None else default

    text = topic_configs.get("cleanup.policy")
    if text is None:
        text = _get(broker, "log.cleanup.policy", "delete")
    policy = {p.strip() for p in text.split(",") if p.strip()}
    return LogConfig(
        # internal.segment.bytes: Kafka's test-only way below segment.bytes' 1 MiB minimum
        segment_bytes=get("internal.segment.bytes", get("segment.bytes", broker["log.segment.bytes"])),
        segment_ms=get("segment.ms", roll_ms),
        index_interval_bytes=get("index.interval.bytes", broker["log.index.interval.bytes"]),
        flush_messages=get("flush.messages", broker["log.flush.interval.messages"]),
        flush_ms=get("flush.ms", flush_ms if flush_ms >= 0 else NO_LIMIT),
        compact="compact" in policy,
        delete="delete" in policy,
        delete_retention_ms=get("delete.retention.ms",
                                _get(broker, "log.cleaner.delete.retention.ms", 86_400_000)),
        min_cleanable_dirty_ratio=get("min.cleanable.dirty.ratio",
                                      _get(broker, "log.cleaner.min.cleanable.ratio", 0.5), java_float),
        min_compaction_lag_ms=get("min.compaction.lag.ms",
                                  _get(broker, "log.cleaner.min.compaction.lag.ms", 0)),
        max_compaction_lag_ms=get("max.compaction.lag.ms",
                                  _get(broker, "log.cleaner.max.compaction.lag.ms", NO_LIMIT)))


class LogConfigs:
    """``log_config`` for the partitions a factory makes: a topic's partitions are made
    one after another and share one LogConfig, so it is resolved once per topic (and
    again if the topic's configs changed), not once per partition."""

    __slots__ = ("broker", "_last")

    def __init__(self, broker):
        self.broker = broker
        self._last: tuple | None = None  # (topic, its configs then, LogConfig)

    def of(self, topic) -> LogConfig:
        last = self._last
        if last is not None and last[0] is topic and last[1] == topic.configs:
            return last[2]
        config = log_config(topic.configs, self.broker)
        self._last = (topic, dict(topic.configs), config)
        return config


EMPTY_SEGMENT = -1  # a segment's roll mark before its first batch: it never rolls by time


def rolling_mark(first_max_timestamp: int, now_ms: int) -> int:
    """What a segment keeps, at its first append, to roll by time as Kafka's LogSegment does:
    the first batch's largest timestamp (rollingBasedTimestamp) when it has one; when it has
    none (-1), the segment's wall-clock start, kept as ``-2 - now_ms`` so that one number says
    which of the two it is."""
    return first_max_timestamp if first_max_timestamp >= 0 else -2 - now_ms


def waited_for_roll(mark: int, now_ms: int, max_timestamp: int) -> int:
    """Kafka's LogSegment.timeWaitedForRoll for a segment's ``rolling_mark``: the incoming
    batches' largest timestamp minus the first batch's (negative when the incoming ones have
    no timestamp: no roll), or the wall-clock time since the segment started when its first
    batch had no timestamp."""
    if mark == EMPTY_SEGMENT:
        return -1
    if mark >= 0:
        return max_timestamp - mark
    return now_ms - (-2 - mark)


class RetainedSegment(NamedTuple):
    """What retention reads of a segment: the offset after it (the next segment's base, or the
    log end), its size in bytes, its largest record timestamp (-1: none) and when it was last
    written (Kafka's file modification time)."""

    upper_offset: int
    size: int
    max_timestamp: int
    last_append_ms: int


def segments_past_retention(segments: list[RetainedSegment], now_ms: int, retention_ms: int,
                            retention_bytes: int, floor: int | None, log_start: int) -> int:
    """How many of the oldest ``segments`` (the active one last) retention deletes, as Kafka's
    UnifiedLog.deleteOldSegments: those wholly below ``log_start`` (never the active one);
    those whose largest timestamp (the record time, else the last write's) is more than
    ``retention_ms`` before now, never one stamped in the future; then, of what is left, the
    oldest while the rest still holds ``retention_bytes``. The active segment goes too when it
    is not empty (the log rolls first); a segment whose records reach ``floor`` (the high
    watermark, a share group's hold) stays, and so does everything after it."""

    def allowed(k: int) -> bool:
        seg = segments[k]
        return (floor is None or seg.upper_offset <= floor) and not (k == len(segments) - 1 and seg.size == 0)

    n = 0
    while n < len(segments) - 1 and segments[n].upper_offset <= log_start and allowed(n):
        n += 1
    if retention_ms >= 0:
        while n < len(segments) and allowed(n):
            seg = segments[n]
            largest = seg.max_timestamp if seg.max_timestamp >= 0 else seg.last_append_ms
            if now_ms < largest or now_ms - largest <= retention_ms:
                break
            n += 1
    if retention_bytes >= 0:
        diff = sum(seg.size for seg in segments[n:]) - retention_bytes
        while n < len(segments) and allowed(n) and diff - segments[n].size >= 0:
            diff -= segments[n].size
            n += 1
    return n
