"""The send thread (seed 001): one selector loop over non-blocking sockets.

Each turn: partition parked records whose metadata arrived, expire what
waited too long, get a producer id, refresh metadata (non-blocking), drain
ready batches into one ProduceRequest per broker, then wait on the selector
for readable/writable sockets, a wake-up, or the next linger deadline.
Responses are matched to requests by correlation id; leader errors trigger a
metadata refresh and a re-queue that holds up no other partition.
"""

from __future__ import annotations

import selectors
import socket
import time
from collections import defaultdict

from kipper.client.logs import get_logger

from kipper.client import idempotence as idem
from kipper.client.accumulator import Accumulator
from kipper.client.batch import ProducerBatch
from kipper.client.config import ProducerConfig
from kipper.client.connection import Connection
from kipper.client.metadata import ClusterMetadata
from kipper.protocol.errors import ErrorCode, KafkaError
from kipper.protocol.messages.init_producer_id import INIT_PRODUCER_ID
from kipper.protocol.messages.metadata import METADATA
from kipper.protocol.messages.produce import PRODUCE

log = get_logger(__name__)

_LEADER_ERRORS = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                            ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.FENCED_LEADER_EPOCH,
                            ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.NOT_ENOUGH_REPLICAS,
                            ErrorCode.KAFKA_STORAGE_ERROR})
_RECONNECT_BACKOFF = 0.05


