"""Faults for a client's error paths: the broker answers chosen requests with an error code,
late, never, or by closing the connection, and counts what the client sent. What a real
Kafka in a container cannot do, and franz-go's kfake can (its ``ControlKey``).

    broker.faults.error("Produce", "NOT_LEADER_OR_FOLLOWER", count=2, topic=t, partitions=[0])
    broker.faults.delay("FindCoordinator", 1.5)
    broker.faults.drop("Produce")             # stored, but the answer is lost with the connection
    broker.faults.close("Fetch")              # the connection closes before the request is read
    assert broker.faults.requests("Produce") == 3
    broker.faults.clear()

A fault takes the next ``count`` requests of its API (``count=None``: every one until
``clear()``), after letting ``skip`` through, that name its topic and partitions when it
has them. An error answer is built from the API's declaration: every entry it names
carries the code (on an API that only reads, the real answer with the code on the named
entries); the request is not handled for those entries, so nothing is stored for them.
``reset()`` clears the faults and the counts too.
"""

from __future__ import annotations

from typing import Iterable


class FaultError(ValueError):
    """The broker refused a fault: an unknown API, action or error code."""


class Faults:
    def __init__(self, command):
        self._command = command  # the broker's control: a command dict -> its reply

    def error(self, api: str | int, code, *, count: int | None = 1, skip: int = 0, topic: str | None = None,
              partitions: Iterable[int] | None = None, versions: tuple[int, int] | None = None) -> None:
        """The next ``count`` requests of ``api`` are answered with ``code`` (an
        ``ErrorCode``, its name, or its number)."""
        code = code if isinstance(code, str) else int(code)
        self._add(api, "error", count, skip, topic, partitions, versions, code=code)

    def delay(self, api: str | int, seconds: float | None, *, count: int | None = 1, skip: int = 0,
              topic: str | None = None, partitions: Iterable[int] | None = None,
              versions: tuple[int, int] | None = None) -> None:
        """The next ``count`` requests are handled and answered ``seconds`` later (None:
        never; the connection's later answers wait behind it, as on one TCP stream)."""
        self._add(api, "delay", count, skip, topic, partitions, versions, seconds=seconds)

    def drop(self, api: str | int, *, count: int | None = 1, skip: int = 0, topic: str | None = None,
             partitions: Iterable[int] | None = None, versions: tuple[int, int] | None = None) -> None:
        """The next ``count`` requests are handled, and their answers lost with the
        connection: the client cannot tell whether they took effect."""
        self._add(api, "drop", count, skip, topic, partitions, versions)

    def close(self, api: str | int, *, count: int | None = 1, skip: int = 0, topic: str | None = None,
              partitions: Iterable[int] | None = None, versions: tuple[int, int] | None = None) -> None:
        """The connection closes when the next ``count`` requests arrive; they are not handled."""
        self._add(api, "close", count, skip, topic, partitions, versions)

    def clear(self) -> None:
        """No faults any more; the request counts start again."""
        self._ok({"op": "clear_faults"})

    def requests(self, api: str | None = None, version: int | None = None) -> int:
        """How many requests (of ``api``, at ``version``) the broker received since the
        start, the last ``clear()`` or ``reset()``."""
        seen = self.report()["requests"]
        apis = seen.values() if api is None else [seen.get(api, {})]
        return sum(n for versions in apis for v, n in versions.items() if version is None or v == version)

    def report(self) -> dict:
        """``{"requests": {api: {version: n}}, "faults": [the ones still waiting]}``."""
        reply = self._ok({"op": "report"})
        seen = {api: {int(v): n for v, n in versions.items()} for api, versions in reply["requests"].items()}
        return {"requests": seen, "faults": reply["faults"]}

    def _add(self, api, action, count, skip, topic, partitions, versions, **more) -> None:
        spec = {"api": api, "action": action, "count": count, "skip": skip, "topic": topic, **more}
        if partitions is not None:
            spec["partitions"] = list(partitions)
        if versions is not None:
            spec["versions"] = list(versions)
        self._ok({"op": "fault", "fault": spec})

    def _ok(self, command: dict) -> dict:
        reply = self._command(command)
        if not reply.get("ok"):
            raise FaultError(reply.get("error", "refused"))
        return reply
