"""Deferred replies: how a handler answers later without blocking the loop."""

from __future__ import annotations

import asyncio



class Deferred:
    """Bridges an engine's ``reply`` callback to a handler's return value.

    If the engine replies during the call, the handler returns the body
    directly (no task, no extra loop turn); otherwise it returns a future the
    connection awaits.
    """

    __slots__ = ("_body", "_future")

    def __init__(self):
        self._body = None
        self._future = None

    def reply(self, body) -> None:
        if self._future is None:
            self._body = body
        elif not self._future.done():
            self._future.set_result(body)

    def result(self):
        if self._body is not None:
            return self._body
        self._future = asyncio.get_running_loop().create_future()
        return self._future
