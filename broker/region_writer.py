"""Writes a connection's answers when some of their buffers are segment-file ranges (issue 41).

A Fetch answer from a durable log carries its records as ``FileRegion``s
(broker/storage/file_region.py). The kernel sends a region with ``sendfile`` straight from the
page cache once everything before it has left the transport; a socket whose send buffer fills
(``socket.send.buffer.bytes``, Kafka's 100 KiB by default) takes the rest when it can, as
Kafka's ``transferTo`` goes on when the channel is writable again: until then the region and
every buffer after it wait here, in order, and the connection stops reading
(``busy(True)``). The socket's readiness is watched through a duplicate of its descriptor, so
the event loop's own watch of the transport is not disturbed. Where sendfile cannot run (no
socket descriptor: TLS; bytes still queued in the transport), a region is read with one
``pread`` and written like any buffer.
"""

from __future__ import annotations

import os
from collections import deque

from kipper.broker.storage.file_region import FileRegion


class RegionWriter:
    __slots__ = ("transport", "sock_fd", "busy", "count", "_queue", "_watch_fd", "_loop")

    def __init__(self, transport, sock_fd: int | None, loop, busy=lambda waiting: None,
                 count=lambda nbytes: None):
        self.transport = transport
        self.sock_fd = sock_fd  # None: never sendfile (TLS, a transport without a socket)
        self._loop = loop
        self.busy = busy  # told when buffers start and stop waiting for the socket
        self.count = count  # told the bytes each sendfile sent (the metrics)
        self._queue: deque = deque()  # what waits behind a region the socket has not taken
        self._watch_fd = -1

    @property
    def waiting(self) -> bool:
        return bool(self._queue)

    def write(self, buffers: list) -> None:
        """``buffers`` after everything written before, in order."""
        if self._queue:
            self._queue.extend(buffers)
            return
        self._pump(deque(buffers))

    def _pump(self, queue: deque) -> None:
        transport, sock_fd = self.transport, self.sock_fd
        plain = []
        while queue:
            buf = queue.popleft()
            if type(buf) is not FileRegion:
                plain.append(buf)
                continue
            if plain:
                transport.writelines(plain)
                plain = []
            if sock_fd is None or transport.get_write_buffer_size():
                transport.write(buf.read())
                buf.close()
                continue
            self.count(buf.send(sock_fd))
            if buf.length:  # the socket is full: the rest, and all after it, when it drains
                queue.appendleft(buf)
                self._queue = queue
                self._watch()
                return
            buf.close()
        if plain:
            transport.writelines(plain)

    def _watch(self) -> None:
        if self._watch_fd < 0:
            self._watch_fd = os.dup(self.sock_fd)
            self._loop.add_writer(self._watch_fd, self._writable)
            self.busy(True)

    def _unwatch(self) -> None:
        if self._watch_fd >= 0:
            self._loop.remove_writer(self._watch_fd)
            os.close(self._watch_fd)
            self._watch_fd = -1

    def _writable(self) -> None:
        queue, self._queue = self._queue, deque()
        self._pump(queue)
        if not self._queue:
            self._unwatch()
            self.busy(False)

    def close(self) -> None:
        """The connection is gone: nothing more is sent, the regions' descriptors close."""
        self._unwatch()
        for buf in self._queue:
            if type(buf) is FileRegion:
                buf.close()
        self._queue.clear()
