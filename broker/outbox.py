"""Requests a node sends to another node, queued by engines and handlers, sent by the shell.

An engine puts a request with a callback for its answer (``send``); a handler that forwards
a client's request and awaits the answer takes a future (``request``). The shell
(broker/lifecycle.py) takes them in order (``next``), sends them over its connection and
calls ``answered`` with the parsed answer, or with None when the connection failed. Like
notify.py, the one piece of asyncio an engine may hold.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Callable, NamedTuple


class Outgoing(NamedTuple):
    api: Any  # protocol.schema.Api
    body: dict
    on_answer: Callable[[Any], None]  # the parsed answer, or None: not delivered
    version: int | None = None  # None: the highest both sides speak


class Outbox:
    def __init__(self):
        self._queue: deque[Outgoing] = deque()
        self._ready: asyncio.Event | None = None

    def __len__(self) -> int:
        return len(self._queue)

    def send(self, api, body: dict, on_answer: Callable[[Any], None], version: int | None = None) -> None:
        self._queue.append(Outgoing(api, body, on_answer, version))
        if self._ready is not None:
            self._ready.set()

    def put(self, job) -> None:
        """Any other work for the shell (a transaction's markers for other brokers)."""
        self._queue.append(job)
        if self._ready is not None:
            self._ready.set()

    def request(self, api, body: dict, version: int | None = None) -> asyncio.Future:
        """The answer as a future (None when it could not be delivered)."""
        future = asyncio.get_running_loop().create_future()

        def answered(answer) -> None:
            if not future.done():
                future.set_result(answer)
        self.send(api, body, answered, version)
        return future

    async def next(self):
        if self._ready is None:
            self._ready = asyncio.Event()
        while not self._queue:
            self._ready.clear()
            await self._ready.wait()
        return self._queue.popleft()

    def fail_all(self) -> None:
        """Nothing queued will be sent (the node stops)."""
        while self._queue:
            item = self._queue.popleft()
            if isinstance(item, Outgoing):
                item.on_answer(None)
