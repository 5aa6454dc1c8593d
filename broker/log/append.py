"""The append path of one partition: producer-state check, append, commit.

Non-idempotent batches (producer id -1) go straight to the log. Idempotent
ones are validated by the partition's ProducerStateManager first; a rejected
request appends nothing, an exact retry of a stored batch appends nothing and
gets the original offset, and an accepted one is committed to producer state
only after the log append succeeded. Transactional batches are first checked
by the transaction coordinator (the partition must be in the producer's open
transaction, KIP-890 part 1) and, once appended, open the producer's
transaction in the partition's index (broker/txn).
"""

from __future__ import annotations

from kipper.broker.producer_state import DUPLICATE, REJECT
from kipper.protocol.errors import ErrorCode


def result(index: int, code: ErrorCode = ErrorCode.NONE, base_offset: int = -1,
           log_start_offset: int = -1, message: str | None = None) -> dict:
    return {"index": index, "error_code": int(code), "base_offset": base_offset,
            "log_append_time_ms": -1, "log_start_offset": log_start_offset,
            "error_message": message}


def _count_in(state, plog, records, spans) -> None:
    state.metrics.record_in(plog.topic, plog.partition, len(records),
                            sum(h.records_count for _, _, h in spans))


def append_records(state, plog, records, spans, now: int) -> dict:
    index = plog.partition
    headers = [h for _, _, h in spans]
    transactional = any(h.is_transactional for h in headers)
    if transactional:
        code, message = state.txn.check_append(plog.topic, index, headers)
        if code != ErrorCode.NONE:
            return result(index, code, log_start_offset=plog.log_start_offset, message=message)
    if all(h.producer_id < 0 for h in headers):
        base, _ = plog.append(records, spans, now)
        _count_in(state, plog, records, spans)
        return result(index, base_offset=base, log_start_offset=plog.log_start_offset)
    psm = state.producer_states.for_partition(plog.topic, index)
    validation = psm.validate(headers)
    psm.record(validation)
    if validation.outcome == REJECT:
        return result(index, validation.error, log_start_offset=plog.log_start_offset,
                      message=validation.message)
    if validation.outcome == DUPLICATE:
        return result(index, base_offset=validation.duplicate_base_offset,
                      log_start_offset=plog.log_start_offset)
    base, _ = plog.append(records, spans, now)
    last_offsets = []
    offset = base
    for h in headers:
        last = offset + h.last_offset_delta
        if h.producer_id >= 0:
            last_offsets.append(last)
        offset = last + 1
    psm.commit(validation, last_offsets, now)
    if transactional:
        state.txn.appended(plog.topic, index, headers, base)
    _count_in(state, plog, records, spans)
    return result(index, base_offset=base, log_start_offset=plog.log_start_offset)
