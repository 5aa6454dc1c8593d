"""Small files the log directories keep, in Kafka's formats, written atomically.

- checkpoint files (``recovery-point-offset-checkpoint``,
  ``log-start-offset-checkpoint``): version 0, a count, then "topic partition offset"
  lines;
- ``meta.properties``: the node id and cluster id a directory belongs to;
- the ``.lock`` file a running broker holds, and ``.kafka_cleanshutdown``.

``write_atomically`` writes a temporary file, fsyncs it, renames it over the old
one and fsyncs the directory: a reader sees the old file or the new one, even
after a power cut.
"""

from __future__ import annotations

import errno
import fcntl
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

CHECKPOINT_VERSION = 0
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
LOCK = ".lock"
META = "meta.properties"
RECOVERY_POINTS = "recovery-point-offset-checkpoint"
LOG_START_OFFSETS = "log-start-offset-checkpoint"
CLEANER_OFFSETS = "cleaner-offset-checkpoint"


class StorageError(Exception):
    """A log directory cannot be used; the message says why, in one line."""


_background: ThreadPoolExecutor | None = None


def in_background(fn, *args) -> Future:
    """Run a blocking file call (fsync, closing a large file) on the storage thread, so the
    event loop does not wait on the disk; the calls release the GIL while they wait."""
    global _background
    if _background is None:
        _background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kipper-storage")
    return _background.submit(fn, *args)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes, *, sync: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        fsync_dir(path.parent)


def write_checkpoint(path: Path, offsets: dict[tuple[str, int], int], *, sync: bool = True) -> None:
    lines = [str(CHECKPOINT_VERSION), str(len(offsets))]
    lines += [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())]
    write_atomically(path, ("\n".join(lines) + "\n").encode(), sync=sync)


def read_checkpoint(path: Path) -> dict[tuple[str, int], int]:
    """The offsets of a checkpoint file; an unreadable one counts as absent."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        if int(lines[0]) != CHECKPOINT_VERSION:
            return {}
        count = int(lines[1])
        out = {}
        for line in lines[2:2 + count]:
            topic, partition, offset = line.rsplit(" ", 2)
            out[(topic, int(partition))] = int(offset)
        return out if len(out) == count else {}
    except (OSError, ValueError, IndexError):
        return {}


def read_properties_file(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def write_properties_file(path: Path, props: dict[str, str]) -> None:
    text = "#\n# written by kipper\n" + "".join(f"{k}={v}\n" for k, v in props.items())
    write_atomically(path, text.encode())


class DirLock:
    """An exclusive flock on ``<dir>/.lock``, held while the broker runs."""

    def __init__(self, directory: Path):
        self.path = directory / LOCK
        self.fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise StorageError(f"log directory {self.path.parent} is in use by another broker "
                                   f"(it holds {self.path})") from None
            raise
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
