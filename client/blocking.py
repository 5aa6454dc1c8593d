"""A blocking, one-request-at-a-time Kafka connection for tools and tests.

It negotiates API versions once (ApiVersions v0 parses on any broker) and
then picks, for each request, the highest version both sides support within
what the caller allows.
"""

from __future__ import annotations

import socket

from kipper.protocol.errors import KafkaError
from kipper.protocol.framing import FrameDecoder
from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages import APIS
from kipper.protocol.messages.api_versions import API_VERSIONS


class UnsupportedByBroker(Exception):
    pass


def parse_bootstrap(text: str) -> list[tuple[str, int]]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"bootstrap server '{item}' is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("no bootstrap server given")
    return out


class BlockingConnection:
    def __init__(self, host: str, port: int, *, client_id: str = "kipper-tool",
                 timeout: float = 30.0, sock: socket.socket | None = None):
        self.host = host
        self.port = port
        self.client_id = client_id
        self.sock = sock or socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.decoder = FrameDecoder(1 << 30)
        self._frames: list[bytes] = []
        self.correlation_id = 0
        self.versions: dict[int, tuple[int, int]] = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def negotiate(self) -> dict[int, tuple[int, int]]:
        body = self.send_raw(API_VERSIONS, 0, {})
        if body.error_code:
            raise KafkaError(body.error_code, "ApiVersions failed")
        self.versions = {a.api_key: (a.min_version, a.max_version) for a in body.api_keys}
        return self.versions

    def pick_version(self, api_key: int, max_version: int | None = None,
                     min_version: int | None = None) -> int:
        if not self.versions:
            self.negotiate()
        api = APIS[api_key]
        if api_key not in self.versions:
            raise UnsupportedByBroker(f"broker does not support {api.name}")
        lo, hi = self.versions[api_key]
        lo = max(lo, api.min_version, min_version if min_version is not None else 0)
        hi = min(hi, api.max_version, max_version if max_version is not None else hi)
        if lo > hi:
            raise UnsupportedByBroker(f"no common version of {api.name}")
        return hi

    def request(self, api_key: int, body: dict, *, version: int | None = None,
                max_version: int | None = None):
        api = APIS[api_key]
        if version is None:
            version = self.pick_version(api_key, max_version)
        return self.send_raw(api, version, body)

    def send_raw(self, api, version: int, body: dict):
        self.correlation_id += 1
        cid = self.correlation_id
        self.sock.sendall(encode_request(api, version, cid, self.client_id, body))
        frame = self._read_frame()
        got, parsed = decode_response(api, version, frame)
        if got != cid:
            raise ConnectionError(f"correlation id {got} does not match request {cid}")
        return parsed

    def send_no_response(self, api_key: int, version: int, body: dict) -> None:
        self.correlation_id += 1
        self.sock.sendall(encode_request(APIS[api_key], version, self.correlation_id,
                                         self.client_id, body))

    def _read_frame(self) -> bytes:
        while not self._frames:
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("connection closed by the broker")
            self._frames.extend(self.decoder.feed(data))
        return self._frames.pop(0)


def connect_any(bootstrap: str, **kwargs) -> BlockingConnection:
    last = None
    for host, port in parse_bootstrap(bootstrap):
        try:
            conn = BlockingConnection(host, port, **kwargs)
            conn.negotiate()
            return conn
        except OSError as exc:
            last = exc
    raise ConnectionError(f"cannot reach any bootstrap server in '{bootstrap}': {last}")


