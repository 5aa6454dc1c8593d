"""One client connection: an asyncio.BufferedProtocol on the hot path.

Bytes are received straight into the frame decoder's buffers (``get_buffer``)
and frames, memoryviews into them, are dispatched at once, so requests on a
connection are pipelined and a request's bytes are never copied before the
log stores them. Each request takes a slot in a FIFO; a slot is
filled immediately (most handlers) or when its coroutine finishes (long-poll
Fetch, JoinGroup). Responses leave in request order, and everything ready at
the end of a read burst goes out in one write (``writelines`` when a response
is a list of buffers pointing at stored batches; a durable segment's range goes out with
``sendfile`` on a plain TCP socket). Reading pauses while too many
slots are pending or the transport's write buffer is full. A handler's
``Reply`` may ask the connection to mute itself for a quota throttle or to
close after a failed login; both happen once the burst's answers are written.
"""

from __future__ import annotations

import asyncio
import socket
from collections import deque

import structlog

from kipper.broker.context import Session
from kipper.broker.dispatcher import Close, Dispatcher, Later
from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.broker.region_writer import RegionWriter
from kipper.broker.storage.file_region import FileRegion
from kipper.protocol.framing import CHUNK_SIZE, ChunkPool, FrameDecoder, FrameTooLarge, InvalidFrame

log = structlog.get_logger(__name__)

MAX_PENDING = 256  # queued responses before we stop reading from this client
RESUME_PENDING = 64
FAILED_AUTHENTICATION_DELAY_S = 0.1  # Kafka's connection.failed.authentication.delay.ms default

_PENDING = object()
_FRAME_TYPES = frozenset((bytes, bytearray, list))  # a ready frame (a list: buffers carrying stored batches)
_PLAIN = frozenset(("PLAINTEXT", "SASL_PLAINTEXT"))  # no TLS: the socket's bytes are the frames


class _Slot:
    __slots__ = ("frame",)

    def __init__(self, frame=_PENDING):
        self.frame = frame


