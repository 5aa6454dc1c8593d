"""Running one scenario against one broker, and against both side by side.

A scenario is a function of a ``Run``: it sends requests with kipper's own protocol layer
(``run.call(API, version, body)``) and reads what came back to build the next request. Every
request and its response is kept, in order, in the run's transcript; ``run_both`` runs the
same scenario against Kafka and kipper at once (one thread each) and returns both transcripts.
"""

from __future__ import annotations

import io
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from kipper.client.blocking import BlockingConnection
from kipper.client.connect import connect
from kipper.protocol.header import RESPONSE_HEADERS, encode_request
from kipper.protocol.messages import APIS
from tests.conformance.plain import plain
from tests.support.reference import Reference

CLOSED = {"<connection>": "closed by the broker"}


@dataclass
class Exchange:
    label: str
    api: str
    version: int
    request: Any
    response: Any
    recorded: bool = True
    messages: bool = False  # error messages compared word for word (Kafka's tools print them)


@dataclass
class Run:
    """One scenario on one broker. ``token`` prefixes every resource the scenario names, so
    scenarios never see each other's topics, groups or transactional ids."""

    ref: Reference
    token: str
    transcript: list[Exchange] = field(default_factory=list)
    conns: dict[str, BlockingConnection] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    # how long an answer is waited for; a broker that sends none by then is taken to have closed
    # the connection (Kafka never answers a few requests it fails inside)
    read_timeout: float = 30.0
    passwords: dict[str, str] = field(default_factory=dict)  # a user the run made itself -> its password

    @property
    def broker(self) -> str:
        return self.ref.name

    def name(self, suffix: str = "t") -> str:
        return f"{self.token}-{suffix}"

    # --- connections ----------------------------------------------------------------------

    def conn(self, key: str = "main", *, user: str | None = None, mechanism: str = "SCRAM-SHA-256",
             negotiate: bool = True) -> BlockingConnection:
        """A connection kept under ``key``: PLAINTEXT (ANONYMOUS), or SASL as ``user``."""
        conn = self.conns.get(key)
        if conn is None:
            if user is not None:
                settings = self.ref.sasl_settings(user, mechanism, self.passwords.get(user))
                conn = connect(self.ref.sasl_bootstrap, settings,
                               client_id="conformance", timeout=self.read_timeout)
            else:
                host, port = self.ref.bootstrap.rsplit(":", 1)
                conn = BlockingConnection(host, int(port), client_id="conformance", timeout=self.read_timeout)
                if negotiate:
                    conn.negotiate()
            self.conns[key] = conn
        return conn

    def drop(self, key: str = "main") -> None:
        conn = self.conns.pop(key, None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        for key in list(self.conns):
            self.drop(key)

    # --- requests -------------------------------------------------------------------------

    def call(self, api, version: int, body: dict, *, conn: str = "main", label: str = "",
             record: bool = True, user: str | None = None, messages: bool = False) -> Any:
        """Send one request and return its response as plain data (dicts and lists), or
        ``CLOSED`` when the broker closed the connection instead of answering. ``messages``:
        compare the answer's error messages word for word (normally they are the broker's
        to choose; Kafka's tools print some of them to their users)."""
        connection = self.conn(conn, user=user)
        connection.correlation_id += 1
        frame = encode_request(api, version, connection.correlation_id, connection.client_id, body)
        response = self._exchange(connection, conn, api, version, frame)
        self.transcript.append(Exchange(label or api.name, api.name, version, plain(body), response, record,
                                        messages))
        return response

    def send(self, api, version: int, body: dict, *, conn: str = "main", label: str = "") -> dict:
        """Send without waiting (a JoinGroup that completes only when others join);
        ``receive`` the answer later. Returns the handle ``receive`` takes."""
        connection = self.conn(conn)
        connection.correlation_id += 1
        connection.sock.sendall(encode_request(api, version, connection.correlation_id, connection.client_id, body))
        exchange = Exchange(label or api.name, api.name, version, plain(body), None)
        self.transcript.append(exchange)  # in the order sent: both brokers see the same order
        return {"exchange": exchange, "conn": conn, "api": api}

    def receive(self, handle: dict) -> Any:
        connection = self.conns.get(handle["conn"])
        exchange = handle["exchange"]
        try:
            if connection is None:
                raise ConnectionError("dropped")
            exchange.response = decode(handle["api"], exchange.version, connection._read_frame())
        except (ConnectionError, OSError):
            self.drop(handle["conn"])
            exchange.response = dict(CLOSED)
        return exchange.response

    def call_frame(self, api, version: int, frame: bytes, *, conn: str = "main", label: str = "") -> Any:
        """Send a request frame as it is (a golden frame, size prefix included)."""
        connection = self.conn(conn)
        response = self._exchange(connection, conn, api, version, frame, check_correlation=False)
        self.transcript.append(Exchange(label or api.name, api.name, version, {"frame": frame.hex()}, response))
        return response

    def _exchange(self, connection, key, api, version, frame, check_correlation=True):
        try:
            connection.sock.sendall(frame)
            raw = connection._read_frame()
        except (ConnectionError, OSError):
            self.drop(key)
            return dict(CLOSED)
        return decode(api, version, raw)

    def wait(self, seconds: float) -> None:
        time.sleep(seconds)

    def poll(self, fn: Callable[[], Any], until: Callable[[Any], bool], *, timeout: float = 20.0,
             interval: float = 0.2) -> Any:
        """Call ``fn`` (unrecorded requests) until ``until`` holds or time runs out; the last
        result is returned. For what a broker does in its own time (compaction, expiry)."""
        deadline = time.monotonic() + timeout
        while True:
            out = fn()
            if until(out) or time.monotonic() > deadline:
                return out
            time.sleep(interval)


def decode(api, version: int, raw) -> Any:
    """A response frame as plain data; one that kipper's schema cannot read whole is itself
    a finding, kept as {"<undecodable>": why}."""
    stream = io.BytesIO(bytes(raw))
    try:
        RESPONSE_HEADERS[api.response_header_version(version)].parse_stream(stream)
        body = api.response_schema(version).parse_stream(stream)
    except Exception as exc:  # noqa: BLE001 - the reason is the finding
        return {"<undecodable>": f"{type(exc).__name__}: {exc}"}
    left = len(raw) - stream.tell()
    out = plain(body)
    if left:
        out["<trailing bytes>"] = left
    return out


def run_scenario(fn: Callable[[Run], None], ref: Reference, token: str) -> Run:
    run = Run(ref, token)
    try:
        fn(run)
    except Exception as exc:  # noqa: BLE001 - a scenario that breaks on one broker is a difference
        run.transcript.append(Exchange("<scenario error>", "<scenario>", -1, None,
                                       {"<error>": f"{type(exc).__name__}: {exc}",
                                        "<where>": traceback.format_exc(limit=-3)}))
    finally:
        run.close()
    return run


_SIDES = ThreadPoolExecutor(max_workers=32, thread_name_prefix="conformance-side")


def run_both(fn: Callable[[Run], None], kafka: Reference, kipper: Reference, token: str) -> tuple[Run, Run]:
    """One scenario on both brokers at once (a thread each)."""
    a = _SIDES.submit(run_scenario, fn, kafka, token)
    b = _SIDES.submit(run_scenario, fn, kipper, token)
    return a.result(), b.result()


class Ahead:
    """Runs the session's scenarios a few at a time ahead of the tests that compare them:
    scenarios are isolated by their tokens, and most of their time is waiting on a broker.
    ``CONFORMANCE_WORKERS`` (default 4) sets how many run at once; 1 runs them one by one."""

    # the golden frames share their captured topic and group names; the ACL scenarios share the
    # user alice, whose grants in one change what another may do (Kafka: WRITE on any topic
    # lets a principal InitProducerId): they run one by one, in order
    SERIAL = ("golden/", "acl/", "sasl/")

    def __init__(self, scenarios, kafka: Reference, kipper: Reference, workers: int):
        self.kafka, self.kipper = kafka, kipper
        self.pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="conformance")
        self.serial = ThreadPoolExecutor(max_workers=1, thread_name_prefix="conformance-serial")
        self.futures = {s.name: (self.serial if s.name.startswith(self.SERIAL) else self.pool).submit(
            run_both, s.fn, kafka, kipper, s.token) for s in scenarios}

    def result(self, scenario) -> tuple[Run, Run]:
        return self.futures[scenario.name].result()

    def again(self, scenario) -> tuple[Run, Run]:
        """The scenario once more on both, under its second token's names."""
        return run_both(scenario.fn, self.kafka, self.kipper, scenario.second_token)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.serial.shutdown(wait=True, cancel_futures=True)


def api(key_or_name) -> Any:
    if isinstance(key_or_name, int):
        return APIS[key_or_name]
    return next(a for a in APIS.values() if a.name == key_or_name)
