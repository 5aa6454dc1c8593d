"""The batches ``Producer.send``'s fast path appends to (seed 001's accumulator,
kept by the SendEngine under the producer lock, read by the fast path without it).

- ``unkeyed``: topic -> the open batch its next unkeyed record goes to (the open
  tail of its sticky partition), while that batch has no keys or headers.
- ``keyed``: topic -> per partition, the open batch with keys and no headers the
  next keyed record for that partition goes to, or None; with ``key_hashes``,
  the partitioner's murmur2 of the keys it has seen. Only while keys are hashed
  (not with partitioner "random" or "sticky").

Each batch noted holds room for the fast path (Accumulator.reserve). A batch
that is closed, drained or completed has no room, so the fast path never
appends to it again, even while it is still noted.
"""

from __future__ import annotations

from kipper.client.accumulator import Accumulator
from kipper.client.batch import ProducerBatch
from kipper.client.partitioner import HASHED_MODES, Partitioner


class OpenBatches:
    def __init__(self, accumulator: Accumulator, partitioner: Partitioner, sticky: dict, mode: str):
        self.accumulator = accumulator
        self.sticky = sticky  # topic -> its sticky partition (the partitioner's, or empty)
        self.unkeyed: dict[str, ProducerBatch] = {}
        self.keyed: dict[str, list[ProducerBatch | None]] = {}
        self.key_hashes = partitioner.hashes
        self._hashed = mode in HASHED_MODES

    def note(self, topic: str, p: int, n: int, batch: ProducerBatch) -> None:
        """A record just went into ``batch``, partition ``p`` of ``n``: note
        the batches the topic's next records go to."""
        sticky = self.sticky.get(topic, -1)
        dq = self.accumulator.queues.get((topic, sticky)) if sticky >= 0 else None
        if dq and not dq[-1].closed and dq[-1].keys is None and dq[-1].headers is None:
            self.unkeyed[topic] = dq[-1]
            self.accumulator.reserve(dq[-1])
        else:
            self.unkeyed.pop(topic, None)
        if batch.keys is None or not self._hashed:
            return
        batches = self.keyed.get(topic)
        if batches is None or len(batches) != n:
            batches = self.keyed[topic] = [None] * n
        if not batch.closed and batch.headers is None:
            batches[p] = batch
            self.accumulator.reserve(batch)
        elif batches[p] is batch:
            batches[p] = None

    def keyed_batch(self, topic, key) -> ProducerBatch | None:
        """The noted batch a keyed record goes to on the fast path, if its key
        is bytes and the key's hash and that batch are known. Read without the
        lock (Producer.send checks the batch's room holding the token)."""
        if type(key) is not bytes:
            return None
        h = self.key_hashes.get(key)
        try:
            batches = self.keyed.get(topic)
        except TypeError:  # an unhashable topic: Producer._send says what is wrong
            return None
        if h is None or batches is None:
            return None
        return batches[h % len(batches)]

    def release_room(self, topic: str | None = None) -> None:
        """Give back the room held in ``topic``'s noted batches (every topic's
        if None): a record waits for buffer.memory, or the producer closes.
        The next record by the general path holds it again."""
        acc = self.accumulator
        for t, batch in list(self.unkeyed.items()):
            if topic is None or t == topic:
                acc.unreserve(batch)
        for t, batches in list(self.keyed.items()):
            if topic is None or t == topic:
                for batch in batches:
                    if batch is not None:
                        acc.unreserve(batch)

    def clear(self) -> None:
        """Metadata changed: partition counts may have too, so choose again."""
        self.unkeyed.clear()
        self.keyed.clear()
