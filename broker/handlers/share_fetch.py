"""ShareFetch (KIP-932): acknowledge, then acquire records for the member; long-poll.

Acknowledgements in the request are applied first, whatever else happens. With
MaxRecords > 0 records are then acquired from the session's partitions (up to
MaxRecords and MaxBytes, the first partition rotating between requests; whole
batches past MaxRecords unless ShareAcquireMode is record-limit, KIP-1206). If
fewer than MinBytes are ready the request waits up to MaxWaitMs, woken by
appends and by records becoming available again. Epoch -1 closes the session.
"""

from __future__ import annotations

from kipper.broker.acl.model import GROUP, READ, TOPIC
from kipper.broker.handlers.share_group import share_groups_enabled
from kipper.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from kipper.protocol.errors import ErrorCode

INT32_MAX = 2**31 - 1
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1  # ShareAcquireMode (ShareFetch v2, KIP-1206)


def top_level_error(code: ErrorCode, message: str | None) -> dict:
    """Kafka's error answer: no partitions, and AcquisitionLockTimeoutMs left at 0."""
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message,
            "acquisition_lock_timeout_ms": 0, "responses": [], "node_endpoints": []}


def current_leader() -> dict:
    """What Kafka 4.4 puts in CurrentLeader when the partition has no leader error: its
    defaults, 0 and 0 (this broker leads every partition; clients look at it only on
    NOT_LEADER_OR_FOLLOWER)."""
    return {"leader_id": 0, "leader_epoch": 0}


def apply_acknowledgements(req, ctx, session, *, add_to_session: bool, allow_renew: bool) -> dict:
    """Apply every acknowledgement batch of the request; error per (topic id, partition)."""
    share = ctx.engines.share
    topics = ctx.engines.topics
    now = ctx.now
    results = {}
    for t in req.topics:
        topic = topics.by_id(t.topic_id)
        for p in t.partitions:
            key = (t.topic_id, p.partition_index)
            if add_to_session:
                session.add(key)
            if not p.acknowledgement_batches:
                continue
            if topic is None:
                results[key] = ErrorCode.UNKNOWN_TOPIC_ID
            elif not ctx.authorize(READ, TOPIC, topic.name):
                results[key] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif not 0 <= p.partition_index < len(topic.partitions):
                results[key] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                batches = [(a.first_offset, a.last_offset, a.acknowledge_types)
                           for a in p.acknowledgement_batches]
                results[key] = share.acknowledge(req.group_id, req.member_id, topic,
                                                 p.partition_index, batches, now,
                                                 allow_renew=allow_renew)
    return results


class _Fetch:
    """One ShareFetch's acknowledgement results and acquired records."""

    def __init__(self, req, ctx, session, ack_results: dict):
        self.req = req
        self.ctx = ctx
        self.share = ctx.engines.share
        self.session = session
        self.entries: dict = {}
        self.acquired = 0
        for key, error in ack_results.items():
            self._entry(key)["acknowledge_error_code"] = int(error)

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

    def ready(self, now: int) -> bool:
        if not self.share.is_member(self.req.group_id, self.req.member_id):
            return False  # left or timed out: nothing is acquired until it joins again
        want = max(self.req.min_bytes, 1)
        total = 0
        for _, topic, partition in self.targets():
            total += self.share.ready_bytes(self.req.group_id, topic, partition, want - total, now)
            if total >= want:
                return True
        return False

    def acquire(self, now: int) -> None:
        req = self.req
        if not self.share.is_member(req.group_id, req.member_id):
            return
        records_left = req.max_records
        bytes_left = req.max_bytes if req.max_bytes > 0 else INT32_MAX
        # KIP-1206: 0 batch-optimized (v1 too), 1 record-limit
        batch_optimized = req.get("share_acquire_mode", BATCH_OPTIMIZED) != RECORD_LIMIT
        for key, topic, partition in self.targets():
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
            count = sum(last - f + 1 for f, last, _ in ranges)
            records_left -= count
            self.acquired += count
            size = sum(len(d) for d in batches)
            bytes_left -= size
            self.ctx.engines.metrics.record_out(topic.name, partition, size, count)
        self.session.cursor += 1

    def body(self) -> dict:
        by_topic: dict = {}
        for (topic_id, _), entry in self.entries.items():
            by_topic.setdefault(topic_id, []).append(entry)
        return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
                "acquisition_lock_timeout_ms": self.share.lock_duration_ms(self.req.group_id),
                "responses": [{"topic_id": t, "partitions": parts} for t, parts in by_topic.items()],
                "node_endpoints": []}


def handle_share_fetch(req, ctx):
    share = ctx.engines.share
    now = ctx.now
    epoch = req.share_session_epoch
    if not share_groups_enabled(ctx):
        return top_level_error(ErrorCode.UNSUPPORTED_VERSION, None)
    if not ctx.authorize(READ, GROUP, req.group_id):
        return top_level_error(ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    if req.get("is_renew_ack", False) and epoch in (INITIAL_EPOCH, FINAL_EPOCH):
        return top_level_error(ErrorCode.INVALID_REQUEST, None)  # Kafka's check: renewals need a session
    if epoch == INITIAL_EPOCH and any(p.acknowledgement_batches for t in req.topics
                                      for p in t.partitions):
        return top_level_error(ErrorCode.INVALID_REQUEST, None)  # (acknowledgements need a session; no text)
    code, message, session = share.open_session(req.group_id, req.member_id, epoch, now, fetch=True,
                                                connection=ctx.session)
    if code != ErrorCode.NONE:
        return top_level_error(code, message)
    results = apply_acknowledgements(req, ctx, session, add_to_session=epoch != FINAL_EPOCH,
                                     allow_renew=ctx.api_version >= 2)
    for forgotten in req.forgotten_topics_data:
        for partition in forgotten.partitions:
            session.forget((forgotten.topic_id, partition))
    fetch = _Fetch(req, ctx, session, results)
    if epoch == FINAL_EPOCH:
        share.close_session(req.group_id, req.member_id, now)
        return fetch.body()
    if req.max_records <= 0 or req.get("is_renew_ack", False):
        return fetch.body()
    if req.max_wait_ms <= 0 or fetch.ready(now):
        fetch.acquire(now)
        if fetch.acquired or req.max_wait_ms <= 0:
            return fetch.body()
    return _long_poll(fetch)


async def _long_poll(fetch: _Fetch):
    ctx = fetch.ctx
    clock = ctx.engines.clock
    deadline = clock() + fetch.req.max_wait_ms
    while True:
        keys = fetch.watch_keys()
        remaining = deadline - clock()
        if remaining > 0 and keys:
            await ctx.engines.appends.wait(keys, remaining / 1000)
        if not fetch.share.session_alive(fetch.session):
            return fetch.body()
        now = clock()
        if now >= deadline or not keys or fetch.ready(now):
            fetch.acquire(now)
            if fetch.acquired or now >= deadline or not keys:
                return fetch.body()
