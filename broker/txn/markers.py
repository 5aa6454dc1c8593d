"""COMMIT/ABORT markers as the transaction coordinator writes them.

A marker is a broker-written control batch with the transactional bit, the
producer's id and epoch and an EndTxnMarker value (version 0, coordinator
epoch). The partition it goes to checks the epoch, appends it and closes the
producer's transaction there (``Partition.append``, origin COORDINATOR).
"""

from __future__ import annotations

from kipper.protocol import records


def marker_batch(producer_id: int, producer_epoch: int, committed: bool, coordinator_epoch: int,
                 now: int) -> bytes:
    return records.build_control_batch(
        records.COMMIT if committed else records.ABORT, records.end_txn_marker(coordinator_epoch),
        producer_id=producer_id, producer_epoch=producer_epoch, transactional=True, timestamp=now)
