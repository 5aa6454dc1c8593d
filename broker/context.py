"""What a handler sees of a request: the broker, the connection's session, the header.

``Session`` is per-connection state that outlives one request (listener, peer,
authentication). ``RequestContext`` is the per-request view handed to every
handler, with ``ctx.broker`` giving the engines (broker/composition.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Session:
    """Per-connection state that outlives one request."""

    listener: str
    peer: str
    security_protocol: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"
    authenticated: bool = True
    extras: dict = field(default_factory=dict)
    admitted_producer_ids: set = field(default_factory=set)  # producer-id quota fast path


@dataclass
class RequestContext:
    broker: Any  # kipper.broker.composition.Broker
    session: Session
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None

    @property
    def now(self) -> int:
        return self.broker.clock()
