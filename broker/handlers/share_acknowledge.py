"""ShareAcknowledge (KIP-932): acknowledgements outside a ShareFetch.

The share session must exist (epoch 0 cannot open one here); epoch -1
applies the acknowledgements, then closes the session and releases what the
member still holds. That works after the member's leave heartbeat too: records
stay acquired until the share session ends.
"""

from __future__ import annotations

from kipper.broker.handlers.share_answer import current_leader
from kipper.broker.handlers.share_fetch import apply_acknowledgements, top_level_error
from kipper.broker.handlers.share_group import share_groups_enabled
from kipper.broker.acl.model import GROUP, READ
from kipper.broker.share.sessions import FINAL_EPOCH
from kipper.protocol.errors import ErrorCode


def handle_share_acknowledge(req, ctx):
    share = ctx.engines.share
    now = ctx.now
    if not share_groups_enabled(ctx):
        return top_level_error(ErrorCode.UNSUPPORTED_VERSION, None)
    if req.group_id is None:  # (Kafka's check, before authorization; "" is a group's name here)
        return top_level_error(ErrorCode.INVALID_REQUEST, None)
    if not ctx.authorize(READ, GROUP, req.group_id):
        return top_level_error(ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    code, message, session = share.open_session(req.group_id, req.member_id,
                                                req.share_session_epoch, now, fetch=False,
                                                connection=ctx.session)
    if code != ErrorCode.NONE:
        return top_level_error(code, message)
    results = apply_acknowledgements(req, ctx, session, add_to_session=False,
                                     allow_renew=bool(req.get("is_renew_ack", False)))
    if req.share_session_epoch == FINAL_EPOCH:
        share.close_session(req.group_id, req.member_id, now)
    by_topic: dict = {}
    for (topic_id, partition), (error, message) in results.items():
        by_topic.setdefault(topic_id, []).append({
            "partition_index": partition, "error_code": int(error), "error_message": message,
            "current_leader": current_leader()})
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "acquisition_lock_timeout_ms": share.lock_duration_ms(req.group_id),
            "responses": [{"topic_id": t, "partitions": parts} for t, parts in by_topic.items()],
            "node_endpoints": []}
