"""C calls that keep the GIL, as a C client library's blocking call can: ``ctypes.PyDLL``
calls libc without releasing it (``ctypes.CDLL`` would release it)."""

from __future__ import annotations

import ctypes
import socket
import struct
import sys
from contextlib import contextmanager

_LIBC = ctypes.PyDLL(None, use_errno=True)


@contextmanager
def no_thread_switch():
    """The interpreter hands the GIL to another thread only when this one blocks in a call
    that releases it (or after 1,000 s): the GIL stays held from one C call to the next."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1000)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def exchange_holding_the_gil(sock: socket.socket, request: bytes, timeout_s: float) -> bytes | None:
    """Sends ``request`` and reads the answer's first bytes with libc, the GIL held all the
    while; None when nothing came within ``timeout_s`` (the answerer could not run)."""
    sock.settimeout(None)  # a blocking descriptor (Python's timeouts make it non-blocking)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", int(timeout_s),
                                                                        int(timeout_s % 1 * 1e6)))
    buf = ctypes.create_string_buffer(65536)
    with no_thread_switch():
        sent = _LIBC.send(sock.fileno(), request, len(request), 0)
        assert sent == len(request), ctypes.get_errno()
        got = _LIBC.recv(sock.fileno(), buf, len(buf), 0)
    return buf.raw[:got] if got > 0 else None


def sleep_holding_the_gil(seconds: int) -> None:
    """libc's sleep, the GIL held: a test stuck in C as a client's destroy can be."""
    _LIBC.sleep(seconds)
