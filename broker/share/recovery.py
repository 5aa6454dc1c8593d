"""Rebuilding a share-partition from its control records.

Recovery starts at the chain head kept in the ``Durable`` index entry, follows
each SHARE_DELTA's BackOffset back to the SHARE_CHECKPOINT with the same
checkpoint epoch, then applies checkpoint and deltas oldest first. Each step is
a lookup by offset in the partition's log, so recovery reads only the records
of the chain, never the whole log.
"""

from __future__ import annotations

from kipper.protocol import records
from kipper.protocol import share_records as sr


class RecoveryError(Exception):
    """The chain of control records is broken (a bug, or the log lost it)."""


def read_share_record(partition, offset: int):
    """(control type, value) of the share record stored at ``offset``."""
    if offset < partition.log_start_offset or offset >= partition.log_end_offset:
        raise RecoveryError(f"share record at {offset} is outside the log "
                            f"[{partition.log_start_offset}, {partition.log_end_offset})")
    found = partition.batch_at_offset(offset)
    if found is None or found[0] != offset:
        raise RecoveryError(f"no batch starts at share record offset {offset}")
    found = sr.decode_batch(found[1])
    if found is None:
        raise RecoveryError(f"batch at {offset} is not a share control record")
    return found


def read_chain(plog, group_id: str, head_offset: int, checkpoint_epoch: int):
    """(checkpoint value, [delta values oldest first]) ending at ``head_offset``."""
    deltas = []
    offset = head_offset
    while True:
        kind, value = read_share_record(plog, offset)
        if value.group_id != group_id or value.checkpoint_epoch != checkpoint_epoch:
            raise RecoveryError(f"record at {offset} belongs to {value.group_id} epoch "
                                f"{value.checkpoint_epoch}, not {group_id} epoch {checkpoint_epoch}")
        if kind == records.SHARE_CHECKPOINT:
            deltas.reverse()
            return value, deltas
        deltas.append(value)
        if value.back_offset >= offset:
            raise RecoveryError(f"delta at {offset} points forward to {value.back_offset}")
        offset = value.back_offset


def _entries(value) -> list[tuple[int, int, int, int]]:
    return [(s.base_offset, s.last_offset, s.state, s.delivery_count) for s in value.states]


def rebuild(sp, checkpoint, deltas, log) -> None:
    """Load ``sp`` (a fresh SharePartition) from decoded checkpoint and deltas."""
    sp.restore(checkpoint.start_offset, checkpoint.end_offset,
               [_entries(checkpoint)] + [_entries(d) for d in deltas], log)
    sp.move_start(log.log_start_offset)
