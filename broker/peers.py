"""A node's connection to another node of the cluster: Kafka requests out, answers back.

``PeerLink`` opens a TCP connection, asks ApiVersions once (v0, which every Kafka node
reads), then sends requests at the highest version both sides speak, several in flight,
each answered through a future matched by correlation id. A connection that fails fails
every request in flight (``PeerUnavailable``); the caller opens a new link. Brokers use it
toward the controller (broker/lifecycle.py) and toward the leaders they follow
(broker/fetcher.py).
"""

from __future__ import annotations

import asyncio
import struct

from kipper.protocol.header import decode_response, encode_request
from kipper.protocol.messages.api_versions import API_VERSIONS

_SIZE = struct.Struct(">i")
MAX_ANSWER = 1 << 30


class PeerUnavailable(ConnectionError):
    """The other node could not be reached, or the connection broke."""


class PeerLink:
    def __init__(self, host: str, port: int, *, client_id: str, timeout: float = 30.0):
        self.host = host
        self.port = port
        self.client_id = client_id
        self.timeout = timeout
        self.versions: dict[int, tuple[int, int]] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, tuple[object, int, asyncio.Future]] = {}
        self._next_cid = 0
        self._task: asyncio.Task | None = None
        self.closed = False

    def __repr__(self) -> str:
        return f"PeerLink({self.host}:{self.port})"

    async def connect(self) -> PeerLink:
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), self.timeout)
        except (OSError, asyncio.TimeoutError) as exc:
            raise PeerUnavailable(f"{self.host}:{self.port}: {exc}") from None
        self._task = asyncio.get_running_loop().create_task(self._read_answers())
        answer = await self.request(API_VERSIONS, {}, version=0)
        self.versions = {a.api_key: (a.min_version, a.max_version) for a in answer.api_keys}
        return self

    def version_for(self, api) -> int:
        theirs = self.versions.get(api.key)
        if theirs is None:
            raise PeerUnavailable(f"{self.host}:{self.port} does not serve {api.name}")
        version = min(api.max_version, theirs[1])
        if version < max(api.min_version, theirs[0]):
            raise PeerUnavailable(f"{self.host}:{self.port} shares no version of {api.name}")
        return version

    async def request(self, api, body, version: int | None = None, timeout: float | None = None):
        """The parsed answer; raises PeerUnavailable."""
        if self.closed or self._writer is None:
            raise PeerUnavailable(f"{self.host}:{self.port}: not connected")
        version = self.version_for(api) if version is None else version
        cid = self._next_cid = (self._next_cid + 1) & 0x7FFFFFFF
        future = asyncio.get_running_loop().create_future()
        self._pending[cid] = (api, version, future)
        try:
            self._writer.write(encode_request(api, version, cid, self.client_id, body))
        except Exception as exc:  # a body the schema cannot build is a bug of the caller
            self._pending.pop(cid, None)
            raise exc
        try:
            return await asyncio.wait_for(future, timeout or self.timeout)
        except asyncio.TimeoutError:
            self.close()
            raise PeerUnavailable(f"{self.host}:{self.port}: {api.name} timed out") from None

    async def _read_answers(self) -> None:
        reader = self._reader
        try:
            while True:
                size = _SIZE.unpack(await reader.readexactly(4))[0]
                if not 0 < size <= MAX_ANSWER:
                    raise PeerUnavailable(f"answer of {size} bytes")
                frame = await reader.readexactly(size)
                cid = _SIZE.unpack_from(frame, 0)[0]
                entry = self._pending.pop(cid, None)
                if entry is None:
                    continue
                api, version, future = entry
                if not future.done():
                    try:
                        future.set_result(decode_response(api, version, frame)[1])
                    except Exception as exc:  # an answer that does not parse
                        future.set_exception(PeerUnavailable(f"{api.name} answer: {exc}"))
        except (OSError, asyncio.IncompleteReadError, PeerUnavailable) as exc:
            self._fail(exc)
        except asyncio.CancelledError:
            self._fail(PeerUnavailable("closed"))

    def _fail(self, exc) -> None:
        self.closed = True
        pending, self._pending = self._pending, {}
        for _, _, future in pending.values():
            if not future.done():
                future.set_exception(PeerUnavailable(f"{self.host}:{self.port}: {exc}"))
        if self._writer is not None:
            self._writer.close()

    def close(self) -> None:
        if not self.closed:
            self._fail(PeerUnavailable("closed"))
        if self._task is not None and not self._task.done() and self._task is not asyncio.current_task():
            self._task.cancel()


class PeerWork:
    """A shell that takes jobs from one of the engines' queues and works each in its own task
    over links to other nodes (a coordinator's markers to partition leaders, a leader's
    verifications to coordinators): one link per node, opened once for the jobs that wait
    for it. A subclass names its queue (an attribute of the transactions engine) and works a
    job in ``work(job)``."""

    client_name = "peer"
    queue_name = ""

    def __init__(self, server):
        self.server = server
        self.links: dict[int, PeerLink] = {}
        self._connecting: dict[int, asyncio.Future] = {}
        self._task: asyncio.Task | None = None
        self._jobs: set[asyncio.Task] = set()

    @property
    def engines(self):
        return self.server.engines

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        for task in [self._task, *self._jobs]:
            if task is not None:
                task.cancel()
        for link in self.links.values():
            link.close()

    async def _run(self) -> None:
        queue = getattr(self.engines.txn, self.queue_name)
        while True:
            job = await queue.next()
            task = asyncio.get_running_loop().create_task(self.work(job))
            self._jobs.add(task)
            task.add_done_callback(self._jobs.discard)

    async def link(self, node: int) -> PeerLink:
        """The open link to ``node``; PeerUnavailable when it has no live endpoint or
        cannot be reached."""
        link = self.links.get(node)
        if link is not None and not link.closed:
            return link
        pending = self._connecting.get(node)
        if pending is not None:
            return await asyncio.shield(pending)
        future = self._connecting[node] = asyncio.get_running_loop().create_future()
        try:
            endpoint = self.engines.cluster.endpoint(node, self.server.config["listeners"][0].name)
            if endpoint is None:
                raise PeerUnavailable(f"broker {node} has no live endpoint")
            link = self.links[node] = await PeerLink(
                *endpoint, client_id=f"{self.client_name}-{self.engines.node_id}").connect()
            future.set_result(link)
            return link
        except BaseException as exc:
            future.set_exception(exc if isinstance(exc, PeerUnavailable) else PeerUnavailable(str(exc)))
            future.exception()  # (retrieved: the waiters, if any, get it too)
            raise
        finally:
            self._connecting.pop(node, None)
