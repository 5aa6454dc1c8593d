"""The broker's log cleaner: which partition to clean next, in steps the shell schedules.

Every ``log.cleaner.backoff.ms`` the shell calls ``tick(now)``: while fewer than
``log.cleaner.threads`` passes run, it starts one on the compacted partition
with the dirtiest cleanable log. ``step(now, budget)`` then advances every
running pass by about ``budget`` seconds and says whether work remains; the
shell calls it again on the next loop turns, so cleaning never holds the event
loop for long. Counters (runs, bytes read and written, records removed) and the
dirty ratio per compacted partition go to the metrics dumps.
"""

from __future__ import annotations

import structlog

from kipper.broker.cleaner.compaction import CleaningPass, cleanable, dirty_ratio

log = structlog.get_logger(__name__)


class LogCleaner:
    def __init__(self, topics, *, enabled: bool = True, threads: int = 1):
        self.topics = topics
        self.enabled = enabled
        self.threads = threads
        self.running: list[tuple[str, int, CleaningPass]] = []
        self.counters = {"runs": 0, "bytes_read": 0, "bytes_written": 0, "records_removed": 0}

    def _compacted(self):
        for topic in self.topics.all():
            for partition in topic.partitions:
                if partition.log.config.compact:
                    yield topic, partition

    def tick(self, now: int) -> bool:
        """Start passes on the dirtiest partitions; True if any pass is running."""
        if not self.enabled:
            return False
        busy = {(t, p) for t, p, _ in self.running}
        while len(self.running) < self.threads:
            best = None
            for topic, partition in self._compacted():
                if (topic.name, partition.partition) in busy:
                    continue
                plan = cleanable(partition, partition.log.config, now)
                if plan is not None and (best is None or plan.dirty_ratio > best[2].dirty_ratio):
                    best = (topic, partition, plan)
            if best is None:
                break
            topic, partition, plan = best
            self.running.append((topic.name, partition.partition,
                                 CleaningPass(partition, partition.log.config, plan, now)))
            busy.add((topic.name, partition.partition))
        return bool(self.running)

    def step(self, now: int, budget_s: float = 0.002) -> bool:
        """Advance the running passes; True while any has work left."""
        share = budget_s / max(len(self.running), 1)
        for entry in list(self.running):
            name, index, cleaning = entry
            if self.topics.partition(name, index) is not cleaning.partition:
                self.running.remove(entry)  # the topic was deleted meanwhile
                continue
            if not cleaning.step(share):
                self.running.remove(entry)
                self._finished(name, index, cleaning)
        return bool(self.running)

    def _finished(self, topic: str, partition: int, cleaning: CleaningPass) -> None:
        stats = cleaning.stats()
        c = self.counters
        c["runs"] += 1
        c["bytes_read"] += stats.bytes_read
        c["bytes_written"] += stats.bytes_written
        c["records_removed"] += stats.records_removed
        log.info("log_cleaned", topic=topic, partition=partition, dirty_ratio=round(cleaning.plan.dirty_ratio, 3),
                 bytes_read=stats.bytes_read, bytes_written=stats.bytes_written,
                 records_removed=stats.records_removed, seconds=round(stats.seconds, 3),
                 cleaned_to=cleaning.plan.end)

    def clean_now(self, now: int) -> int:
        """Run passes to the end at once (tests and tools); how many ran."""
        ran = 0
        while self.tick(now):
            while self.step(now, 1.0):
                pass
            ran += 1
            if ran > 10_000:
                break
        return ran

    def snapshot(self) -> dict:
        return {**self.counters, "running": len(self.running),
                "partitions": [{"topic": t.name, "partition": p.partition,
                                "dirty_ratio": round(dirty_ratio(p), 4)} for t, p in self._compacted()]}
