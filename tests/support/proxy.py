"""A fault-injecting TCP proxy for adversity tests (asyncpg-style).

It sits between clients and the broker, understands just enough framing to
know which response answers which request, and can:

- cut the connection right after the broker has answered a Produce (the
  answer is dropped, so the client cannot know the write happened and must
  retry: the idempotence tests);
- add a fixed delay in each direction (a network round trip on loopback);
- hold every Produce request until an event is set (a test acts on the broker meanwhile),
  and note the producer ids the broker gives out (InitProducerId answers).

Runs its own asyncio loop in a thread; ``start()`` returns the port.
"""

from __future__ import annotations

import asyncio
import struct
import threading

from kipper.protocol.framing import FrameDecoder

PRODUCE = 0
INIT_PRODUCER_ID = 22
_INIT_PRODUCER_ID_ANSWER = struct.Struct(">ihqh")  # throttle, error, producer id, epoch


class FaultProxy:
    def __init__(self, target_host: str, target_port: int, *, cut_produce_every: int = 0,
                 max_cuts: int | None = None, delay_ms: float = 0.0, hold_produce: threading.Event | None = None):
        self.target = (target_host, target_port)
        self.cut_produce_every = cut_produce_every
        self.max_cuts = max_cuts
        self.delay = delay_ms / 1000.0
        self.hold_produce = hold_produce  # Produce requests wait for it, then go on in order
        self.produce_requests = 0  # Produce requests received from clients (held ones too)
        self.producer_ids: list[tuple[int, int]] = []  # (producer id, epoch) of each InitProducerId answered
        self.port = 0
        self.cuts = 0
        self.produce_responses = 0
        self.connections = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> int:
        self._thread = threading.Thread(target=self._run, name="fault-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("proxy did not start")
        return self.port

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", self.port))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def stop(self) -> None:
        if self._loop is None:
            return

        async def close():
            self._server.close()
        asyncio.run_coroutine_threadsafe(close(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # --- forwarding --------------------------------------------------------------------

    async def _client(self, creader, cwriter) -> None:
        self.connections += 1
        try:
            breader, bwriter = await asyncio.open_connection(*self.target)
        except OSError:
            cwriter.close()
            return
        pending: dict[int, tuple[int, int]] = {}  # correlation id -> (api key, version)
        cut = asyncio.Event()

        async def upstream():
            decoder = FrameDecoder(1 << 30)
            while not cut.is_set():
                data = await creader.read(65536)
                if not data:
                    break
                for frame in decoder.feed(data):
                    api_key, version, cid = struct.unpack_from(">hhi", frame, 0)
                    pending[cid] = (api_key, version)
                    if api_key == PRODUCE:
                        self.produce_requests += 1
                        if self.hold_produce is not None and not self.hold_produce.is_set():
                            await asyncio.get_running_loop().run_in_executor(None, self.hold_produce.wait, 120)
                    self._forward(bwriter, frame)
                await bwriter.drain()

        async def downstream():
            decoder = FrameDecoder(1 << 30)
            while not cut.is_set():
                data = await breader.read(65536)
                if not data:
                    break
                for frame in decoder.feed(data):
                    cid = struct.unpack_from(">i", frame, 0)[0]
                    api_key, version = pending.pop(cid, (None, 0))
                    if api_key == PRODUCE and self._should_cut():
                        cut.set()  # the broker wrote; the client never hears of it
                        return
                    if api_key == INIT_PRODUCER_ID:  # (v2+ answers have a header's tag byte)
                        _, error, pid, epoch = _INIT_PRODUCER_ID_ANSWER.unpack_from(frame, 5 if version >= 2 else 4)
                        if not error:
                            self.producer_ids.append((pid, epoch))
                    self._forward(cwriter, frame)
                await cwriter.drain()

        tasks = [asyncio.ensure_future(upstream()), asyncio.ensure_future(downstream())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        except Exception:
            pass
        for t in tasks:
            t.cancel()
        for w in (cwriter, bwriter):
            try:
                w.transport.abort()
            except Exception:
                pass

    def _forward(self, writer, frame: bytes) -> None:
        data = struct.pack(">i", len(frame)) + frame
        if self.delay:
            # a delay line, not a queue: every frame is late by the same amount
            self._loop.call_later(self.delay, _write_if_open, writer, data)
        else:
            writer.write(data)

    def _should_cut(self) -> bool:
        self.produce_responses += 1
        if not self.cut_produce_every:
            return False
        if self.max_cuts is not None and self.cuts >= self.max_cuts:
            return False
        if self.produce_responses % self.cut_produce_every == 0:
            self.cuts += 1
            return True
        return False


def _write_if_open(writer, data: bytes) -> None:
    if not writer.is_closing():
        writer.write(data)