class Sender:
    def __init__(self, config: ProducerConfig, accumulator: Accumulator, lock, metrics: dict):
        self.config = config
        self.acc = accumulator
        self.lock = lock
        self.metrics = metrics
        self.idem = idem.IdempotenceState(config.enable_idempotence)
        self.meta = ClusterMetadata()
        self.selector = selectors.DefaultSelector()
        self.conns: dict[int, Connection] = {}
        self._bootstrap_next = 0
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector.register(self._wake_r, selectors.EVENT_READ, None)
        self.sleeping = False
        self.waiters = 0  # callers blocked on buffer.memory
        self.running = True
        self.force_close = False
        self._completions: list[tuple[ProducerBatch, int, BaseException | None, int]] = []
        self._metadata_in_flight = False
        self._pid_in_flight = False
        self._next_metadata_at = 0.0
        self._reconnect_at: dict[int, float] = {}

    # --- wake-ups -----------------------------------------------------------------

    def wakeup(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass

    # --- the loop ------------------------------------------------------------------

    def run(self) -> None:
        try:
            while self.running or (not self.force_close and not self._quiescent()):
                self.run_once()
        except Exception:
            log.exception("send_thread_crashed")
            with self.lock:
                self._fail_everything(KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "send thread crashed"))
            self._run_completions()
        finally:
            with self.lock:
                if not self.acc.is_empty() or self.idem.unacked_count():
                    self._fail_everything(KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR,
                                                     "producer closed before delivery"))
            self._run_completions()
            for conn in list(self.conns.values()):
                conn.close("producer closed")
            self.selector.close()
            self._wake_r.close()
            self._wake_w.close()

    def _quiescent(self) -> bool:
        with self.lock:
            return self.acc.is_empty() and not any(len(c.in_flight) for c in self.conns.values())

    def run_once(self) -> None:
        now = time.monotonic()
        with self.lock:
            self._partition_parked(now)
            self._expire(now)
            self._maybe_init_producer_id(now)
            self._maybe_request_metadata(now)
            next_ready, work = self._drain_ready(now)
            self._check_request_timeouts(now)
        # sealing, compressing and encoding happen outside the lock, so the
        # caller's thread can keep appending meanwhile
        for conn, batches in work:
            self._send_produce(conn, batches, now)
        for conn in {conn for conn, _ in work}:
            self._write_now(conn, now)
        self._run_completions()
        timeout = max(0.0, min(next_ready - now, 0.1))
        self.sleeping = True
        events = self.selector.select(timeout)
        self.sleeping = False
        now = time.monotonic()
        for key, mask in events:
            conn = key.data
            if conn is None:
                try:
                    while self._wake_r.recv(4096):
                        pass
                except (BlockingIOError, OSError):
                    pass
                continue
            try:
                if mask & selectors.EVENT_WRITE:
                    conn.on_writable()
                if mask & selectors.EVENT_READ:
                    for entry, body in conn.on_readable():
                        self._on_response(conn, entry, body, now)
            except (OSError, ConnectionError, ValueError) as exc:
                with self.lock:
                    self._drop_connection(conn, str(exc), now)
            else:
                self._update_interest(conn)
        self._run_completions()

    def _run_completions(self) -> None:
        """Complete finished batches outside the lock (user callbacks run here)."""
        if not self._completions:
            return
        done, self._completions = self._completions, []
        for batch, base_offset, error, append_time in done:
            batch.complete(base_offset, error, append_time)
            self.acc.release(batch)
        if self.waiters:
            with self.lock:
                self.lock.notify_all()

    # --- connections -----------------------------------------------------------------

    def _connection(self, node_id: int, now: float) -> Connection | None:
        conn = self.conns.get(node_id)
        if conn is not None and conn.state != "closed":
            return conn
        if now < self._reconnect_at.get(node_id, 0.0):
            return None
        if node_id < 0:
            host, port = self.config.bootstrap_servers[(-node_id - 1) % len(self.config.bootstrap_servers)]
        else:
            addr = self.meta.brokers.get(node_id)
            if addr is None:
                return None
            host, port = addr
        conn = Connection(node_id, host, port, self.config.client_id, now)
        if conn.state == "closed":
            self._reconnect_at[node_id] = now + _RECONNECT_BACKOFF
            return None
        self.conns[node_id] = conn
        self.selector.register(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
        return conn

    def _update_interest(self, conn: Connection) -> None:
        if conn.state == "closed":
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.wants_write else 0)
        try:
            self.selector.modify(conn.sock, events, conn)
        except (KeyError, ValueError, OSError):
            pass

    def _any_ready(self, now: float) -> Connection | None:
        """A ready connection for metadata / InitProducerId: the least loaded."""
        ready = [c for c in self.conns.values() if c.ready]
        if ready:
            return min(ready, key=lambda c: len(c.in_flight))
        for node_id in list(self.meta.brokers) or []:
            if self._connection(node_id, now) is not None:
                return None
        n = len(self.config.bootstrap_servers)
        self._bootstrap_next = (self._bootstrap_next + 1) % n
        self._connection(-1 - self._bootstrap_next, now)
        return None

    def _drop_connection(self, conn: Connection, reason: str, now: float) -> None:
        try:
            self.selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        lost = conn.close(reason)
        if self.conns.get(conn.node_id) is conn:
            del self.conns[conn.node_id]
        self._reconnect_at[conn.node_id] = now + _RECONNECT_BACKOFF
        self.meta.refresh_requested = True
        self.metrics["disconnects"] += 1
        log.debug("producer_connection_lost", node=conn.node_id, reason=reason, in_flight=len(lost))
        for entry in lost:
            if entry.api_key == PRODUCE.key:
                for batch in entry.context:
                    self._handle_batch_error(batch, ErrorCode.NETWORK_EXCEPTION, now, reason)
            elif entry.api_key == METADATA.key:
                self._metadata_in_flight = False
            elif entry.api_key == INIT_PRODUCER_ID.key:
                self._pid_in_flight = False

    def _check_request_timeouts(self, now: float) -> None:
        limit = self.config.request_timeout_ms / 1000.0
        for conn in list(self.conns.values()):
            oldest = conn.in_flight.oldest_sent_at()
            if oldest is not None and now - oldest > limit:
                self._drop_connection(conn, "request timed out", now)
            elif conn.state != "ready" and now - conn.created > limit:
                self._drop_connection(conn, "connection setup timed out", now)

    # --- metadata and producer id ----------------------------------------------------------

    def _maybe_request_metadata(self, now: float) -> None:
        if self._metadata_in_flight or now < self._next_metadata_at:
            return
        if not (self.meta.stale(now, self.config.metadata_max_age_ms / 1000.0) or self.acc.waiting_topics()):
            return
        conn = self._any_ready(now)
        if conn is None:
            return
        version = conn.pick_version(METADATA.key, 1, 12)
        if version is None:
            return
        topics = sorted(self.meta.wanted)
        conn.send(METADATA, version, {"topics": [{"name": t, "topic_id": None} for t in topics],
                                      "allow_auto_topic_creation": True}, None, now)
        self._metadata_in_flight = True
        self._next_metadata_at = now + self.config.retry_backoff_ms / 1000.0
        self._update_interest(conn)

    def _maybe_init_producer_id(self, now: float) -> None:
        if self._pid_in_flight or not self.idem.needs_producer_id():
            return
        conn = self._any_ready(now)
        if conn is None:
            return
        version = conn.pick_version(INIT_PRODUCER_ID.key, 0, 5)
        if version is None:
            self.idem.fail_fatally(KafkaError(ErrorCode.UNSUPPORTED_VERSION,
                                              "broker does not support InitProducerId (idempotence)"))
            self._fail_everything(self.idem.fatal_error)
            return
        body = {"transactional_id": None, "transaction_timeout_ms": -1}
        if version >= 3 and self.idem.producer_id >= 0:  # KIP-360: ask to bump our own epoch
            body.update(producer_id=self.idem.producer_id, producer_epoch=self.idem.producer_epoch)
        conn.send(INIT_PRODUCER_ID, version, body, None, now)
        self._pid_in_flight = True
        self.idem.state = idem.INITIALIZING
        self._update_interest(conn)

    def _on_response(self, conn: Connection, entry, body, now: float) -> None:
        if entry.api_key == PRODUCE.key:
            self._on_produce_response(entry, body, now)
            return
        with self.lock:
            self._on_admin_response(entry, body, now)

    def _on_admin_response(self, entry, body, now: float) -> None:
        if entry.api_key == METADATA.key:
            self._metadata_in_flight = False
            self.meta.update(body, now)
        elif entry.api_key == INIT_PRODUCER_ID.key:
            self._pid_in_flight = False
            if body.error_code == 0:
                window = body.get("max_in_flight_sequence_number_per_connection", -1)
                self.idem.set_producer_id(body.producer_id, body.producer_epoch,
                                          window if window and window > 0 else None)
                log.debug("producer_id_assigned", producer_id=body.producer_id,
                          epoch=body.producer_epoch, window=self.idem.window)
            elif ErrorCode(body.error_code) in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                                                ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                                ErrorCode.NOT_COORDINATOR):
                self.idem.state = idem.UNINITIALIZED
            else:
                self.idem.fail_fatally(KafkaError(body.error_code, "InitProducerId failed"))
                self._fail_everything(self.idem.fatal_error)

    # --- parked records --------------------------------------------------------------------

    def _partition_parked(self, now: float) -> None:
        from kipper.client.producer import place_parked  # the partitioning rules live with send()

        for topic in self.acc.waiting_topics():
            self.meta.wanted.add(topic)
            if self.meta.partitions(topic):
                place_parked(self, topic, now)
            elif now - self.acc.undesignated[topic].since > self.config.max_block_ms / 1000.0:
                code = self.meta.errors.get(topic)
                error = (KafkaError(code, f"no metadata for topic {topic}") if code is not None else
                         TimeoutError(f"topic {topic} not present in metadata after "
                                      f"{self.config.max_block_ms} ms"))
                self._fail_parked(topic, error)

    def _fail_parked(self, topic: str, error: BaseException) -> None:
        parked = self.acc.take_undesignated(topic)
        if parked is None:
            return
        for r in parked.records:
            r.future.fail_early(error)
            self.metrics["errors"] += 1
            if r.callback is not None:
                try:
                    r.callback(error, r.future.metadata())
                except Exception:
                    log.exception("delivery_callback_failed", topic=topic)
        parked.gate.set()

    # --- produce --------------------------------------------------------------------------

    def _drain_ready(self, now: float) -> tuple[float, list]:
        """Under the lock: choose the batches to send, give them sequences."""
        work = []
        if self.idem.state == idem.BUMPING:
            # False means a new producer id is needed; the next turn asks for it
            self.idem.maybe_finish_bump()
        if self.idem.enabled and self.idem.state not in (idem.READY, idem.BUMPING):
            return now + 0.05, work
        by_node: dict[int, list] = defaultdict(list)
        next_ready = self.acc.next_linger_deadline()
        for tp in self.acc.partitions_with_data():
            leader = self.meta.leader(*tp)
            if leader < 0:
                self.meta.refresh_requested = True
                continue
            by_node[leader].append(tp)
        cfg = self.config
        for node_id, partitions in by_node.items():
            conn = self._connection(node_id, now)
            if conn is None or not conn.ready:
                continue
            max_in_flight = self.idem.max_in_flight(cfg.max_in_flight_requests_per_connection,
                                                    cfg.max_in_flight_explicit)
            in_flight = conn.in_flight.count(PRODUCE.key)
            while in_flight < max_in_flight:
                batches, nr = self.acc.drain(
                    partitions, now, cfg.max_request_size,
                    lambda tp, b: self.idem.can_send(tp, b, in_flight, max_in_flight))
                next_ready = min(next_ready, nr)
                if not batches:
                    break
                for b in batches:
                    self.idem.assign((b.topic, b.partition), b)
                    b.attempts += 1
                    b.in_flight = True
                    b.retry_at = 0.0
                work.append((conn, batches))
                in_flight += 1
        return next_ready, work

    def _write_now(self, conn: Connection, now: float) -> None:
        """Try the socket at once instead of waiting a selector turn."""
        try:
            conn.on_writable()
        except (OSError, ConnectionError) as exc:
            with self.lock:
                self._drop_connection(conn, str(exc), now)
            return
        self._update_interest(conn)

    def _send_produce(self, conn: Connection, batches: list[ProducerBatch], now: float) -> None:
        cfg = self.config
        version = conn.pick_version(PRODUCE.key, 3, 12)
        topics: dict[str, list] = defaultdict(list)
        for b in batches:
            topics[b.topic].append({"index": b.partition, "records": b.seal(cfg.compression_type)})
        body = {"transactional_id": None, "acks": cfg.acks, "timeout_ms": cfg.request_timeout_ms,
                "topic_data": [{"name": t, "partition_data": p} for t, p in topics.items()]}
        expect = cfg.acks != 0
        if conn.state == "closed":  # dropped while we sealed: retry through the usual path
            with self.lock:
                for b in batches:
                    self._handle_batch_error(b, ErrorCode.NETWORK_EXCEPTION, now, "connection closed")
            return
        with self.lock:  # the connection's in-flight table is shared with response handling
            conn.send(PRODUCE, version, body, batches, now, expect_response=expect)
        m = self.metrics
        m["requests"] += 1
        m["batches"] += len(batches)
        for b in batches:
            m["records"] += b.count
            m["bytes"] += len(b.sealed)
        if not expect:
            with self.lock:
                for b in batches:
                    self.idem.on_success((b.topic, b.partition), b)
                    self._finish(b, -1, None)

    def _on_produce_response(self, entry, body, now: float) -> None:
        """Successes need no lock (only this thread touches sequences and
        completions); errors take it to re-queue."""
        by_tp = {(b.topic, b.partition): b for b in entry.context}
        failed = []
        self.metrics["request_latency_sum"] += now - entry.sent_at
        self.metrics["request_latency_max"] = max(self.metrics["request_latency_max"], now - entry.sent_at)
        for t in body.responses:
            for p in t.partition_responses:
                batch = by_tp.pop((t.name, p.index), None)
                if batch is None:
                    continue
                batch.in_flight = False
                if p.error_code in (0, ErrorCode.DUPLICATE_SEQUENCE_NUMBER):
                    self.idem.on_success((batch.topic, batch.partition), batch)
                    offset = p.base_offset if p.error_code == 0 else -1  # seed 000: no offset for a duplicate
                    self._finish(batch, offset, None, p.get("log_append_time_ms", -1))
                else:
                    failed.append((batch, p.error_code, p.get("error_message")))
        failed.extend((b, ErrorCode.UNKNOWN_SERVER_ERROR, "no answer for partition") for b in by_tp.values())
        if failed:
            with self.lock:
                for batch, code, message in failed:
                    batch.in_flight = False
                    self._handle_batch_error(batch, code, now, message)

    def _handle_batch_error(self, batch: ProducerBatch, code: int, now: float, message=None) -> None:
        tp = (batch.topic, batch.partition)
        batch.in_flight = False
        action = self.idem.classify(tp, batch, code)
        expired = now - batch.created > self.config.delivery_timeout_ms / 1000.0
        if (action == idem.RETRY and batch.attempts <= self.config.retries and not expired
                and not self.force_close):
            self.metrics["retries"] += 1
            if code in _LEADER_ERRORS or code == ErrorCode.NETWORK_EXCEPTION:
                self.meta.refresh_requested = True
            self.acc.requeue(batch, now + self.config.retry_backoff_ms / 1000.0)
            return
        error = KafkaError(code, message or "")
        if ErrorCode(code) in idem.FATAL_ERRORS:
            self.idem.fail_fatally(error)
            self._fail_everything(error)
            return
        self._fail_batch(batch, error, code)

    def _fail_batch(self, batch: ProducerBatch, error: BaseException, code: int | None) -> None:
        tp = (batch.topic, batch.partition)
        later = self.idem.on_failure(tp, batch, code)
        self._finish(batch, -1, error)
        for other in later:
            self._remove_queued(other)
            self._finish(other, -1, KafkaError(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                                               "an earlier batch of this partition failed (KIP-360)"))
        if later or batch.base_sequence >= 0:
            self.metrics["epoch_bump_requests"] += 1

    def _remove_queued(self, batch: ProducerBatch) -> None:
        dq = self.acc.queues.get((batch.topic, batch.partition))
        if dq and batch in dq:
            dq.remove(batch)

    def _finish(self, batch: ProducerBatch, base_offset: int, error, append_time: int = -1) -> None:
        if error is not None:
            self.metrics["errors"] += batch.count
        self._completions.append((batch, base_offset, error, append_time))

    def _expire(self, now: float) -> None:
        limit = self.config.delivery_timeout_ms / 1000.0
        for tp, dq in list(self.acc.queues.items()):
            while dq and not dq[0].in_flight and now - dq[0].created > limit:
                batch = dq.popleft()
                self._fail_batch(batch, TimeoutError(
                    f"batch for {tp[0]}-{tp[1]} expired after {self.config.delivery_timeout_ms} ms"), None)

    def _fail_everything(self, error: BaseException) -> None:
        for dq in self.acc.queues.values():
            while dq:
                self._finish(dq.popleft(), -1, error)
        for topic in list(self.acc.undesignated):
            self._fail_parked(topic, error)
        for batch in self.idem.forget_all():
            if not batch.done:
                self._finish(batch, -1, error)
