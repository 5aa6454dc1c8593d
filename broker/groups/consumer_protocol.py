"""The bytes classic consumers put in JoinGroup metadata and SyncGroup assignments.

ConsumerProtocolSubscription (version, topics, user data, v1+ owned partitions)
and ConsumerProtocolAssignment (version, partitions by topic, user data), both in
Kafka's non-flexible encoding. The broker reads them only where the protocols
meet: a classic group becoming a KIP-848 group, and classic members inside one.
"""

from __future__ import annotations

import struct


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes):
        self.data = bytes(data)
        self.pos = 0

    def _take(self, fmt: str):
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def string(self) -> str:
        size = self.int16()
        if size < 0:
            return ""
        text = self.data[self.pos:self.pos + size].decode("utf-8")
        self.pos += size
        return text

    def skip_bytes(self) -> None:
        size = self.int32()
        self.pos += max(size, 0)

    def topic_partitions(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for _ in range(self.int32()):
            name = self.string()
            out[name] = [self.int32() for _ in range(self.int32())]
        return out

    @property
    def done(self) -> bool:
        return self.pos >= len(self.data)


def parse_subscription(metadata: bytes) -> tuple[list[str], dict[str, list[int]]] | None:
    """(topics, owned partitions by topic) of a ConsumerProtocolSubscription; None
    when the bytes are not one (the member cannot be converted)."""
    try:
        r = _Reader(metadata)
        version = r.int16()
        topics = [r.string() for _ in range(r.int32())]
        r.skip_bytes()
        owned = r.topic_partitions() if version >= 1 and not r.done else {}
        return topics, owned
    except (struct.error, UnicodeDecodeError):
        return None


def parse_assignment(data: bytes) -> dict[str, list[int]] | None:
    if not data:
        return {}
    try:
        r = _Reader(data)
        r.int16()
        return r.topic_partitions()
    except (struct.error, UnicodeDecodeError):
        return None


def encode_assignment(partitions: dict[str, list[int]]) -> bytes:
    """A version 0 ConsumerProtocolAssignment, no user data."""
    out = [struct.pack(">hi", 0, len(partitions))]
    for name, parts in sorted(partitions.items()):
        raw = name.encode("utf-8")
        out.append(struct.pack(">h", len(raw)) + raw + struct.pack(">i", len(parts)))
        out.append(struct.pack(f">{len(parts)}i", *sorted(parts)))
    out.append(struct.pack(">i", -1))
    return b"".join(out)
