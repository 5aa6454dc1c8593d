"""Producer state to and from Kafka's snapshot entries, and replay from the log.

A snapshot entry is one producer: its epoch and its newest batch (last sequence,
last offset, offset delta, timestamp), plus the first offset of its open
transaction. Restoring loads those rows; replaying applies the batches stored
after the snapshot, so the state after a restart is the state before it. As in
Kafka's snapshots, window5 mode keeps only each producer's newest batch across
a restart.
"""

from __future__ import annotations

from kipper.broker.producer_state.manager import ProducerStateManager
from kipper.protocol.coordinator_records import SnapshotEntry

NO_COORDINATOR_EPOCH = -1


def snapshot_entries(psm: ProducerStateManager, open_transactions: dict[int, int]) -> list[SnapshotEntry]:
    table = psm.table
    out = []
    for row in range(len(table)):
        pid = table.pids[row]
        newest = table.newest(row)
        last_seq, last_offset, delta, ts = newest if newest else (-1, -1, -1, table.last_write(row))
        out.append(SnapshotEntry(pid, table.epochs[row], last_seq, last_offset, delta, ts,
                                 psm.coordinator_epochs.get(pid, NO_COORDINATOR_EPOCH),
                                 open_transactions.get(pid, -1)))
    return out


def restore(psm: ProducerStateManager, entries) -> dict[int, int]:
    """Load ``entries`` into an empty manager; the open transactions (pid -> first offset)."""
    table = psm.table
    ongoing = {}
    for e in entries:
        row = table.insert(e.producer_id, e.epoch)
        if e.offset_delta >= 0:
            table.push_batch(row, e.last_sequence, e.last_offset, e.offset_delta, e.timestamp)
        else:
            table.set_empty(row, e.timestamp)
        if e.coordinator_epoch >= 0:
            psm.coordinator_epochs[e.producer_id] = e.coordinator_epoch
        if e.current_txn_first_offset >= 0:
            ongoing[e.producer_id] = e.current_txn_first_offset
    return ongoing


def replay_batch(psm: ProducerStateManager, h, base_offset: int) -> None:
    """A stored idempotent batch, applied without checks (it was checked when appended)."""
    psm.store_batch(h.producer_id, h.producer_epoch, h.last_sequence, base_offset + h.last_offset_delta,
                    h.last_offset_delta, h.max_timestamp)
