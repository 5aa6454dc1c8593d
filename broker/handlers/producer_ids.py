"""InitProducerId for idempotent producers (KIP-98, KIP-360 epoch bumping).

The response carries the broker's max.in.flight.sequence.number.per.connection
in a kipper tagged field (flexible versions), per seed 000 -- only in the
``latest`` producer-state mode: in ``window5`` the broker recognises just the
last five batches, so producers must keep Kafka's limit of five requests.
"""

from __future__ import annotations

from protocol.errors import ErrorCode


def handle_init_producer_id(req, ctx):
    state = ctx.state
    window = (state.config["max.in.flight.sequence.number.per.connection"]
              if state.config["producer.state.mode"] == "latest" else -1)
    if req.transactional_id is not None:
        # Transactions are not implemented; refuse clearly instead of
        # handing out an id whose transactional guarantees we cannot keep.
        return {"error_code": int(ErrorCode.UNSUPPORTED_VERSION), "producer_id": -1,
                "producer_epoch": -1}
    error, pid, epoch = state.producer_ids.init(req.get("producer_id", -1),
                                                req.get("producer_epoch", -1))
    return {"throttle_time_ms": 0, "error_code": int(error), "producer_id": pid,
            "producer_epoch": epoch,
            "max_in_flight_sequence_number_per_connection": window}
