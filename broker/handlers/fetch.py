"""Fetch: read stored batches; long-poll until min_bytes or max_wait_ms.

No fetch sessions are created (session id 0 in every answer), which KIP-227
allows: clients then send full fetch requests each time. A request that continues a
session (an epoch other than 0 or -1) names one this broker never gave, and gets
FETCH_SESSION_ID_NOT_FOUND, as from Kafka. With read_committed
a partition returns data only below its last stable offset, with the aborted
transactions that overlap it (broker/log/txn_index.py). A consumer over its
consumer_byte_rate quota is answered empty with the throttle time and muted.

A Fetch's last_fetched_epoch (v12+) is checked before its offset, as Kafka's: an epoch the
leader does not know is OFFSET_OUT_OF_RANGE, and one that ended earlier here, or before the
fetch offset, gets the diverging epoch and no records (KIP-595's check). A partition's whole
batches that fit its limit are followed by the first bytes of the next batch up to the limit
(Kafka sends the slice of the segment file; a consumer drops the cut batch).

In a cluster (docs/CLUSTER.md) only a partition's leader answers (NOT_LEADER_OR_FOLLOWER
with the leader it knows otherwise) and consumers read below the high watermark. A
follower's Fetch (its replica id in ``replica_state``) reads to the log end and tells the
leader how far the follower has got (broker/cluster/replica.py).
"""

from __future__ import annotations

from kipper.broker.acl.model import CLUSTER, CLUSTER_ACTION, CLUSTER_NAME, READ, TOPIC
from kipper.broker.handlers.leaders import current_leader, divergence, leader_error, node_endpoints
from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.protocol.errors import ErrorCode
from kipper.protocol.primitives import ZERO_UUID

READ_UNCOMMITTED, READ_COMMITTED = 0, 1
_LEADER_MOVED = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)
LEADERS_SINCE = 16  # Fetch versions whose refusals name the current leader and its endpoint
SESSIONS_SINCE = 7  # Fetch versions with session ids and epochs (KIP-227)
FULL_FETCH_EPOCHS = (0, -1)  # INITIAL_EPOCH, FINAL_EPOCH: no session is continued


def _error_entry(index: int, code: ErrorCode, aborted: list | None = None) -> dict:
    """A partition that returns nothing: Kafka's FetchResponse.partitionResponse(error),
    offsets unknown (-1). Kafka lists no aborted transactions as an empty list for a topic
    or partition it does not know, and as null for a read that failed."""
    return {"partition_index": index, "error_code": int(code), "high_watermark": -1, "last_stable_offset": -1,
            "log_start_offset": -1, "aborted_transactions": aborted, "records": b""}


def wanted(topics) -> list[tuple]:
    """(topic, its partitions) to read. As Kafka's LinkedHashMap of partitions: a partition
    asked twice is read once, where it was first asked, with what it was last asked, and
    consecutive partitions of one topic are one topic of the answer."""
    keys, previous, plain = set(), None, True
    for t in topics:
        name = t.get("topic") or t.get("topic_id")
        plain = plain and name != previous
        previous = name
        for p in t.partitions:
            plain = plain and (name, p.partition) not in keys
            keys.add((name, p.partition))
    if plain:  # every partition once, no topic twice in a row: as asked (nearly every fetch)
        return [(t, t.partitions) for t in topics]
    latest: dict = {}
    for t in topics:
        for p in t.partitions:
            latest[(t.get("topic") or t.get("topic_id"), p.partition)] = (t, p)
    out: list = []
    for (name, _), (t, p) in latest.items():
        if out and out[-1][0] == name:
            out[-1][2].append(p)
        else:
            out.append((name, t, [p]))
    return [(t, parts) for _, t, parts in out]


def replica_id(req, version: int) -> int:
    """The fetching follower's broker id (-1 for a consumer): in replica_state from v15."""
    if version >= 15:
        state = req.get("replica_state") or {}
        return state.get("replica_id", -1)
    return req.get("replica_id", -1)


