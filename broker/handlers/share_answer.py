"""What one ShareFetch answer holds, composed as Kafka 4.4 composes it (SharePartitionManager,
DelayedShareFetch, a SharePartition's state load and the share session's context).

A fetch reads only the share-partitions it may acquire from: those whose state is loaded
and that have records to deliver again or room under the record-lock cap. The state of a
share-partition a ShareFetch names for the first time since it was loaded is loading
(Kafka reads it from its share coordinator then); the loads a fetch starts finish one
after another, in the fetch's partition order, and each tries the fetch again. So a new
member's first answer holds the partitions loaded up to the first one with records, and
its next fetch the others. A fetch that waits is tried again after each request whose
appends woke it (broker/notify.py): one Produce request's appends. When MaxWaitMs runs
out it reads what its partitions hold. The answer to the fetch that opens a share session
(epoch 0, Kafka's full context) lists every partition it read, with records or not; later
answers list those with records. A partition with acknowledgements or an error is always
listed. Measured against Kafka 4.4: tests/conformance/scenarios/share_split.py.
"""

from __future__ import annotations

from kipper.broker.acl.model import READ, TOPIC
from kipper.broker.share.sessions import INITIAL_EPOCH
from kipper.protocol.errors import ErrorCode

INT32_MAX = 2**31 - 1
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1  # ShareAcquireMode (ShareFetch v2, KIP-1206)


def current_leader() -> dict:
    """What Kafka 4.4 puts in CurrentLeader when the partition has no leader error: its
    defaults, 0 and 0 (this broker leads every partition; clients look at it only on
    NOT_LEADER_OR_FOLLOWER)."""
    return {"leader_id": 0, "leader_epoch": 0}


class ShareFetchAnswer:
    """One ShareFetch's acknowledgement results and acquired records."""

    def __init__(self, req, ctx, session, ack_results: dict):
        self.req = req
        self.ctx = ctx
        self.share = ctx.engines.share
        self.session = session
        self.entries: dict = {}
        self.acquired = 0
        self.done = False
        self.full = req.share_session_epoch == INITIAL_EPOCH  # lists every partition it read
        for key, (error, message) in ack_results.items():
            entry = self._entry(key)
            entry["acknowledge_error_code"] = int(error)
            entry["acknowledge_error_message"] = message

    def _entry(self, key) -> dict:
        entry = self.entries.get(key)
        if entry is None:
            entry = self.entries[key] = {
                "partition_index": key[1], "error_code": 0, "error_message": None,
                "acknowledge_error_code": 0, "acknowledge_error_message": None,
                "current_leader": current_leader(), "records": b"", "acquired_records": []}
        return entry

    def targets(self) -> list:
        """(key, topic, partition) of the session's partitions, rotated."""
        topics = self.ctx.engines.topics
        keys = list(self.session.partitions)
        if keys:
            k = self.session.cursor % len(keys)
            keys = keys[k:] + keys[:k]
        out = []
        for key in keys:
            topic = topics.by_id(key[0])
            if topic is None or not 0 <= key[1] < len(topic.partitions):
                code = ErrorCode.UNKNOWN_TOPIC_ID if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                self._entry(key)["error_code"] = int(code)
                self.session.forget(key)
                continue
            if not self.ctx.authorize(READ, TOPIC, topic.name):
                self._entry(key)["error_code"] = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                continue
            out.append((key, topic, key[1]))
        return out

    def watch_keys(self) -> list:
        return [(topic.name, partition) for _, topic, partition in self.targets()]

    # --- when it is answered ------------------------------------------------------------

    def start(self, now: int) -> bool:
        """The fetch as it arrives: tried with the partitions already loaded, then (unless
        it may not wait) again as each load it starts finishes. True once answered; the
        loads it started are finished when it returns either way."""
        group = self.req.group_id
        targets = self.targets()
        loading = [(topic, p) for _, topic, p in targets if self.share.loading(group, topic, p, now)]
        try:
            if self._try(targets, now):
                return True
            if self.req.max_wait_ms <= 0:
                self.complete(now)
                return True
            for topic, partition in loading:
                self.share.loaded(group, topic, partition, now)
                if self._try(targets, now):
                    return True
            return False
        finally:
            for topic, partition in loading:
                self.share.loaded(group, topic, partition, now)

    def try_complete(self, now: int) -> bool:
        """A wake-up: answered if the partitions it may read now hold MinBytes, or if its
        share session ended meanwhile."""
        if not self.done and not self.share.session_alive(self.session):
            self.done = True
        return self.done or self._try(self.targets(), now)

    def complete(self, now: int) -> None:
        """MaxWaitMs ran out: read what the partitions it may read hold."""
        if not self.done:
            self._read(self._acquirable(self.targets(), now), now, final=True)

    def _acquirable(self, targets: list, now: int) -> list:
        req = self.req
        if not self.share.is_member(req.group_id, req.member_id):
            return []  # left or timed out: nothing is acquired until it joins again
        return [t for t in targets if self.share.acquirable(req.group_id, t[1], t[2], now)]

    def _try(self, targets: list, now: int) -> bool:
        parts = self._acquirable(targets, now)
        want = max(self.req.min_bytes, 1)
        total = 0
        for _, topic, partition in parts:
            total += self.share.ready_bytes(self.req.group_id, topic, partition, want - total, now)
            if total >= want:
                return self._read(parts, now, final=False)
        return False

    def _read(self, parts: list, now: int, *, final: bool) -> bool:
        """Acquire from ``parts``; answered unless nothing came and it may wait on."""
        if not self._acquire(parts, now) and not final:
            return False
        if self.full:
            for key, _, _ in parts:
                self._entry(key)
        self.session.cursor += 1
        self.done = True
        return True

    def _acquire(self, parts: list, now: int) -> int:
        req = self.req
        records_left = req.max_records
        bytes_left = req.max_bytes if req.max_bytes > 0 else INT32_MAX
        # KIP-1206: 0 batch-optimized (v1 too), 1 record-limit
        batch_optimized = req.get("share_acquire_mode", BATCH_OPTIMIZED) != RECORD_LIMIT
        count = 0
        for key, topic, partition in parts:
            if records_left <= 0 or bytes_left <= 0:
                break
            ranges, batches = self.share.acquire(req.group_id, req.member_id, topic, partition,
                                                 now, max_records=records_left,
                                                 max_bytes=bytes_left,
                                                 batch_optimized=batch_optimized)
            if not ranges:
                continue
            entry = self._entry(key)
            entry["records"] = batches
            entry["acquired_records"] = [{"first_offset": f, "last_offset": last,
                                          "delivery_count": n} for f, last, n in ranges]
            n = sum(last - f + 1 for f, last, _ in ranges)
            records_left -= n
            count += n
            size = sum(len(d) for d in batches)
            bytes_left -= size
            self.ctx.engines.metrics.record_out(topic.name, partition, size, n)
        self.acquired += count
        return count

    def body(self) -> dict:
        by_topic: dict = {}
        for (topic_id, _), entry in self.entries.items():
            by_topic.setdefault(topic_id, []).append(entry)
        return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
                "acquisition_lock_timeout_ms": self.share.lock_duration_ms(self.req.group_id),
                "responses": [{"topic_id": t, "partitions": parts} for t, parts in by_topic.items()],
                "node_endpoints": []}
