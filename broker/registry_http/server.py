"""The Schema Registry's listener: HTTP/1.1 (kept alive), Confluent's content types, Basic
authentication, and each route run on the broker's event loop.

A request thread reads the request, checks the credentials (``access.Authenticator``), parses
the JSON body, and hands ``routes.match``'s handler to the loop with ``on_loop``; the answer
comes back as JSON (``application/vnd.schemaregistry.v1+json``) or, for a failure, Confluent's
``{"error_code": ..., "message": ...}`` with its HTTP status. A bug in a route is a 500 with
error code 50001 and a log line, never a dropped connection.
"""

from __future__ import annotations

import concurrent.futures
import json
from http.server import BaseHTTPRequestHandler
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import structlog

from kipper.broker.http_listener import ThreadedListener
from kipper.broker.registry_http import access, routes
from kipper.broker.schema_registry import errors

log = structlog.get_logger(__name__)

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPTED_BODIES = ("application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json",
                   "application/json", "application/octet-stream")
ROUTE_TIMEOUT_S = 30.0
MAX_BODY = 64 * 1024 * 1024  # a schema body larger than this is refused before it is read
IDLE_TIMEOUT_S = 120  # a kept-alive connection idle this long is closed


class RegistryHttpServer:
    """``context()`` gives the routes' Context of the moment (a reset replaces the registry);
    ``on_loop(fn)`` runs ``fn`` on the broker's loop; ``authenticator`` is None without auth."""

    def __init__(self, host: str, port: int, *, on_loop: Callable, context: Callable[[], routes.Context],
                 authenticator: access.Authenticator | None = None, ssl_context=None):
        self.on_loop = on_loop
        self.context = context
        self.authenticator = authenticator
        self.listener = ThreadedListener(host, port, _handler(self), name="kipper-schema-registry",
                                         ssl_context=ssl_context)
        self.requests = 0

    @property
    def url(self) -> str:
        return self.listener.url

    @property
    def port(self) -> int:
        return self.listener.port

    def start(self) -> None:
        self.listener.start()

    def close(self) -> None:
        self.listener.close()

    # --- on the request threads -------------------------------------------------------------------

    def answer(self, method: str, target: str, headers, body: bytes | None, peer: str) -> tuple[int, object]:
        """(status, JSON body or routes.Raw) of one request."""
        self.requests += 1
        principal = "User:ANONYMOUS"
        if self.authenticator is not None:
            creds = access.basic_credentials(headers.get("Authorization"))
            if creds is None or not self.authenticator.verify(*creds):
                return 401, {"error_code": 401, "message": "Unauthorized"}
            principal = f"User:{creds[0]}"
        split = urlsplit(target)
        try:
            handler, path = routes.match(method, split.path)
            parsed = _body(headers, body) if method in ("POST", "PUT") else None
        except errors.RegistryError as exc:
            return exc.status, exc.body()
        query = parse_qs(split.query, keep_blank_values=True)

        def run():
            ctx = self.context()
            session = ctx.authorizer.session(principal, peer) if ctx.authorizer is not None and \
                self.authenticator is not None else None
            return handler(ctx, routes.Request(method, path, query, parsed, session))

        try:
            return 200, self.on_loop(run).result(ROUTE_TIMEOUT_S)
        except errors.RegistryError as exc:
            return exc.status, exc.body()
        except (concurrent.futures.TimeoutError, RuntimeError) as exc:
            return 500, {"error_code": 50002, "message": f"the broker did not answer in time: {exc!r}"}
        except Exception:
            log.exception("schema_registry_route_failed", method=method, path=split.path)
            return 500, {"error_code": 50001, "message": "Internal error of the schema registry"}


def _body(headers, body: bytes | None):
    ctype = (headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    if ctype and ctype not in ACCEPTED_BODIES:
        raise errors.RegistryError(415, 415, "HTTP 415 Unsupported Media Type")
    if not body:
        raise errors.unprocessable("Request body is missing")
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"Unrecognized JSON body: {exc}") from None


def _handler(server: RegistryHttpServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the clients reuse one connection
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall
        timeout = IDLE_TIMEOUT_S
        server_version = "kipper-schema-registry"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._send(413, {"error_code": 413, "message": "HTTP 413 Request Entity Too Large"})
                self.close_connection = True
                return
            body = self.rfile.read(length) if length > 0 else None
            peer = f"{self.client_address[0]}:{self.client_address[1]}"
            status, answer = server.answer(self.command, self.path, self.headers, body, peer)
            self._send(status, answer)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve  # noqa: N815 (http.server's names)

        def _send(self, status: int, answer) -> None:
            if isinstance(answer, routes.Raw):
                data = str(answer).encode()
            else:
                data = json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(data)))
            if status == 401:
                self.send_header("WWW-Authenticate", 'Basic realm="kipper"')
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:  # not a log line per request
            pass

    return Handler
