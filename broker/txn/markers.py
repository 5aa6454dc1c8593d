"""Writing COMMIT/ABORT markers into a partition, as its leader does.

A marker is a broker-written control batch with the transactional bit, the
producer's id and epoch and an EndTxnMarker value (version 0, coordinator
epoch). Its epoch is checked against the partition's producer state first;
after the append the producer state takes the marker's epoch (fencing older
ones here) and the partition's transaction index closes the producer's open
transaction, recording it as aborted for read_committed fetches.
"""

from __future__ import annotations

from kipper.protocol import records
from kipper.protocol.errors import ErrorCode


def write_marker(state, txn_partitions, plog, producer_id: int, producer_epoch: int,
                 committed: bool, coordinator_epoch: int, now: int) -> ErrorCode:
    psm = state.producer_states.for_partition(plog.topic, plog.partition)
    error = psm.check_marker(producer_id, producer_epoch)
    if error != ErrorCode.NONE:
        return error
    batch = records.build_control_batch(
        records.COMMIT if committed else records.ABORT, records.end_txn_marker(coordinator_epoch),
        producer_id=producer_id, producer_epoch=producer_epoch, transactional=True, timestamp=now)
    offset = plog.append_batch(batch, now)
    psm.apply_marker(producer_id, producer_epoch, now)
    tp = txn_partitions.for_partition(plog.topic, plog.partition)
    tp.end(producer_id, offset, committed)
    tp.trim(plog.log_start_offset)
    state.appends.notify(plog.topic, plog.partition)
    return ErrorCode.NONE
