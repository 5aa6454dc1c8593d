"""From a request frame to a response frame: the one place errors are mapped.

Parses the header, finds the API and its handler, parses the body, calls the
handler and encodes what it returns. A handler returns a response body, a
``Reply`` (a body plus what the connection must do after sending it: mute
for a quota throttle, close after a failed login), a coroutine producing
either (long-polls, rebalances), or ``NO_RESPONSE`` (Produce with acks=0).
A frame that cannot be parsed, an unknown API or an unsupported version
raises ``CloseConnection``; nothing else leaves this module.
"""

from __future__ import annotations

import io
import struct
from time import perf_counter as _perf_counter
from typing import Any, Callable

import structlog

from kipper.broker.context import RequestContext
from kipper.broker.handlers.replies import NO_RESPONSE, Reply
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import encode_response, encode_with_schema, read_client_id
from kipper.protocol.messages import APIS
from kipper.protocol.messages.api_versions import API_VERSIONS

log = structlog.get_logger(__name__)

_KEY_VERSION_CID = struct.Struct(">hhi")

Handler = Callable[[Any, RequestContext], Any]


def _no_fast_encoder(version, correlation_id, body) -> None:
    return None


class CloseConnection(Exception):
    """The request cannot be answered; the connection must be closed."""


class _Route:
    """What answering one (API, version) needs, looked up once instead of per request
    (a single-record Produce costs the broker a few microseconds in all, so the lookups,
    version checks and method calls of a general dispatch were a tenth of it)."""

    __slots__ = ("api", "handler", "flexible", "parse", "parse_frame", "encode", "latency",
                 "run_handler", "repeat")

    def __init__(self, api, handler: Handler, version: int, latency, run_handler=None):
        self.api = api
        self.handler = handler
        self.run_handler = run_handler  # requests repeating one head, together (dispatch_run)
        self.repeat = api.repeat_fast if run_handler is not None else None
        self.flexible = api.is_flexible(version)
        schema = api.request_schema(version) if api.parse_fast is None else None
        self.parse = api.parse_fast or (lambda frame, pos, _version: schema.parse_stream(io.BytesIO(frame[pos:])))
        self.parse_frame = api.parse_frame_fast  # Produce: header and body at once, see below
        # a response frame, or None for the schema's encoder (encode_with_schema)
        self.encode = api.encode_fast or _no_fast_encoder
        self.latency = latency  # this API's request-latency histogram (broker/metrics.py)


