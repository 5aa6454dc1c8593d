"""The share snapshot file: where each share-partition's control records are (seed 004).

With log.dirs, each topic-partition that holds share-group state keeps a small
file next to its segments naming, per group, the latest SHARE_CHECKPOINT (the
SCO), the head of the chain and how far the log was read when it was written.
It is rewritten after every checkpoint, and written once before a partition's
first share record, so that after a crash only the records written since the
last rewrite have to be scanned to find every chain head again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Protocol

from kipper.broker.share.durable import Durable
from kipper.broker.storage.files import write_atomically
from kipper.protocol import batch as b
from kipper.protocol import records
from kipper.protocol import share_records as sr

VERSION = 1
FILE_NAME = "share-state.json"


class IndexFiles(Protocol):
    """Where ShareStore keeps each topic-partition's snapshot file: the one thing it
    stores beside the log rather than in it."""

    def read(self, topic: str, partition: int) -> bytes | None: ...

    def write(self, topic: str, partition: int, data: bytes) -> None: ...


class NoIndexFiles:
    """In memory (no log.dirs): there is no crash to recover from, so no file."""

    def read(self, topic: str, partition: int) -> None:
        return None

    def write(self, topic: str, partition: int, data: bytes) -> None:
        pass


class IndexFilesInLogDirs:
    """With log.dirs: the file lives in the partition's directory, next to its segments,
    and goes when the partition's directory goes."""

    def __init__(self, partition_dir: Callable[[str, int], Path | None]):
        self.partition_dir = partition_dir  # storage/log_manager.py's LogManager.partition_dir

    def read(self, topic: str, partition: int) -> bytes | None:
        directory = self.partition_dir(topic, partition)
        try:
            return (directory / FILE_NAME).read_bytes() if directory is not None else None
        except OSError:
            return None

    def write(self, topic: str, partition: int, data: bytes) -> None:
        directory = self.partition_dir(topic, partition)
        if directory is not None:
            write_atomically(directory / FILE_NAME, data, sync=False)


def encode(entries: dict[str, Durable], scanned_to: int) -> bytes:
    return json.dumps({"version": VERSION, "scanned_to": scanned_to, "groups": {
        g: [d.checkpoint_epoch, d.checkpoint_offset, d.head_offset, d.durable_end,
            d.deltas_since_checkpoint, d.last_checkpoint_ms] for g, d in entries.items()}}).encode()


def decode(data: bytes) -> tuple[dict[str, Durable], int]:
    doc = json.loads(data)
    if doc.get("version") != VERSION:
        raise ValueError(f"share snapshot version {doc.get('version')} is not supported")
    entries = {}
    for group_id, (epoch, sco, head, end, deltas, last_ms) in doc["groups"].items():
        entries[group_id] = Durable(group_id, epoch, sco, head, end, deltas, last_ms)
    return entries, int(doc["scanned_to"])


def rescan(partition, entries: dict[str, Durable], start: int) -> int:
    """Follow the share records written from ``start`` on (after a crash); how many."""
    found = 0
    for base, h, _ in partition.headers_from(start):
        if base < start or not h.attributes & b.CONTROL or h.attributes & b.TRANSACTIONAL:
            continue
        batch = partition.batch_at_offset(base)
        decoded = sr.decode_batch(batch[1]) if batch is not None else None
        if decoded is None:
            continue
        kind, value = decoded
        d = entries.setdefault(value.group_id, Durable(value.group_id))
        if kind == records.SHARE_CHECKPOINT:
            d.checkpoint_epoch, d.checkpoint_offset, d.head_offset = value.checkpoint_epoch, base, base
            d.durable_end, d.deltas_since_checkpoint = value.end_offset, 0
            d.last_checkpoint_ms = h.max_timestamp
        elif value.checkpoint_epoch == d.checkpoint_epoch and value.back_offset == d.head_offset:
            d.head_offset = base
            d.deltas_since_checkpoint += 1
            ends = [s.last_offset + 1 for s in value.states]
            d.durable_end = max([d.durable_end, *ends])
        found += 1
    return found
