"""Request and response headers, and whole-frame encode/decode helpers.

Request header v1 (classic) and v2 (flexible) differ only by a trailing
tagged-field section; ClientId keeps its int16 length in both so that any
broker can read the header of any ApiVersions request. Response header v0 is
the correlation id alone, v1 adds tagged fields.
"""

from __future__ import annotations

import io as _io
import struct as _struct

from kipper.protocol.primitives import decode_uvarint
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
_I16 = _struct.Struct(">h")


def read_client_id(frame, flexible: bool) -> tuple[str | None, int]:
    """The client id of a request frame and where its body starts.

    Fixed-field parsing of the header every request carries (api key, version and
    correlation id are read by the caller with one unpack): the general codec cost
    about 2 us here. Header v2 ends with tagged fields, almost always none.
    """
    n = _I16.unpack_from(frame, 8)[0]
    pos = 10
    if n < 0:
        if n != -1:
            raise ValueError(f"client id length {n}")
        client_id = None
    else:
        if pos + n > len(frame):
            raise ValueError("client id runs past the end of the frame")
        client_id = str(frame[pos:pos + n], "utf-8")
        pos += n
    if flexible:
        if frame[pos] == 0:
            pos += 1
        else:
            pos = skip_tagged_fields(frame, pos)
    return client_id, pos


def skip_tagged_fields(frame, pos: int) -> int:
    """Past a tagged-field section whose fields are all unknown to the reader."""
    count, pos = decode_uvarint(frame, pos)
    for _ in range(count):
        _, pos = decode_uvarint(frame, pos)
        size, pos = decode_uvarint(frame, pos)
        pos += size
    if pos > len(frame):
        raise ValueError("tagged fields run past the end of the frame")
    return pos


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


def encode_request_parts(api, version: int, correlation_id: int, client_id: str | None, body) -> list:
    """``encode_request`` as a list of buffers for a scatter-gather send: record
    batches given as lists of chunks (a producer's sealed batches) are not
    copied into the frame."""
    if api.fast.encode_request is not None:
        out = api.fast.encode_request(version, correlation_id, client_id, body)
        if out is not None:
            return out
    stream = GatherStream()
    stream.write(b"\0\0\0\0")
    REQUEST_HEADERS[api.request_header_version(version)].build_into(
        {"request_api_key": api.key, "request_api_version": version,
         "correlation_id": correlation_id, "client_id": client_id}, stream)
    api.request_schema(version).build_into(body, stream)
    return stream.parts()


class GatherStream(_io.BytesIO):
    """A frame being built that leaves stored batches where they are: ``records``
    given as a list of chunks are noted with their position instead of being
    copied in (protocol/primitives.py Sized), and ``parts`` puts them back in
    line as a list of buffers for ``transport.writelines``."""

    def __init__(self):
        super().__init__()
        self.spliced: list[tuple[int, list]] = []

    def splice(self, chunks) -> None:
        self.spliced.append((self.tell(), chunks))

    def parts(self) -> list:
        """The size-prefixed frame as buffers: the encoded fields between the chunks."""
        view = self.getbuffer()
        _SIZE.pack_into(view, 0, len(view) - 4 + sum(len(c) for _, chunks in self.spliced
                                                         for c in chunks))
        out = []
        prev = 0
        for pos, chunks in self.spliced:
            out.append(view[prev:pos])
            out.extend(chunks)
            prev = pos
        out.append(view[prev:])
        return out


def encode_response(api, version: int, correlation_id: int, body):
    """A complete size-prefixed response frame: bytes (or a bytearray), or, when the
    body holds stored batches as lists of chunks (Fetch), a list of buffers that
    refer to them instead of copying them."""
    if api.fast.encode_response is not None:
        out = api.fast.encode_response(version, correlation_id, body)
        if out is not None:
            return out
    return encode_with_schema(api, version, correlation_id, body)


def encode_with_schema(api, version: int, correlation_id: int, body):
    """``encode_response`` by the declared schema alone (what an API's fast encoder leaves)."""
    stream = GatherStream() if api.carries_records else _io.BytesIO()
    stream.write(b"\0\0\0\0")
    RESPONSE_HEADERS[api.response_header_version(version)].build_into(
        {"correlation_id": correlation_id}, stream)
    api.response_schema(version).build_into(body, stream)
    if api.carries_records and stream.spliced:
        return stream.parts()
    buf = stream.getbuffer()
    _SIZE.pack_into(buf, 0, len(buf) - 4)
    del buf
    return stream.getvalue()


def frame_bytes(frame) -> bytes:
    """One bytes object of a frame ``encode_response`` returned (tools and tests)."""
    return frame if isinstance(frame, bytes) else b"".join(frame) if isinstance(frame, list) else bytes(frame)


def decode_response(api, version: int, frame):
    """(correlation_id, body) of a response frame without its size prefix."""
    if api.fast.parse_response is not None:
        out = api.fast.parse_response(frame, version)
        if out is not None:
            return out
    stream = _io.BytesIO(frame)
    header = RESPONSE_HEADERS[api.response_header_version(version)].parse_stream(stream)
    return header.correlation_id, api.response_schema(version).parse_stream(stream)
