"""Compact per-partition storage of producer-state entries.

Seed 000 is about broker memory per producer id, so entries are not Python
objects: each column is an ``array`` and an entry is a row number. A
linear-probing index of int32 row numbers maps producer ids to rows. Each row
keeps the producer id, its epoch and ``depth`` batch slots of (last sequence,
last offset, offset delta, timestamp) -- Kafka's BatchMetadata, whose
timestamp is the batch's max timestamp. ``depth`` is 1 for the ``latest`` mode
and 5 for ``window5``, which alone needs a ring position and a count per row.
Removing an entry moves the last row into its place.
"""

from __future__ import annotations

from array import array

_EMPTY = -1
_MIX = 0x9E3779B97F4A7C15  # Fibonacci hashing multiplier
_MASK64 = (1 << 64) - 1


class ProducerTable:
    __slots__ = ("depth", "ring", "pids", "epochs", "counts", "heads",
                 "last_seq", "last_offset", "offset_delta", "timestamp", "_index", "_shift")

    def __init__(self, depth: int):
        self.depth = depth
        self.ring = depth > 1
        self.pids = array("q")
        self.epochs = array("h")
        self.counts = array("b")  # batches held (<= depth); window mode only
        self.heads = array("b")  # slot of the newest batch (ring buffer); window mode only
        self.last_seq = array("i")
        self.last_offset = array("q")
        self.offset_delta = array("i")
        self.timestamp = array("q")
        self._shift = 64 - 3
        self._index = array("i", [_EMPTY]) * 8

    def __len__(self) -> int:
        return len(self.pids)

    # --- index ------------------------------------------------------------------

    def _slot(self, pid: int) -> int:
        return ((pid * _MIX) & _MASK64) >> self._shift

    def find(self, pid: int) -> int:
        """Row of ``pid``, or -1."""
        index = self._index
        mask = len(index) - 1
        i = self._slot(pid)
        pids = self.pids
        while True:
            row = index[i]
            if row == _EMPTY:
                return -1
            if pids[row] == pid:
                return row
            i = (i + 1) & mask

    def _place(self, pid: int, row: int) -> None:
        index = self._index
        mask = len(index) - 1
        i = self._slot(pid)
        while index[i] != _EMPTY:
            i = (i + 1) & mask
        index[i] = row

    def _grow(self) -> None:
        size = len(self._index) * 2
        self._shift -= 1
        self._index = array("i", [_EMPTY]) * size
        for row, pid in enumerate(self.pids):
            self._place(pid, row)

    def _index_slot_of_row(self, pid: int, row: int) -> int:
        index = self._index
        mask = len(index) - 1
        i = self._slot(pid)
        while index[i] != row:
            i = (i + 1) & mask
        return i

    # --- rows ----------------------------------------------------------------------

    def insert(self, pid: int, epoch: int) -> int:
        """A new row; a batch must be pushed before the row is read."""
        row = len(self.pids)
        if (row + 1) * 2 > len(self._index):
            self._grow()
        self.pids.append(pid)
        self.epochs.append(epoch)
        if self.ring:
            self.counts.append(0)
            self.heads.append(0)
        zeros_i = array("i", [0]) * self.depth
        zeros_q = array("q", [0]) * self.depth
        self.last_seq.extend(zeros_i)
        self.last_offset.extend(zeros_q)
        self.offset_delta.extend(zeros_i)
        self.timestamp.extend(zeros_q)
        self._place(pid, row)
        return row

    def push_batch(self, row: int, last_seq: int, last_offset: int, offset_delta: int,
                   timestamp: int) -> None:
        if not self.ring:
            self.last_seq[row] = last_seq
            self.last_offset[row] = last_offset
            self.offset_delta[row] = offset_delta
            self.timestamp[row] = timestamp
            return
        depth = self.depth
        count = self.counts[row]
        head = self.heads[row]
        if count:
            head = (head + 1) % depth
        slot = row * depth + head
        self.last_seq[slot] = last_seq
        self.last_offset[slot] = last_offset
        self.offset_delta[slot] = offset_delta
        self.timestamp[slot] = timestamp
        self.heads[row] = head
        self.counts[row] = min(count + 1, depth)

    def clear_batches(self, row: int) -> None:
        """Forget a row's batches (new epoch); in latest mode the next push
        overwrites the only slot anyway."""
        if self.ring:
            self.counts[row] = 0
            self.heads[row] = 0

    def batches(self, row: int):
        """(last_seq, last_offset, offset_delta, timestamp), newest first."""
        if not self.ring:
            if self.offset_delta[row] < 0:
                return  # emptied by a transaction marker
            yield (self.last_seq[row], self.last_offset[row], self.offset_delta[row],
                   self.timestamp[row])
            return
        depth = self.depth
        head = self.heads[row]
        base = row * depth
        for k in range(self.counts[row]):
            slot = base + (head - k) % depth
            yield (self.last_seq[slot], self.last_offset[slot], self.offset_delta[slot],
                   self.timestamp[slot])

    def newest(self, row: int):
        if not self.ring:
            if self.offset_delta[row] < 0:
                return None
            slot = row
        elif not self.counts[row]:
            return None
        else:
            slot = row * self.depth + self.heads[row]
        return (self.last_seq[slot], self.last_offset[slot], self.offset_delta[slot],
                self.timestamp[slot])

    def remove(self, row: int) -> None:
        """Delete ``row``: backward-shift its index slot, move the last row in."""
        pid = self.pids[row]
        self._unindex(self._index_slot_of_row(pid, row))
        last = len(self.pids) - 1
        if row != last:
            moved_pid = self.pids[last]
            self._index[self._index_slot_of_row(moved_pid, last)] = row
            for col in self._row_columns():
                col[row] = col[last]
            d = self.depth
            for col in (self.last_seq, self.last_offset, self.offset_delta, self.timestamp):
                col[row * d:(row + 1) * d] = col[last * d:(last + 1) * d]
        for col in self._row_columns():
            del col[last]
        d = self.depth
        for col in (self.last_seq, self.last_offset, self.offset_delta, self.timestamp):
            del col[last * d:]

    def _row_columns(self):
        return (self.pids, self.epochs, self.counts, self.heads) if self.ring else (self.pids, self.epochs)

    def last_write(self, row: int) -> int:
        # the newest slot's time, also when a marker emptied the row (set_empty)
        return self.timestamp[row * self.depth + self.heads[row] if self.ring else row]

    def set_empty(self, row: int, timestamp: int) -> None:
        """No batches for the row's (new) epoch yet, written at ``timestamp``: a
        transaction marker moved the epoch. Latest mode marks its one slot with
        offset delta -1, which no batch has."""
        if self.ring:
            self.counts[row] = 0
            self.heads[row] = 0
            self.timestamp[row * self.depth] = timestamp
        else:
            self.offset_delta[row] = -1
            self.timestamp[row] = timestamp

    def touch(self, row: int, timestamp: int) -> None:
        """A write without a batch (a marker at the current epoch): only the time moves."""
        self.timestamp[row * self.depth + self.heads[row] if self.ring else row] = timestamp

    def _unindex(self, i: int) -> None:
        index = self._index
        mask = len(index) - 1
        index[i] = _EMPTY
        j = i
        while True:
            j = (j + 1) & mask
            row = index[j]
            if row == _EMPTY:
                return
            home = self._slot(self.pids[row])
            # move the entry back if its home is not cyclically in (i, j]
            if (j > i and (home <= i or home > j)) or (j < i and (home <= i and home > j)):
                index[i] = row
                index[j] = _EMPTY
                i = j

    def nbytes(self) -> int:
        """Bytes held by the columns and the index (allocated, not just used)."""
        total = 0
        for col in (self.pids, self.epochs, self.counts, self.heads, self.last_seq, self.last_offset, self.offset_delta, self.timestamp,
                    self._index):
            total += col.buffer_info()[1] * col.itemsize
        return total
