"""From a request frame to a response frame: the one place errors are mapped.

Parses the header, finds the API and its handler, parses the body, calls the
handler and encodes what it returns. A handler returns a response body, a
coroutine producing one (long-polls, rebalances), or ``NO_RESPONSE`` (Produce
with acks=0). A frame that cannot be parsed, an unknown API or an unsupported
version raises ``CloseConnection``; nothing else leaves this module.
"""

from __future__ import annotations

import io
import struct
import time
from typing import Any, Callable

import structlog

from kipper.broker.state import RequestContext
from kipper.protocol.errors import ErrorCode
from kipper.protocol.header import REQUEST_HEADERS, encode_response
from kipper.protocol.messages import APIS
from kipper.protocol.messages.api_versions import API_VERSIONS

log = structlog.get_logger(__name__)

NO_RESPONSE = object()

Handler = Callable[[Any, RequestContext], Any]


class CloseConnection(Exception):
    """The request cannot be answered; the connection must be closed."""


class Dispatcher:
    def __init__(self, handlers: dict[int, Handler], state, *, pre_auth_apis=frozenset()):
        self.handlers = handlers
        self.state = state
        self.pre_auth_apis = pre_auth_apis

    def advertised_apis(self) -> list[dict]:
        out = []
        for key in sorted(self.handlers):
            api = APIS[key]
            if not api.advertise:
                continue
            # KAFKA-18659: librdkafka needs Produce to start at 0 in the answer,
            # though versions below 3 are refused like Kafka 4 refuses them.
            min_version = 0 if key == 0 else api.min_version
            out.append({"api_key": key, "min_version": min_version, "max_version": api.max_version})
        return out

    def dispatch(self, frame: bytes, session) -> tuple[Any, Callable[[Any], bytes] | None]:
        """Returns (result, encoder). ``result`` is bytes (a ready frame),
        NO_RESPONSE, or a coroutine whose value goes through ``encoder``."""
        started = time.perf_counter()
        if len(frame) < 8:
            raise CloseConnection(f"request of {len(frame)} bytes is too short for a header")
        api_key, version = struct.unpack_from(">hh", frame, 0)
        api = APIS.get(api_key)
        handler = self.handlers.get(api_key)
        if api is None or handler is None:
            raise CloseConnection(f"unknown API key {api_key}")
        if not session.authenticated and api_key not in self.pre_auth_apis:
            raise CloseConnection(f"{api.name} before authentication completed")
        if not api.supports(version):
            if api_key == API_VERSIONS.key:
                correlation_id = struct.unpack_from(">i", frame, 4)[0]
                return self._unsupported_api_versions(correlation_id), None
            raise CloseConnection(f"{api.name} v{version} is not supported "
                                  f"(supported {api.min_version}-{api.max_version})")
        stream = io.BytesIO(frame)
        try:
            header = REQUEST_HEADERS[api.request_header_version(version)].parse_stream(stream)
            body = api.request_schema(version).parse_stream(stream)
        except Exception as exc:  # construct/struct/unicode errors: all mean "malformed"
            raise CloseConnection(f"malformed {api.name} v{version} request: {exc}") from None
        ctx = RequestContext(self.state, session, api_key, version, header.correlation_id,
                             header.client_id)
        result = handler(body, ctx)
        metrics = self.state.metrics
        if result is NO_RESPONSE:
            metrics.observe_request(api.name, int((time.perf_counter() - started) * 1e6))
            return NO_RESPONSE, None

        def encode(value, _api=api, _version=version, _cid=header.correlation_id) -> bytes:
            out = encode_response(_api, _version, _cid, value)
            metrics.observe_request(_api.name, int((time.perf_counter() - started) * 1e6))
            return out

        if hasattr(result, "__await__"):
            return result, encode
        return encode(result), None

    def _unsupported_api_versions(self, correlation_id: int) -> bytes:
        body = {"error_code": int(ErrorCode.UNSUPPORTED_VERSION),
                "api_keys": [a for a in self.advertised_apis() if a["api_key"] == API_VERSIONS.key]
                or [{"api_key": 18, "min_version": API_VERSIONS.min_version,
                     "max_version": API_VERSIONS.max_version}]}
        return encode_response(API_VERSIONS, 0, correlation_id, body)
