"""From request frames to response frames: the one place an exception becomes a closed connection.

For each frame: read the API key and version, find the route, check the session may
send it, parse the header and the body, call the handler with a ``RequestContext``
and encode what it returns: a response body, a ``Reply`` (a body and what the
connection does after sending it), ``NO_RESPONSE`` (Produce with acks=0), or a
coroutine producing either (long polls, rebalances) (broker/handlers/replies.py).

An API whose codec declares runs (Produce: protocol/produce_codec.py) is answered in
runs: a connection's consecutive requests of one read burst that repeat the head of an
earlier one go to its handler together, and a request alone is a run of one. Why: a
producer with many single-batch requests in flight (librdkafka with linger.ms=0) sends
bursts of them that differ only in their correlation ids and records; the header, the
context, the lookups and the handler's set-up are paid once per run instead of once
per request. Each request of a run gets the answer it would get alone
(tests/property/test_produce_runs.py).

Nothing raises out of here. A frame that cannot be parsed, an unknown API or version,
a request before authentication (``CloseConnection``), and any other exception (a bug)
become a ``Close`` answer in ``_closing``: the connection writes the answers before it
and closes, and nothing stored changes. Failures a client should see are error codes in
the body, never exceptions.
"""

from __future__ import annotations

import struct
from time import perf_counter as _perf_counter
from typing import Any, Callable

import structlog

from kipper.broker.context import RequestContext
from kipper.broker.handlers import CLUSTER_HANDLERS, CONTROLLER_HANDLERS, HANDLERS
from kipper.broker.handlers.replies import NO_RESPONSE, Holding, Reply, throttled
from kipper.broker.security.service import PRE_AUTH_APIS
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import encode_response, encode_with_schema, read_client_id
from kipper.protocol.messages import APIS
from kipper.protocol.messages.api_versions import API_VERSIONS

log = structlog.get_logger(__name__)

_KEY_VERSION_CID = struct.Struct(">hhi")
_NO_REPEATS = ((), ())
FETCH_KEY = 1  # a Fetch over the request quota is answered without its partitions (Kafka)

Handler = Callable[[Any, RequestContext], Any]


class CloseConnection(Exception):
    """The request cannot be answered; the connection must be closed."""


class Close:
    """An answer that closes the connection (after the answers before it are written)."""

    __slots__ = ("event", "reason")

    def __init__(self, event: str, reason: str):
        self.event = event  # counted per kind in the metrics (Metrics.observe_rejected)
        self.reason = reason


class Later:
    """An answer that comes later: the connection awaits ``pending`` and then writes
    ``finish(task)``, a ready answer (never an exception: a failure is a ``Close``)."""

    __slots__ = ("pending", "finish", "hold")

    def __init__(self, pending, finish: Callable[[Any], Any], hold: bool = False):
        self.pending = pending
        self.finish = finish
        self.hold = hold  # the connection handles nothing more until it has come (a Holding)


def _closing(exc: BaseException, session) -> Close:
    """The one place an exception becomes what the connection does: close."""
    if isinstance(exc, CloseConnection):
        return Close("request_rejected", str(exc))
    log.error("handler_failed", peer=session.peer, exc_info=exc)
    return Close("handler_failed", "internal error while handling a request")


def _no_fast_encoder(version, correlation_id, body) -> None:
    return None


class _Route:
    """What answering one (API, version) needs, looked up once instead of per request
    (a single-record Produce costs the broker a few microseconds in all, so the lookups,
    version checks and method calls of a general dispatch were a tenth of it)."""

    __slots__ = ("api", "handler", "flexible", "parse", "parse_frame", "repeat", "run", "encode",
                 "latency")

    def __init__(self, api, handler: Handler, version: int, latency, runs: bool):
        fast = api.fast
        self.api = api
        self.handler = handler
        self.flexible = api.is_flexible(version)
        self.parse = api.parse_request  # (the fast path's, or the schema's)
        self.parse_frame = fast.parse_frame  # Produce: header and body at once
        self.run = fast.run  # None: the handler answers one request
        self.repeat = fast.repeat if runs else None  # None: every run is a run of one
        # a response frame, or None for the schema's encoder (encode_with_schema)
        self.encode = fast.encode_response or _no_fast_encoder
        self.latency = latency  # this API's request-latency histogram (broker/metrics.py)


