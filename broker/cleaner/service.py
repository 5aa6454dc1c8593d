"""The broker's log cleaner: which partition to clean next, in steps the shell schedules.

Every ``log.cleaner.backoff.ms`` the shell calls ``tick(now)``: while fewer than
``log.cleaner.threads`` passes run, it starts one on the compacted partition
with the dirtiest cleanable log. ``step(now, budget)`` then advances every
running pass by about ``budget`` seconds and says whether work remains; the
shell calls it again when ``next_step_in`` says, so cleaning never holds the
event loop for long and gives way to clients. Counters (runs, bytes read and
written, records removed) and the dirty ratio per compacted partition go to the
metrics dumps.
"""

from __future__ import annotations

import structlog

from kipper.broker.cleaner.compaction import CleaningPass, cleanable, dirty_ratio

log = structlog.get_logger(__name__)

# The shell runs the cleaner on the event loop in slices, and the loop polls its sockets
# between two slices: a request that arrives during one waits at most a slice. An idle
# broker cleans at full speed, a slice per loop turn. While requests come in, each slice
# is followed by a pause: a cleaner that keeps a core busy delays the clients' own threads
# on a small machine (on two cores, produce p99 was 3.4x with back-to-back slices and 0.93x
# with the pause: docs/PERFORMANCE.md). While the storage thread syncs a cleaned copy
# there is nothing to do until it is done.
CLEANER_SLICE_S = 0.0001
CLEANER_PAUSE_S = 0.001  # uvloop's timers count whole milliseconds
CLEANER_WAIT_S = 0.002


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
                if partition.compacted:
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

    @property
    def waiting(self) -> bool:
        """Every running pass waits for the storage thread."""
        return bool(self.running) and all(c.waiting for _, _, c in self.running)

    def next_step_in(self, clients_active: bool) -> float | None:
        """Seconds until the next ``step`` (0: the next loop turn); None when no pass runs.
        ``clients_active``: requests arrived since the last step."""
        if not self.running:
            return None
        if self.waiting:
            return CLEANER_WAIT_S
        return CLEANER_PAUSE_S if clients_active else 0.0

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
