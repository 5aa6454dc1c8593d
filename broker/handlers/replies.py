"""What a handler may return besides a response body: a ``Reply`` (a body and what the
connection does after sending it), ``NO_RESPONSE`` (Produce with acks=0), or, through
``Deferred``, an answer that comes later without blocking the loop; ``Holding``, one that
comes later and holds the connection's next requests until it has come.

They live with the handlers, on the floor below the shell that acts on them
(broker/dispatcher.py, broker/connection.py).
"""

from __future__ import annotations

import asyncio

NO_RESPONSE = object()


class Reply:
    """A response body and what the connection does once it is sent."""

    __slots__ = ("body", "mute_ms", "close", "abort")

    def __init__(self, body, *, mute_ms: int = 0, close: bool = False, abort: str | None = None):
        self.body = body
        self.mute_ms = mute_ms  # a quota throttle: read nothing more for this long (Kafka mutes)
        self.close = close  # close after the answer (a failed SASL login), after a delay
        # close at once after the answers before this one, reading nothing more: why (a
        # Produce with acks=0 that was refused, which Kafka answers by closing the connection)
        self.abort = abort


def throttled(result, wait_ms: int, *, empty: bool = False):
    """``result`` (a body or a Reply) answered with a throttle time of at least ``wait_ms``
    and the connection muted for it, as Kafka answers a client over its request quota;
    ``empty``: a Fetch, answered without its partitions as Kafka's throttled Fetch. An
    answer still to come (awaitable) is left as it is."""
    reply = result if type(result) is Reply else None
    body = reply.body if reply is not None else result
    if type(body) is dict:
        if "throttle_time_ms" in body:
            body["throttle_time_ms"] = max(body["throttle_time_ms"] or 0, wait_ms)
        if empty:
            body["responses"] = []
    elif body is not NO_RESPONSE:
        return result
    if reply is not None:
        reply.mute_ms = max(reply.mute_ms, wait_ms)
        return reply
    return Reply(body, mute_ms=wait_ms)


class Holding:
    """An answer still to come (``pending``, awaitable) that the connection's later requests
    wait for, as Kafka's muted channel holds them: a Produce whose append waits for another
    broker's transaction coordinator (a later batch of the producer must not pass it)."""

    __slots__ = ("pending",)

    def __init__(self, pending):
        self.pending = pending

    def __await__(self):
        return self.pending.__await__()


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


async def waited(starts: list, timeout_ms: int) -> list:
    """Start each wait (``start(callback)``, the callback called once with the wait's answer)
    and return their answers, as tuples, once all came or ``timeout_ms`` passed; None for a
    wait the timeout came first to. The replicas' waits of acks=all and DeleteRecords."""
    loop = asyncio.get_running_loop()
    futures = []
    for start in starts:
        future = loop.create_future()
        start(lambda *answer, f=future: f.done() or f.set_result(answer))
        futures.append(future)
    if not all(f.done() for f in futures):
        await asyncio.wait(futures, timeout=max(timeout_ms, 0) / 1000)
    return [f.result() if f.done() else None for f in futures]
