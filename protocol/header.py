"""Request and response headers, and whole-frame encode/decode helpers.

Request header v1 (classic) and v2 (flexible) differ only by a trailing
tagged-field section; ClientId keeps its int16 length in both so that any
broker can read the header of any ApiVersions request. Response header v0 is
the correlation id alone, v1 adds tagged fields.
"""

from __future__ import annotations

import io as _io
import struct as _struct

from kipper.protocol.schema import F, Schema, build_struct

_REQUEST_FIELDS = (
    F("request_api_key", "int16"),
    F("request_api_version", "int16"),
    F("correlation_id", "int32"),
    F("client_id", "string", "1+", nullable="1+", flexible="none", default=None),
)
_RESPONSE_FIELDS = (F("correlation_id", "int32"),)

REQUEST_HEADERS = {
    0: Schema(build_struct(_REQUEST_FIELDS, 0, False)),
    1: Schema(build_struct(_REQUEST_FIELDS, 1, False)),
    2: Schema(build_struct(_REQUEST_FIELDS, 2, True)),
}
RESPONSE_HEADERS = {
    0: Schema(build_struct(_RESPONSE_FIELDS, 0, False)),
    1: Schema(build_struct(_RESPONSE_FIELDS, 1, True)),
}

_KEY_VERSION = _struct.Struct(">hh")
_SIZE = _struct.Struct(">i")


def peek_api(frame) -> tuple[int, int]:
    """API key and version of a request frame, without parsing the rest."""
    return _KEY_VERSION.unpack_from(frame, 0)


def encode_request(api, version: int, correlation_id: int, client_id: str | None, body) -> bytes:
    """A complete size-prefixed request frame."""
    stream = _io.BytesIO()
    stream.write(b"\0\0\0\0")
    REQUEST_HEADERS[api.request_header_version(version)].build_into(
        {"request_api_key": api.key, "request_api_version": version,
         "correlation_id": correlation_id, "client_id": client_id}, stream)
    api.request_schema(version).build_into(body, stream)
    buf = stream.getbuffer()
    _SIZE.pack_into(buf, 0, len(buf) - 4)
    del buf
    return stream.getvalue()


def encode_response(api, version: int, correlation_id: int, body) -> bytes:
    """A complete size-prefixed response frame."""
    stream = _io.BytesIO()
    stream.write(b"\0\0\0\0")
    RESPONSE_HEADERS[api.response_header_version(version)].build_into(
        {"correlation_id": correlation_id}, stream)
    api.response_schema(version).build_into(body, stream)
    buf = stream.getbuffer()
    _SIZE.pack_into(buf, 0, len(buf) - 4)
    del buf
    return stream.getvalue()


def decode_response(api, version: int, frame):
    """(correlation_id, body) of a response frame without its size prefix."""
    stream = _io.BytesIO(frame)
    header = RESPONSE_HEADERS[api.response_header_version(version)].parse_stream(stream)
    return header.correlation_id, api.response_schema(version).parse_stream(stream)
