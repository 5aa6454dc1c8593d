"""The send thread (seed 001): a thin shell of sockets around the SendEngine.

Each turn, under the producer lock, the engine places parked records and
expires old batches, names the InitProducerId and Metadata requests it needs
and drains ready batches into one ProduceRequest per broker. Outside the lock
the shell seals (compresses) them, writes, then waits on the selector for
readable/writable sockets, a wake-up, or the next linger deadline. Responses
are matched to requests by correlation id (connection.py) and handed back to
the engine; a lost connection is reported to the engine as a disconnection.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time

from kipper.client.config import ProducerConfig
from kipper.client.connection import Connection
from kipper.client.logs import get_logger
from kipper.client.send_engine import SendEngine
from kipper.client.send_requests import ProduceRequest
from kipper.protocol.errors import ErrorCode, KafkaError

log = get_logger(__name__)

_RECONNECT_BACKOFF = 0.05


class Sender:
    def __init__(self, config: ProducerConfig, engine: SendEngine, lock):
        self.config = config
        self.engine = engine
        self.lock = lock
        self.selector = selectors.DefaultSelector()
        self.conns: dict[int, Connection] = {}
        self._bootstrap_next = 0
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector.register(self._wake_r, selectors.EVENT_READ, None)
        self.sleeping = False  # read by callers to skip a wake-up while the thread is busy
        self.waiters = 0  # callers blocked on buffer.memory
        self._running = True
        self._reconnect_at: dict[int, float] = {}
        self._thread = threading.Thread(target=self.run, name="kipper-producer-send", daemon=True)

    # --- the thread -----------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float | None) -> None:
        self._thread.join(timeout)

    def stop(self, force: bool) -> None:
        """Finish after what is queued is delivered; ``force``: give up on it."""
        self._running = False
        if force:
            self.engine.force_close = True
        self.wakeup()

    def wakeup(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass

    def stats(self) -> dict:
        """Call under the lock."""
        return {"in_flight_requests": sum(len(c.in_flight) for c in self.conns.values()),
                "connections": len(self.conns)}

    # --- the loop ------------------------------------------------------------------

    def run(self) -> None:
        engine = self.engine
        try:
            while self._running or (not engine.force_close and not self._quiescent()):
                self.run_once()
        except Exception:
            log.exception("send_thread_crashed")
            with self.lock:
                engine.fail_everything(KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "send thread crashed"))
            self._run_completions()
        finally:
            with self.lock:
                engine.fail_remaining(KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR,
                                                 "producer closed before delivery"))
            self._run_completions()
            for conn in list(self.conns.values()):
                conn.close("producer closed")
            self.selector.close()
            self._wake_r.close()
            self._wake_w.close()

    def _quiescent(self) -> bool:
        with self.lock:
            return self.engine.idle() and not any(len(c.in_flight) for c in self.conns.values())

    def run_once(self) -> None:
        engine = self.engine
        now = time.monotonic()
        with self.lock:
            engine.poll(now)
            self._send_control(engine.producer_id_request(), now)
            self._send_control(engine.metadata_request(now), now)
            next_ready, work = engine.drain(now, lambda node_id: self._node_ready(node_id, now))
            self._check_timeouts(now)
        # sealing, compressing and encoding happen outside the lock, so the
        # caller's thread can keep appending meanwhile
        for request in work:
            self._send_produce(request, now)
        for node_id in {request.node_id for request in work}:
            conn = self.conns.get(node_id)
            if conn is not None:
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
                        self._on_response(entry.context, body, now)
            except (OSError, ConnectionError, ValueError) as exc:
                with self.lock:
                    self._drop_connection(conn, str(exc), now)
            else:
                self._update_interest(conn)
        self._run_completions()

    def _run_completions(self) -> None:
        """User callbacks run here, outside the lock."""
        if self.engine.run_completions() and self.waiters:
            with self.lock:
                self.lock.notify_all()

    # --- requests and responses --------------------------------------------------------

    def _send_control(self, request, now: float) -> None:
        """Metadata or InitProducerId, on the least loaded ready connection."""
        if request is None:
            return
        conn = self._any_ready(now)
        if conn is None:
            return
        version = conn.pick_version(request.api.key, request.min_version, request.max_version)
        if version is None:
            self.engine.unsupported(request)
            return
        conn.send(request.api, version, request.body(version), request, now)
        self.engine.sent(request, conn.node_id, now)
        self._update_interest(conn)

    def _send_produce(self, request: ProduceRequest, now: float) -> None:
        conn = self.conns.get(request.node_id)
        if conn is None or conn.state == "closed":  # dropped since the drain: retry as usual
            with self.lock:
                self.engine.on_send_failed(request, now, "connection closed")
            return
        version = conn.pick_version(request.api.key, request.min_version, request.max_version)
        body = request.body(version)
        with self.lock:  # the connection's in-flight table is shared with response handling
            conn.send(request.api, version, body, request, now, expect_response=request.expects_response)
            self.engine.sent(request, conn.node_id, now)

    def _on_response(self, request, body, now: float) -> None:
        if isinstance(request, ProduceRequest):
            # successes need no lock; errors take it to re-queue
            failed = self.engine.on_produce_response(request, body, now)
            if failed:
                with self.lock:
                    self.engine.retry_or_fail(failed, now)
            return
        with self.lock:
            self.engine.on_control_response(request, body, now)

    # --- connections -----------------------------------------------------------------

    def _node_ready(self, node_id: int, now: float) -> bool:
        conn = self._connection(node_id, now)
        return conn is not None and conn.ready

    def _connection(self, node_id: int, now: float) -> Connection | None:
        conn = self.conns.get(node_id)
        if conn is not None and conn.state != "closed":
            return conn
        if now < self._reconnect_at.get(node_id, 0.0):
            return None
        if node_id < 0:
            host, port = self.config.bootstrap_servers[(-node_id - 1) % len(self.config.bootstrap_servers)]
        else:
            addr = self.engine.metadata.brokers.get(node_id)
            if addr is None:
                return None
            host, port = addr
        conn = Connection(node_id, host, port, self.config.client_id, now)
        if conn.state == "closed":
            self._reconnect_at[node_id] = now + _RECONNECT_BACKOFF
            return None
        self.conns[node_id] = conn
        conn.interest = selectors.EVENT_READ | selectors.EVENT_WRITE
        self.selector.register(conn.sock, conn.interest, conn)
        return conn

    def _update_interest(self, conn: Connection) -> None:
        if conn.state == "closed":
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.wants_write else 0)
        if events == conn.interest:
            # unchanged: no epoll_ctl, which gives up the GIL, and the caller's
            # thread then keeps it for up to the switch interval (5 ms)
            return
        try:
            self.selector.modify(conn.sock, events, conn)
        except (KeyError, ValueError, OSError):
            return
        conn.interest = events

    def _any_ready(self, now: float) -> Connection | None:
        """A ready connection for metadata / InitProducerId: the least loaded."""
        ready = [c for c in self.conns.values() if c.ready]
        if ready:
            return min(ready, key=lambda c: len(c.in_flight))
        for node_id in list(self.engine.metadata.brokers):
            if self._connection(node_id, now) is not None:
                return None
        n = len(self.config.bootstrap_servers)
        self._bootstrap_next = (self._bootstrap_next + 1) % n
        self._connection(-1 - self._bootstrap_next, now)
        return None

    def _write_now(self, conn: Connection, now: float) -> None:
        """Try the socket at once instead of waiting a selector turn."""
        try:
            conn.on_writable()
        except (OSError, ConnectionError) as exc:
            with self.lock:
                self._drop_connection(conn, str(exc), now)
            return
        self._update_interest(conn)

    def _drop_connection(self, conn: Connection, reason: str, now: float) -> None:
        """Under the lock."""
        try:
            self.selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.close(reason)
        if self.conns.get(conn.node_id) is conn:
            del self.conns[conn.node_id]
        self._reconnect_at[conn.node_id] = now + _RECONNECT_BACKOFF
        lost = self.engine.on_disconnected(conn.node_id, now, reason)
        log.debug("producer_connection_lost", node=conn.node_id, reason=reason, in_flight=lost)

    def _check_timeouts(self, now: float) -> None:
        limit = self.config.request_timeout_ms / 1000.0
        for node_id in self.engine.timed_out_nodes(now):
            conn = self.conns.get(node_id)
            if conn is not None:
                self._drop_connection(conn, "request timed out", now)
            else:
                self.engine.on_disconnected(node_id, now, "request timed out")
        for conn in list(self.conns.values()):
            if conn.state != "ready" and now - conn.created > limit:
                self._drop_connection(conn, "connection setup timed out", now)
