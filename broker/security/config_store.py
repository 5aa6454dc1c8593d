"""Files of the broker's config store (``config.dir``): users.json, quotas.json.

Writes are atomic (temporary file, fsync, rename) and read-modify-write runs
under an advisory lock on ``.config.lock``, so ``kipper users`` editing the directory
offline and a running broker answering AlterUserScramCredentials or
AlterClientQuotas do not lose each other's changes. ``changed()`` compares the
file's identity (inode, size, mtime) so the broker can reload cheaply.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path


LOCK = ".config.lock"


class StoreFile:
    def __init__(self, directory: str | Path, name: str):
        self.directory = Path(directory)
        self.path = self.directory / name
        self._seen: tuple | None = None

    def _identity(self) -> tuple | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def changed(self) -> bool:
        return self._identity() != self._seen

    def read(self) -> dict:
        """The file's content ({} when absent); remembers its identity."""
        identity = self._identity()
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._seen = None
            return {}
        self._seen = identity
        data = json.loads(text) if text.strip() else {}
        if not isinstance(data, dict):
            raise ValueError(f"{self.path}: expected a JSON object")
        return data

    def write(self, data: dict) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self._seen = self._identity()

    @contextlib.contextmanager
    def locked(self):
        """Hold the directory's lock for a read-modify-write."""
        self.directory.mkdir(parents=True, exist_ok=True)
        # not ``.lock``: with log.dirs and no config.dir the store lives in the first log
        # directory, whose ``.lock`` the running broker holds (storage/files.py DirLock); a
        # flock on a second descriptor of that file would wait forever, on the event loop
        fd = os.open(self.directory / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
