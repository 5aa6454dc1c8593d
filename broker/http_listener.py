"""What the broker's HTTP listeners share (/metrics and the Schema Registry): a threading
HTTP server in a daemon thread whose request threads reach the engines only by running a
function on the event loop (``on_loop``), and TLS for the https:// ones.

The standard library's server keeps each listener small: a connection is a thread that
parses HTTP; the engines answer on the loop, as they answer Kafka requests, so nothing
else touches their state. With an ``ssl_context`` the TLS handshake happens in the
connection's own thread, so a slow client holds up no other.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ssl
import threading
from http.server import ThreadingHTTPServer
from typing import Callable

import structlog

log = structlog.get_logger(__name__)


class HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, handler, ssl_context: ssl.SSLContext | None = None):
        self.ssl_context = ssl_context
        super().__init__(address, handler)

    def finish_request(self, request, client_address) -> None:
        if self.ssl_context is not None:
            request = self.ssl_context.wrap_socket(request, server_side=True)
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address) -> None:  # a peer gone mid-request, a failed handshake
        log.debug("http_connection_failed", peer=f"{client_address[0]}:{client_address[1]}", exc_info=True)


class ThreadedListener:
    """An HttpServer serving in its own daemon thread."""

    def __init__(self, host: str, port: int, handler, *, name: str, ssl_context: ssl.SSLContext | None = None):
        self.httpd = HttpServer((host or "0.0.0.0", port), handler, ssl_context)
        self.host = host
        self.port = self.httpd.server_address[1]
        self.scheme = "https" if ssl_context is not None else "http"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name=name, daemon=True)

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
        return f"{self.scheme}://{host}:{self.port}"

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)


def on_loop(loop: asyncio.AbstractEventLoop) -> Callable:
    """``fn -> concurrent future``, running ``fn`` on ``loop`` (thread-safe)."""
    def submit(fn):
        future: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)
        loop.call_soon_threadsafe(run)
        return future
    return submit
