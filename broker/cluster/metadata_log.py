"""The controller's ``__cluster_metadata-0``: batches of metadata records, as KRaft keeps them.

The controller is the quorum's one voter: a batch is committed once appended (and flushed,
with log.dirs), so the high watermark is the log end. Each batch carries the quorum epoch as
its partition leader epoch; a durable log opened again starts the next epoch, as a KRaft
leader elected after a restart would. Brokers read it with Fetch (broker/handlers/
controller_apis.py) and the controller replays it into its image at start.
"""

from __future__ import annotations

from kipper.broker.cluster.epochs import LeaderEpochCache
from kipper.broker.storage.memory_log import MemoryLog
from kipper.protocol import batch as b
from kipper.protocol import metadata_records as mr


class MetadataLog:
    def __init__(self, storage=None, notify=None):
        self.storage = storage if storage is not None else MemoryLog()
        self._notify = notify  # (topic, partition): wakes the brokers' long-polling fetches
        self.epochs = LeaderEpochCache.from_headers(self.storage.headers_from(self.storage.log_start_offset))
        self.epoch = self.epochs.latest_epoch + 1 if self.epochs.epochs else 1
        self.epochs.assign(self.epoch, self.end_offset)

    @property
    def end_offset(self) -> int:
        return self.storage.log_end_offset

    @property
    def start_offset(self) -> int:
        return self.storage.log_start_offset

    def append(self, values: list[bytes], now: int) -> int:
        """Append record values as one batch; the offset of the first."""
        base = self.end_offset
        data = mr.build_batch(values, base_offset=base, epoch=self.epoch, timestamp=now)
        self.storage.append(data, b.split_batches(data), now, self.epoch)
        if hasattr(self.storage, "flush"):  # a durable log: committed once on disk
            self.storage.flush(now)
        if self._notify is not None:
            self._notify(mr.METADATA_TOPIC, 0)
        return base

    def read(self, offset: int, max_bytes: int):
        return self.storage.read(offset, max_bytes, always_one=True)

    def records(self, start: int = 0):
        """(offset, record) of every record from ``start``, for replay."""
        for _, data in self.storage.batches_from(start):
            for offset, _, record in mr.decode_batches(data):
                if offset >= start:
                    yield offset, record

    def diverging(self, fetch_offset: int, last_fetched_epoch: int) -> tuple[int, int] | None:
        """(epoch, end offset) a fetcher whose log does not match ours must truncate to."""
        if last_fetched_epoch < 0:
            return None
        epoch, end = self.epochs.end_offset_for(last_fetched_epoch, self.end_offset)
        if epoch < last_fetched_epoch or end < fetch_offset:
            return epoch, end
        return None
