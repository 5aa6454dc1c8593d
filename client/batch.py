"""A producer batch under construction, its shared result, and record futures.

Records are encoded into the batch's buffer as they are appended (one pass,
no per-record objects kept); compression and the 61-byte header are added
when the send thread seals the batch. Every record of a batch shares one
``BatchResult``; a ``RecordFuture`` is just (batch, index), as in the Java
client's FutureRecordMetadata.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, NamedTuple

from kipper.client.logs import get_logger

from kipper.protocol import records as rec

log = get_logger(__name__)

_encode_record = rec.encode_record
RECORD_OVERHEAD = 25  # bytes of framing a small record adds, for size estimates


class RecordMetadata(NamedTuple):
    topic: str
    partition: int
    offset: int  # -1 when the broker answered DUPLICATE_SEQUENCE_NUMBER (seed 000)
    timestamp: int


class BatchResult:
    __slots__ = ("event", "base_offset", "error", "log_append_time")

    def __init__(self):
        self.event = threading.Event()
        self.base_offset = -1
        self.error: BaseException | None = None
        self.log_append_time = -1


class RecordFuture:
    """The outcome of one ``send``; ``get``/``result`` block until it is known."""

    __slots__ = ("batch", "index", "timestamp", "topic", "_early", "_gate")

    def __init__(self, topic: str, timestamp: int, gate: threading.Event | None = None):
        self.topic = topic
        self.timestamp = timestamp
        self.batch: ProducerBatch | None = None
        self.index = -1
        self._early: BatchResult | None = None  # for records failed before batching
        self._gate = gate  # set once a record waiting for metadata is batched or failed

    def _result(self) -> BatchResult | None:
        if self._early is not None:
            return self._early
        return self.batch.result if self.batch is not None else None

    def done(self) -> bool:
        r = self._result()
        return r is not None and r.event.is_set()

    def get(self, timeout: float | None = None) -> RecordMetadata:
        deadline = None if timeout is None else time.monotonic() + timeout
        r = self._result()
        if r is None and self._gate is not None:
            self._gate.wait(timeout)
            r = self._result()
        if r is None:
            raise TimeoutError("record still waits for topic metadata")
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not r.event.wait(remaining):
            raise TimeoutError("record not delivered within the timeout")
        if r.error is not None:
            raise r.error
        return self.metadata(r)

    result = get

    def metadata(self, r: BatchResult | None = None) -> RecordMetadata:
        r = r or self._result()
        b = self.batch
        offset = r.base_offset + self.index if r.base_offset >= 0 and self.index >= 0 else -1
        timestamp = r.log_append_time if r.log_append_time >= 0 else self.timestamp
        return RecordMetadata(self.topic, b.partition if b else -1, offset, timestamp)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        try:
            self.get(timeout)
        except Exception as exc:
            return exc
        return None

    def fail_early(self, error: BaseException) -> None:
        r = BatchResult()
        r.error = error
        r.event.set()
        self._early = r


Callback = Callable[[BaseException | None, RecordMetadata], None]


class ProducerBatch:
    __slots__ = ("topic", "partition", "buf", "count", "base_ts", "max_ts", "created", "result",
                 "callbacks", "size", "attempts", "retry_at", "producer_id",
                 "producer_epoch", "base_sequence", "sealed", "wire", "closed", "in_flight")

    def __init__(self, topic: str, partition: int, now: float):
        self.topic = topic
        self.partition = partition
        self.buf = bytearray()
        self.count = 0
        self.base_ts = 0
        self.max_ts = 0
        self.created = now
        self.result = BatchResult()
        self.callbacks: list[tuple[int, Callback]] | None = None
        self.size = 0  # bytes counted against buffer.memory
        self.attempts = 0
        self.retry_at = 0.0
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1
        self.sealed: bytes | None = None
        self.wire: bytes | None = None
        self.closed = False
        self.in_flight = False

    def try_append(self, key, value, timestamp: int, headers, batch_size: int,
                   future: RecordFuture, callback: Callback | None) -> int:
        """Encode one record into the batch; returns the bytes added, or 0 if
        it would overflow a non-empty batch (the caller then starts a new one)."""
        n = self.count
        if n == 0:
            self.base_ts = timestamp
        data = _encode_record(n, timestamp - self.base_ts, key, value, headers)
        size = len(data)
        if n and len(self.buf) + size > batch_size:
            return 0
        self.buf += data
        if timestamp > self.max_ts or n == 0:
            self.max_ts = timestamp
        self.count = n + 1
        self.size += size
        future.batch = self
        future.index = n
        if callback is not None:
            if self.callbacks is None:
                self.callbacks = []
            self.callbacks.append((future, callback))
        return size

    def seal(self, compression_type: int) -> bytes:
        """The batch's bytes: header (with producer id/epoch/sequence) + records."""
        if self.sealed is None:
            self.closed = True
            self.sealed = rec.assemble(bytes(self.buf), self.count, self.base_ts, self.max_ts,
                                       compression_type=compression_type,
                                       producer_id=self.producer_id,
                                       producer_epoch=self.producer_epoch,
                                       base_sequence=self.base_sequence)
            self.buf = bytearray()  # the sealed copy is all we need now
        return self.sealed

    @property
    def last_sequence(self) -> int:
        return (self.base_sequence + self.count - 1) & 0x7FFFFFFF

    def complete(self, base_offset: int, error: BaseException | None,
                 log_append_time: int = -1) -> None:
        r = self.result
        if r.event.is_set():
            return
        r.base_offset = base_offset
        r.error = error
        r.log_append_time = log_append_time
        r.event.set()
        if self.callbacks:
            for fut, cb in self.callbacks:
                try:
                    cb(error, fut.metadata(r))
                except Exception:  # a user callback must not kill the send thread
                    log.exception("delivery_callback_failed", topic=self.topic)

    @property
    def done(self) -> bool:
        return self.result.event.is_set()
