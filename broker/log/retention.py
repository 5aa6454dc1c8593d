"""Time and size retention over every partition, run by the shell's timer."""

from __future__ import annotations

import structlog

log = structlog.get_logger(__name__)


def apply_retention(state, now: int) -> int:
    dropped = 0
    for topic in state.topics.all():
        retention_ms = int(topic.configs.get("retention.ms", state.config["retention.ms"]))
        retention_bytes = int(topic.configs.get("retention.bytes", state.config["retention.bytes"]))
        if retention_ms < 0 and retention_bytes < 0:
            continue
        for plog in topic.partitions:
            floor = state.log_start_floor(topic.name, plog.partition)
            n = plog.apply_retention(now, retention_ms, retention_bytes, floor)
            if n:
                dropped += n
                log.info("retention_applied", topic=topic.name, partition=plog.partition,
                         batches=n, log_start_offset=plog.log_start_offset)
    return dropped
