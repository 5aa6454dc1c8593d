"""A producer batch under construction, its shared result, and record futures.

A batch keeps its records as they were appended (values, timestamps as runs, and keys
and headers once a record has them) and the send thread encodes them all at
once when it seals the batch (compression and the 61-byte header too), so the
caller's thread does no encoding. Every record of a batch shares one
``BatchResult``; a record's future is just (batch, index), as in the Java
client's FutureRecordMetadata.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_right
from typing import Callable, NamedTuple

from kipper.client.logs import get_logger

from kipper.protocol import records as rec
from kipper.protocol import records_builder as builder

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


class BatchedFuture:
    """The future ``send``'s fast path returns for a record that went straight
    into a batch: the pair (batch, index), as in the Java client's
    FutureRecordMetadata. Same methods as RecordFuture. It has no ``__init__``:
    ``send`` makes one per record, and calling a class without one, then
    setting its two slots, costs about half of building a tuple subclass."""

    __slots__ = ("batch", "index")

    @property
    def topic(self) -> str:
        return self.batch.topic

    @property
    def timestamp(self) -> int:
        return self.batch.timestamp_of(self.index)

    def done(self) -> bool:
        return self.batch.result.event.is_set()

    def get(self, timeout: float | None = None) -> RecordMetadata:
        r = self.batch.result
        if not r.event.wait(timeout):
            raise TimeoutError("record not delivered within the timeout")
        if r.error is not None:
            raise r.error
        return self.metadata(r)

    result = get

    def metadata(self, r: BatchResult | None = None) -> RecordMetadata:
        batch, index = self.batch, self.index
        r = r or batch.result
        offset = r.base_offset + index if r.base_offset >= 0 else -1
        timestamp = r.log_append_time if r.log_append_time >= 0 else batch.timestamp_of(index)
        return RecordMetadata(batch.topic, batch.partition, offset, timestamp)

    exception = RecordFuture.exception

    def __repr__(self) -> str:
        return f"BatchedFuture(topic={self.topic!r}, partition={self.batch.partition}, index={self.index})"


Callback = Callable[[BaseException | None, RecordMetadata], None]


def record_size_bound(key, value, headers) -> int:
    """Bytes a record (its headers as _checked_headers gives them) takes in a batch, at most (exact but for the timestamp
    and offset deltas, counted at 3 bytes each: up to 17 minutes and 2**20
    records). Counted against batch.size and buffer.memory when it is
    appended; the send thread encodes it later, with the rest of its batch."""
    size = 8  # attributes, deltas (3 + 3), header count (< 64 headers)
    for field in (key, value):
        if field is None:
            size += 1
        else:
            n = len(field)
            size += n + _varint_len(n)
    if headers:
        for hk, hv in headers:
            n = len(hk)
            size += n + _varint_len(n)
            n = -1 if hv is None else len(hv)
            size += max(n, 0) + _varint_len(n)
        size += _varint_len(len(headers)) - 1
    return size + _varint_len(size)


def prepared_record(key, value, headers) -> tuple:
    """(key, value, headers, size) of a record as a batch keeps it until the send thread
    encodes it: headers checked and copied now (a bad one could not be reported later, on
    the send thread), a mutable buffer copied as encoding it at once used to, and the bytes
    it counts for (``record_size_bound``)."""
    if headers:
        headers = _checked_headers(headers)
    if value is not None and type(value) is not bytes:
        value = bytes(value)
    if key is not None and type(key) is not bytes:
        key = bytes(key)
    return key, value, headers, record_size_bound(key, value, headers)


def _checked_headers(headers) -> tuple:
    """Headers as (bytes, bytes | None) pairs, checked and copied now: they are
    encoded later, on the send thread, where a bad one could not be reported."""
    out = []
    for hk, hv in headers:
        if isinstance(hk, str):
            hk = hk.encode("utf-8")
        elif not isinstance(hk, _BYTES_LIKE):
            raise TypeError(f"header key must be str or bytes, not {type(hk).__name__}")
        if hv is not None and not isinstance(hv, _BYTES_LIKE):
            raise TypeError(f"header value must be bytes or None, not {type(hv).__name__}")
        out.append((bytes(hk), None if hv is None else bytes(hv)))
    return tuple(out)


_BYTES_LIKE = (bytes, bytearray, memoryview)


def _varint_len(n: int) -> int:
    return len(rec.VARINT_CACHE[n + 1]) if -1 <= n < 8191 else len(rec.encode_varint(n))


# An unkeyed record without headers whose value is under this many bytes takes
# exactly PLAIN_OVERHEAD bytes more than its value at most (record_size_bound).
PLAIN_MAX_VALUE = 8000
PLAIN_OVERHEAD = record_size_bound(None, b"x" * PLAIN_MAX_VALUE, None) - PLAIN_MAX_VALUE
# A keyed record without headers whose key and value together are under
# PLAIN_MAX_VALUE bytes takes at most KEYED_OVERHEAD bytes more than the two.
KEYED_OVERHEAD = record_size_bound(b"k" * 4000, b"x" * (PLAIN_MAX_VALUE - 4000), None) - PLAIN_MAX_VALUE


class ProducerBatch:
    """Records of one partition, kept as appended (values, timestamps and, once
    any record has them, keys and headers) until ``seal`` encodes them all at
    once on the send thread.

    Timestamps are kept as runs: record ``stamp_at[j]`` and the ones after it,
    up to the next run, were stamped ``stamps[j]``. Records sent in the same
    millisecond share one, so a batch has a few runs, not one entry a record.
    [ts_lo, ts_hi) is the span in seconds of the last run's millisecond, for
    the fast path (Producer.send), which only starts a run when its clock
    reading leaves that span.

    ``room``: bytes of batch.size taken from buffer.memory ahead of time for the
    fast path (Java's producer likewise takes a whole batch.size from its
    BufferPool for each new batch), counted in ``size``; a fast-path record
    only takes its bytes out of ``room``. A batch no longer open to the fast path
    has none (Accumulator.reserve and unreserve, under the producer lock)."""

    __slots__ = ("topic", "partition", "values", "base_ts", "stamp_at", "stamps", "ts_lo", "ts_hi", "keys",
                 "headers", "value_size", "count", "created", "result", "callbacks", "size", "room", "attempts", "retry_at",
                 "producer_id", "producer_epoch", "base_sequence", "sealed", "wire", "closed", "in_flight")

    def __init__(self, topic: str, partition: int, now: float):
        self.topic = topic
        self.partition = partition
        self.values: list = []
        self.base_ts = 0  # the first record's timestamp
        self.stamp_at: list[int] = []  # index of the first record of each timestamp run
        self.stamps: list[int] = []  # each run's timestamp (ms)
        self.ts_lo = self.ts_hi = 0.0  # time.time() span of the last run's ms (fast path)
        self.keys: list | None = None  # None while no record has a key
        self.headers: list | None = None  # None while no record has headers
        # the length every value has, while they all have one and the batch has
        # no keys or headers (-1 from the first record that differs): the send
        # thread then encodes the batch without looking at each value
        self.value_size = -1
        self.count = 0
        self.created = now
        self.result = BatchResult()
        self.callbacks: list[tuple[RecordFuture, Callback]] | None = None
        self.size = 0  # bytes counted against batch.size and buffer.memory (record_size_bound), room included
        self.room = 0  # of size, bytes held for the fast path's next records
        self.attempts = 0
        self.retry_at = 0.0
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1
        self.sealed: tuple[bytes, bytes] | None = None  # (header, records) once sealed
        self.wire: bytes | None = None
        self.closed = False
        self.in_flight = False

    # --- timestamps ---------------------------------------------------------------------

    def stamp(self, index: int, now: float) -> None:
        """Record ``index`` was sent at ``now`` (time.time()), outside the last
        run's millisecond: its timestamp is that millisecond, int(now * 1000)
        as in aiokafka and kafka-python (Kafka's producer uses the time of
        send, in ms)."""
        ms = int(now * 1000)
        self._mark(index, ms)
        self.ts_lo = ms / 1000
        self.ts_hi = (ms + 1) / 1000

    def _mark(self, index: int, ms: int) -> None:
        stamps = self.stamps
        if not stamps:
            self.base_ts = ms
        elif stamps[-1] == ms:
            return
        self.stamp_at.append(index)
        stamps.append(ms)

    def timestamp_of(self, index: int) -> int:
        return self.stamps[bisect_right(self.stamp_at, index) - 1]

    def _deltas(self) -> list[int]:
        """One timestamp delta per record (for records that are not plain)."""
        return builder.expand_runs(self.stamp_at, [ms - self.base_ts for ms in self.stamps], self.count)

    # --- appending ----------------------------------------------------------------------

    def try_append(self, key, value, headers, timestamp: int, now: float, size: int, limit: int) -> int:
        """The one way a record enters a batch, from either path; the record's index, or -1
        when it does not fit.

        ``size`` is the record's ``record_size_bound``. The general path (Accumulator.append,
        under the producer lock; the batch holds no room then) passes ``limit``, batch.size: a
        non-empty batch takes the record while it stays within it, and counts its bytes. The
        fast path (Producer.send, holding the lock's token) passes -1: the bytes come out of
        the room held for it (``room``), already counted. ``timestamp``: the record's own (ms),
        or -1 for the time of send, ``now`` (time.time()), which starts a run only when its
        millisecond differs from the last run's. The caller made the record's fields fit to be
        kept (prepared_record)."""
        n = self.count
        if limit < 0:
            room = self.room - size
            if room < 0:  # a closed or drained batch has none
                return -1
            self.room = room
            # What the fast path appends is known (OpenBatches): a bytes value of plain
            # size and no headers, into a batch without headers whose keys are kept exactly
            # when ``key`` is given; so only what can change is looked at (this runs for
            # every record at several hundred thousand a second).
            self.values.append(value)
            if key is not None:
                self.keys.append(key)
            elif len(value) != self.value_size:
                self.value_size = -1
            if now >= self.ts_hi or now < self.ts_lo:
                self.stamp(n, now)
            self.count = n + 1
            return n
        if n and self.size + size > limit:
            return -1
        self.size += size
        self.values.append(value)
        keys = self.keys
        if key is not None:
            if keys is None:
                keys = self.keys = [None] * n
            keys.append(key)
        elif keys is not None:
            keys.append(None)
        if headers:
            if self.headers is None:
                self.headers = [()] * n
            self.headers.append(headers)
        elif self.headers is not None:
            self.headers.append(())
        # the length every value shares, while one does (the send thread then encodes the
        # batch without measuring each value)
        plain = -1 if key is not None or headers or value is None or len(value) > PLAIN_MAX_VALUE else len(value)
        if n == 0:
            self.value_size = plain
        elif plain != self.value_size:
            self.value_size = -1
        if timestamp < 0:
            if now >= self.ts_hi or now < self.ts_lo:
                self.stamp(n, now)
        elif not self.stamps or self.stamps[-1] != timestamp:
            self._mark(n, timestamp)
            self.ts_lo = self.ts_hi = 0.0  # the fast path's next record starts a run of its own
        self.count = n + 1
        return n

    def add_callback(self, future, callback: Callback) -> None:
        """``callback(error, metadata)`` for ``future``'s record, run when the batch completes."""
        if self.callbacks is None:
            self.callbacks = []
        self.callbacks.append((future, callback))

    @property
    def buf(self) -> bytes:
        """The records encoded so far, without the batch header (tests, tools)."""
        return self._encode()

    def _encode(self) -> bytes:
        if self.headers is None:  # from tables, without Python code per record
            base = self.base_ts
            run_deltas = [ms - base for ms in self.stamps]
            if self.keys is None:
                return builder.encode_plain_runs(self.values, self.stamp_at, run_deltas, self.value_size)
            return builder.encode_keyed_runs(self.keys, self.values, self.stamp_at, run_deltas)
        keys = self.keys or [None] * self.count
        return b"".join([_encode_record(i, td, k, v, h) for i, (td, k, v, h)
                         in enumerate(zip(self._deltas(), keys, self.values, self.headers))])

    def seal(self, compression_type: int) -> bytes:
        """The batch's bytes: header (with producer id/epoch/sequence) + records."""
        header, records = self.seal_parts(compression_type)
        return header + records

    def seal_parts(self, compression_type: int) -> tuple[bytes, bytes]:
        """The batch as (header, records), which the connection sends without
        joining them. Encodes the records, once; the send thread calls it
        outside the producer lock."""
        if self.sealed is None:
            self.closed = True
            self.room = 0  # drained batches have none; this guards a batch sealed while open (tests)
            self.sealed = rec.assemble_parts(self._encode(), self.count, self.base_ts, max(self.stamps),
                                             compression_type=compression_type,
                                             producer_id=self.producer_id,
                                             producer_epoch=self.producer_epoch,
                                             base_sequence=self.base_sequence)
            # the sealed bytes are all we need now; timestamps stay for the futures
            self.values = self.keys = self.headers = None
        return self.sealed

    @property
    def sealed_size(self) -> int:
        return len(self.sealed[0]) + len(self.sealed[1]) if self.sealed is not None else 0

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
