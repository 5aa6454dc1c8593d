"""The pipelined producer (seed 001): ``Producer(config).send(...)``.

The caller's thread partitions and appends (never touching the network); one
send thread batches, compresses, and keeps many requests in flight per
connection. Idempotence is on by default, as in Kafka 3+.

    with Producer({"bootstrap.servers": "127.0.0.1:9092"}) as p:
        p.send("events", b"hello", key=b"k").get(10)
"""

from __future__ import annotations

import threading
import time

from kipper.client.accumulator import Accumulator, PendingRecord
from kipper.client.batch import RECORD_OVERHEAD, Callback, RecordFuture, RecordMetadata
from kipper.client.config import ProducerConfig
from kipper.client.partitioner import Partitioner
from kipper.client.sender import Sender
from kipper.protocol.errors import ErrorCode, KafkaError

__all__ = ["Producer", "RecordMetadata", "BufferExhausted"]


class BufferExhausted(KafkaError):
    """buffer.memory stayed full for max.block.ms."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.UNKNOWN_SERVER_ERROR, message)


class ProducerClosed(RuntimeError):
    pass


_time = time.time
_monotonic = time.monotonic


def place_parked(sender: Sender, topic: str, now: float) -> None:
    """Partition the records a topic parked while its metadata was unknown.
    Runs on the send thread, under the producer lock."""
    acc = sender.acc
    parked = acc.take_undesignated(topic)
    if parked is None:
        return
    n = sender.meta.partitions(topic)
    partitioner: Partitioner = sender.partitioner
    for r in parked.records:
        partition = r.partition
        if partition >= n:
            err = KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                             f"partition {partition} of {topic} does not exist ({n} partitions)")
            r.future.fail_early(err)
            continue
        if partition < 0:
            partition = partitioner.partition(topic, r.key, n)
        batch, new = acc.append((topic, partition), r.key, r.value, r.timestamp, r.headers,
                                r.future, r.callback, lambda: now)
        if new and r.key is None and r.partition < 0:
            partitioner.on_new_batch(topic, partition, n)
    parked.gate.set()


class Producer:
    def __init__(self, config: dict):
        self.config = ProducerConfig.from_dict(config)
        cfg = self.config
        self._mutex = threading.RLock()
        self._lock = threading.Condition(self._mutex)  # same lock, for waiting on space/flush
        self._acc = Accumulator(batch_size=cfg.batch_size, linger_ms=cfg.linger_ms,
                                buffer_memory=cfg.buffer_memory)
        self._metrics = {"records": 0, "bytes": 0, "requests": 0, "batches": 0, "retries": 0,
                         "errors": 0, "disconnects": 0, "request_latency_sum": 0.0,
                         "request_latency_max": 0.0, "epoch_bump_requests": 0, "sent_calls": 0}
        self._partitioner = Partitioner(cfg.partitioner)
        # unkeyed records: the sticky choice, read without a call on the hot path
        self._sticky = self._partitioner.sticky if cfg.partitioner in ("default", "sticky") else {}
        self._sender = Sender(cfg, self._acc, self._lock, self._metrics)
        self._sender.partitioner = self._partitioner
        self._meta = self._sender.meta
        self._closed = False
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._sender.run, name="kipper-producer-send",
                                        daemon=True)
        self._thread.start()

    # --- sending ----------------------------------------------------------------------

    def send(self, topic: str, value: bytes | None = None, key: bytes | None = None,
             partition: int | None = None, headers=None, timestamp: int | None = None,
             on_delivery: Callback | None = None) -> RecordFuture:
        """Queue one record; returns a future of RecordMetadata. Thread-safe.

        ``on_delivery(error, metadata)`` runs on the send thread when the
        record's fate is known; keep it short.
        """
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
            timestamp = int(_time() * 1000)
        if size > self.config.max_request_size:
            raise KafkaError(ErrorCode.MESSAGE_TOO_LARGE,
                             f"record of {size} bytes exceeds max.request.size {self.config.max_request_size}")
        acc = self._acc
        with self._mutex:
            if self._sender.idem.fatal_error is not None:
                raise self._sender.idem.fatal_error
            used = acc.appended - acc.released
            if used and used + size > acc.buffer_memory:
                self._wait_for_room(size)
            info = self._meta.topics.get(topic)
            if info is None or (acc.undesignated and topic in acc.undesignated):
                # no metadata yet, or older records still parked: queue behind them
                return self._park(topic, key, value, timestamp, headers, on_delivery, partition, size,
                                  _monotonic())
            n = len(info.leaders)
            if partition is None:
                p = (self._sticky.get(topic, -1) if key is None else -1)
                if p < 0 or p >= n:  # keyed, or no sticky partition yet
                    p = self._partitioner.partition(topic, key, n)
            elif 0 <= partition < n:
                p = partition
            else:
                future = RecordFuture(topic, timestamp)
                future.fail_early(KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                             f"partition {partition} of {topic} does not exist"))
                return future
            future = RecordFuture(topic, timestamp)
            _, new = acc.append((topic, p), key, value, timestamp, headers, future, on_delivery, _monotonic)
            if new:
                if key is None and partition is None:
                    self._partitioner.on_new_batch(topic, p, n)
                self._wake()
            return future

    def _park(self, topic, key, value, timestamp, headers, on_delivery, partition, size, now):
        """No metadata for the topic yet: wait in its undesignated queue (seed 001)."""
        gate = self._acc.gate_for(topic, now)
        future = RecordFuture(topic, timestamp, gate)
        self._acc.park(topic, PendingRecord(key, value, timestamp, headers, future, on_delivery,
                                            -1 if partition is None else partition, size, now))
        self._meta.wanted.add(topic)
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
                    if self._acc.used == 0 and not self._sender._completions:
                        return 0
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if (self._sender.idem.state == "fatal" or not self._thread.is_alive()
                            or (remaining is not None and remaining <= 0)):
                        return self._pending_records()
                    self._lock.wait(0.05 if remaining is None else min(remaining, 0.05))
        finally:
            with self._lock:
                self._acc.flushing -= 1

    def _pending_records(self) -> int:
        queued = sum(b.count for b in self._acc.pending_batches())
        parked = sum(len(u.records) for u in self._acc.undesignated.values())
        in_flight = sum(b.count for c in list(self._sender.conns.values())
                        for e in c.in_flight.entries() if e.api_key == 0 for b in e.context)
        return queued + parked + in_flight + sum(b.count for b, *_ in self._sender._completions)

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is queued (up to ``timeout``), then stop the send thread."""
        if self._closed:
            return
        self._closed = True
        left = self.flush(timeout)
        self._sender.running = False
        if left:
            self._sender.force_close = True
        self._sender.wakeup()
        self._thread.join(None if timeout is None else max(timeout, 1.0))
        if self._thread.is_alive():
            self._sender.force_close = True
            self._sender.wakeup()
            self._thread.join(5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- observability ----------------------------------------------------------------------

    def metrics(self) -> dict:
        with self._lock:
            m = dict(self._metrics)
            elapsed = max(time.monotonic() - self._started, 1e-9)
            idem = self._sender.idem
            m.update(
                record_send_rate=m["records"] / elapsed,
                request_latency_avg=m["request_latency_sum"] / m["requests"] if m["requests"] else 0.0,
                buffer_used=self._acc.used,
                buffer_available=self.config.buffer_memory - self._acc.used,
                in_flight_requests=sum(len(c.in_flight) for c in self._sender.conns.values()),
                batch_size_avg=m["bytes"] / m["batches"] if m["batches"] else 0.0,
                producer_id=idem.producer_id, producer_epoch=idem.producer_epoch,
                max_in_flight_sequences=idem.window, epoch_bumps=idem.epoch_bumps,
                connections=len(self._sender.conns),
            )
            return m
