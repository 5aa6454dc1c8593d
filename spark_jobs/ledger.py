"""Each load record's identity, and each producer's ledger of what became of its records.

Every value the loadgen writes starts with 20 bytes: ``kpr1``, the producer's uid
(8 bytes, big-endian) and the producer's counter (8 bytes, big-endian, 0, 1, 2, ...).
A uid names one producer instance of one task (a replaced or restarted producer is a
new uid); spark_jobs/audit.py reads the identities back. The ledger keeps one status
byte per counter (pending, acknowledged, failed, aborted), set from the delivery
callbacks, and reports them as ranges of counters: a healthy run is one range.
Nothing here talks to Spark or a broker.
"""

from __future__ import annotations

import struct

MAGIC = b"kpr1"
IDENTITY = struct.Struct(">4sqq")
IDENTITY_SIZE = IDENTITY.size  # 20: a value is at least this long
PENDING, ACKED, FAILED, ABORTED = 0, 1, 2, 3
STATES = {ACKED: "acked", FAILED: "failed", PENDING: "unacknowledged", ABORTED: "aborted"}
GROW = 1 << 16


def uid(task: int, n: int) -> int:
    """The ``n``-th producer instance of task ``task``."""
    return task << 32 | n


def identity(value: bytes) -> tuple[int, int] | None:
    """(uid, counter) of a marked value, else None."""
    if len(value) < IDENTITY_SIZE or value[:4] != MAGIC:
        return None
    _, u, c = IDENTITY.unpack_from(value)
    return u, c


class Ledger:
    """One producer instance's records: ``next()`` numbers them, the callbacks settle them."""

    __slots__ = ("uid", "role", "topics", "sent", "status")

    def __init__(self, uid: int, role: str, topics):
        self.uid = uid
        self.role = role
        self.topics = sorted(set(topics))
        self.sent = 0
        self.status = bytearray(GROW)

    def next(self) -> int:
        """The next counter (the caller's thread only)."""
        c = self.sent
        self.sent = c + 1
        if c >= len(self.status):
            self.status.extend(bytes(GROW))  # a callback writing meanwhile writes below c
        return c

    def value(self, counter: int, tail: bytes) -> bytes:
        return IDENTITY.pack(MAGIC, self.uid, counter) + tail

    def settle(self, first: int, last: int, state: int) -> None:
        """Counters ``first..last`` (a transaction) settled at once."""
        self.status[first:last + 1] = bytes([state]) * (last + 1 - first)

    def result(self) -> dict:
        out = {"uid": self.uid, "role": self.role, "topics": self.topics, "sent": self.sent}
        view = bytes(self.status[:self.sent])
        for state, name in STATES.items():
            out[name] = ranges(view, state)
        return out


def ranges(view: bytes, state: int) -> list[list[int]]:
    """[[first, last], ...] of the counters whose status byte is ``state``, inclusive."""
    out, pos, n = [], 0, len(view)
    mark = bytes([state])
    while pos < n:
        start = view.find(mark, pos)
        if start < 0:
            break
        end = start + 1
        while end < n and view[end] == state:  # runs are long: jump by find of any other byte
            others = [i for i in (view.find(bytes([s]), end) for s in STATES if s != state) if i >= 0]
            end = min(others) if others else n
        out.append([start, end - 1])
        pos = end
    return out


def count(rs: list[list[int]]) -> int:
    return sum(b - a + 1 for a, b in rs)


def synthetic(uid_: int, role: str, topics, sent: int, acked: list[list[int]] | None = None,
              aborted: list[list[int]] | None = None) -> dict:
    """A ledger entry for records written without a Ledger (the Spark sink, tests)."""
    acked = [[0, sent - 1]] if acked is None and sent else (acked or [])
    return {"uid": uid_, "role": role, "topics": sorted(set(topics)), "sent": sent, "acked": acked,
            "failed": [], "unacknowledged": [], "aborted": aborted or []}