class KafkaConnection(asyncio.BufferedProtocol):
    def __init__(self, dispatcher: Dispatcher, session_factory, registry: set, *,
                 max_frame: int, on_close=None, pre_auth_max_frame: int | None = None,
                 pool: ChunkPool | None = None, after_burst=None, send_buffer: int = -1):
        self.dispatcher = dispatcher
        self.session_factory = session_factory
        self.registry = registry
        self.max_frame = max_frame
        self.on_close = on_close
        self.after_burst = after_burst  # the server's, once this burst's requests are handled
        self.transport: asyncio.Transport | None = None
        self.session: Session | None = None
        self.decoder = FrameDecoder(max_frame, pool)
        self.slots: deque[_Slot] = deque()
        self.tasks: set[asyncio.Task] = set()
        self.closing = False
        self._read_paused = False
        self._write_paused = False
        self._flush_scheduled = False
        self._ready: list = []  # frames answered in this read burst (bytes or lists of buffers)
        # issue #6: frames are capped at sasl.server.max.receive.size until the
        # session is authenticated; a quota throttle mutes reading for a while
        self.pre_auth_max_frame = pre_auth_max_frame
        self._muted = False
        self._mute_handle: asyncio.TimerHandle | None = None
        self._held: list[bytes] = []  # decoded frames waiting for a mute (or a hold) to end
        self._holding = 0  # answers still to come that hold the next requests (a Holding)
        # asked for by the replies of this burst, done after its answers are written
        self._mute_after_ms = 0
        self._close_after = False
        self.send_buffer = send_buffer  # socket.send.buffer.bytes (-1: the OS's own)
        self._sock_fd: int | None = None  # the socket's descriptor, where sendfile may use it
        self._regions: RegionWriter | None = None  # made for the first answer carrying a file range
        self._regions_waiting = False  # a file range waits for the socket: read nothing more

    # --- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport) -> None:
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.session = self.session_factory(transport, f"{peer[0]}:{peer[1]}" if peer else "?")
        sock = transport.get_extra_info("socket")
        if sock is not None and self.send_buffer >= 0:  # Kafka's SocketServer does the same
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
        if (sock is not None and transport.get_extra_info("sslcontext") is None
                and self.session.security_protocol in _PLAIN):
            self._sock_fd = sock.fileno()
            self.session.zero_copy = True
        self.registry.add(self)
        self.dispatcher.metrics.connection_opened()
        if not self.session.authenticated and self.pre_auth_max_frame:
            self.decoder.max_size = min(self.max_frame, self.pre_auth_max_frame)

    def connection_lost(self, exc) -> None:
        self.closing = True
        self.registry.discard(self)
        self.dispatcher.metrics.connection_closed()
        for task in list(self.tasks):
            task.cancel()
        if self._mute_handle is not None:
            self._mute_handle.cancel()
        if self._regions is not None:
            self._regions.close()
        if self.session is not None:
            self.dispatcher.connection_closed(self.session)
        if self.on_close is not None:
            self.on_close(self)

    def pause_writing(self) -> None:
        self._write_paused = True
        self._update_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        self._update_reading()

    def get_buffer(self, sizehint: int) -> memoryview:
        if self.decoder.error is not None or self.closing:
            return memoryview(bytearray(CHUNK_SIZE))  # read and dropped: the connection is closing
        return self.decoder.get_buffer(sizehint)

    def buffer_updated(self, nbytes: int) -> None:
        if self.closing:
            return
        try:
            self._handle_burst(self.decoder.buffer_updated(nbytes))
        except (FrameTooLarge, InvalidFrame) as exc:
            self.abort("invalid_frame", str(exc))
            return
        # the burst's frames are gone (unless held for a mute): an idle connection keeps no buffer
        self.decoder.release()

    def data_received(self, data) -> None:
        """For callers holding bytes already (tests, a transport without get_buffer)."""
        if self.closing:
            return
        try:
            self._handle_burst(self.decoder.feed(data))
        except (FrameTooLarge, InvalidFrame) as exc:
            self.abort("invalid_frame", str(exc))
            return
        self.decoder.release()

    def _handle_burst(self, frames: list) -> None:
        if self._held or self._holding:  # muted or held: keep request order behind the frames held
            self._held.extend(frames)
            frames = []
        self._handle(frames)
        if self.closing:
            return
        if self.decoder.error is not None:
            self.abort("invalid_frame", str(self.decoder.error))
            return
        self.flush()
        self._after_burst()

    def _after_burst(self) -> None:
        if self.after_burst is not None:
            self.after_burst()
        if self.closing:
            return
        if self._mute_after_ms or self._close_after or (
                self.decoder.max_size != self.max_frame and self.session.authenticated):
            self._apply_signals()

    def _apply_signals(self) -> None:
        """Act on what the replies asked of the connection (issue #6), after the
        answers of this read burst were written."""
        if self._close_after:
            # Kafka's connection.failed.authentication.delay.ms: the client reads
            # the answer before the close, and cannot retry in a tight loop
            self.closing = True
            self.transport.pause_reading()
            asyncio.get_running_loop().call_later(FAILED_AUTHENTICATION_DELAY_S, self.transport.close)
            return
        if self.session.authenticated:
            self.decoder.max_size = self.max_frame
        if self._mute_after_ms:
            self.mute_for(self._mute_after_ms)
            self._mute_after_ms = 0

    def mute_for(self, ms: int) -> None:
        """Stop reading for ``ms`` (a quota's throttle time), as Kafka mutes a
        throttled channel after sending the response."""
        loop = asyncio.get_running_loop()
        if self._mute_handle is not None:
            if self._mute_handle.when() >= loop.time() + ms / 1000:
                return
            self._mute_handle.cancel()
        self._muted = True
        self._mute_handle = loop.call_later(ms / 1000, self._unmute)
        self._update_reading()

    def _unmute(self) -> None:
        self._mute_handle = None
        self._muted = False
        self._release()

    def _release(self) -> None:
        """Handle the frames a mute or a hold kept waiting, once neither is left."""
        if self.closing or self._muted or self._holding:
            self._update_reading()
            return
        held, self._held = self._held, []
        self._handle(held)
        if self.closing:
            return
        self.flush()
        self._after_burst()
        self._update_reading()

    # --- requests ------------------------------------------------------------------------

    def _handle(self, frames: list) -> None:
        """Answer ``frames`` in order, until a reply closes the connection or mutes it (the
        frames after that wait in ``_held``)."""
        i, n = 0, len(frames)
        dispatch = self.dispatcher.dispatch
        ready, slots = self._ready, self.slots
        while i < n:
            # a run of requests repeating one head is answered together (broker/dispatcher.py)
            answers, done = dispatch(frames, i, self.session)
            i += done
            if not slots and _FRAME_TYPES.issuperset(map(type, answers)):
                ready += answers  # frames, nothing queued before them: the common case
            else:
                for answer in answers:
                    self._answered(answer)
                    if self.closing:
                        return
            if self._close_after:
                return  # a failed login: nothing after it is handled (Kafka mutes, then closes)
            if (self._mute_after_ms or self._holding) and i < n:
                # a throttled connection reads nothing more until its mute ends (Kafka mutes
                # the channel), nor one whose answer holds it; frames already decoded wait here
                self._held.extend(frames[i:])
                return

    def _answered(self, answer) -> None:
        """Queue an answer: a frame, a Reply holding one, NO_RESPONSE, a Later (a long
        poll, a rebalance: it takes a slot now and fills it when it comes), or a Close."""
        kind = type(answer)
        if kind is Close:
            self.abort(answer.event, answer.reason)
            return
        if kind is Later:
            slot = _Slot()
            self.slots.append(slot)
            task = asyncio.ensure_future(answer.pending)
            self.tasks.add(task)
            hold = answer.hold
            if hold:
                self._holding += 1
            task.add_done_callback(lambda t, s=slot, f=answer.finish, h=hold: self._complete(t, s, f, h))
            self._update_reading()
            return
        if kind is Reply:
            if answer.abort is not None:
                self.abort("closed_after_refusal", answer.abort)
                return
            self._note(answer)
            answer = answer.body
        if answer is NO_RESPONSE:
            return
        if self.slots:
            self.slots.append(_Slot(answer))
        else:
            self._ready.append(answer)

    def _complete(self, task: asyncio.Task, slot: _Slot, finish, hold: bool = False) -> None:
        self.tasks.discard(task)
        if hold:
            self._holding -= 1
        if self.closing or task.cancelled():
            return
        answer = finish(task)  # the dispatcher's: a frame, a Reply, or a Close
        if type(answer) is Close:
            self.abort(answer.event, answer.reason)
            return
        if type(answer) is Reply:
            self._note(answer)
            answer = answer.body
        slot.frame = answer
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._scheduled_flush)
        if hold and not self._holding:  # after the answer's flush: the next requests in order
            asyncio.get_running_loop().call_soon(self._release)

    def _scheduled_flush(self) -> None:
        self._flush_scheduled = False
        self.flush()
        self._after_burst()

    def _note(self, reply: Reply) -> None:
        if reply.mute_ms > self._mute_after_ms:
            self._mute_after_ms = reply.mute_ms
        if reply.close:
            self._close_after = True

    # --- output --------------------------------------------------------------------------

    def flush(self) -> None:
        out = self._ready
        slots = self.slots
        while slots and slots[0].frame is not _PENDING:
            out.append(slots.popleft().frame)
        if out and not self.closing:
            self._write(out)
            out.clear()
        self._update_reading()

    def _update_reading(self) -> None:
        if self.closing or self.transport is None:
            return
        busy = (self._write_paused or len(self.slots) >= MAX_PENDING or self._muted or self._holding
                or self._regions_waiting)
        if busy and not self._read_paused:
            self._read_paused = True
            self.transport.pause_reading()
        elif (self._read_paused and not self._write_paused and not self._muted and not self._holding
              and not self._regions_waiting and len(self.slots) <= RESUME_PENDING):
            self._read_paused = False
            self.transport.resume_reading()

    def abort(self, event: str, reason: str) -> None:
        """Close this connection only; nothing stored is touched."""
        if self.closing:
            return
        log.warning(event, peer=self.session.peer if self.session else "?", reason=reason)
        self.dispatcher.metrics.observe_rejected(event)
        self.closing = True
        # answers already produced for earlier requests still go out
        self.flush_before_close()
        self.transport.close()

    def flush_before_close(self) -> None:
        out = self._ready
        while self.slots and self.slots[0].frame is not _PENDING:
            out.append(self.slots.popleft().frame)
        if out:
            self._write(out)
            out.clear()

    def close(self) -> None:
        if not self.closing:
            self.closing = True
            if self.transport is not None:
                self.transport.close()

    def _write(self, frames: list) -> None:
        """One write for a burst's answers. Small frames are joined (one syscall beats
        many small iovecs); a frame given as a list of buffers (stored batches) goes out
        with ``writelines``, which uvloop sends with one writev and without copying."""
        transport = self.transport
        if self._regions_waiting:  # behind a file range the socket has not taken yet
            self._regions.write(_flat(frames))
        elif len(frames) == 1 and type(frames[0]) is not list:
            transport.write(frames[0])
        elif list not in map(type, frames):  # (in C: this runs for every burst)
            transport.write(b"".join(frames))
        else:
            buffers = _flat(frames)
            if FileRegion in map(type, buffers):
                if self._regions is None:
                    self._regions = RegionWriter(transport, self._sock_fd, asyncio.get_running_loop(),
                                                 self._regions_wait, self.dispatcher.metrics.record_sendfile)
                self._regions.write(buffers)
            else:
                transport.writelines(buffers)

    def _regions_wait(self, waiting: bool) -> None:
        self._regions_waiting = waiting
        self._update_reading()


def _flat(frames: list) -> list:
    buffers = []
    for f in frames:
        if type(f) is list:
            buffers.extend(f)
        else:
            buffers.append(f)
    return buffers

