"""Wakes Fetch long-polls when a partition they watch receives an append.

Shell-side (asyncio). Appending code calls ``notify(topic, partition)``; a
waiting Fetch awaits ``wait(keys, timeout)`` and then re-reads the logs.
"""

from __future__ import annotations

import asyncio


class AppendNotifier:
    def __init__(self):
        self._waiters: dict[tuple[str, int], list[asyncio.Future]] = {}

    def notify(self, topic: str, partition: int) -> None:
        waiters = self._waiters.pop((topic, partition), None)
        if waiters:
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)

    async def wait(self, keys, timeout: float) -> None:
        """Return on the first append to any of ``keys``, or after ``timeout`` s."""
        if timeout <= 0:
            return
        fut = asyncio.get_running_loop().create_future()
        keys = list(keys)
        for key in keys:
            self._waiters.setdefault(key, []).append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            for key in keys:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    try:
                        waiters.remove(fut)
                    except ValueError:
                        pass
                    if not waiters:
                        del self._waiters[key]

    @property
    def waiting(self) -> int:
        return len({id(f) for ws in self._waiters.values() for f in ws})
