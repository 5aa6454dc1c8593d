"""The log directories of one broker: locks, identity, placement, checkpoints, clean stops.

Each directory in ``log.dirs`` is created if missing and locked (``.lock``) for
as long as the broker runs; ``meta.properties`` ties it to a node id and a
cluster id. A partition lives in ``<dir>/<topic>-<partition>/`` (in the
directory holding the fewest partitions when it is created), with Kafka's
``partition.metadata`` naming its topic id. The broker-wide checkpoint files
(``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``) are
rewritten when a log start moves and at a clean stop; the stop also leaves
``.kafka_cleanshutdown``, so that the next start trusts the indexes instead of
scanning. A deleted partition's directory is renamed ``...-delete`` and removed.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path

import structlog

from kipper.broker.storage import files
from kipper.broker.storage.file_log import FileLog, LogConfig
from kipper.broker.storage.files import StorageError
from kipper.protocol.uuid_text import uuid_from_text, uuid_text

log = structlog.get_logger(__name__)

_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")
PARTITION_METADATA = "partition.metadata"


class LogDirectory:
    def __init__(self, path: Path):
        self.path = path
        self.lock = files.DirLock(path)
        self.clean = False
        self.partitions = 0

    def prepare(self, node_id: int, cluster_id: str, cluster_id_given: bool) -> str:
        """Create, check, lock; the cluster id the directory belongs to."""
        path = self.path
        if path.exists() and not path.is_dir():
            raise StorageError(f"log directory {path} is not a directory (a file is in the way)")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create log directory {path}: {exc.strerror}") from None
        if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
            raise StorageError(f"log directory {path} is not readable and writable by this user")
        try:
            self.lock.acquire()
        except PermissionError:
            raise StorageError(f"cannot write the lock file in log directory {path}") from None
        meta_path = path / files.META
        if meta_path.exists():
            try:
                meta = files.read_properties_file(meta_path)
            except (OSError, UnicodeDecodeError) as exc:
                raise StorageError(f"cannot read {meta_path}: {exc}") from None
            stored_node = meta.get("node.id")
            if stored_node is not None and stored_node != str(node_id):
                raise StorageError(f"log directory {path} belongs to node.id {stored_node}, "
                                   f"not {node_id}")
            stored_cluster = meta.get("cluster.id", cluster_id)
            if cluster_id_given and stored_cluster != cluster_id:
                raise StorageError(f"log directory {path} belongs to cluster {stored_cluster}, "
                                   f"not {cluster_id}")
            cluster_id = stored_cluster
        else:
            files.write_properties_file(meta_path, {
                "version": "1", "node.id": str(node_id), "cluster.id": cluster_id,
                "directory.id": str(uuid.uuid4())})
        marker = path / files.CLEAN_SHUTDOWN
        self.clean = marker.exists()
        marker.unlink(missing_ok=True)  # a crash from here on is an unclean stop
        files.fsync_dir(path)
        return cluster_id


class LogManager:
    def __init__(self, dirs: list[str], *, node_id: int, cluster_id: str, cluster_id_given: bool):
        self.dirs = [LogDirectory(Path(d).expanduser().resolve()) for d in dirs]
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.cluster_id_given = cluster_id_given
        self.logs: dict[tuple[str, int], tuple[LogDirectory, FileLog]] = {}
        self._keys: dict[int, tuple[str, int]] = {}  # id(log) -> (topic, partition)
        self.recovery_points: dict[tuple[str, int], int] = {}
        self.log_starts: dict[tuple[str, int], int] = {}
        self.cleaner_points: dict[tuple[str, int], int] = {}

    @property
    def clean(self) -> bool:
        return all(d.clean for d in self.dirs)

    @property
    def first_dir(self) -> Path:
        return self.dirs[0].path

    def start(self) -> str:
        """Lock and check every directory; the cluster id they agree on."""
        seen = set()
        for d in self.dirs:
            if d.path in seen:
                raise StorageError(f"log directory {d.path} is listed twice in log.dirs")
            seen.add(d.path)
        try:
            clusters = {d.prepare(self.node_id, self.cluster_id, self.cluster_id_given) for d in self.dirs}
        except BaseException:
            self.release()
            raise
        if len(clusters) > 1:
            self.release()
            raise StorageError(f"log directories belong to different clusters: {sorted(clusters)}")
        self.cluster_id = clusters.pop()
        for d in self.dirs:
            for name, offset in files.read_checkpoint(d.path / files.RECOVERY_POINTS).items():
                self.recovery_points[name] = offset
            for name, offset in files.read_checkpoint(d.path / files.LOG_START_OFFSETS).items():
                self.log_starts[name] = offset
            for name, offset in files.read_checkpoint(d.path / files.CLEANER_OFFSETS).items():
                self.cleaner_points[name] = offset
            for entry in d.path.iterdir():
                if entry.is_dir() and entry.name.endswith("-delete"):
                    shutil.rmtree(entry, ignore_errors=True)  # a deletion a crash interrupted
        return self.cluster_id

    # --- partitions ------------------------------------------------------------------------------

    def _find(self, topic: str, partition: int) -> LogDirectory | None:
        name = f"{topic}-{partition}"
        for d in self.dirs:
            if (d.path / name).is_dir():
                return d
        return None

    def open_log(self, topic: str, partition: int, topic_id: uuid.UUID, config: LogConfig,
                 now_ms: int) -> FileLog:
        """The partition's log: the existing one (recovered after an unclean stop), or a
        new directory when there is none, or one of an older topic of the same name."""
        key = (topic, partition)
        d = self._find(topic, partition)
        if d is not None:
            directory = d.path / f"{topic}-{partition}"
            if _partition_topic_id(directory) == topic_id:
                log_ = FileLog.open(directory, config, log_start_offset=self.log_starts.get(key, 0),
                                    recovery_point=self.recovery_points.get(key, 0),
                                    clean=d.clean, now_ms=now_ms, owner=self)
                log_.cleaner_checkpoint = self.cleaner_points.get(key, log_.log_start_offset)
                return self._register(key, d, log_)
            self._remove_dir(directory, "stray")  # left by a deleted topic of the same name
        d = min(self.dirs, key=lambda x: x.partitions)
        directory = d.path / f"{topic}-{partition}"
        log_ = FileLog.create(directory, config, now_ms, owner=self)
        _write_partition_metadata(directory, topic_id)
        return self._register(key, d, log_)

    def dir_of(self, topic: str, partition: int) -> Path | None:
        """The log directory holding an open partition (DescribeLogDirs)."""
        entry = self.logs.get((topic, partition))
        return entry[0].path if entry is not None else None

    def partition_dir(self, topic: str, partition: int) -> Path | None:
        """The directory of an open partition's files (its segments, indexes, snapshots,
        and what other engines keep beside them: the share snapshot file)."""
        entry = self.logs.get((topic, partition))
        return entry[1].directory if entry is not None else None

    def _register(self, key, d: LogDirectory, log_: FileLog) -> FileLog:
        d.partitions += 1
        self.logs[key] = (d, log_)
        self._keys[id(log_)] = key
        return log_

    def log_start_moved(self, moved: FileLog) -> None:
        """DeleteRecords or retention moved a log start: persist it at once."""
        key = self._keys[id(moved)]
        self.log_starts[key] = moved.log_start_offset
        self._write_log_starts(self.logs[key][0])

    def log_deleted(self, deleted: FileLog) -> None:
        """The partition's topic was deleted: its directory goes."""
        key = self._keys.pop(id(deleted))
        d, _ = self.logs.pop(key)
        d.partitions -= 1
        self.recovery_points.pop(key, None)
        if self.log_starts.pop(key, None) is not None:
            self._write_log_starts(d)
        self._remove_dir(deleted.directory, "deleted")

    @staticmethod
    def _remove_dir(directory: Path, why: str) -> None:
        doomed = directory.with_name(f"{directory.name}.{uuid.uuid4().hex}-delete")
        os.replace(directory, doomed)
        shutil.rmtree(doomed, ignore_errors=True)
        log.info("partition_directory_removed", directory=str(directory), reason=why)

    def remove_strays(self, known: set[tuple[str, int]]) -> None:
        """Partition directories of no known topic: left by a deletion a crash cut short."""
        for d in self.dirs:
            for entry in d.path.iterdir():
                m = _PARTITION_DIR.match(entry.name)
                if entry.is_dir() and m and (m.group(1), int(m.group(2))) not in known \
                        and (entry / PARTITION_METADATA).exists():
                    self._remove_dir(entry, "stray")

    # --- checkpoints and stopping ----------------------------------------------------------------

    def _write_log_starts(self, d: LogDirectory) -> None:
        offsets = {k: v for k, v in self.log_starts.items() if self.logs.get(k, (None,))[0] is d}
        files.write_checkpoint(d.path / files.LOG_START_OFFSETS, offsets)

    def flush_due(self, now_ms: int) -> int:
        return sum(log_.flush_if_due(now_ms) for _, log_ in self.logs.values())

    def checkpoint(self) -> None:
        """Write every directory's recovery points and log start offsets."""
        for d in self.dirs:
            mine = {k: log_ for k, (dd, log_) in self.logs.items() if dd is d}
            files.write_checkpoint(d.path / files.RECOVERY_POINTS,
                                   {k: log_.recovery_point for k, log_ in mine.items()})
            files.write_checkpoint(d.path / files.LOG_START_OFFSETS,
                                   {k: log_.log_start_offset for k, log_ in mine.items()})
            files.write_checkpoint(d.path / files.CLEANER_OFFSETS,
                                   {k: log_.cleaner_checkpoint for k, log_ in mine.items()
                                    if log_.cleaner_checkpoint})

    def close(self) -> None:
        """After every partition closed its log: checkpoints, the clean-stop marker, unlock."""
        self.checkpoint()
        for d in self.dirs:
            files.write_atomically(d.path / files.CLEAN_SHUTDOWN, b"")
        self.release()

    def release(self) -> None:
        for d in self.dirs:
            d.lock.release()


def _write_partition_metadata(directory: Path, topic_id: uuid.UUID) -> None:
    files.write_atomically(directory / PARTITION_METADATA,
                           f"version: 0\ntopic_id: {uuid_text(topic_id)}\n".encode())


def _partition_topic_id(directory: Path) -> uuid.UUID | None:
    try:
        for line in (directory / PARTITION_METADATA).read_text(encoding="utf-8").splitlines():
            if line.startswith("topic_id:"):
                return uuid_from_text(line.split(":", 1)[1].strip())
    except (OSError, ValueError):
        return None
    return None


