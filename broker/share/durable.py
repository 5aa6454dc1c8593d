"""What a share-partition has written down: checkpoint epoch, SCO, chain head (sans-I/O).

``Durable`` turns engine changes into SHARE_DELTA values and engine states into
SHARE_CHECKPOINT values, following the seed's worked example: a delta names the
changed records, plus every record between the end of what is already written
and the changed ones (as they would be recovered: an acquired record with
delivery count n is written AVAILABLE with n - 1). Values are planned first and
committed only once the control batch is in the log. The same object is the
index entry that lets recovery find the chain without scanning the log.
"""

from __future__ import annotations

from dataclasses import dataclass

from kipper.broker.share.partition import SharePartition, merge_entries
from kipper.protocol import records

UINT16 = 0xFFFF
UNINITIALIZED = -1  # a SHARE_CHECKPOINT StartOffset: start again at share.auto.offset.reset


@dataclass(frozen=True)
class Pending:
    kind: int  # records.SHARE_CHECKPOINT or records.SHARE_DELTA
    value: dict
    checkpoint_epoch: int
    durable_end: int


def _states(entries) -> list[dict]:
    return [{"base_offset": f, "last_offset": last, "state": s, "delivery_count": n}
            for f, last, s, n in entries]


def _subtract(entries, ranges):
    """Parts of ``entries`` outside every (first, last) of ``ranges``."""
    out = list(entries)
    for lo, hi in ranges:
        nxt = []
        for f, last, s, n in out:
            if last < lo or f > hi:
                nxt.append((f, last, s, n))
                continue
            if f < lo:
                nxt.append((f, lo - 1, s, n))
            if last > hi:
                nxt.append((hi + 1, last, s, n))
        out = nxt
    return out


@dataclass
class Durable:
    group_id: str
    checkpoint_epoch: int = 0
    checkpoint_offset: int = -1  # the SCO: offset of the latest SHARE_CHECKPOINT
    head_offset: int = -1  # the latest SHARE_CHECKPOINT or SHARE_DELTA of this share-partition
    durable_end: int = 0  # end of the window as written (the SPEO recovery would see)
    deltas_since_checkpoint: int = 0
    last_checkpoint_ms: int = 0

    @property
    def uninitialized(self) -> bool:
        """The latest checkpoint is AlterShareGroupOffsets' -1: no state until the next load."""
        return self.checkpoint_offset >= 0 and self.durable_end == UNINITIALIZED

    def plan_checkpoint(self, sp: SharePartition) -> Pending:
        start, end, states = sp.checkpoint_view()
        epoch = (self.checkpoint_epoch + 1) & UINT16
        value = {"group_id": self.group_id, "checkpoint_epoch": epoch, "start_offset": start,
                 "end_offset": end, "states": _states(states)}
        return Pending(records.SHARE_CHECKPOINT, value, epoch, end)

    def plan_delta(self, sp: SharePartition, changes) -> Pending | None:
        if not changes:
            return None
        entries = list(changes)
        hi = max(last for _, last, _, _ in changes)
        if hi >= self.durable_end:
            fill = sp.durable_runs(self.durable_end, hi + 1)
            entries += _subtract(fill, [(f, last) for f, last, _, _ in changes])
        entries = merge_entries(entries)
        value = {"group_id": self.group_id, "checkpoint_epoch": self.checkpoint_epoch,
                 "back_offset": self.head_offset, "states": _states(entries)}
        return Pending(records.SHARE_DELTA, value, self.checkpoint_epoch,
                       max(self.durable_end, hi + 1))

    def commit(self, pending: Pending, offset: int, now: int) -> None:
        """The control batch of ``pending`` landed at ``offset``."""
        self.head_offset = offset
        self.durable_end = pending.durable_end
        if pending.kind == records.SHARE_CHECKPOINT:
            self.checkpoint_epoch = pending.checkpoint_epoch
            self.checkpoint_offset = offset
            self.deltas_since_checkpoint = 0
            self.last_checkpoint_ms = now
        else:
            self.deltas_since_checkpoint += 1