class Dispatcher:
    @classmethod
    def of(cls, engines, *, runs: bool = True) -> Dispatcher:
        """The dispatcher of a broker's ``engines`` (broker/composition.py): the handlers
        of the APIs they serve (``engines.api_keys``; the ApiVersions answer lists the same)."""
        table = CONTROLLER_HANDLERS if engines.controller is not None else \
            CLUSTER_HANDLERS if engines.cluster is not None else HANDLERS
        return cls(engines, {key: table[key] for key in engines.api_keys},
                   pre_auth_apis=PRE_AUTH_APIS, runs=runs)

    def __init__(self, engines, handlers: dict[int, Handler], *, pre_auth_apis=frozenset(),
                 runs: bool = True):
        """``runs``: answer requests that repeat a head together (False: one at a time, the
        reference tests/property/test_produce_runs.py holds runs to)."""
        self.engines = engines  # the shell swaps it whole on reset (broker/server.py)
        self.metrics = engines.metrics  # (a reset keeps the metrics)
        self.handlers = handlers
        self.pre_auth_apis = pre_auth_apis
        self.runs = runs
        self._routes: dict[int, _Route] = {}  # api_key << 16 | version

    def connection_closed(self, session) -> None:
        """What outlives requests but not the connection ends with it (share sessions, a
        client's telemetry instance)."""
        engines = self.engines
        engines.share.connection_closed(session, engines.clock())
        engines.telemetry.disconnected(session)

    def dispatch(self, frames: list, i: int, session) -> tuple[list, int]:
        """The answers to ``frames[i]`` and, for an API answered in runs, the frames after
        it that repeat its head; and how many frames they answer. An answer is a ready
        frame (bytes, or a list of buffers carrying stored batches), a ``Reply`` whose
        body is one, ``NO_RESPONSE``, a ``Later``, or a ``Close``. The frames may be
        memoryviews; nothing here keeps them."""
        started = _perf_counter()
        try:
            frame = frames[i]
            if len(frame) < 8:
                raise CloseConnection(f"request of {len(frame)} bytes is too short for a header")
            api_key, version, correlation_id = _KEY_VERSION_CID.unpack_from(frame, 0)
            route = self._routes.get(api_key << 16 | version)
            if route is None:
                route = self._route(api_key, version, correlation_id)
                if type(route) is bytes:  # ApiVersions in a version we do not know
                    return [route], 1
            if not session.authenticated and api_key not in self.pre_auth_apis:
                raise CloseConnection(f"{route.api.name} before authentication completed")
            try:
                if route.parse_frame is not None:
                    client_id, body, session.kept_heads = route.parse_frame(frame, version, session.kept_heads)
                else:
                    client_id, pos = read_client_id(frame, route.flexible)
                    body = route.parse(frame, pos, version)
            except Exception as exc:  # construct/struct/unicode errors: all mean "malformed"
                raise CloseConnection(f"malformed {route.api.name} v{version} request: {exc}") from None
            ctx = RequestContext(self.engines, session, api_key, version, correlation_id, client_id)
            if route.run is None:
                result = route.handler(body, ctx)
            else:  # an API answered in runs: this request, and those after it that repeat its head
                cids, parts = self._repeats(route, frames, i, version, session.kept_heads) \
                    if i + 1 < len(frames) else _NO_REPEATS
                if parts:
                    cids.insert(0, correlation_id)
                    return self._run(route, version, cids, body, parts, ctx, started)
                [result] = route.handler((body,), ctx)  # a request alone: a run of one
            if self.engines.quotas.request_quota_set() and api_key not in self.pre_auth_apis:
                result = self._request_quota(ctx, result, started)
            if type(result) is dict:  # answered at once, the common case: encode it now
                out = route.encode(version, correlation_id, result) or \
                    encode_with_schema(route.api, version, correlation_id, result)
                self.metrics.observe_latency(route.latency, int((_perf_counter() - started) * 1e6))
                return [out], 1
            return [self._answer(route, version, correlation_id, result, started, session)], 1
        except Exception as exc:  # noqa: BLE001  (the one place: see _closing)
            return [_closing(exc, session)], 1

    def _request_quota(self, ctx, result, started: float):
        """Kafka's request_percentage: the time the request took counts against the client's
        quota; over it, the answer carries the throttle time and the connection is muted."""
        wait = self.engines.quotas.record_request(ctx, _perf_counter() - started, ctx.now)
        return throttled(result, wait, empty=ctx.api_key == FETCH_KEY) if wait else result

    @staticmethod
    def _repeats(route: _Route, frames: list, i: int, version: int, kept) -> tuple[list, list]:
        """The correlation ids of the frames after ``frames[i]`` that repeat the head
        ``frames[i]`` repeated, while they do, and what each adds to it (its records)."""
        head = kept.found if kept is not None else None
        if head is None or route.repeat is None:
            return _NO_REPEATS
        repeat = route.repeat
        api_key = route.api.key
        correlation_ids, parts = [], []
        try:
            for frame in frames[i + 1:]:
                key, v, correlation_id = _KEY_VERSION_CID.unpack_from(frame, 0)
                part = repeat(frame, version, head) if key == api_key and v == version else None
                if part is None:
                    break
                correlation_ids.append(correlation_id)
                parts.append(part)
        except struct.error:  # a frame too short for a header: dispatched alone, it says so
            pass
        return correlation_ids, parts

    def _run(self, route: _Route, version: int, correlation_ids: list, body, parts: list, ctx,
             started: float) -> tuple[list, int]:
        """The answers to a run of more than one request: ``body`` and the ``parts`` of
        the frames that repeat its head."""
        bodies = route.handler(route.run(body, parts), ctx)
        if self.engines.quotas.request_quota_set():  # the run's time, on its last answer
            bodies[-1] = self._request_quota(ctx, bodies[-1], started)
        encode, api = route.encode, route.api
        answers = []
        for cid, b in zip(correlation_ids, bodies):
            if type(b) is dict:  # nearly always
                answers.append(encode(version, cid, b) or encode_with_schema(api, version, cid, b))
            elif hasattr(b, "__await__"):  # a cluster's acks=all, answered once replicated
                answers.append(self._answer(route, version, cid, b, started, ctx.session))
            else:
                answers.append(self._encoded(route, version, cid, b))
        # each answer is as late as the run's last: they leave in the same write
        self.metrics.observe_latency(route.latency, int((_perf_counter() - started) * 1e6), len(answers))
        return answers, len(answers)

    def _encoded(self, route: _Route, version: int, correlation_id: int, body):
        """A run's answer that is not a plain body: a Reply, or NO_RESPONSE, encoded."""
        reply = body if type(body) is Reply else None
        if reply is not None:
            body = reply.body
        if body is not NO_RESPONSE:
            body = route.encode(version, correlation_id, body) or \
                encode_with_schema(route.api, version, correlation_id, body)
        if reply is not None:
            reply.body = body
            return reply
        return body

    def _answer(self, route: _Route, version: int, correlation_id: int, result, started: float, session):
        """The answer to one request whose handler returned something else than a body."""
        metrics = self.metrics
        if result is NO_RESPONSE or (type(result) is Reply and result.body is NO_RESPONSE):
            metrics.observe_latency(route.latency, int((_perf_counter() - started) * 1e6))
            return result

        def encode(value):
            out = encode_response(route.api, version, correlation_id, value)
            metrics.observe_latency(route.latency, int((_perf_counter() - started) * 1e6))
            return out

        if hasattr(result, "__await__"):
            def finish(task):
                exc = task.exception()
                if exc is not None:
                    return _closing(exc, session)
                value = task.result()
                if type(value) is Reply:
                    value.body = encode(value.body)
                    return value
                return encode(value)
            if type(result) is Holding:
                return Later(result.pending, finish, hold=True)
            return Later(result, finish)
        if type(result) is Reply:
            result.body = encode(result.body)
            return result
        return encode(result)

    def _route(self, api_key: int, version: int, correlation_id: int) -> _Route | bytes:
        """The route of a (key, version) seen for the first time, or why there is none."""
        api = APIS.get(api_key)
        handler = self.handlers.get(api_key)
        if api is None or handler is None:
            raise CloseConnection(f"unknown API key {api_key}")
        if not api.supports(version):
            if api_key == API_VERSIONS.key:
                return self._unsupported_api_versions(correlation_id)
            raise CloseConnection(f"{api.name} v{version} is not supported "
                                  f"(supported {api.min_version}-{api.max_version})")
        route = self._routes[api_key << 16 | version] = _Route(
            api, handler, version, self.metrics.latency_of(api.name, version), self.runs)
        return route

    def _unsupported_api_versions(self, correlation_id: int) -> bytes:
        body = {"error_code": int(ErrorCode.UNSUPPORTED_VERSION),
                "api_keys": [a for a in self.engines.advertised_apis() if a["api_key"] == API_VERSIONS.key]
                or [{"api_key": 18, "min_version": API_VERSIONS.min_version,
                     "max_version": API_VERSIONS.max_version}]}
        return encode_response(API_VERSIONS, 0, correlation_id, body)