class Dispatcher:
    def __init__(self, broker, *, pre_auth_apis=frozenset()):
        self.broker = broker
        self.handlers: dict[int, Handler] = broker.handlers
        self.metrics = broker.metrics
        self.pre_auth_apis = pre_auth_apis
        self._routes: dict[int, _Route] = {}  # api_key << 16 | version

    def connection_closed(self, session) -> None:
        """What outlives requests but not the connection ends with it (share sessions)."""
        self.broker.share.connection_closed(session, self.broker.clock())

    def dispatch(self, frame, session) -> tuple[Any, Callable[[Any], Any] | None]:
        """Returns (result, encoder). ``result`` is a ready frame (bytes, or a list of
        buffers for responses that carry stored batches), a Reply whose ``body`` is a
        ready frame or NO_RESPONSE, NO_RESPONSE, or a coroutine whose value (a body or
        a Reply) goes through ``encoder``. ``frame`` may be a memoryview; nothing here
        keeps it."""
        started = _perf_counter()
        if len(frame) < 8:
            raise CloseConnection(f"request of {len(frame)} bytes is too short for a header")
        api_key, version, correlation_id = _KEY_VERSION_CID.unpack_from(frame, 0)
        route = self._routes.get(api_key << 16 | version)
        if route is None:
            route = self._route(api_key, version, correlation_id)
            if type(route) is bytes:  # ApiVersions in a version we do not know
                return route, None
        if not session.authenticated and api_key not in self.pre_auth_apis:
            raise CloseConnection(f"{route.api.name} before authentication completed")
        try:
            if route.parse_frame is not None:
                # a pipelined producer's requests repeat their head byte for byte; the
                # connection keeps its recent ones (protocol/produce_codec.py, RepeatedHeads)
                client_id, body, session.kept_heads = route.parse_frame(frame, version, session.kept_heads)
            else:
                client_id, pos = read_client_id(frame, route.flexible)
                body = route.parse(frame, pos, version)
        except Exception as exc:  # construct/struct/unicode errors: all mean "malformed"
            raise CloseConnection(f"malformed {route.api.name} v{version} request: {exc}") from None
        result = route.handler(body, RequestContext(self.broker, session, api_key, version,
                                                    correlation_id, client_id))
        if type(result) is dict:  # answered at once, the common case: encode it now
            out = route.encode(version, correlation_id, result) or \
                encode_with_schema(route.api, version, correlation_id, result)
            self.metrics.observe_latency(route.latency, int((_perf_counter() - started) * 1e6))
            return out, None
        metrics = self.metrics
        if result is NO_RESPONSE or (type(result) is Reply and result.body is NO_RESPONSE):
            metrics.observe_latency(route.latency, int((_perf_counter() - started) * 1e6))
            return result, None

        def encode(value, _api=route.api, _version=version, _cid=correlation_id):
            out = encode_response(_api, _version, _cid, value)
            metrics.observe_latency(route.latency, int((_perf_counter() - started) * 1e6))
            return out

        if hasattr(result, "__await__"):
            return result, encode
        if type(result) is Reply:
            result.body = encode(result.body)
            return result, None
        return encode(result), None

    def dispatch_run(self, frames: list, i: int, session) -> list:
        """The answers to ``frames[i]`` and the frames after it while they repeat a head
        the connection kept from its earlier requests (``session.kept_heads``, Produce's:
        protocol/produce_codec.RepeatedHeads), handled together by the API's run handler;
        empty when ``frames[i]`` repeats none (the caller dispatches it alone). Each
        answer is what ``dispatch`` would return first for its frame.

        Why: a producer with many single-batch requests in flight (librdkafka with
        linger.ms=0) sends bursts of them that differ only in their correlation ids and
        records; the header, the context, the lookups and the handler's set-up were paid
        once per request, and are once per run here. Requests in a run are answered in
        order and each as it would be alone (tests/property/test_produce_runs.py)."""
        frame = frames[i]
        kept = session.kept_heads
        if kept is None or len(frame) < 8 or not session.authenticated:
            return []
        api_key, version, correlation_id = _KEY_VERSION_CID.unpack_from(frame, 0)
        route = self._routes.get(api_key << 16 | version)
        if route is None or route.repeat is None:
            return []
        head = kept.find(frame, version)
        if head is None:
            return []
        repeat = route.repeat
        started = _perf_counter()
        correlation_ids = []
        parts = []  # what each frame adds to the head (Produce: its records)
        try:
            for frame in frames[i:]:
                key, v, correlation_id = _KEY_VERSION_CID.unpack_from(frame, 0)
                part = repeat(frame, version, head) if key == api_key and v == version else None
                if part is None:
                    break
                correlation_ids.append(correlation_id)
                parts.append(part)
        except struct.error:  # a frame too short for a header: dispatch says so
            pass
        if not parts:
            return []
        ctx = RequestContext(self.broker, session, api_key, version, correlation_ids[0], head.client_id)
        bodies = route.run_handler(head, parts, ctx)
        encode = route.encode
        api = route.api
        out = []
        for correlation_id, body in zip(correlation_ids, bodies):
            if type(body) is dict:  # nearly always
                out.append(encode(version, correlation_id, body) or encode_with_schema(api, version, correlation_id, body))
                continue
            reply = body if type(body) is Reply else None
            if reply is not None:
                body = reply.body
            if body is not NO_RESPONSE:
                body = encode(version, correlation_id, body) or encode_with_schema(api, version, correlation_id, body)
            if reply is not None:
                reply.body = body
                body = reply
            out.append(body)
        # each answer is as late as the run's last: they leave in the same write
        self.metrics.observe_latency(route.latency, int((_perf_counter() - started) * 1e6), len(out))
        return out

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
            api, handler, version, self.metrics.latency_of(api.name), self.broker.run_handlers.get(api_key))
        return route

    def _unsupported_api_versions(self, correlation_id: int) -> bytes:
        body = {"error_code": int(ErrorCode.UNSUPPORTED_VERSION),
                "api_keys": [a for a in self.broker.advertised_apis() if a["api_key"] == API_VERSIONS.key]
                or [{"api_key": 18, "min_version": API_VERSIONS.min_version,
                     "max_version": API_VERSIONS.max_version}]}
        return encode_response(API_VERSIONS, 0, correlation_id, body)
