"""The pipelined producer (seed 001): ``Producer(config).send(...)``.

The caller's thread partitions and appends (never touching the network); one
send thread batches, compresses, and keeps many requests in flight per
connection. Idempotence is on by default, as in Kafka 3+.

    with Producer({"bootstrap.servers": "127.0.0.1:9092"}) as p:
        p.send("events", b"hello", key=b"k").get(10)
"""

from __future__ import annotations

import sys
import threading
import time

from kipper.client.accumulator import Accumulator
from kipper.client.batch import (KEYED_OVERHEAD, PLAIN_MAX_VALUE, PLAIN_OVERHEAD, RECORD_OVERHEAD, BatchedFuture,
                                 Callback, RecordFuture, RecordMetadata)
from kipper.client.config import ProducerConfig
from kipper.client.producer_lock import ProducerLock
from kipper.client.send_engine import SendEngine
from kipper.client.sender import Sender
from kipper.protocol.errors import ErrorCode, KafkaError

__all__ = ["Producer", "RecordMetadata", "BufferExhausted"]


class BufferExhausted(KafkaError):
    """buffer.memory stayed full for max.block.ms."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.UNKNOWN_SERVER_ERROR, message)


class ProducerClosed(RuntimeError):
    pass


_time_ns = time.time_ns
_time = time.time
_getrefcount = getattr(sys, "getrefcount", lambda obj: 0)  # 0: no reuse (Pythons without refcounts)
_monotonic = time.monotonic


class Producer:
    def __init__(self, config: dict):
        self.config = ProducerConfig.from_dict(config)
        cfg = self.config
        self._mutex = ProducerLock()  # the fast path of send() takes its token instead
        self._lock = threading.Condition(self._mutex)  # same lock, for waiting on space/flush
        self._acc = Accumulator(batch_size=cfg.batch_size, linger_ms=cfg.linger_ms,
                                buffer_memory=cfg.buffer_memory)
        self._engine = SendEngine(cfg, self._acc)
        self._fast_path = self._engine.fast_path
        self._open_batches = self._fast_path.unkeyed
        # the fast path's values: small enough that _send would not refuse them either
        self._plain_limit = min(PLAIN_MAX_VALUE, cfg.max_request_size - RECORD_OVERHEAD)
        # The fast path's last future. Producing at speed, callers mostly drop
        # what send() returns (confluent-kafka's produce() returns nothing);
        # when the producer's reference is the only one left (refcount 2,
        # counting getrefcount's argument), nothing can see the object any
        # more (BatchedFuture has no __weakref__ slot), so the next send
        # reuses it instead of allocating and freeing one per record (about
        # 8% of send()'s instructions). It is read holding the producer lock's token;
        # a future someone holds (a list of them, a callback's) is never reused.
        self._spare = BatchedFuture()
        self._sender = Sender(cfg, self._engine, self._lock)
        self._closed = False
        self._started = time.monotonic()
        self._sender.start()

    # --- sending ----------------------------------------------------------------------

    def send(self, topic: str, value: bytes | None = None, key: bytes | None = None,
             partition: int | None = None, headers=None, timestamp: int | None = None,
             on_delivery: Callback | None = None) -> RecordFuture:
        """Queue one record; returns a future of RecordMetadata. Thread-safe.

        ``on_delivery(error, metadata)`` runs on the send thread when the
        record's fate is known; keep it short.
        """
        # Fast path, for the common record: no partition, headers or timestamp
        # of its own, a bytes value (and key) of ordinary size, for a topic whose
        # open batch is known and has room held for it (ProducerBatch.room:
        # batch.size and buffer.memory are checked once a batch, not once a
        # record). Without a key, that is the topic's open batch without keys
        # (OpenBatches.unkeyed); with one, the open batch with keys of the
        # partition the key hashes to, once the partitioner has hashed that key
        # (OpenBatches.keyed_batch). It appends the record to that batch through
        # the one append route (ProducerBatch.try_append, out of the batch's room),
        # and returns a (batch, index) future; the send thread encodes the whole
        # batch later.
        # Why: at several hundred thousand records a second, the checks, calls
        # and per-record encoding of the general path (_send) were most of the
        # producer's CPU.
        if partition is not None or headers is not None or timestamp is not None or type(value) is not bytes:
            return self._send(topic, value, key, partition, headers, timestamp, on_delivery)
        size = len(value)
        if key is None:
            try:
                batch = self._open_batches[topic]
            except (KeyError, TypeError):  # no open batch, or an unhashable topic (_send says so)
                return self._send(topic, value, key, partition, headers, timestamp, on_delivery)
            if size > self._plain_limit:
                return self._send(topic, value, key, partition, headers, timestamp, on_delivery)
            size += PLAIN_OVERHEAD
        else:
            batch = self._fast_path.keyed_batch(topic, key)
            if batch is None:
                return self._send(topic, value, key, partition, headers, timestamp, on_delivery)
            size += len(key)
            if size > self._plain_limit:
                return self._send(topic, value, key, partition, headers, timestamp, on_delivery)
            size += KEYED_OVERHEAD
        now = _time()
        # the token instead of the lock (ProducerLock): IndexError when the
        # lock is held or wanted, or another caller is here
        tokens = self._mutex.tokens
        try:
            token = tokens.pop()
        except IndexError:
            return self._send(topic, value, key, partition, headers, timestamp, on_delivery)
        try:
            index = batch.try_append(key, value, None, -1, now, size, -1)  # -1: out of its room
            if index >= 0:
                # reuse the last future if its caller dropped it (see _spare)
                if _getrefcount(self._spare) == 2:
                    future = self._spare
                else:
                    future = self._spare = BatchedFuture()
                future.batch = batch
                future.index = index
                if on_delivery is not None:
                    batch.add_callback(future, on_delivery)
                return future
        finally:
            tokens.append(token)
        return self._send(topic, value, key, partition, headers, timestamp, on_delivery)

    def _send(self, topic, value, key, partition, headers, timestamp, on_delivery) -> RecordFuture:
        """Every record the fast path does not take."""
        if self._closed:
            raise ProducerClosed("send() after close()")
        if type(topic) is not str or not topic:
            raise ValueError("topic must be a non-empty string")
        size = RECORD_OVERHEAD
        if value is not None:
            if type(value) is not bytes and not isinstance(value, (bytearray, memoryview)):
                raise TypeError("value must be bytes or None")
            size += len(value)
        if key is not None:
            if type(key) is not bytes and not isinstance(key, (bytearray, memoryview)):
                raise TypeError("key must be bytes or None")
            size += len(key)
        if timestamp is None:
            timestamp = _time_ns() // 1_000_000
        elif not isinstance(timestamp, int):  # it is encoded later, on the send thread
            raise TypeError("timestamp must be an int (milliseconds) or None")
        if size > self.config.max_request_size:
            raise KafkaError(ErrorCode.MESSAGE_TOO_LARGE,
                             f"record of {size} bytes exceeds max.request.size {self.config.max_request_size}")
        # The lock's token, as on the fast path, is enough: whoever holds the
        # lock holds the token too, so it excludes the send thread and other
        # callers just as well, at a fraction of the cost (ProducerLock). The
        # lock itself only when the token is out, or to wait for buffer.memory.
        tokens = self._mutex.tokens
        try:
            token = tokens.pop()
        except IndexError:
            token = None
        if token is not None:
            try:
                if self._acc.has_room(size):
                    return self._append(topic, value, key, partition, headers, timestamp, on_delivery, size)
            finally:
                tokens.append(token)
        with self._mutex:
            if not self._acc.has_room(size) and not self._closed and self._engine.fatal_error is None:
                self._fast_path.release_room()  # room held for the fast path is not in use
                if not self._acc.has_room(size):
                    self._wait_for_room(size)
            return self._append(topic, value, key, partition, headers, timestamp, on_delivery, size)

    def _append(self, topic, value, key, partition, headers, timestamp, on_delivery, size) -> RecordFuture:
        """Holding the lock or its token: hand the record to the engine."""
        if self._closed:  # again, excluded now: close() may have run since
            raise ProducerClosed("send() after close()")
        engine = self._engine
        if engine.fatal_error is not None:
            raise engine.fatal_error
        future = RecordFuture(topic, timestamp)
        new = engine.append(topic, key, value, timestamp, headers, partition, future, on_delivery, _monotonic)
        if new is None:
            # no metadata yet, or older records still parked: queue behind them
            future = engine.park(topic, key, value, timestamp, headers, partition, on_delivery, size,
                                 _monotonic())
            self._wake()
        elif new:
            self._wake()
        return future

    produce = send

    def _wait_for_room(self, size: int) -> None:
        deadline = time.monotonic() + self.config.max_block_ms / 1000.0
        self._wake()
        self._sender.waiters += 1
        try:
            while not self._acc.has_room(size):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise BufferExhausted(f"buffer.memory ({self.config.buffer_memory} bytes) stayed full "
                                          f"for max.block.ms ({self.config.max_block_ms} ms)")
                self._lock.wait(min(remaining, 0.05))
        finally:
            self._sender.waiters -= 1

    def _wake(self) -> None:
        if self._sender.sleeping:
            self._sender.wakeup()

    # --- flush, close -------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> int:
        """Send everything queued now and wait; returns records still undelivered (0: all)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._acc.flushing += 1
        try:
            self._sender.wakeup()
            with self._lock:
                while True:
                    if self._engine.settled():
                        return 0
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if (self._engine.fatal_error is not None or not self._sender.is_alive()
                            or (remaining is not None and remaining <= 0)):
                        return self._engine.pending_records()
                    self._lock.wait(0.05 if remaining is None else min(remaining, 0.05))
        finally:
            with self._lock:
                self._acc.flushing -= 1

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is queued (up to ``timeout``), then stop the send thread."""
        if self._closed:
            return
        with self._mutex:
            self._closed = True
            self._fast_path.release_room()  # the fast path stops: records go to _send, which refuses them
        left = self.flush(timeout)
        self._sender.stop(force=bool(left))
        self._sender.join(None if timeout is None else max(timeout, 1.0))
        if self._sender.is_alive():
            self._sender.stop(force=True)
            self._sender.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- observability ----------------------------------------------------------------------

    def metrics(self) -> dict:
        with self._lock:
            m = dict(self._engine.metrics)
            elapsed = max(time.monotonic() - self._started, 1e-9)
            shell = self._sender.stats()
            m.update(
                record_send_rate=m["records"] / elapsed,
                request_latency_avg=m["request_latency_sum"] / m["requests"] if m["requests"] else 0.0,
                buffer_used=self._acc.used,
                buffer_available=self.config.buffer_memory - self._acc.used,
                in_flight_requests=shell["in_flight_requests"],
                batch_size_avg=m["bytes"] / m["batches"] if m["batches"] else 0.0,
                **self._engine.stats(),
                connections=shell["connections"],
            )
            return m
