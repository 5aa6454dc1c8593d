"""Size-prefixed frame decoding, fed bytes as they arrive (sans-I/O).

The int32 size is checked against the limit before any buffer for the frame
is allocated, so a hostile peer cannot make us reserve 2 GiB with four bytes.
"""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")

DEFAULT_MAX_FRAME = 104857600  # Kafka's socket.request.max.bytes default


class FrameTooLarge(ValueError):
    def __init__(self, size: int, limit: int):
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit}")
        self.size = size
        self.limit = limit


class InvalidFrame(ValueError):
    pass


class FrameDecoder:
    """Accumulates bytes and yields complete frames (without the size prefix)."""

    __slots__ = ("_buf", "_need", "max_size", "error")

    def __init__(self, max_size: int = DEFAULT_MAX_FRAME):
        self._buf = bytearray()
        self._need = -1  # size of the frame being read, -1 while reading the prefix
        self.max_size = max_size
        self.error: ValueError | None = None  # a bad prefix seen after good frames

    def feed(self, data) -> list[bytes]:
        """Add ``data``; return every frame it completes (possibly none).

        A bad size prefix raises. If complete frames came before it in the
        same data, they are returned first and the error is kept in
        ``error`` (and raised by the next call), so earlier requests can
        still be answered before the connection is closed.
        """
        if self.error is not None:
            raise self.error
        buf = self._buf
        buf += data
        frames = []
        pos = 0
        n = len(buf)
        while True:
            if self._need < 0:
                if n - pos < 4:
                    break
                size = _SIZE.unpack_from(buf, pos)[0]
                if size < 0 or size > self.max_size:
                    error = (InvalidFrame(f"negative frame size {size}") if size < 0
                             else FrameTooLarge(size, self.max_size))
                    if not frames:
                        raise error
                    self.error = error
                    break
                self._need = size
                pos += 4
            if n - pos < self._need:
                break
            end = pos + self._need
            frames.append(bytes(buf[pos:end]))
            pos = end
            self._need = -1
        if pos:
            del buf[:pos]
        return frames

    @property
    def buffered(self) -> int:
        return len(self._buf)
