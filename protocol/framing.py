"""Size-prefixed frame decoding into buffers the decoder owns (sans-I/O).

Frames come out as memoryviews, never copies. The decoder receives into a
64 KiB chunk (``get_buffer``/``buffer_updated``, asyncio's BufferedProtocol, so
the kernel writes straight into it), and a frame that cannot fit in what is
left of the chunk gets a buffer of exactly its size, into which the rest of it
is received. A chunk is written again only once no view into it is alive, so a
frame stays valid for as long as someone holds it. ``feed`` does the same for
callers that already hold the bytes (one copy, into the chunk).

The int32 size is checked against the limit before any buffer for the frame
is allocated, so a hostile peer cannot make us reserve 2 GiB with four bytes.
"""

from __future__ import annotations

import mmap
import struct
import sys

_SIZE = struct.Struct(">i")

DEFAULT_MAX_FRAME = 104857600  # Kafka's socket.request.max.bytes default
CHUNK_SIZE = 65536  # libuv's suggested read size
SPARE_CHUNKS = 8
# buffers of frames too large for a chunk (a producer's 1 MB Produce) are reused too: a
# fresh one costs page faults and zeroing, which were a tenth of the broker's ingest CPU
SPARE_BIG = 2
BIG_KEPT_MAX = 4 << 20
# In a ``mapped`` pool, a frame larger than a chunk (a producer's 1 MB Produce) is received
# into its own anonymous mapping whose pages are faulted in by the one mmap call
# (MAP_POPULATE): the kernel's receive copy then writes into memory that is ready, and the
# in-memory log keeps the batches where they landed instead of copying them
# (``batch.stored_batch``). Why: a page fault per 4 KiB of the stored copy, and the copy,
# were a third of the broker's ingest CPU; without them ingest costs half as much
# (0.14-0.16 broker CPU-s per 1M records of 100 B before, 0.075-0.077 after; PERFORMANCE.md).
MAPPED_MIN = CHUNK_SIZE
_MAP_FLAGS = (mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0)
              if hasattr(mmap, "MAP_ANONYMOUS") else None)


class FrameTooLarge(ValueError):
    def __init__(self, size: int, limit: int):
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit}")
        self.size = size
        self.limit = limit


class InvalidFrame(ValueError):
    pass


class FrameMemory(mmap.mmap):
    """The buffer of one frame too large for a chunk (see MAPPED_MIN). Like every decoder
    buffer it is written again only once no view into it is alive, so the log may keep
    slices of it as stored batches."""

    __slots__ = ()


class ChunkPool:
    """Spare receive buffers shared by the decoders of one thread, so an idle
    connection holds none and a busy one does not allocate per read: 64 KiB
    chunks, and a few larger buffers for frames that do not fit in one.

    ``mapped``: frames larger than a chunk get their own ``FrameMemory``, for a log that
    keeps them (the in-memory one). A log that copies them (the durable one, which writes
    them to its files) is better served by bytearrays: a mapping is sized to its frame,
    so a slightly larger frame needs a fresh one, where malloc hands back memory that is
    already in use."""

    __slots__ = ("_spare", "_big", "mapped")

    def __init__(self, mapped: bool = True):
        self._spare: list[bytearray] = []
        self._big: list[bytearray | FrameMemory] = []
        self.mapped = mapped and _MAP_FLAGS is not None

    def take(self) -> bytearray:
        return self._spare.pop() if self._spare else bytearray(CHUNK_SIZE)

    def give(self, chunk: bytearray) -> None:
        if len(self._spare) < SPARE_CHUNKS:
            self._spare.append(chunk)

    def take_big(self, size: int) -> bytearray | FrameMemory:
        """A buffer of at least ``size`` bytes."""
        for i, buf in enumerate(self._big):
            if len(buf) >= size:
                return self._big.pop(i)
        if self.mapped and size >= MAPPED_MIN:
            return FrameMemory(-1, size, flags=_MAP_FLAGS)
        return bytearray(size)

    def give_big(self, buf: bytearray | FrameMemory) -> None:
        if len(buf) <= BIG_KEPT_MAX and len(self._big) < SPARE_BIG:
            self._big.append(buf)

    @property
    def spare(self) -> int:
        return len(self._spare)