def _read(req, ctx) -> tuple[dict, int, list]:
    topics = ctx.engines.topics
    remaining = req.get("max_bytes", 0x7FFFFFFF)  # (0: the first batch alone, as on Kafka)
    if remaining < 0:
        remaining = 0x7FFFFFFF
    most = ctx.engines.quotas.fetch_limit(ctx)  # consumer_byte_rate: at most a window's worth
    if most is not None and most < remaining:
        remaining = most
    committed = req.get("isolation_level", READ_UNCOMMITTED) == READ_COMMITTED
    cluster = ctx.engines.cluster
    follower = replica_id(req, ctx.api_version) if cluster is not None else -1
    leaders = None  # the leaders named in refusals (KIP-951's node_endpoints)
    from_follower_ok = follower < 0 and ctx.api_version >= 11  # a consumer may read a follower (KIP-392)
    kip_951 = ctx.api_version >= LEADERS_SINCE  # refusals name the current leader (KIP-951)
    from_replica = replica_id(req, ctx.api_version) >= 0
    lone_follower = cluster is None and from_replica  # one node: no follower
    client_rack = req.get("rack_id") if cluster is not None and follower < 0 else None  # (v11+)
    total = 0
    reads = []  # (topic, partition, bytes, batches) actually returned
    watched = []
    responses = []
    unknown_ids, refused = [], []  # answered after what was read (below)
    first = True
    regions = ctx.session.zero_copy
    # a replica's fetch needs CLUSTER_ACTION; without it, every partition is refused whatever it names
    replica_denied = from_replica and not ctx.authorize(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME)
    for t, partitions in wanted(req.topics):
        name = t.get("topic")
        topic = topics.get(name) if name is not None else topics.by_id(t.topic_id)
        if replica_denied:
            refused += [(topic.name if topic else name, t.get("topic_id"),
                         _error_entry(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED, [])) for p in partitions]
            continue
        allowed = ctx.authorize(READ, TOPIC, topic.name if topic is not None else name or "")
        parts = []
        for p in partitions:
            index = p.partition
            if not allowed or topic is None or not 0 <= index < len(topic.partitions):
                code = (ErrorCode.UNKNOWN_TOPIC_ID if topic is None and name is None  # (before authorization)
                        else ErrorCode.TOPIC_AUTHORIZATION_FAILED if not allowed
                        else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                (unknown_ids if code == ErrorCode.UNKNOWN_TOPIC_ID and not from_replica else refused).append(
                    (topic.name if topic else name, t.get("topic_id"), _error_entry(index, code, [])))
                continue
            plog = topic.partitions[index]
            epoch_error = leader_error(plog, p.get("current_leader_epoch", -1), follower_may_answer=from_follower_ok)
            if epoch_error is None and (lone_follower or follower >= 0 and not _assigned(plog, follower)):
                entry = _error_entry(index, _unknown_replica(p))
                if entry["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER and kip_951:  # who leads it
                    entry["current_leader"] = leader = current_leader(plog, ctx.engines.node_id)
                    leaders = (leaders or set()) | {leader["leader_id"]}
                parts.append(entry)
                continue
            offset = p.fetch_offset
            start = plog.log_start_offset
            if epoch_error is None:
                # the last fetched epoch before the offset (Kafka's order): a fetcher ahead of
                # a new leader is told where to truncate, not that it is out of range
                diverging = divergence(plog, offset, p.get("last_fetched_epoch"))
                if isinstance(diverging, tuple):
                    parts.append(_diverging_entry(index, plog, *diverging))
                    total += 1  # (a diverging answer goes at once)
                    continue
                epoch_error = diverging
            if epoch_error is not None or offset < start or offset > plog.log_end_offset:
                entry = _error_entry(index, epoch_error or ErrorCode.OFFSET_OUT_OF_RANGE)
                if epoch_error in _LEADER_MOVED and plog.replica is not None and kip_951:
                    entry["current_leader"] = leader = current_leader(plog)
                    leaders = (leaders or set()) | {leader["leader_id"]}
                parts.append(entry)
                continue
            entry = {"partition_index": index, "error_code": 0, "high_watermark": plog.high_watermark,
                     "last_stable_offset": plog.last_stable_offset, "log_start_offset": start,
                     "aborted_transactions": [] if committed else None,
                     "preferred_read_replica": -1, "records": b""}
            if follower >= 0:  # (replication is not counted as consumption, nor quota'd)
                size = _follower_read(cluster, plog, follower, p, entry, ctx.now)
                total += size
                if not size:
                    watched.append((plog.topic, index))
                parts.append(entry)
                continue
            if client_rack and plog.replica is not None and plog.replica.is_leader:
                preferred = cluster.preferred_read_replica(plog, client_rack, offset, ctx.now)
                if preferred is not None:  # KIP-392: no records, the replica to read from instead
                    entry["preferred_read_replica"] = preferred  # (nothing read: no aborted list)
                    entry["aborted_transactions"] = None
                    parts.append(entry)
                    total += 1  # (answered at once, as Kafka does)
                    continue
            limit = min(p.partition_max_bytes, remaining)
            # read_committed: nothing at or past the last stable offset
            # one segment per partition, as Kafka's UnifiedLog.read: the consumer's next
            # fetch goes on from there
            got = plog.read(offset, limit, always_one=first, read_committed=committed, one_segment=True,
                            regions=regions)
            if got.chunks:
                first = False
                size = got.size
                entry["records"] = got.chunks
                if size < limit:
                    head = plog.batch_head(got.last_offset + 1, limit - size, read_committed=committed)
                    if head is not None:
                        entry["records"] = [*got.chunks, head]
                        size += len(head)
                if committed:
                    entry["aborted_transactions"] = plog.aborted_transactions(offset, got.last_offset + 1)
                remaining -= size
                total += size
                reads.append((plog.topic, index, size, got.records))
            watched.append((plog.topic, index))
            parts.append(entry)
        if parts:  # a topic that names no partition has no answer, as Kafka's
            responses.append({"topic": topic.name if topic else name, "topic_id": t.get("topic_id"),
                              "partitions": parts})
    if unknown_ids or refused:
        _answer_after(responses, unknown_ids + refused)
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}
    if leaders and kip_951:
        body["node_endpoints"] = node_endpoints(ctx, leaders)
    return body, total, watched, reads


def _answer_after(responses: list, entries: list) -> None:
    """Kafka's KafkaApis answers the partitions it could not read after those it read: an
    unknown topic id's first, then the refused and unknown ones, each in the order asked (a
    replica's Fetch: all in the order asked, one pass); a partition next to one of the same
    topic shares its topic entry (FetchResponse.of)."""
    for name, topic_id, entry in entries:
        last = responses[-1] if responses else None
        if last is not None and last["topic"] == name and last["topic_id"] == topic_id:
            last["partitions"].append(entry)
        else:
            responses.append({"topic": name, "topic_id": topic_id, "partitions": [entry]})


def _assigned(plog, follower: int) -> bool:
    """Whether ``follower`` is one of the partition's replicas this leader follows."""
    return plog.replica is None or follower in plog.replica.followers


def _unknown_replica(p) -> ErrorCode:
    """A replica's Fetch from a broker not among the partition's replicas, after the leader
    epoch checked out (Kafka's followerReplicaOrThrow): a fetch that names the epoch is told it
    is not yet known there, so the follower retries; one that does not, that this is no leader."""
    epoch = p.get("current_leader_epoch")  # (none before v9)
    if epoch is not None and epoch >= 0:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.NOT_LEADER_OR_FOLLOWER


def _follower_read(cluster, plog, follower: int, p, entry: dict, now: int) -> int:
    """A follower's read into ``entry``, to the log end; the leader notes how far the
    follower has got. The bytes read."""
    offset = p.fetch_offset
    got = plog.read(offset, p.partition_max_bytes, to_log_end=True, one_segment=True)
    if got.chunks:
        entry["records"] = got.chunks
    cluster.follower_fetched(plog, follower, offset, now, p.get("log_start_offset", -1))
    entry["high_watermark"] = plog.high_watermark
    entry["last_stable_offset"] = plog.last_stable_offset
    return got.size


def _diverging_entry(index: int, plog, epoch: int, end_offset: int) -> dict:
    """A fetch past the end of the epoch it says it last fetched: nothing read, the epoch and
    its end offset to truncate to (Kafka's divergingEpoch). Nothing was read, so no list of
    aborted transactions either, even read_committed (Kafka's FetchDataInfo.empty: null)."""
    return {"partition_index": index, "error_code": 0, "high_watermark": plog.high_watermark,
            "last_stable_offset": plog.last_stable_offset, "log_start_offset": plog.log_start_offset,
            "diverging_epoch": {"epoch": epoch, "end_offset": end_offset},
            "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}


def _count_out(ctx, reads) -> None:
    metrics = ctx.engines.metrics
    for topic, partition, size, count in reads:
        metrics.record_out(topic, partition, size, count)


def _answer(ctx, body: dict, size: int, reads):
    """The answer as read, or, for a consumer over its consumer_byte_rate, Kafka's
    throttled answer: no partitions, the throttle time, the connection muted (KIP-219)."""
    wait = ctx.engines.quotas.record_fetch(ctx, size, ctx.now)
    if wait:
        body = {"throttle_time_ms": wait, "error_code": 0, "session_id": 0, "responses": []}
        return Reply(body, mute_ms=wait)
    _count_out(ctx, reads)
    return body


def handle_fetch(req, ctx):
    if ctx.api_version >= SESSIONS_SINCE and req.session_epoch not in FULL_FETCH_EPOCHS:
        # an incremental fetch of a session this broker never opened (it opens none)
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.FETCH_SESSION_ID_NOT_FOUND), "session_id": 0,
                "responses": []}
    body, size, watched, reads = _read(req, ctx)
    at_once = size >= req.min_bytes or req.max_wait_ms <= 0 or not watched
    if _fails_inside(body["responses"]):
        if at_once:  # Kafka's request handler catches it: the whole Fetch fails
            return {"throttle_time_ms": 0, "error_code": int(ErrorCode.UNKNOWN_SERVER_ERROR), "session_id": 0,
                    "responses": []}
        # (its delayed fetch fails when it completes, and never answers: closed at once here)
        return Reply(NO_RESPONSE, abort="a Fetch Kafka fails on: a partition after one of the zero topic id")
    if at_once:
        return _answer(ctx, body, size, reads)
    return _long_poll(req, ctx, watched)


def _fails_inside(responses: list) -> bool:
    """Whether Kafka 4.4 fails building this answer (FetchResponse.toMessage): it matches each
    partition to the previous topic entry by id, or, where that id is the zero UUID, by name,
    and an unknown topic id's name is null, so any partition answered after one of the zero
    topic id throws."""
    after_zero = False
    for t in responses:  # (an entry holds one partition at least: per topic, not per partition)
        if after_zero:
            return True
        after_zero = t["topic"] is None and (t.get("topic_id") or ZERO_UUID) == ZERO_UUID
        if after_zero and len(t["partitions"]) > 1:
            return True
    return False


async def _long_poll(req, ctx, watched):
    loop_time = ctx.engines.clock
    deadline = loop_time() + req.max_wait_ms
    while True:
        await ctx.engines.appends.wait(watched, (deadline - loop_time()) / 1000)
        body, size, watched, reads = _read(req, ctx)
        if size >= req.min_bytes or loop_time() >= deadline or not watched:
            return _answer(ctx, body, size, reads)
