"""ShareFetch (KIP-932): acknowledge, then acquire records for the member; long-poll.

Acknowledgements in the request are applied first, whatever else happens. With
MaxRecords > 0 records are then acquired from the session's partitions (up to
MaxRecords and MaxBytes, the first partition rotating between requests; whole
batches past MaxRecords unless ShareAcquireMode is record-limit, KIP-1206); which
partitions an answer reads, and when, is share_answer.py's. If fewer than MinBytes
are ready the request waits up to MaxWaitMs, woken after the requests whose appends
reach its partitions and by records becoming available again. Epoch -1 closes the
session.
"""

from __future__ import annotations

import asyncio

from kipper.broker.acl.model import GROUP, READ, TOPIC
from kipper.broker.handlers.share_answer import ShareFetchAnswer
from kipper.broker.handlers.share_group import share_groups_enabled
from kipper.broker.share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from kipper.protocol.errors import ErrorCode


def top_level_error(code: ErrorCode, message: str | None) -> dict:
    """Kafka's error answer: no partitions, and AcquisitionLockTimeoutMs left at 0."""
    return {"throttle_time_ms": 0, "error_code": int(code), "error_message": message,
            "acquisition_lock_timeout_ms": 0, "responses": [], "node_endpoints": []}


def apply_acknowledgements(req, ctx, session, *, add_to_session: bool, allow_renew: bool) -> dict:
    """Apply every acknowledgement batch of the request; (error, its text or None) per
    (topic id, partition)."""
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
                results[key] = ErrorCode.UNKNOWN_TOPIC_ID, None
            elif not ctx.authorize(READ, TOPIC, topic.name):
                results[key] = ErrorCode.TOPIC_AUTHORIZATION_FAILED, None
            elif not 0 <= p.partition_index < len(topic.partitions):
                results[key] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
            else:
                batches = [(a.first_offset, a.last_offset, a.acknowledge_types)
                           for a in p.acknowledgement_batches]
                results[key] = share.acknowledge(req.group_id, req.member_id, topic,
                                                 p.partition_index, batches, now,
                                                 allow_renew=allow_renew)
    return results


def handle_share_fetch(req, ctx):
    share = ctx.engines.share
    now = ctx.now
    epoch = req.share_session_epoch
    if not share_groups_enabled(ctx):
        return top_level_error(ErrorCode.UNSUPPORTED_VERSION, None)
    if req.group_id is None:  # (Kafka's check, before authorization; "" is a group's name here)
        return top_level_error(ErrorCode.INVALID_REQUEST, None)
    if not ctx.authorize(READ, GROUP, req.group_id):
        return top_level_error(ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    if req.get("is_renew_ack", False) and (epoch in (INITIAL_EPOCH, FINAL_EPOCH) or req.max_wait_ms
                                           or req.min_bytes or req.max_bytes or req.max_records):
        # Kafka's checks (KIP-1222): a renewal needs a session and fetches nothing (every
        # fetch limit 0)
        return top_level_error(ErrorCode.INVALID_REQUEST, None)
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
    answer = ShareFetchAnswer(req, ctx, session, results)
    if epoch == FINAL_EPOCH:
        share.close_session(req.group_id, req.member_id, now)
        return answer.body()
    if req.max_records <= 0 or req.get("is_renew_ack", False):
        return answer.body()
    if answer.start(now) or not answer.watch_keys():
        answer.complete(now)
        return answer.body()
    return _long_poll(answer, now + req.max_wait_ms)


async def _long_poll(answer: ShareFetchAnswer, deadline: int):
    """Wait until a wake-up answers it (broker/notify.py's watch: after the request whose
    appends woke it) or the deadline passes."""
    engines = answer.ctx.engines
    appends, clock = engines.appends, engines.clock
    answered = asyncio.get_running_loop().create_future()

    def wake() -> None:
        nonlocal watch
        if answered.done():
            return
        try:  # run by the request that appended: a failure here is this fetch's, not the Produce's
            done = answer.try_complete(clock())
        except Exception as exc:  # noqa: BLE001 - handed to the fetch's own dispatch
            answered.set_exception(exc)
            return
        if done:
            answered.set_result(None)
        else:
            watch = appends.watch(answer.watch_keys(), wake)

    watch = appends.watch(answer.watch_keys(), wake)
    try:
        await asyncio.wait_for(answered, max(deadline - clock(), 0) / 1000)
    except asyncio.TimeoutError:
        pass
    finally:
        watch.cancel()
    answer.complete(clock())
    return answer.body()