class FrameDecoder:
    """Yields complete frames (without the size prefix) as memoryviews."""

    __slots__ = ("max_size", "error", "_pool", "_chunk", "_start", "_end", "_big", "_big_size",
                 "_big_filled", "_big_done", "_lent")

    def __init__(self, max_size: int = DEFAULT_MAX_FRAME, pool: ChunkPool | None = None):
        self.max_size = max_size
        self.error: ValueError | None = None  # a bad prefix seen after good frames
        self._pool = pool or ChunkPool()
        self._chunk: bytearray | None = None  # taken from the pool while bytes are pending
        self._start = 0  # the first byte of the chunk not yet handed out
        self._end = 0  # one past the last byte received into the chunk
        self._big: bytearray | None = None  # a frame too large for the chunk, being received
        self._big_size = 0  # that frame's size (the buffer may be larger)
        self._big_filled = 0
        self._big_done: bytearray | None = None  # the last one's buffer, back to the pool once free
        self._lent: memoryview | None = None  # the region last given to get_buffer's caller

    # --- receiving -------------------------------------------------------------------------

    def get_buffer(self, sizehint: int = -1) -> memoryview:
        """Where the next bytes should be received (writable, never empty)."""
        if self.error is not None:
            raise self.error
        if self._big is not None:
            lent = memoryview(self._big)[self._big_filled:self._big_size]
        else:
            if self._chunk is None:
                self._chunk = self._pool.take()
                self._start = self._end = 0
            elif self._end == len(self._chunk):
                self._fresh_chunk()
            lent = memoryview(self._chunk)[self._end:]
        self._lent = lent
        return lent

    def buffer_updated(self, nbytes: int) -> list[memoryview]:
        """``nbytes`` were received into the last ``get_buffer``; the frames they complete.

        A bad size prefix raises. If complete frames came before it in the
        same bytes, they are returned first and the error is kept in
        ``error`` (and raised by the next call), so earlier requests can
        still be answered before the connection is closed.
        """
        if self._big is not None:
            self._big_filled += nbytes
            if self._big_filled < self._big_size:
                return []
            frame = memoryview(self._big)[:self._big_size]
            self._big_done, self._big = self._big, None
            return [frame]
        self._end += nbytes
        return self._scan()

    def feed(self, data) -> list[memoryview]:
        """Add bytes the caller already holds; every frame they complete."""
        if self.error is not None:
            raise self.error
        src = memoryview(data)
        if src.format != "B" or src.ndim != 1:
            src = src.cast("B")
        frames: list[memoryview] = []
        pos, n = 0, len(src)
        while pos < n and self.error is None:
            room = self.get_buffer()
            take = min(len(room), n - pos)
            room[:take] = src[pos:pos + take]
            del room
            pos += take
            frames += self.buffer_updated(take)
        return frames

    def release(self) -> None:
        """Give the buffers back to the pool if they hold nothing pending and no frame
        handed out from them is still referenced (call after handling a burst)."""
        if self._big_done is not None and self._unshared(self._big_done):
            self._pool.give_big(self._big_done)
            self._big_done = None
        if self._chunk is not None and self._start == self._end and self._big is None \
                and self._unshared(self._chunk):
            self._pool.give(self._chunk)
            self._chunk = self._lent = None

    @property
    def buffered(self) -> int:
        """Bytes received and not yet handed out as frames."""
        return (self._end - self._start) + (self._big_filled if self._big is not None else 0)

    # --- internals ---------------------------------------------------------------------------

    def _scan(self) -> list[memoryview]:
        chunk = self._chunk
        pos, end = self._start, self._end
        frames: list[memoryview] = []
        view = None
        while end - pos >= 4:
            size = _SIZE.unpack_from(chunk, pos)[0]
            if size < 0 or size > self.max_size:
                error = (InvalidFrame(f"negative frame size {size}") if size < 0
                         else FrameTooLarge(size, self.max_size))
                if not frames:
                    self._start = pos
                    raise error
                self.error = error
                break
            stop = pos + 4 + size
            if stop > end:
                if stop > len(chunk):  # it cannot fit: receive the rest into its own buffer
                    self._receive_big(pos + 4, size)
                    pos = self._end
                break
            if view is None:
                view = memoryview(chunk)
            frames.append(view[pos + 4:stop])
            pos = stop
        self._start = pos
        return frames

    def _receive_big(self, at: int, size: int) -> None:
        if self._big_done is not None and len(self._big_done) >= size and self._unshared(self._big_done):
            big, self._big_done = self._big_done, None  # this connection's last one is free
        else:
            big = self._pool.take_big(size)
        have = self._end - at
        big[:have] = memoryview(self._chunk)[at:self._end]
        self._big, self._big_size, self._big_filled = big, size, have

    def _unshared(self, buf: bytearray) -> bool:
        """No frame handed out from ``buf`` (the chunk or a big buffer, which the decoder
        holds) is alive. Every view reaches the buffer through the one managed buffer of
        the memoryview it was sliced from, so its references are: the decoder's, this
        argument, getrefcount's, the region last lent to ``get_buffer``'s caller (held in
        ``_lent``, since a transport may still hold it), and the frames'."""
        lent = self._lent is not None and self._lent.obj is buf
        return sys.getrefcount(buf) == 3 + lent

    def _fresh_chunk(self) -> None:
        """The chunk is full: continue in an empty one, carrying over a partial size prefix
        (a partial frame that fits never reaches the end; one that does not is received
        into its own buffer)."""
        tail = bytes(self._chunk[self._start:self._end])  # at most 3 bytes of a size prefix
        if not self._unshared(self._chunk):
            self._chunk = self._pool.take()
        self._chunk[:len(tail)] = tail
        self._start, self._end = 0, len(tail)
