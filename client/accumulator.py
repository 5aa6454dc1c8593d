"""The record accumulator (seed 001): per-partition queues of batches.

The caller's thread appends; the send thread drains. Records for a topic
whose metadata is not known yet wait, unpartitioned, in that topic's
undesignated queue and are partitioned when metadata arrives, so ``send``
never blocks on the network. ``buffer.memory`` bounds the bytes held;
``append`` reports when a caller must wait for space.

Sans-I/O: time is an argument, locking is the caller's (the Producer holds
one lock around every call).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

from kipper.client.batch import Callback, ProducerBatch, RecordFuture, prepared_record

TopicPartition = tuple[str, int]


@dataclass
class PendingRecord:
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: list | None
    future: RecordFuture
    callback: Callback | None
    partition: int | None  # None unless the caller chose one
    size: int
    enqueued: float


@dataclass
class Undesignated:
    """Records of one topic waiting for its metadata (seed 001)."""

    records: list[PendingRecord] = field(default_factory=list)
    gate: threading.Event = field(default_factory=threading.Event)
    since: float = 0.0


class Accumulator:
    def __init__(self, *, batch_size: int, linger_ms: int, buffer_memory: int):
        self.batch_size = batch_size
        self.linger = linger_ms / 1000.0
        self.buffer_memory = buffer_memory
        self.queues: dict[TopicPartition, deque[ProducerBatch]] = {}
        self.undesignated: dict[str, Undesignated] = {}
        # Bytes of records not yet completed = appended - released. ``appended``
        # only changes under the producer lock, ``released`` only on the send
        # thread, so completing a batch needs no lock.
        self.appended = 0
        self.released = 0
        self.flushing = 0  # >0 while a flush() waits: everything is ready now
        self.closing = False

    # --- caller side ----------------------------------------------------------------

    @property
    def used(self) -> int:
        return self.appended - self.released

    def has_room(self, size: int) -> bool:
        return self.used + size <= self.buffer_memory or self.used == 0

    def append(self, tp: TopicPartition, key, value, timestamp: int, headers, future: RecordFuture,
               callback: Callback | None, clock) -> tuple[ProducerBatch, bool]:
        """Append to the partition's open batch; returns (batch, new_batch_created).
        ``clock()`` is read only when a batch is created."""
        key, value, headers, size = prepared_record(key, value, headers)
        dq = self.queues.get(tp)
        new = False
        if dq is None:
            dq = self.queues[tp] = deque()
        batch = dq[-1] if dq else None
        if batch is not None and not batch.closed:
            if batch.room:
                self.unreserve(batch)
            index = batch.try_append(key, value, headers, timestamp, 0.0, size, self.batch_size)
            if index < 0:
                batch.closed = True
        else:
            index = -1
        if index < 0:  # a new batch takes any record, however large
            batch = ProducerBatch(tp[0], tp[1], clock())
            index = batch.try_append(key, value, headers, timestamp, 0.0, size, self.batch_size)
            dq.append(batch)
            new = True
        self.appended += size
        future.batch = batch
        future.index = index
        if callback is not None:
            batch.add_callback(future, callback)
        return batch, new

    def reserve(self, batch: ProducerBatch) -> None:
        """Hold the rest of an open batch's batch.size (as much as buffer.memory
        has free) for the fast path's records: see ProducerBatch.room."""
        extra = min(self.batch_size - batch.size, self.buffer_memory - (self.appended - self.released))
        if extra > 0:
            batch.room += extra
            batch.size += extra
            self.appended += extra

    def unreserve(self, batch: ProducerBatch) -> None:
        """Give back the room a batch did not use (it is closed, drained, or
        takes a record by the general path)."""
        room = batch.room
        if room:
            batch.room = 0
            batch.size -= room
            self.appended -= room

    def park(self, topic: str, record: PendingRecord) -> threading.Event:
        """Keep a record for a topic without metadata; returns the topic's gate."""
        u = self.undesignated.get(topic)
        if u is None:
            u = self.undesignated[topic] = Undesignated(since=record.enqueued)
        u.records.append(record)
        self.appended += record.size
        return u.gate

    def gate_for(self, topic: str, now: float) -> threading.Event:
        u = self.undesignated.get(topic)
        if u is None:
            u = self.undesignated[topic] = Undesignated(since=now)
        return u.gate

    # --- send-thread side ----------------------------------------------------------------

    def take_undesignated(self, topic: str) -> Undesignated | None:
        """Remove a topic's parked records (to partition them or fail them)."""
        u = self.undesignated.pop(topic, None)
        if u is not None:
            self.released += sum(r.size for r in u.records)
        return u

    def waiting_topics(self) -> list[str]:
        return [t for t, u in self.undesignated.items() if u.records]

    def ready_at(self, batch: ProducerBatch, dq: deque) -> float:
        """When the head batch of a queue may be sent (0: now)."""
        if batch.retry_at:
            return batch.retry_at
        if batch.closed or len(dq) > 1 or self.flushing or self.closing:
            return 0.0
        return batch.created + self.linger

    def drain(self, partitions, now: float, max_bytes: int, can_send) -> tuple[list[ProducerBatch], float]:
        """Pop the sendable head batches of ``partitions`` (one node's), up to
        ``max_bytes`` in total. ``can_send(tp, batch)`` applies in-flight and
        ordering limits. Returns (batches, next time something becomes ready)."""
        out = []
        total = 0
        next_ready = float("inf")
        for tp in partitions:
            dq = self.queues.get(tp)
            if not dq:
                continue
            batch = dq[0]
            at = self.ready_at(batch, dq)
            if at > now:
                next_ready = min(next_ready, at)
                continue
            if not can_send(tp, batch):
                continue
            if out and total + batch.size - batch.room > max_bytes:
                next_ready = now
                break
            dq.popleft()
            batch.closed = True
            self.unreserve(batch)
            out.append(batch)
            total += batch.size
        return out, next_ready

    def requeue(self, batch: ProducerBatch, retry_at: float) -> None:
        """Put a batch back for a retry, ahead of newer batches, in sequence order."""
        batch.retry_at = retry_at
        batch.in_flight = False
        tp = (batch.topic, batch.partition)
        dq = self.queues.setdefault(tp, deque())
        if batch.base_sequence < 0:
            dq.appendleft(batch)
            return
        i = 0
        for i, other in enumerate(dq):
            if other.base_sequence < 0 or _seq_after(other.base_sequence, batch.base_sequence):
                break
        else:
            i = len(dq)
        dq.insert(i, batch)

    def release(self, batch: ProducerBatch) -> None:
        """Send thread only."""
        self.released += batch.size
        batch.size = 0

    def next_ready_at(self, partitions) -> float:
        """When the first head batch of ``partitions`` may be sent (0: now)."""
        deadline = float("inf")
        for tp in partitions:
            dq = self.queues.get(tp)
            if dq:
                deadline = min(deadline, self.ready_at(dq[0], dq))
        return deadline

    def pending_batches(self):
        for dq in self.queues.values():
            yield from dq

    def partitions_with_data(self) -> list[TopicPartition]:
        return [tp for tp, dq in self.queues.items() if dq]

    def is_empty(self) -> bool:
        return not any(self.queues.values()) and not any(u.records for u in self.undesignated.values())


def _seq_after(a: int, b: int) -> bool:
    """True if sequence ``a`` comes after ``b`` on the 31-bit circle."""
    return a != b and ((a - b) & 0x7FFFFFFF) < (1 << 30)
