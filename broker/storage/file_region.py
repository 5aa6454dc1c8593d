"""A range of a segment file that a Fetch answer sends without reading it (issue 41).

The durable log hands Fetch a ``FileRegion`` in place of the bytes when the connection can
use ``sendfile`` (a plain TCP socket: broker/connection.py), as Kafka's FileRecords go out
through ``transferTo``: the kernel copies from the page cache to the socket and the data
never enters the broker's memory. The region holds its own duplicate of the file
descriptor, so a segment deleted by retention or replaced by the cleaner before the answer
is written still gives the bytes that were read. Where sendfile cannot run (TLS, a socket
whose write buffer is not empty, an in-process caller), ``read`` gives the bytes with one
``pread``.
"""

from __future__ import annotations

import os


class FileRegion:
    __slots__ = ("fd", "position", "length")

    def __init__(self, fd: int, position: int, length: int):
        self.fd = os.dup(fd)
        self.position = position
        self.length = length

    def __len__(self) -> int:
        return self.length

    def send(self, sock_fd: int) -> int:
        """Send as much of the region as the socket takes now (non-blocking); how much.
        What was sent is no longer part of the region."""
        sent = 0
        while self.length:
            try:
                n = os.sendfile(sock_fd, self.fd, self.position, self.length)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:  # the peer went away: the transport says so on its next write
                break
            if n <= 0:
                break
            sent += n
            self.position += n
            self.length -= n
        return sent

    def read(self) -> bytes:
        """What is left of the region, read with one ``pread``."""
        return os.pread(self.fd, self.length, self.position)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self):
        self.close()


def materialized(chunks: list) -> list:
    """``chunks`` with every region read into bytes (for a caller that joins them)."""
    return [c.read() if type(c) is FileRegion else c for c in chunks]
