"""InitProducerId (KIP-98, KIP-360 epoch bumping).

Idempotent producers get their ids from the ProducerIdManager; a transactional
id goes to the transaction coordinator (broker/txn), which takes ids from the
same counter.

The response carries the broker's max.in.flight.sequence.number.per.connection
in a kipper tagged field (flexible versions), per seed 000 -- only in the
``latest`` producer-state mode: in ``window5`` the broker recognises just the
last five batches, so producers must keep Kafka's limit of five requests.
"""

from __future__ import annotations

from kipper.broker.acl.model import CLUSTER, CLUSTER_NAME, IDEMPOTENT_WRITE, TOPIC, TRANSACTIONAL_ID, WRITE
from kipper.broker.producer_state.ids import ProducerIdsUnavailable
from kipper.protocol.errors import ErrorCode


def _denied(req, ctx) -> ErrorCode | None:
    """WRITE on the transactional id; for idempotence, IDEMPOTENT_WRITE on the cluster or
    WRITE on some topic (KIP-679), as Kafka checks."""
    if req.transactional_id is not None:
        if not ctx.authorize(WRITE, TRANSACTIONAL_ID, req.transactional_id):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        return None
    if ctx.authorize(IDEMPOTENT_WRITE, CLUSTER, CLUSTER_NAME) or ctx.authorize_any(WRITE, TOPIC):
        return None
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def handle_init_producer_id(req, ctx):
    engines = ctx.engines
    window = (engines.config["max.in.flight.sequence.number.per.connection"]
              if engines.config["producer.state.mode"] == "latest" else -1)
    denied = _denied(req, ctx)
    if denied is not None:
        return {"throttle_time_ms": 0, "error_code": int(denied), "producer_id": -1, "producer_epoch": -1,
                "max_in_flight_sequence_number_per_connection": window}
    if req.transactional_id == "":  # Kafka's coordinator refuses an empty transactional id
        return {"throttle_time_ms": 0, "error_code": int(ErrorCode.INVALID_REQUEST), "producer_id": -1,
                "producer_epoch": -1, "max_in_flight_sequence_number_per_connection": window}
    try:
        error, pid, epoch = _init(req, ctx)
    except ProducerIdsUnavailable:
        error, pid, epoch = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1, -1
    return {"throttle_time_ms": 0, "error_code": int(error), "producer_id": pid,
            "producer_epoch": epoch,
            "max_in_flight_sequence_number_per_connection": window}


def _init(req, ctx) -> tuple[ErrorCode, int, int]:
    engines = ctx.engines
    if req.transactional_id is not None:
        error, pid, epoch, _ = engines.txn.init_producer_id(
            req.transactional_id, req.transaction_timeout_ms, req.get("producer_id", -1),
            req.get("producer_epoch", -1), ctx.now)
        if error == ErrorCode.PRODUCER_FENCED and ctx.api_version < 4:
            error = ErrorCode.INVALID_PRODUCER_EPOCH  # v4 brought PRODUCER_FENCED (KIP-588)
    else:
        error, pid, epoch = engines.producer_ids.init(req.get("producer_id", -1),
                                                    req.get("producer_epoch", -1))
    return error, pid, epoch
