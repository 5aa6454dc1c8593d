"""Partitioning as the Java client does it: murmur2 of the key for keyed
records, a sticky partition for unkeyed ones (KIP-480: stay on one partition
until its batch is sent, then move on)."""

from __future__ import annotations

import random

HASHED_MODES = ("default", "murmur2", "murmur2_random")  # partitioner modes that hash a record's key

_M = 0x5BD1E995
_MASK32 = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's Utils.murmur2 (seed 0x9747b28c), as a signed 32-bit int."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK32
    n4 = length & ~3
    for i in range(0, n4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * _M) & _MASK32
        k ^= k >> 24
        k = (k * _M) & _MASK32
        h = (h * _M) & _MASK32
        h ^= k
    rest = length & 3
    if rest == 3:
        h ^= data[n4 + 2] << 16
    if rest >= 2:
        h ^= data[n4 + 1] << 8
    if rest >= 1:
        h ^= data[n4]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(n: int) -> int:
    return n & 0x7FFFFFFF


class Partitioner:
    """Chooses a partition; ``sticky`` is per topic and changes when told a
    batch for it was sent (``on_new_batch``)."""

    _CACHE_LIMIT = 65536

    def __init__(self, mode: str = "default"):
        self.mode = mode
        self.sticky: dict[str, int] = {}
        self.hashes: dict[bytes, int] = {}  # key -> positive murmur2 (read by Producer.send's keyed fast path)

    def partition(self, topic: str, key: bytes | None, num_partitions: int) -> int:
        if key is not None and self.mode in HASHED_MODES:
            h = self.hashes.get(key)
            if h is None:
                if len(self.hashes) >= self._CACHE_LIMIT:
                    self.hashes.clear()
                h = self.hashes[key] = to_positive(murmur2(key))
            return h % num_partitions
        if self.mode == "random":
            return random.randrange(num_partitions)
        p = self.sticky.get(topic)
        if p is None or p >= num_partitions:
            p = self.sticky[topic] = random.randrange(num_partitions)
        return p

    def on_new_batch(self, topic: str, previous: int, num_partitions: int) -> None:
        """The sticky partition filled a batch: pick another one (KIP-480)."""
        if self.sticky.get(topic) != previous or num_partitions < 2:
            return
        p = random.randrange(num_partitions - 1)
        self.sticky[topic] = p if p < previous else p + 1
