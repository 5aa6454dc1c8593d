"""Opening ``log.dirs`` at start: the topics the metadata holds, their logs, and the
producer state of every partition, with one log line saying what it took.

After a clean stop the indexes and snapshots are trusted; after a crash each log
is recovered from its recovery point (broker/storage/file_log.py) before its
producer state is rebuilt from the newest snapshot and the batches after it.
"""

from __future__ import annotations

import resource
import time

import structlog

log = structlog.get_logger(__name__)


def raise_file_limit() -> None:
    """One open file per segment: lift the soft limit to the hard one, as Kafka's
    documentation asks operators to."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def open_topics(topics, logs) -> dict:
    """Restore every topic and partition; recover producer state. Counts for the log."""
    started = time.perf_counter()
    raise_file_limit()
    restored = topics.restore()
    replayed = 0
    partitions = 0
    for topic in restored:
        for partition in topic.partitions:
            partitions += 1
            replayed += partition.recover()
    logs.remove_strays({(t.name, p) for t in restored for p in range(len(t.partitions))})
    stats = {"topics": len(restored), "partitions": partitions, "clean": logs.clean,
             "batches_replayed": replayed, "seconds": round(time.perf_counter() - started, 3)}
    log.info("storage_opened", directories=[str(d.path) for d in logs.dirs], **stats)
    return stats
