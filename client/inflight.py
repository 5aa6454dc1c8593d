"""Requests sent on one connection and not yet answered, by correlation id.

Responses on a Kafka connection come back in request order, so the oldest
entry is also the next one expected; a response for any other id means the
stream is broken.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass
class InFlight:
    correlation_id: int
    api_key: int
    version: int
    sent_at: float
    context: Any = None  # what the sender needs to finish the request (e.g. batches)


class InFlightRequests:
    def __init__(self):
        self._by_id: OrderedDict[int, InFlight] = OrderedDict()
        self._per_api: dict[int, int] = {}

    def add(self, entry: InFlight) -> None:
        self._by_id[entry.correlation_id] = entry
        self._per_api[entry.api_key] = self._per_api.get(entry.api_key, 0) + 1

    def complete(self, correlation_id: int) -> InFlight:
        """The request a response answers; raises if it is not the oldest."""
        if not self._by_id:
            raise ConnectionError(f"response {correlation_id} with no request in flight")
        oldest = next(iter(self._by_id))
        if oldest != correlation_id:
            raise ConnectionError(f"response {correlation_id} arrived while {oldest} was expected")
        entry = self._by_id.pop(correlation_id)
        self._per_api[entry.api_key] -= 1
        return entry

    def oldest_sent_at(self) -> float | None:
        if not self._by_id:
            return None
        return next(iter(self._by_id.values())).sent_at

    def drain(self) -> list[InFlight]:
        """Everything in flight (the connection died)."""
        out = list(self._by_id.values())
        self._by_id.clear()
        self._per_api.clear()
        return out

    def count(self, api_key: int | None = None) -> int:
        if api_key is None:
            return len(self._by_id)
        return self._per_api.get(api_key, 0)

    def entries(self) -> list[InFlight]:
        return list(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)
